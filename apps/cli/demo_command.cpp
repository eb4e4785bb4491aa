#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "analysis/format.h"
#include "apps/cli/commands.h"
#include "calibrate/calibrated_maxima.h"

namespace ckpt::cli {
namespace {

namespace fs = std::filesystem;

// The workload ships next to ckptscope (build/bin, or the install's bin).
std::string find_workload() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  for (const fs::path& candidate : {self.parent_path() / "ckptscope-workload",
                                    self.parent_path() / "../tools/workload/ckptscope-workload"}) {
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return "ckptscope-workload";  // then PATH
}

// The host_io stage's maxima for the demo's directory, so that its table
// shows what fraction of the storage each checkpoint got: the calibration
// of that mount when there is one (a short demo run does not replace a
// longer measurement), else a short calibration now. A failure is a
// warning: the demo runs, with the maxima sysfs gives or unknown.
void calibrate_demo_dir(const TraceFlags& flags, const std::string& dir) {
  if (auto config = load_effective_config(flags);
      config && config->maxima.storage_write_Bps && config->maxima.storage_read_Bps) {
    fmt::print(stderr, "ckptscope demo: the storage maxima come from {}\n", config->source);
    return;
  }
  // A --dir the workload is yet to make is on the mount of its nearest
  // existing parent.
  fs::path where = fs::absolute(dir);
  struct stat st {};
  while (stat(where.c_str(), &st) != 0) {
    if (where == where.parent_path()) return;  // the workload will say
    where = where.parent_path();
  }
  auto known = CalibratedMaxima::for_this_process([](const std::string& m) { warn("demo: " + m); });
  if (auto c = known->for_device(st.st_dev)) {
    fmt::print(stderr,
               "ckptscope demo: {} was calibrated on {}: write {}, read {} (ckptscope calibrate "
               "--storage {} measures it again)\n",
               c->mount_point, c->date, format_bandwidth(c->write_Bps),
               format_bandwidth(c->read_Bps), where.string());
    return;
  }
  CalibrateStorageOptions o;
  o.dir = where.string();
  o.bytes = 256ull << 20;
  o.seconds = 10;
  if (auto c = calibrate_storage(o, nullptr); !c)
    warn(
        fmt::format("demo: calibrating {} failed: {}; host_io's maximum is what sysfs says, or "
                    "unknown",
                    where.string(), c.error().message));
}

// The serialize stage's maximum, so that it gets a fraction too: the node's
// memory-copy calibration when there is one, else a short one now (a second
// or two). A failure is a warning: serialize's maximum is then unknown.
void calibrate_demo_memory(const TraceFlags& flags) {
  if (auto config = load_effective_config(flags); config && config->maxima.serialize_Bps) {
    fmt::print(stderr, "ckptscope demo: the serialize maximum comes from {}\n", config->source);
    return;
  }
  auto known = CalibratedMaxima::for_this_process([](const std::string& m) { warn("demo: " + m); });
  if (auto m = known->memory()) {
    fmt::print(stderr,
               "ckptscope demo: the memory copy was calibrated on {}: one thread {} (ckptscope "
               "calibrate --memory measures it again)\n",
               m->date, format_bandwidth(m->one_thread_Bps));
    return;
  }
  CalibrateMemoryOptions o;
  o.rounds = 3;
  if (auto m = calibrate_memory(o, nullptr); !m)
    warn(fmt::format("demo: calibrating the memory copy failed: {}; serialize's maximum is unknown",
                     m.error().message));
}

}  // namespace

int demo_command(const TraceFlags& flags, const DemoOptions& demo) {
  std::string dir = demo.dir;
  bool made_temp = false;
  if (dir.empty()) {
    // On local disk, not /tmp (often tmpfs): the demo is about storage.
    std::string tmpl = (fs::current_path() / "ckptscope-demo-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      warn(fmt::format("cannot create a demo directory in {}: {}", fs::current_path().string(),
                       std::strerror(errno)));
      return 2;
    }
    dir = tmpl;
    made_temp = true;
  }
  std::vector<std::string> command = {find_workload(),
                                      "--dir",
                                      dir,
                                      "--shards",
                                      std::to_string(demo.shards),
                                      "--shard-size",
                                      demo.shard_size,
                                      "--checkpoints",
                                      std::to_string(demo.checkpoints),
                                      "--serialize-ms",
                                      "200",
                                      "--fsync",
                                      "--cold-checkpoints",
                                      "1"};
  // The cases the storage stage tells apart: the first save fsync'd, the
  // last buffered (with two or more); the first load cold (its files
  // evicted from the page cache), the others warm.
  if (demo.checkpoints >= 2) {
    command.emplace_back("--buffered-checkpoints");
    command.push_back(std::to_string(demo.checkpoints));
  }
  calibrate_demo_dir(flags, dir);
  calibrate_demo_memory(flags);
  fmt::print(stderr,
             "ckptscope demo: {} checkpoints of {} x {} shards in {}, saved (the first with "
             "fsync{}) then loaded (the first from the storage, its files dropped from the page "
             "cache{})\n",
             demo.checkpoints, demo.shards, demo.shard_size, dir,
             demo.checkpoints >= 2 ? ", the last without" : "",
             demo.checkpoints >= 2 ? ", the others from the cache" : "");
  RunOptions run;
  run.job_name = "ckptscope-demo";
  run.log_dir = fs::path(flags.trace_path).parent_path().string();  // the log beside the trace
  int rc = run_command(flags, run, command);
  if (made_temp) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  return rc;
}

}  // namespace ckpt::cli
