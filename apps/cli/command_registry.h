// Subcommands that register themselves: each area adds its CLI11 subcommands
// and the function that runs one when the command line chose it, so main.cpp
// does not grow with every command's options. Every subcommand of ckptscope
// and ckptscope-fleet is registered this way; there is no other dispatch.
#pragma once

#include <functional>
#include <vector>

#include <CLI/CLI.hpp>

namespace ckpt::cli {

struct RegisteredCommand {
  CLI::App* command = nullptr;  // run when this subcommand was given
  std::function<int()> run;     // returns the process exit code
};
using CommandList = std::vector<RegisteredCommand>;
// Adds one area's subcommands to `app` and their run functions to `commands`.
using AddCommands = void (*)(CLI::App& app, CommandList& commands);

// `logwatch`, `logwatch train`, `eval-anomaly` (analysis/logwatch).
void add_logwatch_commands(CLI::App& app, CommandList& commands);

// `ckptscope fleet ARGS...`: runs ckptscope-fleet ARGS... (beside this
// program, else from PATH); returns only when it cannot (exit 127).
int exec_fleet(const std::vector<std::string>& args);

// Under `fleet` (analysis/fleet), in ckptscope-fleet: scheduler records, Prometheus.
void add_fleet_record_commands(CLI::App& fleet, CommandList& commands);  // exclusions, retries
void add_fleet_attribute_command(CLI::App& fleet, CommandList& commands);
void add_fleet_checkpoints_command(CLI::App& fleet, CommandList& commands);

// The first registered command the command line chose; nullptr when none.
// Deeper subcommands are registered before their parents so they win.
inline const RegisteredCommand* chosen_command(const CommandList& commands) {
  for (const auto& c : commands)
    if (c.command != nullptr && c.command->parsed()) return &c;
  return nullptr;
}

}  // namespace ckpt::cli
