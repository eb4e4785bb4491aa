// The subcommands. Each returns the process exit code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/session.h"

namespace ckpt::cli {

// Exits with the job's status (128+N for signal N); never changes it.
int run_command(const TraceFlags& flags, const std::vector<std::string>& command);

struct AttachTarget {
  std::optional<int> pid;
  std::string cgroup;
  double duration_s = 0;  // 0 = until Ctrl-C or the processes are gone
};
int attach_command(const TraceFlags& flags, const AttachTarget& target);

int summary_command(const std::string& trace_path, bool json);

struct DemoOptions {
  std::string dir;  // where the workload writes; a temp dir by default
  std::string shard_size = "32M";
  int shards = 4;
  int checkpoints = 2;
};
int demo_command(const TraceFlags& flags, const DemoOptions& demo);

}  // namespace ckpt::cli
