#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/summary.h"
#include "apps/cli/commands.h"
#include "apps/cli/gpu_injection.h"
#include "apps/cli/job_outcome.h"
#include "apps/cli/run_logwatch.h"
#include "apps/collector/collector.h"
#include "common/clock.h"
#include "files/output_file.h"
#include "json/json_io.h"
#include "notify/notify.h"
#include "runner/child_process.h"
#include "runner/job_gpus.h"
#include "runner/job_log.h"
#include "runner/output_tee.h"
#include "sources/kernel_log.h"

namespace ckpt::cli {
namespace {

void write_program_stats(const std::string& path, const std::vector<ProgramStats>& stats) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : stats)
    j.push_back({{"name", s.name},
                 {"run_cnt", s.run_cnt},
                 {"run_time_ns", s.run_time_ns},
                 {"recursion_misses", s.recursion_misses}});
  if (auto written = replace_file_contents(path, dump_json(j, 2) + "\n", "--bpf-stats"); !written)
    warn("warning: " + written.error().message);
}

// Where the default job log goes, the first that applies: --log-dir, the
// config's log_dir, $CKPTSCOPE_LOG_DIR (each names a place for logs), beside
// --trace FILE (the place chosen for this job's outputs, so the two stay
// together), else the state directory. Never the current directory by
// default: a job started in a source tree would litter it.
Expected<std::string> resolve_log_dir(const TraceFlags& flags, const RunOptions& run,
                                      const Config& config) {
  if (!run.log_dir.empty()) return run.log_dir;
  if (!config.log_dir.empty()) return config.log_dir;
  if (const char* env = std::getenv("CKPTSCOPE_LOG_DIR"); env && *env) return std::string(env);
  if (flags.trace_path_given) return std::filesystem::path(flags.trace_path).parent_path().string();
  return state_log_dir(log_state_inputs());
}

// Names tried for a default job log before giving up.
constexpr int kLogNameAttempts = 100;

// The job log, created with its header; a warning and no log when it cannot
// be: the job runs either way.
std::optional<JobLog> create_job_log(const TraceFlags& flags, const RunOptions& run,
                                     const Config& config, const JobRecord& job) {
  constexpr std::string_view kNoLog =
      "; the job runs without a log (give --log-dir DIR or --log FILE)";
  if (!run.log_path.empty()) {
    auto created = JobLog::create(run.log_path, job_log_header(job, flags));
    if (!created) {
      warn("warning: " + created.error().message + std::string(kNoLog));
      return std::nullopt;
    }
    return std::move(*created);
  }
  auto dir = resolve_log_dir(flags, run, config);
  if (!dir) {
    warn("warning: " + dir.error().message + std::string(kNoLog));
    return std::nullopt;
  }
  // A name we pick is created new: one taken (by an earlier job, or planted
  // by another user where others may write) gets a suffix, never written.
  const std::string base =
      default_log_path(*dir, log_file_stem(job.name), job.start_wall_ns, getpid());
  std::string error;
  for (int attempt = 0; attempt < kLogNameAttempts; ++attempt) {
    const std::string path =
        attempt == 0 ? base : fmt::format("{}-{}.log", base.substr(0, base.size() - 4), attempt);
    auto created = JobLog::create(path, job_log_header(job, flags), JobLogName::kPicked);
    if (created) return std::move(*created);
    error = created.error().message;
    if (error.find("already exists") == std::string::npos) break;
  }
  warn("warning: " + error + std::string(kNoLog));
  return std::nullopt;
}

// Waits for the child without a timer: a pidfd is readable once it exits,
// so `run --no-trace -- /bin/true` costs no poll interval. The kernel log is
// read as it grows, so its ring buffer cannot overwrite faults of a long job.
ExitStatus wait_untraced(HeldChild& child, KernelEvents& kernel) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child.pid(), 0));
  if (pidfd < 0) return child.wait();  // before Linux 5.3: no live kernel log then
  for (;;) {
    pollfd fds[2] = {{pidfd, POLLIN, 0}, {kernel.fd(), POLLIN | POLLPRI, 0}};
    int n = poll(fds, kernel.fd() >= 0 ? 2 : 1, -1);
    if (n < 0 && errno != EINTR) break;
    if (kernel.fd() >= 0 && fds[1].revents) kernel.poll();
    if (fds[0].revents) break;
  }
  close(pidfd);
  return child.wait();
}

}  // namespace

