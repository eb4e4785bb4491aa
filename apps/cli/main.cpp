// ckptscope: follow every checkpoint from the job to the storage server.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "apps/cli/command_registry.h"
#include "apps/cli/commands.h"
#include "notify/notify.h"

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
    cmd->add_option(
        "--node-name", f.node_name,
        "the node this trace is of, for merging a job's traces (default: the hostname)");
    cmd->add_flag("--quiet,-q", f.quiet, "do not print the summary table on stderr");
    cmd->add_option("--exporter-socket", f.exporter_socket,
                    "take the records from the node exporter registered at this socket instead "
                    "of loading probes (default: /run/ckptscope/exporter.sock when an exporter "
                    "serves it)");
    cmd->add_flag("--no-exporter", f.no_exporter,
                  "always load probes of our own, even where a node exporter runs");
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
  RunOptions run_opts;
  run->add_option("--log", run_opts.log_path,
                  "the durable job log: created before the job starts, its stdout and stderr "
                  "teed into it (default: LOG_DIR/JOB-DATE-TIME-PID.log)");
  run->add_option("--log-dir", run_opts.log_dir,
                  "where default job logs go, created if missing (default: the config's log_dir, "
                  "else $CKPTSCOPE_LOG_DIR, else beside --trace FILE when given, so a job's log "
                  "and trace stay together, else $XDG_STATE_HOME/ckptscope/logs, "
                  "~/.local/state/ckptscope/logs without it, /var/log/ckptscope as root; never "
                  "the current directory unless one of these names it). A directory that cannot "
                  "be made or written is a warning: the job runs without a log");
  run->add_option("--job-name", run_opts.job_name,
                  "the job's name in the log, the trace and messages (default: from the command)");
  run->add_option(
         "--notify", run_opts.notify,
         "when the job ends, send its outcome to mailto:ADDR (SMTP, see --smtp) or POST it "
         "as JSON to https://URL; repeat for several (docs/notify.md)")
      ->allow_extra_args(false);
  run->add_option("--smtp", run_opts.smtp_url,
                  "the mail relay, smtps://HOST[:PORT] or smtp://HOST[:PORT] (STARTTLS); default: "
                  "the config's notify.smtp_url, else $CKPTSCOPE_SMTP_URL. Credentials come from "
                  "the config or $CKPTSCOPE_SMTP_USER/$CKPTSCOPE_SMTP_PASSWORD, never from here");
  run->add_option("--attach", run_opts.attach,
                  "a file to attach to the message (after the log and the report); repeat")
      ->allow_extra_args(false);
  run->add_option("--attach-budget", run_opts.attach_budget,
                  "the most the attachments may weigh together (default 10M); what does not fit "
                  "is listed by path and size in the message");
  run->add_flag(
      "--no-gpu", run_opts.no_gpu,
      "do not load libckptscope_cupti.so into the job (the gpu_copy stage is then absent)");
  run->add_option("--logwatch-model", run_opts.logwatch_model,
                  "score the kernel log while the job runs with this node-log model (ckptscope "
                  "logwatch train): anomalies become log_anomaly failures (docs/logwatch.md)")
      ->check(CLI::ExistingFile);
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

  std::string export_trace, export_format = "perfetto", export_out;
  auto* export_cmd = app.add_subcommand(
      "export", "write a trace as a timeline for the Perfetto UI (Chrome trace-event JSON)");
  export_cmd->add_option("trace", export_trace, "the trace file")->required();
  export_cmd->add_option("--format", export_format, "perfetto (the only one so far)");
  export_cmd->add_option("-o,--output", export_out, "the JSON file to write")->required();

  ReportCommandOptions report_opts;
  auto* report_cmd = app.add_subcommand(
      "report",
      "the post-run bottleneck report of one or more nodes' traces (HTML, Markdown, JSON)");
  report_cmd->add_option("trace", report_opts.traces, "the trace files, one per node of the job")
      ->required();
  report_cmd->add_option("-o,--output", report_opts.out_path,
                         "the file to write (default: standard output)");
  report_cmd->add_option("--format", report_opts.format,
                         "html, md or json (default: from the output's extension, else html)");
  report_cmd->add_option(
      "--storage-read-max", report_opts.storage_read_max,
      "the storage's aggregate read maximum, e.g. 700GB/s (default: the traces' config)");
  report_cmd->add_option("--storage-write-max", report_opts.storage_write_max,
                         "the storage's aggregate write maximum, e.g. 250GB/s");

  ExporterOptions exporter_opts;
  auto* exporter_cmd = app.add_subcommand(
      "exporter",
      "trace the whole node continuously and serve its checkpoint I/O as Prometheus metrics");
  exporter_cmd->add_option("--listen", exporter_opts.listen,
                           "ADDR:PORT, [IPV6]:PORT or :PORT to serve /metrics on (default :9464)");
  exporter_cmd
      ->add_option("--config", exporter_opts.config_path, "JSON config file (docs/config.md)")
      ->check(CLI::ExistingFile);
  exporter_cmd
      ->add_option("--max-workloads", exporter_opts.max_workloads,
                   "distinct workload labels kept; later workloads are 'other' (default 100)")
      ->check(CLI::PositiveNumber);
  double cpu_report_min_ms = 10;
  exporter_cmd
      ->add_option("--cpu-report-min-ms", cpu_report_min_ms,
                   "kernel-side aggregation: report a thread's on-CPU time at a context switch "
                   "only once it adds up to this many ms (default 10; 0 reports every switch)")
      ->check(CLI::Range(0.0, 10000.0));
  exporter_cmd->add_option("--socket", exporter_opts.socket_path,
                           "where run and attach register their jobs (default "
                           "/run/ckptscope/exporter.sock; '' turns registration off)");

  CalibrateOptions calibrate_opts;
  std::string calibrate_size = "1G";
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate",
      "measure each GPU's copy bandwidth (large pinned copies) for the gpu_copy stage's maxima");
  calibrate_cmd->add_option("--device", calibrate_opts.device, "one GPU (default: every GPU)")
      ->check(CLI::NonNegativeNumber);
  calibrate_cmd->add_option("--size", calibrate_size, "bytes per copy (default 1G)");
  calibrate_cmd->add_option("--rounds", calibrate_opts.rounds, "timed copies each way (median)")
      ->check(CLI::Range(1, 100));
  calibrate_cmd->add_option("-o,--output", calibrate_opts.out_path,
                            "write the config snippet here (default: standard output)");

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

  ClassifyOptions classify_opts;
  std::string tail_text;
  auto* classify = app.add_subcommand(
      "classify", "name the root cause of a failed run from its logs (docs/classifier.md)");
  classify->add_option("log", classify_opts.logs, "log files ('-' reads standard input)");
  classify->add_flag("--json", classify_opts.json,
                     "one JSON object per log: file, class, rule, evidence[{line,text}]");
  classify
      ->add_option("--rules", classify_opts.rules_path,
                   "a rule base to use instead of the built-in one (JSON)")
      ->check(CLI::ExistingFile);
  classify->add_option("--tail", tail_text,
                       "read at most this much from each log's end (e.g. 512M)");
  classify->add_option("--exit-code", classify_opts.exit_code,
                       "how the job ended, when the log does not say (139 or -11: SIGSEGV)");
  classify->add_flag("--list-rules", classify_opts.list_rules, "print the rules in order and exit");

  EvalClassifierOptions eval_opts;
  auto* eval = app.add_subcommand(
      "eval-classifier",
      "score the classifier and two baselines on the GPUAlert corpus (precision, recall, F1)");
  eval->add_option("--corpus", eval_opts.corpus,
                   "the corpus directory (default: ../shared/data/gpualert-corpus)")
      ->check(CLI::ExistingDirectory);
  eval->add_option("--extra", eval_opts.extra_labels,
                   "another labels.jsonl to score (default: the repo's infrastructure logs)")
      ->check(CLI::ExistingFile);
  eval->add_option("--rules", eval_opts.rules_path,
                   "a rule base to use instead of the built-in one")
      ->check(CLI::ExistingFile);
  eval->add_flag("--json", eval_opts.json, "JSON instead of tables");
  eval->add_option("--min-macro-f1", eval_opts.min_macro_f1,
                   "exit 1 when the corpus macro-F1 is below this");

  // Self-registering commands; deeper subcommands first (see chosen_command).
  CommandList registered;
  add_logwatch_commands(app, registered);
  // `fleet ...` is ckptscope-fleet's (cli/fleet_main.cpp): everything after
  // `fleet` goes to it unparsed, --help included.
  auto* fleet = app.add_subcommand(
      "fleet",
      "fleet analyses from Prometheus and scheduler records: attribute, exclusions, retries, "
      "checkpoints (docs/fleet.md)");
  fleet->prefix_command();
  fleet->set_help_flag();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  auto with_default_trace = [](TraceFlags& f) {
    f.trace_path_given = !f.trace_path.empty();
    if (f.trace_path.empty()) f.trace_path = default_trace_path();
  };
  if (*run) {
    with_default_trace(run_flags);
    return run_command(run_flags, run_opts, command);
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
  if (*export_cmd) return export_command(export_trace, export_format, export_out);
  if (*report_cmd) return report_command(report_opts);
  if (*calibrate_cmd) {
    auto bytes = ckpt::notify::parse_size(calibrate_size);
    if (!bytes || *bytes == 0) {
      fmt::print(stderr, "ckptscope calibrate: --size {}: {}\n", calibrate_size,
                 bytes ? "must be more than 0" : bytes.error().message);
      return 2;
    }
    calibrate_opts.bytes = *bytes;
    return calibrate_command(calibrate_opts);
  }
  if (*exporter_cmd) {
    exporter_opts.cpu_flush_min_ns = static_cast<uint64_t>(cpu_report_min_ms * 1e6);
    return exporter_command(exporter_opts);
  }
  if (*classify) {
    if (!tail_text.empty()) {
      auto bytes = ckpt::notify::parse_size(tail_text);
      if (!bytes) {
        fmt::print(stderr, "ckptscope classify: --tail {}\n", bytes.error().message);
        return 2;
      }
      classify_opts.tail_bytes = *bytes;
    }
    if (classify_opts.logs.empty() && !classify_opts.list_rules) {
      fmt::print(stderr, "ckptscope classify: give one or more LOG files ('-' for stdin)\n");
      return 2;
    }
    return classify_command(classify_opts);
  }
  if (*eval) return eval_classifier_command(eval_opts);
  if (const auto* chosen = chosen_command(registered)) return chosen->run();
  if (*fleet) return exec_fleet(fleet->remaining());
  if (*demo_cmd) {
    with_default_trace(demo_flags);
    return demo_command(demo_flags, demo);
  }
  return 2;
}
