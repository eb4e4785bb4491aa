// Traces whose scaling answer is known: nodes that each save (or load) the
// same bytes with k RPCs in flight, at the rate their own link allows or the
// shared storage's maximum split N ways, whichever is lower.
#pragma once

#include <string>
#include <vector>

#include "analysis/report/report.h"

namespace ckpt::projection::test {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSec = 1'000'000'000;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kWall0 = 1'795'953'600ull * kSec;

struct NodeRun {
  std::string node;
  uint64_t wall_at_ns = 0;  // the checkpoint's start on the wall clock, relative to kWall0
  Direction direction = Direction::Save;
  uint64_t rpcs = 100;
  uint64_t payload = kMiB;  // per RPC
  uint32_t in_flight = 16;
  uint64_t window_ns = kSec;       // first RPC start to last end
  uint64_t before_ns = 100 * kMs;  // the checkpoint's time before its first RPC
  bool with_rpcs = true;
  std::string read_op = "READ";  // NFSv4.2: READ_PLUS
  std::string config_json;
};

// One node's trace: its job starts 1 s before the checkpoint; RPCs in
// `in_flight` lanes, each lane's back to back over the window.
inline report::NodeTrace node_trace(const NodeRun& run) {
  Trace t;
  t.job.node = run.node;
  t.job.name = "train";
  t.job.command = {"python", "train.py"};
  t.job.kernel = "6.12.0-test";
  t.job.ckptscope_version = "0.1.0";
  t.job.mode = "run";
  t.job.traced = true;
  t.job.exit_code = 0;
  t.job.config_json = run.config_json;
  const uint64_t mono0 = 7 * kSec;
  t.job.start_mono_ns = mono0;
  t.job.start_wall_ns = kWall0 + run.wall_at_ns - kSec;
  CheckpointRecord c;
  c.id = 1;
  c.direction = run.direction;
  c.start_ns = mono0 + kSec;
  c.end_ns = c.start_ns + run.before_ns + run.window_ns;
  c.bytes = run.rpcs * run.payload;
  c.files = 1;
  c.bottleneck = std::string(kStageRpcRtt);
  StageRecord s;
  s.name = std::string(kStageRpcRtt);
  s.bytes = c.bytes;
  s.busy_ns = run.window_ns;
  c.stages.push_back(s);
  FileIoRecord f;
  f.path = "/ckpt/shard.pt";
  (run.direction == Direction::Save ? f.bytes_written : f.bytes_read) = c.bytes;
  c.file_io.push_back(f);
  t.checkpoints.push_back(c);
  t.job.end_mono_ns = c.end_ns + kSec;
  if (run.with_rpcs) {
    const uint64_t per_lane = run.rpcs / run.in_flight;
    const uint64_t each = run.window_ns / per_lane;
    for (uint64_t j = 0; j < run.rpcs; ++j) {
      RpcCallRecord r;
      r.start_ns = c.start_ns + run.before_ns + (j / run.in_flight) * each;
      r.end_ns = r.start_ns + each;
      r.execute_ns = each;
      r.queue_ns = each / 10;
      r.rtt_ns = each - r.queue_ns;
      r.op = run.direction == Direction::Save ? "WRITE" : run.read_op;
      r.payload_bytes = run.payload;
      r.status = static_cast<int32_t>(run.payload);  // a READ's or WRITE's byte count
      r.checkpoint_io = true;
      r.checkpoint_id = 1;
      t.rpc_calls.push_back(r);
    }
  }
  return {run.node + ".db", std::move(t)};
}

inline report::Report build(const std::vector<NodeRun>& runs) {
  std::vector<report::NodeTrace> traces;
  for (const auto& r : runs) traces.push_back(node_trace(r));
  auto built = report::build_report(std::move(traces), {});
  if (!built) throw std::runtime_error(built.error().message);
  return std::move(*built);
}

}  // namespace ckpt::projection::test