int run_command(const TraceFlags& flags, const RunOptions& run,
                const std::vector<std::string>& command) {
  auto config = load_effective_config(flags);
  if (!config) {
    warn(config.error().message);
    return 2;
  }
  // A closed stderr (or a notifier that exits early) must not kill us
  // before we hand back the job's status; nor may any other signal
  // (runner/child_process.h): forwarded to the job once it exists.
  signal(SIGPIPE, SIG_IGN);
  SignalForwarder forwarder;
  // An output path that names a symbolic link, a device or a directory is a
  // bad flag: never written through or replaced (files/output_file.h).
  for (const auto& [path, what] :
       {std::pair{flags.no_trace ? std::string() : flags.trace_path, "--trace"},
        std::pair{run.log_path, "--log"}, std::pair{flags.bpf_stats_path, "--bpf-stats"}}) {
    if (path.empty()) continue;
    if (auto ok = check_output_path(path, what); !ok) {
      warn(ok.error().message);
      return 2;
    }
  }

  JobRecord job = make_job_record(command, "run", *config, flags.node_name);
  job.name = run.job_name.empty() ? notify::default_job_name(command) : run.job_name;

  // The durable log exists, header written, before anything else can fail.
  std::optional<JobLog> log;
  std::optional<OutputTee> tee;
  if (auto created = create_job_log(flags, run, *config, job)) {
    log.emplace(std::move(*created));
    job.log_path = log->path();
    if (log->incomplete())
      warn(
          fmt::format("warning: job log {}: cannot write it: {}; the job runs, and its output "
                      "is kept in memory (the last {} MiB) for the failure cause",
                      log->path(), log->first_error(), kUnloggedWindowBytes >> 20));
    auto piped = OutputTee::create(*log);
    if (piped)
      tee.emplace(std::move(*piped));
    else
      warn("warning: " + piped.error().message + "; the log has only ckptscope's lines");
  }
  // Bad notification settings are the user's to fix before the job runs,
  // not something to discover when it ends; a notifier that cannot even be
  // asked is not a reason to hold the job back.
  auto notifier = Notifier::create(run, *config);
  if (!notifier) {
    warn(notifier.error().message);
    if (log) log->note(notifier.error().message + "; the job was not started");
    return 2;
  }
  if (!notifier->check_warning().empty()) {
    warn("warning: " + notifier->check_warning());
    if (log) log->note(notifier->check_warning());
  }
  // A probe mode this kernel cannot give is the user's to fix, like a bad flag.
  // (--no-trace loads nothing: no kernel probe, the wrapper stays cheap.)
  KernelFeatures features;
  if (!flags.no_trace) {
    features = probe_features(flags.probe_mode);
    if (auto ok = check_probe_mode(flags.probe_mode, features); !ok) {
      warn(ok.error().message);
      if (log) log->note(ok.error().message + "; the job was not started");
      return 2;
    }
  }
  KernelEvents kernel;
  if (auto opened = kernel.open(); !opened) warn("note: " + opened.error().message);
  // A model that cannot be read is a bad flag: the job has not started yet.
  std::unique_ptr<RunLogwatch> logwatch;
  if (!run.logwatch_model.empty()) {
    auto loaded = RunLogwatch::load(run.logwatch_model, run.logwatch_alarms);
    if (!loaded) {
      warn(loaded.error().message);
      if (log) log->note(loaded.error().message + "; the job was not started");
      return 2;
    }
    logwatch = std::move(*loaded);
    if (kernel.watching())
      logwatch->watch(kernel);
    else
      warn("note: --logwatch-model: the kernel log cannot be read, so it is not scored");
  }

  std::unique_ptr<Collector> collector;
  if (!flags.no_trace) {
    auto created = Collector::create(*config, flags.trace_path, job);
    if (!created) {
      warn(created.error().message);
      if (log) log->note(created.error().message);
      return 2;
    }
    collector = std::move(*created);
  }

  ChildStdio stdio;
  if (tee) stdio = {tee->child_stdout(), tee->child_stderr()};
  // The gpu_copy stage: CUPTI in the job, its copies sent to the collector.
  std::vector<std::string> env_additions;
  if (collector && !run.no_gpu) env_additions = gpu_injection_env(*collector, flags.quiet);
  // The GPUs the job may use: a pid-less Xid on another is the node's.
  // (The child inherits our environment; env_additions name no devices.)
  JobGpus gpus = resolve_job_gpus(
      [](const std::string& name) -> std::optional<std::string> {
        if (const char* v = std::getenv(name.c_str())) return std::string(v);
        return std::nullopt;
      },
      list_driver_gpus());
  for (const auto& pci : gpus.pci) kernel.add_job_gpu(pci);
  auto child = HeldChild::spawn(command, env_additions, stdio);
  if (!child) {
    std::string message =
        fmt::format("cannot start {}: {}", command.front(), child.error().message);
    warn(message);
    if (log) log->note(message);
    return 127;
  }
  if (tee) tee->start();
  if (collector) {
    ProbeOptions options = make_probe_options(*config);
    options.floor_only = flags.probe_floor;
    options.exporter_socket = flags.probe_floor ? "" : exporter_socket_for(flags);
    options.client_name = "ckptscope run";
    options.probe_mode = flags.probe_mode;
    auto started = collector->start(options, features);
    if (!started)
      warn(fmt::format("warning: nothing will be traced, the job runs anyway: {}",
                       started.error().message));
    for (const auto& note : collector->notes()) warn("note: " + note);
    if (collector->traced() && !flags.quiet)
      warn(fmt::format("note: probe mode {}: {}", collector->probe_mode(),
                       collector->probe_mode_reason()));
    if (!options.exporter_socket.empty() && collector->traced() && !flags.quiet)
      warn("tracing through " + collector->feed_description());
    if (auto ok = collector->trace_tgid(static_cast<uint32_t>(child->pid())); !ok)
      warn("warning: " + ok.error().message);
  }
  job.root_pids = {static_cast<uint32_t>(child->pid())};
  kernel.set_job_root(static_cast<uint32_t>(child->pid()));

  int stats_fd = -1;
  if (collector && collector->traced() && !flags.bpf_stats_path.empty()) {
    if (auto fd = enable_bpf_stats(); fd) {
      stats_fd = *fd;
    } else {
      warn("warning: --bpf-stats: " + fd.error().message);
    }
  }

  forwarder.arm(child->pid());
  std::string exec_error;
  if (auto released = child->release(); !released) {
    exec_error = released.error().message;
    std::string message = fmt::format("cannot start {}: {}", command.front(), exec_error);
    warn(message);
    if (log) log->note(message);
  }

  std::optional<ExitStatus> status;
  if (collector && collector->traced()) {
    while (!(status = child->try_wait())) {
      collector->pump(100);
      for (uint32_t tgid : collector->live_tgids()) kernel.add_job_pid(tgid);
      kernel.poll();
    }
  } else {
    status = wait_untraced(*child, kernel);
  }
  forwarder.disarm();  // the pid is reaped and may be reused
  job.end_mono_ns = monotonic_ns();
  job.exit_code = status->code;
  if (status->signal) {
    job.exit_signal = *status->signal;
    job.exit_code = status->shell_code();
  }
  // From here on nothing may change the status we return.
  try {
    if (tee &&
        !tee->finish(std::chrono::milliseconds(static_cast<int64_t>(run.output_grace_s * 1000))))
      log->note(fmt::format(
          "processes the job left behind still hold its output after {:.1f} s: what they print "
          "from now on is not in this log",
          run.output_grace_s));
    kernel.poll();
    if (collector)
      for (const auto& pci : collector->gpu_pci_addresses()) kernel.add_job_gpu(pci);
    if (collector)
      for (auto& f : kernel.failure_records()) collector->add_failure(std::move(f));
    if (log && log->incomplete()) {
      FailureRecord incomplete = log_incomplete_record(*log, job.end_mono_ns);
      warn("warning: " + incomplete.evidence);
      if (collector) collector->add_failure(incomplete);
    }
    if (logwatch) {
      const std::vector<FailureRecord> alarms = logwatch->failures();
      if (collector)
        for (const auto& f : alarms) collector->add_failure(f);
      if (log) {
        for (const auto& f : alarms) log->note("logwatch: " + f.evidence);
        for (const auto& n : logwatch->notices()) log->note("logwatch: " + n);
        log->note("logwatch: " + logwatch->footer());
      }
    }
    if (status->signal || status->code != 0)
      job.failure = classify_job(job, *status, kernel, exec_error,
                                 log ? log->unlogged_output() : std::string());
    if (log) write_log_footer(*log, job, *status, kernel, gpus);
    if (stats_fd >= 0) {
      write_program_stats(flags.bpf_stats_path, collector->program_stats());
      close(stats_fd);
    }
    std::optional<Trace> trace;
    if (collector) {
      auto finished = collector->finish(job);
      if (!finished) {
        warn("warning: " + finished.error().message);
      } else {
        trace = std::move(*finished);
        print_result(flags, *trace);
      }
    } else if (job.failure && !flags.quiet) {
      warn(describe_failure(*job.failure, job.log_path));
    }
    notifier->send_all(job, *status, kernel, trace ? &*trace : nullptr, flags.trace_path,
                       log ? &*log : nullptr);
  } catch (const std::exception& e) {
    warn(std::string("warning: finishing the job failed: ") + e.what());
  }
  return status->shell_code();
}

}  // namespace ckpt::cli
