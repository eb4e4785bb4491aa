#include "stitch/host_io_stages.h"

#include <algorithm>
#include <set>
#include <string>

#include "stitch/intervals.h"

namespace ckpt {

void HostIoStages::add_cpu_window(uint32_t tid, uint64_t start_ns, uint64_t end_ns,
                                  uint64_t cpu_ns) {
  if (cpu_ns == 0 || end_ns <= start_ns) return;
  cpu_windows_[tid].push_back(CpuWindow{start_ns, end_ns, std::min(cpu_ns, end_ns - start_ns)});
}

void HostIoStages::on_cpu(const CpuEvent& ev) {
  add_cpu_window(ev.tid, ev.window_start_ns, ev.end_ns, ev.cpu_ns);
}

void HostIoStages::add_stages(const OpenCheckpoint& c, Direction d, uint64_t bytes,
                              std::vector<StageRecord>& stages, StageSpans& spans) {
  stages.push_back(serialize_stage(c, bytes));
  stages.push_back(host_io_stage(c, d, spans));
  stages.push_back(metadata_stage(c, spans));
}

void HostIoStages::prune(uint64_t horizon_ns) {
  for (auto it = cpu_windows_.begin(); it != cpu_windows_.end();) {
    auto& q = it->second;
    while (!q.empty() && q.front().end_ns < horizon_ns) q.pop_front();
    it = q.empty() ? cpu_windows_.erase(it) : std::next(it);
  }
}

StageRecord HostIoStages::host_io_stage(const OpenCheckpoint& c, Direction d, StageSpans& spans) {
  StageRecord s;
  s.name = std::string(kStageHostIo);
  std::vector<Interval> iv;
  std::vector<StageSpan> by_file;
  for (const auto& ev : c.calls) {
    // A copy the storage made moved nothing through this node's file calls.
    if (!is_data_op(ev.op) || storage_copied(ev.via)) continue;
    const uint64_t end = ev.busy_end_ns();
    iv.emplace_back(ev.start_ns, end);
    // A directory's fsync serves no checkpoint file: no NFS I/O of a file
    // explains it.
    by_file.push_back(StageSpan{ev.is_directory ? FileId{} : call_key(ev), ev.start_ns, end});
    s.bytes += ev.bytes_moved();
  }
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns);
  spans.add(kStageHostIo, std::move(by_file), c.start_ns, c.end_ns);
  // The calls copy to and from the page cache: the storage has a stage of
  // its own (stitch/storage_stage.h).
  std::set<uint32_t> threads;
  for (const auto& ev : c.calls)
    if (is_data_op(ev.op)) threads.insert(ev.tid);
  auto m = maxima_->page_cache(d, std::max<size_t>(1, threads.size()));
  s.max_Bps = m.Bps;
  s.max_source = m.source;
  return s;
}

StageRecord HostIoStages::metadata_stage(const OpenCheckpoint& c, StageSpans& spans) {
  StageRecord s;
  s.name = std::string(kStageMetadata);
  std::vector<Interval> iv;
  std::vector<StageSpan> by_file;
  for (const auto& ev : c.calls) {
    if (!is_metadata_op(ev.op)) continue;
    iv.emplace_back(ev.start_ns, ev.end_ns);
    by_file.push_back(StageSpan{ev.is_directory ? FileId{} : call_key(ev), ev.start_ns, ev.end_ns});
  }
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns);
  spans.add(kStageMetadata, std::move(by_file), c.start_ns, c.end_ns);
  s.max_source = "n/a (moves no bytes)";
  return s;
}

StageRecord HostIoStages::serialize_stage(const OpenCheckpoint& c, uint64_t bytes) {
  StageRecord s;
  s.name = std::string(kStageSerialize);
  s.bytes = bytes;
  // The threads that did this checkpoint's I/O: their on-CPU time outside I/O
  // inside the window is the (de)serialization that feeds or drains the I/O.
  std::set<uint32_t> threads;
  for (const auto& ev : c.calls) threads.insert(ev.tid);
  std::vector<Interval> iv;
  for (uint32_t tid : threads) {
    auto it = cpu_windows_.find(tid);
    if (it == cpu_windows_.end()) continue;
    for (const auto& w : it->second) {
      // Only the amount of CPU in a window is known, not where: place it at
      // the window's end, next to the I/O call that closed it.
      iv.emplace_back(w.end_ns - w.cpu_ns, w.end_ns);
    }
  }
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns);
  auto m = maxima_->serialize(threads.size());
  s.max_Bps = m.Bps;
  s.max_source = m.source;
  return s;
}

}  // namespace ckpt
