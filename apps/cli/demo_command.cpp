#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "apps/cli/commands.h"

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
                                      "--fsync"};
  fmt::print(stderr, "ckptscope demo: {} checkpoints of {} x {} shards in {}, saved then loaded\n",
             demo.checkpoints, demo.shards, demo.shard_size, dir);
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
