// Traces with known answers for the report's tests: a node's job on its own
// monotonic clock and wall-clock anchor, checkpoints with their stages and
// the calls that moved their data.
#pragma once

#include <string>

#include "analysis/report/report.h"

namespace ckpt::report::test {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSec = 1'000'000'000;
// 2026-11-30 12:00:00 UTC: where the nodes' wall clocks start, give or take.
constexpr uint64_t kWall0 = 1'795'953'600ull * kSec;

class TraceBuilder {
 public:
  // `mono0` differs per node (each boots at its own time); `wall_skew` is
  // where its job starts on the wall clock, relative to kWall0.
  TraceBuilder(std::string node, uint64_t mono0, int64_t wall_skew_ns, uint64_t job_ns) {
    t_.job.node = std::move(node);
    t_.job.name = "train";
    t_.job.command = {"python", "train.py"};
    t_.job.kernel = "6.12.0-test";
    t_.job.ckptscope_version = "0.1.0";
    t_.job.mode = "run";
    t_.job.traced = true;
    t_.job.exit_code = 0;
    t_.job.start_mono_ns = mono0;
    t_.job.end_mono_ns = mono0 + job_ns;
    t_.job.start_wall_ns = static_cast<uint64_t>(static_cast<int64_t>(kWall0) + wall_skew_ns);
  }

  // A checkpoint from `at` (since the job's start) lasting `dur`, moving
  // `bytes` in `calls` read/write calls of equal size, evenly spaced, from
  // thread `tid` of process `tgid` (tid == tgid: the main thread).
  CheckpointRecord& checkpoint(Direction d, uint64_t at, uint64_t dur, uint64_t bytes,
                               uint64_t calls = 4, uint32_t tgid = 100, uint32_t tid = 100) {
    CheckpointRecord c;
    c.id = t_.checkpoints.size() + 1;
    c.direction = d;
    c.start_ns = t_.job.start_mono_ns + at;
    c.end_ns = c.start_ns + dur;
    c.bytes = bytes;
    c.files = 1;
    FileIoRecord f;
    f.path = "/ckpt/shard.pt";
    (d == Direction::Save ? f.bytes_written : f.bytes_read) = bytes;
    (d == Direction::Save ? f.write_calls : f.read_calls) = calls;
    c.file_io.push_back(f);
    for (uint64_t i = 0; i < calls; ++i) {
      IoCallRecord call;
      call.start_ns = c.start_ns + dur * i / calls;
      call.end_ns = c.start_ns + dur * (i + 1) / calls;
      call.tgid = tgid;
      call.tid = tid;
      call.op = d == Direction::Save ? "write" : "read";
      call.bytes = bytes / calls;
      call.ret = static_cast<int64_t>(call.bytes);
      call.path = f.path;
      call.checkpoint_id = c.id;
      t_.io_calls.push_back(call);
    }
    t_.checkpoints.push_back(c);
    return t_.checkpoints.back();
  }

  static StageRecord& stage(CheckpointRecord& c, std::string_view name, uint64_t bytes,
                            uint64_t busy, std::optional<double> max = std::nullopt) {
    StageRecord s;
    s.name = std::string(name);
    s.bytes = bytes;
    s.busy_ns = busy;
    s.max_Bps = max;
    s.max_source = max ? "config:test" : "unknown";
    // Keep kAllStages order, as the stitcher does.
    auto rank = [](std::string_view n) {
      for (size_t i = 0; i < std::size(kAllStages); ++i)
        if (kAllStages[i] == n) return i;
      return std::size(kAllStages);
    };
    auto it = c.stages.begin();
    while (it != c.stages.end() && rank(it->name) < rank(name)) ++it;
    return *c.stages.insert(it, s);
  }

  Trace& trace() { return t_; }
  NodeTrace node_trace() { return {t_.job.node + ".db", t_}; }

 private:
  Trace t_;
};

inline Report must_build(std::vector<NodeTrace> traces, const ReportOptions& options = {}) {
  auto r = build_report(std::move(traces), options);
  if (!r) throw std::runtime_error(r.error().message);
  return std::move(*r);
}

}  // namespace ckpt::report::test
