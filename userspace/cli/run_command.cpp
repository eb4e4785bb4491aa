#include <signal.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "collector/collector.h"
#include "common/clock.h"
#include "runner/child_process.h"

namespace ckpt::cli {
namespace {

void write_program_stats(const std::string& path, const std::vector<ProgramStats>& stats) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : stats)
    j.push_back({{"name", s.name}, {"run_cnt", s.run_cnt}, {"run_time_ns", s.run_time_ns}});
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) warn("warning: --bpf-stats: cannot write " + path);
}

}  // namespace

int run_command(const TraceFlags& flags, const std::vector<std::string>& command) {
  auto config = load_effective_config(flags);
  if (!config) {
    warn(config.error().message);
    return 2;
  }
  // A closed stderr must not kill us before we hand back the job's status.
  signal(SIGPIPE, SIG_IGN);

  JobRecord job = make_job_record(command, "run", *config);
  std::unique_ptr<Collector> collector;
  if (!flags.no_trace) {
    auto created = Collector::create(*config, flags.trace_path, job);
    if (!created) {
      warn(created.error().message);
      return 2;
    }
    collector = std::move(*created);
  }

  auto child = HeldChild::spawn(command);
  if (!child) {
    warn(fmt::format("cannot start {}: {}", command.front(), child.error().message));
    return 127;
  }
  if (collector) {
    ProbeOptions options = make_probe_options(*config);
    options.floor_only = flags.probe_floor;
    auto started = collector->start(options, KernelFeatures::probe());
    if (!started)
      warn(fmt::format("warning: nothing will be traced, the job runs anyway: {}",
                       started.error().message));
    for (const auto& note : collector->notes()) warn("note: " + note);
    if (auto ok = collector->trace_tgid(static_cast<uint32_t>(child->pid())); !ok)
      warn("warning: " + ok.error().message);
  }
  job.root_pids = {static_cast<uint32_t>(child->pid())};

  int stats_fd = -1;
  if (collector && collector->traced() && !flags.bpf_stats_path.empty()) {
    if (auto fd = enable_bpf_stats(); fd) {
      stats_fd = *fd;
    } else {
      warn("warning: --bpf-stats: " + fd.error().message);
    }
  }

  SignalForwarder forwarder(child->pid());
  if (auto released = child->release(); !released)
    warn(fmt::format("{}: {}", command.front(), released.error().message));

  std::optional<ExitStatus> status;
  if (collector && collector->traced()) {
    while (!(status = child->try_wait())) collector->pump(100);
  } else {
    status = child->wait();  // nothing to collect: just wait
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
    if (stats_fd >= 0) {
      write_program_stats(flags.bpf_stats_path, collector->program_stats());
      close(stats_fd);
    }
    if (collector) {
      auto trace = collector->finish(job);
      if (!trace) {
        warn("warning: " + trace.error().message);
      } else {
        print_result(flags, *trace);
      }
    }
  } catch (const std::exception& e) {
    warn(std::string("warning: finishing the trace failed: ") + e.what());
  }
  return status->shell_code();
}

}  // namespace ckpt::cli
