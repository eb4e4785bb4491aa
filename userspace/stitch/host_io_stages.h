// The job's own side of a checkpoint, from its system calls and CPU time:
// serialize (on-CPU time between its I/O calls), host_io (the data calls)
// and metadata (opens, stats, renames). Owns the threads' CPU windows.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "model/events.h"
#include "model/records.h"
#include "stitch/exclusive.h"
#include "stitch/maxima.h"
#include "stitch/open_checkpoint.h"

namespace ckpt {

class HostIoStages {
 public:
  explicit HostIoStages(std::shared_ptr<MaximaProvider> maxima) : maxima_(std::move(maxima)) {}

  // `cpu_ns` of on-CPU time somewhere in [start_ns, end_ns) on thread `tid`.
  void add_cpu_window(uint32_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t cpu_ns);
  void on_cpu(const CpuEvent& ev);
  // A thread that is gone adds no more windows.
  void forget_thread(uint32_t tid) { cpu_windows_.erase(tid); }
  // Appends serialize, host_io and metadata for the closing checkpoint, and
  // host_io's and metadata's intervals, by file, to `spans`.
  void add_stages(const OpenCheckpoint& c, Direction d, uint64_t bytes,
                  std::vector<StageRecord>& stages, StageSpans& spans);
  // Drops the windows that ended before `horizon_ns`.
  void prune(uint64_t horizon_ns);

 private:
  struct CpuWindow {
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t cpu_ns;
  };

  StageRecord host_io_stage(const OpenCheckpoint& c, Direction d, StageSpans& spans);
  static StageRecord metadata_stage(const OpenCheckpoint& c, StageSpans& spans);
  StageRecord serialize_stage(const OpenCheckpoint& c, uint64_t bytes);

  std::shared_ptr<MaximaProvider> maxima_;
  std::unordered_map<uint32_t, std::deque<CpuWindow>> cpu_windows_;
};

}  // namespace ckpt
