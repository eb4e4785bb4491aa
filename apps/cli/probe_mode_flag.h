// --probe-mode, shared by run, attach, demo and exporter: a bad value is
// refused by CLI11 as "--probe-mode: 'x' is not a probe mode; choose auto,
// syscall or file_layer" (exit 2).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "probes/jobio_programs.h"

namespace ckpt::cli {

inline CLI::Option* add_probe_mode_flag(CLI::App* cmd, RequestedProbeMode& mode) {
  auto* option = cmd->add_option_function<std::string>(
      "--probe-mode",
      [&mode](const std::string& text) {
        if (auto parsed = parse_probe_mode(text)) mode = *parsed;
      },
      "how file I/O is traced: auto (default: fentry/fexit on the kernel's VFS functions where "
      "the kernel allows them, else raw syscalls), syscall, or file_layer (an error where the "
      "kernel cannot)");
  option->check(CLI::Validator(
      [](std::string& input) -> std::string {
        return parse_probe_mode(input) ? std::string() : not_a_probe_mode(input);
      },
      "auto|syscall|file_layer"));
  return option;
}

}  // namespace ckpt::cli
