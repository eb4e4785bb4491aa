// ckptscope: follow every checkpoint from the job to the storage server.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace ckpt::cli;
  CLI::App app{"ckptscope: checkpoint I/O profiler for distributed GPU training"};
  app.set_version_flag("--version", CKPTSCOPE_VERSION);
  app.require_subcommand(1);

  auto add_trace_flags = [](CLI::App* cmd, TraceFlags& f) {
    cmd->add_option("--trace", f.trace_path,
                    "SQLite trace file to write (default: ckptscope-DATE-PID.db)");
    cmd->add_option("--config", f.config_path, "JSON config file (docs/config.md)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--storage-endpoint", f.endpoints,
                    "storage server ADDR:PORT for the transport stage, in addition to the config's "
                    "(default *:2049); repeat for several")
        ->allow_extra_args(false);  // one value per flag, so `--` still ends our options
    cmd->add_flag("--quiet,-q", f.quiet, "do not print the summary table on stderr");
    cmd->add_flag("--json", f.json, "print the summary as JSON on stdout when done");
  };

  TraceFlags run_flags;
  std::vector<std::string> command;
  auto* run = app.add_subcommand("run", "launch a command and profile its checkpoint I/O");
  add_trace_flags(run, run_flags);
  run->add_flag("--no-trace", run_flags.no_trace, "run the command without tracing (wrapper only)");
  run->add_option("--bpf-stats", run_flags.bpf_stats_path,
                  "enable kernel BPF run-time stats and write each program's run count and time "
                  "to this JSON file at the end");
  run->add_flag("--probe-floor", run_flags.probe_floor,
                "benchmarks: attach the syscall probes but return from them at once, to measure "
                "what enabling syscall tracepoints costs by itself")
      ->group("");  // hidden: for bench/overhead.py
  run->add_option("command", command, "the command, after --")->required();

  TraceFlags attach_flags;
  AttachTarget target;
  int pid = 0;
  auto* attach =
      app.add_subcommand("attach", "profile a running job until it ends, Ctrl-C or --duration");
  add_trace_flags(attach, attach_flags);
  auto* pid_opt =
      attach->add_option("--pid", pid, "the job's process id (its descendants are followed)");
  auto* cg_opt =
      attach->add_option("--cgroup", target.cgroup, "a cgroup v2 directory (Slurm job, pod)")
          ->check(CLI::ExistingDirectory);
  pid_opt->excludes(cg_opt);
  attach->add_option("--duration", target.duration_s, "stop after this many seconds")
      ->check(CLI::PositiveNumber);

  std::string summary_path;
  bool summary_json = false;
  auto* summary =
      app.add_subcommand("summary", "print what happened, per checkpoint, from a trace");
  summary->add_option("trace", summary_path, "the trace file")->required();
  summary->add_flag("--json", summary_json, "JSON instead of a table");

  TraceFlags demo_flags;
  DemoOptions demo;
  auto* demo_cmd = app.add_subcommand("demo", "profile the bundled synthetic checkpoint workload");
  add_trace_flags(demo_cmd, demo_flags);
  demo_cmd->add_option("--dir", demo.dir,
                       "where the workload writes (default: a new directory here)");
  demo_cmd->add_option("--shard-size", demo.shard_size, "size of each shard (e.g. 32M)");
  demo_cmd->add_option("--shards", demo.shards, "shards per checkpoint")
      ->check(CLI::PositiveNumber);
  demo_cmd->add_option("--checkpoints", demo.checkpoints, "checkpoints to save and load")
      ->check(CLI::PositiveNumber);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  auto with_default_trace = [](TraceFlags& f) {
    if (f.trace_path.empty()) f.trace_path = default_trace_path();
  };
  if (*run) {
    with_default_trace(run_flags);
    return run_command(run_flags, command);
  }
  if (*attach) {
    if (!*pid_opt && !*cg_opt) {
      fmt::print(stderr, "ckptscope attach: give --pid PID or --cgroup PATH\n");
      return 2;
    }
    if (*pid_opt) target.pid = pid;
    with_default_trace(attach_flags);
    return attach_command(attach_flags, target);
  }
  if (*summary) return summary_command(summary_path, summary_json);
  if (*demo_cmd) {
    with_default_trace(demo_flags);
    return demo_command(demo_flags, demo);
  }
  return 2;
}
