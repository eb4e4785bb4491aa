// ckptscope: follow every checkpoint from the job to the storage server.
//
// Every subcommand is registered the same way (command_registry.h): a
// function adds it with its flags, bound to options the command's run
// function owns, and main runs the one the command line chose. The table at
// the bottom is the order `ckptscope --help` lists them in.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/cli/command_registry.h"
#include "apps/cli/commands.h"
#include "apps/cli/number_check.h"
#include "apps/cli/probe_mode_flag.h"
#include "notify/notify.h"

namespace ckpt::cli {
namespace {

// The flags `run`, `attach` and `demo` share.
void add_trace_flags(CLI::App* cmd, TraceFlags& f) {
  cmd->add_option("--trace", f.trace_path,
                  "SQLite trace file to write (default: ckptscope-DATE-PID.db)");
  cmd->add_option("--config", f.config_path, "JSON config file (docs/config.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--storage-endpoint", f.endpoints,
                  "storage server ADDR:PORT for the transport stage, in addition to the config's "
                  "(default *:2049); repeat for several")
      ->allow_extra_args(false);  // one value per flag, so `--` still ends our options
  cmd->add_option("--node-name", f.node_name,
                  "the node this trace is of, for merging a job's traces (default: the hostname)");
  cmd->add_flag("--quiet,-q", f.quiet, "do not print the summary table on stderr");
  cmd->add_option("--exporter-socket", f.exporter_socket,
                  "take the records from the node exporter registered at this socket instead "
                  "of loading probes (default: /run/ckptscope/exporter.sock when an exporter "
                  "serves it)");
  cmd->add_flag("--no-exporter", f.no_exporter,
                "always load probes of our own, even where a node exporter runs");
  cmd->add_flag("--json", f.json, "print the summary as JSON on stdout when done");
  add_probe_mode_flag(cmd, f.probe_mode);
}

// `run` and `attach`: the one-off additions to the config's checkpoint rules
// (docs/frameworks.md). `demo` writes its own checkpoints and needs none.
void add_checkpoint_options(CLI::App* cmd, TraceFlags& f) {
  cmd->add_option("--checkpoint-glob", f.checkpoint_globs,
                  "a file whose own name matches this fnmatch glob is a checkpoint file wherever "
                  "it is (e.g. 'model_*.npz'), in addition to checkpoint.name_globs; repeat for "
                  "several")
      ->allow_extra_args(false);
  cmd->add_option("--checkpoint-dir", f.checkpoint_dirs,
                  "files with generic names (*.pt, *.bin, no extension...) under this directory "
                  "are checkpoint files, in addition to checkpoint.dir_globs: a name or glob "
                  "without '/' (out, 'run-*') matches every directory so named, a path with '/' "
                  "(/data/run1, ./out) is that directory (relative to the job's working "
                  "directory: run's own, attach --pid's process's); repeat for several")
      ->allow_extra_args(false);
}

void with_default_trace(TraceFlags& f) {
  f.trace_path_given = !f.trace_path.empty();
  if (f.trace_path.empty()) f.trace_path = default_trace_path();
}

void add_run_command(CLI::App& app, CommandList& commands) {
  struct Options {
    TraceFlags trace;
    RunOptions run;
    std::vector<std::string> command;
  };
  auto o = std::make_shared<Options>();
  auto* run = app.add_subcommand("run", "launch a command and profile its checkpoint I/O");
  add_trace_flags(run, o->trace);
  add_checkpoint_options(run, o->trace);
  run->add_flag("--no-trace", o->trace.no_trace, "run the command without tracing (wrapper only)");
  run->add_option("--bpf-stats", o->trace.bpf_stats_path,
                  "enable kernel BPF run-time stats and write each program's run count and time "
                  "to this JSON file at the end");
  run->add_flag("--probe-floor", o->trace.probe_floor,
                "benchmarks: attach the syscall probes but return from them at once, to measure "
                "what enabling syscall tracepoints costs by itself")
      ->group("");  // hidden: for bench/overhead.py
  run->add_option("--log", o->run.log_path,
                  "the durable job log: created before the job starts, its stdout and stderr "
                  "teed into it (default: LOG_DIR/JOB-DATE-TIME-PID.log)");
  run->add_option("--log-dir", o->run.log_dir,
                  "where default job logs go, created if missing (default: the config's log_dir, "
                  "else $CKPTSCOPE_LOG_DIR, else beside --trace FILE when given, so a job's log "
                  "and trace stay together, else $XDG_STATE_HOME/ckptscope/logs, "
                  "~/.local/state/ckptscope/logs without it, /var/log/ckptscope as root; never "
                  "the current directory unless one of these names it). A directory that cannot "
                  "be made or written is a warning: the job runs without a log");
  run->add_option("--job-name", o->run.job_name,
                  "the job's name in the log, the trace and messages (default: from the command)");
  run->add_option(
         "--notify", o->run.notify,
         "when the job ends, send its outcome to mailto:ADDR (SMTP, see --smtp) or POST it "
         "as JSON to https://URL; repeat for several (docs/notify.md)")
      ->allow_extra_args(false);
  run->add_option("--smtp", o->run.smtp_url,
                  "the mail relay, smtps://HOST[:PORT] or smtp://HOST[:PORT] (STARTTLS); default: "
                  "the config's notify.smtp_url, else $CKPTSCOPE_SMTP_URL. Credentials come from "
                  "the config or $CKPTSCOPE_SMTP_USER/$CKPTSCOPE_SMTP_PASSWORD, never from here");
  run->add_option("--attach", o->run.attach,
                  "a file to attach to the message (after the log and the report); repeat")
      ->allow_extra_args(false);
  run->add_option("--attach-budget", o->run.attach_budget,
                  "the most the attachments may weigh together (default 10M); what does not fit "
                  "is listed by path and size in the message");
  run->add_flag(
      "--no-gpu", o->run.no_gpu,
      "do not load libckptscope_cupti.so into the job (the gpu_copy stage is then absent)");
  run->add_option("--logwatch-model", o->run.logwatch_model,
                  "score the kernel log while the job runs with this node-log model (ckptscope "
                  "logwatch train): anomalies become log_anomaly failures (docs/logwatch.md)")
      ->check(CLI::ExistingFile);
  run->add_option("--logwatch-group-window", o->run.logwatch_alarms.group_window,
                  "with --logwatch-model: an anomaly of a template alarmed within this many kernel "
                  "log records joins that alarm (0: every anomaly is an alarm)")
      ->check(number_in(std::uint64_t{0}, std::uint64_t{1'000'000'000}))
      ->capture_default_str();
  run->add_option("--logwatch-max-alarm-rate", o->run.logwatch_alarms.max_rate,
                  "with --logwatch-model: alarms per 1000 kernel log records; past it the "
                  "threshold is raised (and said so in the log) instead of flooding (0: no budget)")
      ->check(number_in(0.0, 1000.0))
      ->capture_default_str();
  run->add_option("command", o->command, "the command, after --")->required();
  commands.push_back({run, [o] {
                        with_default_trace(o->trace);
                        return run_command(o->trace, o->run, o->command);
                      }});
}

void add_attach_command(CLI::App& app, CommandList& commands) {
  struct Options {
    TraceFlags trace;
    AttachTarget target;
    int pid = 0;
  };
  auto o = std::make_shared<Options>();
  auto* attach =
      app.add_subcommand("attach", "profile a running job until it ends, Ctrl-C or --duration");
  add_trace_flags(attach, o->trace);
  add_checkpoint_options(attach, o->trace);
  auto* pid_opt =
      attach->add_option("--pid", o->pid, "the job's process id (its descendants are followed)");
  auto* cg_opt =
      attach->add_option("--cgroup", o->target.cgroup, "a cgroup v2 directory (Slurm job, pod)")
          ->check(CLI::ExistingDirectory);
  pid_opt->excludes(cg_opt);
  attach
      ->add_option("--duration", o->target.duration_s,
                   "stop after this many seconds (at most 10 years: 315360000)")
      ->check(positive_up_to(kMaxAttachDurationS));
  commands.push_back({attach, [o, pid_opt, cg_opt] {
                        if (!*pid_opt && !*cg_opt) {
                          fmt::print(stderr, "ckptscope attach: give --pid PID or --cgroup PATH\n");
                          return 2;
                        }
                        if (*pid_opt) o->target.pid = o->pid;
                        with_default_trace(o->trace);
                        return attach_command(o->trace, o->target);
                      }});
}

void add_summary_command(CLI::App& app, CommandList& commands) {
  struct Options {
    std::string trace;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* summary =
      app.add_subcommand("summary", "print what happened, per checkpoint, from a trace");
  summary->add_option("trace", o->trace, "the trace file")->required();
  summary->add_flag("--json", o->json, "JSON instead of a table");
  commands.push_back({summary, [o] { return summary_command(o->trace, o->json); }});
}

void add_export_command(CLI::App& app, CommandList& commands) {
  struct Options {
    std::string trace;
    std::string format = "perfetto";
    std::string out;
  };
  auto o = std::make_shared<Options>();
  auto* export_cmd = app.add_subcommand(
      "export", "write a trace as a timeline for the Perfetto UI (Chrome trace-event JSON)");
  export_cmd->add_option("trace", o->trace, "the trace file")->required();
  export_cmd->add_option("--format", o->format, "perfetto (the only one so far)");
  export_cmd->add_option("-o,--output", o->out, "the JSON file to write")->required();
  commands.push_back({export_cmd, [o] { return export_command(o->trace, o->format, o->out); }});
}

void add_report_command(CLI::App& app, CommandList& commands) {
  auto o = std::make_shared<ReportCommandOptions>();
  auto* report_cmd = app.add_subcommand(
      "report",
      "the post-run bottleneck report of one or more nodes' traces (HTML, Markdown, JSON)");
  report_cmd->add_option("trace", o->traces, "the trace files, one per node of the job")
      ->required();
  report_cmd->add_option("-o,--output", o->out_path,
                         "the file to write (default: standard output)");
  report_cmd->add_option("--format", o->format,
                         "html, md or json (default: from the output's extension, else html)");
  report_cmd->add_option(
      "--storage-read-max", o->storage_read_max,
      "the storage's aggregate read maximum, e.g. 700GB/s (default: the traces' config)");
  report_cmd->add_option("--storage-write-max", o->storage_write_max,
                         "the storage's aggregate write maximum, e.g. 250GB/s");
  report_cmd->add_option("--project", o->project,
                         "add the scale projection to these node counts, e.g. 8,16,64 "
                         "(docs/projection.md)");
  commands.push_back({report_cmd, [o] { return report_command(*o); }});
}

void add_project_command(CLI::App& app, CommandList& commands) {
  auto o = std::make_shared<ProjectCommandOptions>();
  auto* cmd = app.add_subcommand(
      "project",
      "predict a checkpoint at N nodes from a few nodes' traces: duration, bandwidth, RPC wait, "
      "and from which N the shared side holds it back (docs/projection.md)");
  cmd->add_option("trace", o->traces, "the trace files: one per node, one or a few runs of a job")
      ->required();
  cmd->add_option("--nodes", o->nodes, "the node counts to predict, e.g. 8,16,64")->required();
  cmd->add_option("--storage-write-max", o->storage_write_max,
                  "the shared storage's aggregate write maximum, e.g. 250GB/s (default: "
                  "--config's, the traces' config, else fitted from two scales)");
  cmd->add_option("--storage-read-max", o->storage_read_max,
                  "the shared storage's aggregate read maximum, e.g. 700GB/s");
  cmd->add_option("--config", o->config_path,
                  "a ckptscope config whose storage section gives the maxima");
  cmd->add_option("--format", o->format,
                  "table, json, html or md (default: from the output's extension, else table)");
  cmd->add_option("-o,--output", o->out_path, "the file to write (default: standard output)");
  commands.push_back({cmd, [o] { return project_command(*o); }});
}

void add_exporter_command(CLI::App& app, CommandList& commands) {
  struct Options {
    ExporterOptions exporter;
    double cpu_report_min_ms = 10;
  };
  auto o = std::make_shared<Options>();
  auto* exporter_cmd = app.add_subcommand(
      "exporter",
      "trace the whole node continuously and serve its checkpoint I/O as Prometheus metrics");
  exporter_cmd->add_option("--listen", o->exporter.listen,
                           "ADDR:PORT, [IPV6]:PORT or :PORT to serve /metrics on (default :9464)");
  exporter_cmd->add_option("--config", o->exporter.config_path, "JSON config file (docs/config.md)")
      ->check(CLI::ExistingFile);
  exporter_cmd
      ->add_option("--max-workloads", o->exporter.max_workloads,
                   "distinct workload labels kept; later workloads are 'other' (default 100)")
      ->check(number_in(std::size_t{1}, std::size_t{1'000'000}));
  exporter_cmd
      ->add_option("--cpu-report-min-ms", o->cpu_report_min_ms,
                   "kernel-side aggregation: report a thread's on-CPU time at a context switch "
                   "only once it adds up to this many ms (default 10; 0 reports every switch)")
      ->check(number_in(0.0, 10000.0));
  exporter_cmd->add_option("--socket", o->exporter.socket_path,
                           "where run and attach register their jobs (default "
                           "/run/ckptscope/exporter.sock; '' turns registration off)");
  exporter_cmd->add_option("--socket-group", o->exporter.socket_group,
                           "make the socket mode 0660 and owned by this group: only root and its "
                           "members may register (default: mode 0666, any local user may register "
                           "the processes it owns)");
  exporter_cmd
      ->add_option("--path.procfs", o->exporter.procfs,
                   "where the kernel's /proc is: mountstats, the processes' cgroups and owners "
                   "are read there (default /proc; node_exporter's flag)")
      ->check(CLI::ExistingDirectory);
  add_probe_mode_flag(exporter_cmd, o->exporter.probe_mode);
  commands.push_back({exporter_cmd, [o] {
                        o->exporter.cpu_flush_min_ns =
                            static_cast<uint64_t>(o->cpu_report_min_ms * 1e6);
                        return exporter_command(o->exporter);
                      }});
}

void add_calibrate_command(CLI::App& app, CommandList& commands) {
  struct Options {
    CalibrateOptions calibrate;
    std::string size = "1G";
    CalibrateStorageOptions storage;
    CalibrateMemoryOptions memory;
    bool use_memory = false;
    std::string bytes;  // --storage: 1G, --memory: 256M
    std::string block = "1M";
  };
  auto o = std::make_shared<Options>();
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate",
      "measure each GPU's copy bandwidth (large pinned copies) for the gpu_copy stage's maxima, "
      "with --storage DIR the mount's write and read bandwidth for host_io's, or with --memory "
      "the node's memory-copy bandwidth for serialize's");
  auto* device =
      calibrate_cmd->add_option("--device", o->calibrate.device, "one GPU (default: every GPU)")
          ->check(number_in(0, 1023));
  auto* size = calibrate_cmd->add_option("--size", o->size, "bytes per copy (default 1G)");
  auto* rounds =
      calibrate_cmd
          ->add_option("--rounds", o->calibrate.rounds,
                       "timed copies each way, the median kept (--memory: timed rounds, the best)")
          ->check(number_in(1, 100));
  calibrate_cmd->add_option("-o,--output", o->calibrate.out_path,
                            "write the result (JSON) here (default: standard output)");
  auto* storage =
      calibrate_cmd
          ->add_option("--storage", o->storage.dir,
                       "measure the file system under this directory instead: sequential writes "
                       "then reads in parallel streams (O_DIRECT where allowed), kept per mount "
                       "in /var/lib/ckptscope/maxima.json (a user's: "
                       "~/.local/state/ckptscope/maxima.json; $CKPTSCOPE_MAXIMA_FILE overrides) "
                       "for run, attach, demo and the exporter (docs/calibrate.md)")
          ->check(CLI::ExistingDirectory);
  storage->excludes(device)->excludes(size)->excludes(rounds);
  auto* memory =
      calibrate_cmd
          ->add_flag("--memory", o->use_memory,
                     "measure the node's memory-copy bandwidth instead (one thread, then every "
                     "CPU), the serialize stage's maximum, kept in the same maxima file")
          ->excludes(device)
          ->excludes(size)
          ->excludes(storage);
  auto* bytes_opt = calibrate_cmd->add_option(
      "--bytes", o->bytes,
      "--storage: bytes written in all, then read back (default 1G); twice as much must be "
      "free. --memory: bytes copied a round (default 256M)");
  calibrate_cmd
      ->add_option("--threads", o->memory.threads,
                   "--memory: threads copying at once (default: every CPU it may run on)")
      ->check(number_in(1u, 4096u))
      ->needs(memory);
  calibrate_cmd
      ->add_option("--seconds", o->storage.seconds,
                   "--storage: at most this long, half for the writes and half for the reads "
                   "(default 30)")
      ->check(positive_up_to(86400.0))
      ->needs(storage);
  calibrate_cmd
      ->add_option("--streams", o->storage.streams,
                   "--storage: files written and read at once (default 4)")
      ->check(number_in(1u, 1024u))
      ->needs(storage);
  calibrate_cmd
      ->add_option("--block", o->block, "--storage: bytes per write or read call (default 1M)")
      ->needs(storage);
  calibrate_cmd
      ->add_option("--config", o->storage.config_path,
                   "--storage: the config whose storage maxima to show beside the result")
      ->check(CLI::ExistingFile)
      ->needs(storage);
  commands.push_back(
      {calibrate_cmd, [o, storage, memory, bytes_opt] {
         auto sized = [](const char* flag, const std::string& text, uint64_t& out) {
           auto bytes = ckpt::notify::parse_size(text);
           if (!bytes || *bytes == 0) {
             fmt::print(stderr, "ckptscope calibrate: {} {}: {}\n", flag, text,
                        bytes ? "must be more than 0" : bytes.error().message);
             return false;
           }
           out = *bytes;
           return true;
         };
         if (*bytes_opt && !*storage && !*memory) {
           fmt::print(stderr, "ckptscope calibrate: --bytes: for --storage or --memory\n");
           return 2;
         }
         if (*memory) {
           if (*bytes_opt && !sized("--bytes", o->bytes, o->memory.bytes)) return 2;
           if (o->memory.bytes < (1ull << 20)) {
             fmt::print(stderr,
                        "ckptscope calibrate: --bytes {}: at least 1M for "
                        "--memory, and far more than the caches hold\n",
                        o->bytes);
             return 2;
           }
           o->memory.rounds = static_cast<unsigned>(o->calibrate.rounds);
           o->memory.out_path = o->calibrate.out_path;
           return calibrate_memory_command(o->memory);
         }
         if (*storage) {
           if ((*bytes_opt && !sized("--bytes", o->bytes, o->storage.bytes)) ||
               !sized("--block", o->block, o->storage.block_bytes))
             return 2;
           if (o->storage.block_bytes % 4096 != 0 || o->storage.block_bytes > (1ull << 30)) {
             fmt::print(stderr,
                        "ckptscope calibrate: --block {}: must be a multiple of "
                        "4K (O_DIRECT's alignment), at most 1G\n",
                        o->block);
             return 2;
           }
           if (o->storage.bytes < o->storage.block_bytes * o->storage.streams) {
             fmt::print(stderr,
                        "ckptscope calibrate: --bytes {}: less than one --block "
                        "{} for each of --streams {}\n",
                        o->bytes.empty() ? "1G (the default)" : o->bytes, o->block,
                        o->storage.streams);
             return 2;
           }
           o->storage.out_path = o->calibrate.out_path;
           return calibrate_storage_command(o->storage);
         }
         uint64_t bytes = 0;
         if (!sized("--size", o->size, bytes)) return 2;
         o->calibrate.bytes = bytes;
         return calibrate_command(o->calibrate);
       }});
}

void add_demo_command(CLI::App& app, CommandList& commands) {
  struct Options {
    TraceFlags trace;
    DemoOptions demo;
  };
  auto o = std::make_shared<Options>();
  auto* demo_cmd = app.add_subcommand("demo", "profile the bundled synthetic checkpoint workload");
  add_trace_flags(demo_cmd, o->trace);
  demo_cmd->add_option("--dir", o->demo.dir,
                       "where the workload writes (default: a new directory here)");
  demo_cmd->add_option("--shard-size", o->demo.shard_size, "size of each shard (e.g. 32M)");
  demo_cmd->add_option("--shards", o->demo.shards, "shards per checkpoint")
      ->check(number_in(1, 100'000));
  demo_cmd->add_option("--checkpoints", o->demo.checkpoints, "checkpoints to save and load")
      ->check(number_in(1, 100'000));
  commands.push_back({demo_cmd, [o] {
                        with_default_trace(o->trace);
                        return demo_command(o->trace, o->demo);
                      }});
}

void add_classify_command(CLI::App& app, CommandList& commands) {
  struct Options {
    ClassifyOptions classify;
    std::string tail;
  };
  auto o = std::make_shared<Options>();
  auto* classify = app.add_subcommand(
      "classify", "name the root cause of a failed run from its logs (docs/classifier.md)");
  classify->add_option("log", o->classify.logs, "log files ('-' reads standard input)");
  classify->add_flag("--json", o->classify.json,
                     "one JSON object per log: file, class, rule, evidence[{line,text}]");
  classify
      ->add_option("--rules", o->classify.rules_path,
                   "a rule base to use instead of the built-in one (JSON)")
      ->check(CLI::ExistingFile);
  classify->add_option("--tail", o->tail, "read at most this much from each log's end (e.g. 512M)");
  classify->add_option("--exit-code", o->classify.exit_code,
                       "how the job ended, when the log does not say (139 or -11: SIGSEGV)");
  classify->add_flag("--list-rules", o->classify.list_rules, "print the rules in order and exit");
  commands.push_back(
      {classify, [o] {
         if (!o->tail.empty()) {
           auto bytes = ckpt::notify::parse_size(o->tail);
           if (!bytes) {
             fmt::print(stderr, "ckptscope classify: --tail {}\n", bytes.error().message);
             return 2;
           }
           o->classify.tail_bytes = *bytes;
         }
         if (o->classify.logs.empty() && !o->classify.list_rules) {
           fmt::print(stderr, "ckptscope classify: give one or more LOG files ('-' for stdin)\n");
           return 2;
         }
         return classify_command(o->classify);
       }});
}

void add_eval_classifier_command(CLI::App& app, CommandList& commands) {
  auto o = std::make_shared<EvalClassifierOptions>();
  auto* eval = app.add_subcommand(
      "eval-classifier",
      "score the classifier and two baselines on the GPUAlert corpus (precision, recall, F1)");
  eval->add_option("--corpus", o->corpus,
                   "the corpus directory (default: tests/data/third_party/gpualert-corpus)")
      ->check(CLI::ExistingDirectory);
  eval->add_option("--extra", o->extra_labels,
                   "another labels.jsonl to score (default: the repo's infrastructure logs)")
      ->check(CLI::ExistingFile);
  eval->add_option("--rules", o->rules_path, "a rule base to use instead of the built-in one")
      ->check(CLI::ExistingFile);
  eval->add_flag("--json", o->json, "JSON instead of tables");
  eval->add_option("--min-macro-f1", o->min_macro_f1,
                   "exit 1 when the corpus macro-F1 is below this")
      ->check(number_in(0.0, 1.0));
  commands.push_back({eval, [o] { return eval_classifier_command(*o); }});
}

// `fleet ...` is ckptscope-fleet's (fleet_main.cpp): everything after `fleet`
// goes to it unparsed, --help included.
void add_fleet_command(CLI::App& app, CommandList& commands) {
  auto* fleet = app.add_subcommand(
      "fleet",
      "fleet analyses from Prometheus and scheduler records: attribute, exclusions, retries, "
      "checkpoints (docs/fleet.md)");
  fleet->prefix_command();
  fleet->set_help_flag();
  commands.push_back({fleet, [fleet] { return exec_fleet(fleet->remaining()); }});
}

// Every subcommand, in the order --help lists them.
constexpr AddCommands kCommands[] = {
    add_run_command,       add_attach_command,   add_summary_command,         add_export_command,
    add_report_command,    add_project_command,  add_exporter_command,        add_calibrate_command,
    add_demo_command,      add_classify_command, add_eval_classifier_command,
    add_logwatch_commands,  // logwatch (and logwatch train), eval-anomaly
    add_fleet_command,
};

}  // namespace
}  // namespace ckpt::cli

int main(int argc, char** argv) {
  using namespace ckpt::cli;
  CLI::App app{"ckptscope: checkpoint I/O profiler for distributed GPU training"};
  app.set_version_flag("--version", CKPTSCOPE_VERSION);
  app.require_subcommand(1);

  CommandList registered;
  for (AddCommands add : kCommands) add(app, registered);

  // CLI11 answers an unknown command with "A subcommand is required"; say
  // which word it was and what the commands are. Every option of the top
  // level starts with '-', so a first word without one is a command.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->check_name(word);
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      fmt::print(stderr, "ckptscope: unknown command '{}' (commands: {}; see --help)\n", word,
                 names);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (const auto* chosen = chosen_command(registered)) return chosen->run();
  return 2;
}
