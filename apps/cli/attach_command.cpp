#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "apps/cli/commands.h"
#include "apps/collector/collector.h"
#include "common/clock.h"

namespace ckpt::cli {
namespace {

std::atomic<int> g_stop_signal{0};
void on_stop_signal(int sig) { g_stop_signal.store(sig); }

// pid and all its descendants, from /proc/*/stat (field 4 is the parent).
std::vector<uint32_t> process_tree(uint32_t root) {
  std::multimap<uint32_t, uint32_t> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    auto close = line.rfind(')');  // comm may contain spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    uint32_t ppid = 0;
    rest >> state >> ppid;
    children.emplace(ppid, static_cast<uint32_t>(std::stoul(name)));
  }
  std::vector<uint32_t> out{root};
  for (size_t i = 0; i < out.size(); ++i) {
    auto [lo, hi] = children.equal_range(out[i]);
    for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  }
  return out;
}

std::vector<uint32_t> cgroup_procs(const std::string& cgroup) {
  std::vector<uint32_t> out;
  std::ifstream in(std::filesystem::path(cgroup) / "cgroup.procs");
  uint32_t pid;
  while (in >> pid) out.push_back(pid);
  return out;
}

bool alive(uint32_t pid) { return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

// A relative --checkpoint-dir names a directory of the traced job, so it is
// taken from the job's working directory, not this command's.
RelativeBase relative_base_of(const AttachTarget& target) {
  if (!target.pid)
    return {std::nullopt,
            fmt::format("--cgroup {}'s processes have no one working directory", target.cgroup)};
  std::error_code ec;
  const auto cwd = std::filesystem::read_symlink(fmt::format("/proc/{}/cwd", *target.pid), ec);
  if (ec)
    return {std::nullopt, fmt::format("--pid {}'s working directory cannot be read ({})",
                                      *target.pid, ec.message())};
  return {cwd.string(), {}};
}

}  // namespace

int attach_command(const TraceFlags& flags, const AttachTarget& target) {
  auto config = load_effective_config(flags, relative_base_of(target));
  if (!config) {
    warn(config.error().message);
    return 2;
  }
  const KernelFeatures features = probe_features(flags.probe_mode);
  if (auto ok = check_probe_mode(flags.probe_mode, features); !ok) {
    warn(ok.error().message);
    return 2;
  }
  ProbeOptions options = make_probe_options(*config);
  options.probe_mode = flags.probe_mode;
  std::vector<uint32_t> initial;
  std::vector<std::string> command;
  if (target.pid) {
    if (*target.pid <= 0 || !alive(static_cast<uint32_t>(*target.pid))) {
      warn(fmt::format("--pid {}: no such process", *target.pid));
      return 2;
    }
    initial = process_tree(static_cast<uint32_t>(*target.pid));
    // A process tree can be followed through the node exporter; a cgroup
    // (processes that enter it later) needs probes of our own.
    options.exporter_socket = exporter_socket_for(flags);
    options.client_name = "ckptscope attach";
    command = {fmt::format("pid {}", *target.pid)};
  } else {
    struct stat st {};
    if (stat((target.cgroup + "/cgroup.procs").c_str(), &st) != 0) {
      warn(fmt::format("--cgroup {}: not a cgroup directory (no cgroup.procs)", target.cgroup));
      return 2;
    }
    options.filter = ProbeOptions::Filter::Cgroup;
    options.cgroup_path = target.cgroup;
    initial = cgroup_procs(target.cgroup);
    command = {fmt::format("cgroup {}", target.cgroup)};
  }
  signal(SIGPIPE, SIG_IGN);
  JobRecord job = make_job_record(command, "attach", *config, flags.node_name);
  job.root_pids = initial;
  auto created = Collector::create(*config, flags.trace_path, job);
  if (!created) {
    warn(created.error().message);
    return 2;
  }
  auto& collector = *created;
  if (auto started = collector->start(options, features); !started) {
    warn("cannot trace: " + started.error().message);
    return 1;
  }
  for (const auto& note : collector->notes()) warn("note: " + note);
  if (!flags.quiet)
    warn(fmt::format("note: probe mode {}: {}", collector->probe_mode(),
                     collector->probe_mode_reason()));
  if (!options.exporter_socket.empty() && collector->traced() && !flags.quiet)
    warn("tracing through " + collector->feed_description());
  for (uint32_t pid : initial)
    if (auto ok = collector->trace_tgid(pid); !ok) warn("warning: " + ok.error().message);

  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  // --duration is checked (main.cpp); the clamp keeps any other caller from
  // the overflow that ended the trace at once.
  const double duration_s = std::min(target.duration_s, kMaxAttachDurationS);
  const uint64_t deadline =
      duration_s > 0 ? job.start_mono_ns + static_cast<uint64_t>(duration_s * 1e9) : 0;
  uint64_t last_liveness_check = 0;
  while (g_stop_signal.load() == 0) {
    collector->pump(100);
    uint64_t now = monotonic_ns();
    if (deadline && now >= deadline) break;
    if (now - last_liveness_check >= 500'000'000) {
      last_liveness_check = now;
      bool any = false;
      if (target.pid) {
        // Every process we know of (the tree at attach, and children seen
        // forking since): stop once none is alive.
        for (uint32_t pid : collector->live_tgids()) any = any || alive(pid);
      } else {
        any = !cgroup_procs(target.cgroup).empty();
      }
      if (!any) break;
    }
  }
  job.end_mono_ns = monotonic_ns();
  auto trace = collector->finish(job);
  if (!trace) {
    warn(trace.error().message);
    return 1;
  }
  print_result(flags, *trace);
  return 0;
}

}  // namespace ckpt::cli
