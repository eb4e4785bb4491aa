// A synthetic trace of many checkpoints, for what must scale with their
// number: `project` and `report` on a long job (issue 36). One node saves
// (and every fifth time loads) a small checkpoint a second: two shards
// written (or read) in one call each and fsync'd, over NFS, with the WRITE
// (or READ) and COMMIT RPCs behind them and the stages the stitcher would
// give. Small on purpose, so 40,000 checkpoints write in seconds; what is
// measured is the cost per checkpoint. Used by tests/cli (a 40,000-checkpoint
// trace must go through `project` and `report`) and bench/scale_bench.cpp
// (their time and memory at 10k, 20k and 40k checkpoints).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "model/records.h"

namespace ckpt::testing {

inline Trace scale_trace(size_t checkpoints, const std::string& node = "node-0") {
  constexpr uint64_t kSec = 1'000'000'000;
  constexpr uint64_t kMs = 1'000'000;
  constexpr uint64_t kShard = 4u << 20;
  constexpr uint64_t kStartMono = 1000 * kSec;
  Trace t;
  t.job.command = {"python", "train.py"};
  t.job.name = "train";
  t.job.mode = "run";
  t.job.node = node;
  t.job.kernel = "6.12.0";
  t.job.ckptscope_version = "0.1.0";
  t.job.config_json = R"({"checkpoint":{"quiet_gap_ms":1000}})";
  t.job.start_wall_ns = 1'796'018'400 * kSec;
  t.job.start_mono_ns = kStartMono;
  t.job.end_mono_ns = kStartMono + (checkpoints + 2) * kSec;
  t.job.exit_code = 0;
  t.job.traced = true;
  t.job.probe_mode = "syscall";
  t.job.root_pids = {4100};
  t.checkpoints.reserve(checkpoints);
  t.io_calls.reserve(checkpoints * 6);
  t.rpc_calls.reserve(checkpoints * 3);
  for (size_t i = 0; i < checkpoints; ++i) {
    const uint64_t id = i + 1;
    const bool load = i % 5 == 4;
    const uint64_t start = kStartMono + kSec + i * kSec;
    // Every 97th checkpoint is slow: the spread a forecast reports.
    const uint64_t data_ns = (load ? 20 : 40) * kMs * (i % 97 == 0 ? 3 : 1);
    const uint64_t fsync_ns = load ? 0 : 10 * kMs;
    const uint64_t end = start + kMs + data_ns + fsync_ns + kMs;
    CheckpointRecord c;
    c.id = id;
    c.direction = load ? Direction::Load : Direction::Save;
    c.start_ns = start;
    c.end_ns = end;
    c.bytes = 2 * kShard;
    c.files = 2;
    c.bottleneck = "rpc_rtt";
    c.bytes_by_via = {{"syscall", 2 * kShard}};
    const std::string dir = fmt::format("/mnt/nfs/ckpt/step_{:07}", id);
    NfsCheckpointRecord nfs;
    nfs.servers = {"10.0.0.5:2049"};
    for (int shard = 0; shard < 2; ++shard) {
      const std::string path = fmt::format("{}/shard_{}.pt", dir, shard);
      const auto tid = static_cast<uint32_t>(4100 + shard);
      const uint64_t data_start = start + kMs;
      const uint64_t data_end = data_start + data_ns;
      t.io_calls.push_back(
          {start, start + kMs / 2, 4100, tid, "open", 3, 0, path, id, 1, "syscall", kMs / 2, 0});
      t.io_calls.push_back({data_start, data_end, 4100, tid, load ? "read" : "write",
                            static_cast<int64_t>(kShard), kShard, path, id, 1, "syscall", data_ns,
                            0});
      t.io_calls.push_back(
          {end - kMs / 2, end, 4100, tid, "close", 0, 0, path, id, 1, "syscall", kMs / 2, 0});
      RpcCallRecord rpc;
      rpc.start_ns = data_start + kMs;
      rpc.queue_ns = 2 * kMs;
      rpc.rtt_ns = data_ns - 4 * kMs;
      rpc.execute_ns = rpc.queue_ns + rpc.rtt_ns;
      rpc.end_ns = rpc.start_ns + rpc.execute_ns;
      rpc.op = load ? "READ" : "WRITE";
      rpc.server = "10.0.0.5:2049";
      rpc.bytes_sent = load ? 160 : kShard + 236;
      rpc.bytes_received = load ? kShard + 120 : 160;
      rpc.payload_bytes = kShard;
      rpc.transmissions = 1;
      rpc.checkpoint_io = true;
      rpc.checkpoint_id = id;
      t.rpc_calls.push_back(rpc);
      nfs.io_rpcs += 1;
      nfs.io_bytes += kShard;
      FileIoRecord f;
      f.path = path;
      f.dev = 0x2b;
      f.ino = 7'000'000 + 2 * id + static_cast<uint64_t>(shard);
      (load ? f.bytes_read : f.bytes_written) = kShard;
      (load ? f.read_calls : f.write_calls) = 1;
      f.other_calls = 2;
      f.busy_ns = data_ns + kMs;
      f.first_ns = start;
      f.last_ns = end;
      c.file_io.push_back(std::move(f));
    }
    RpcOpStats op;
    op.op = load ? "READ" : "WRITE";
    op.count = 2;
    op.transmissions = 2;
    op.bytes_sent = load ? 320 : 2 * (kShard + 236);
    op.bytes_received = load ? 2 * (kShard + 120) : 320;
    op.queue_ns = 4 * kMs;
    op.rtt_ns = 2 * (data_ns - 4 * kMs);
    op.execute_ns = op.queue_ns + op.rtt_ns;
    nfs.rpc_ops.push_back(op);
    nfs.queue_wait = {2, 2 * kMs, 2 * kMs, 2 * kMs, 2 * kMs, 2 * kMs};
    nfs.rtt = {2,
               data_ns - 4 * kMs,
               data_ns - 4 * kMs,
               data_ns - 4 * kMs,
               data_ns - 4 * kMs,
               data_ns - 4 * kMs};
    c.nfs = std::move(nfs);
    c.stages.push_back({"host_io", 2 * kShard, data_ns + fsync_ns, 2.5e9, "config", data_ns / 4});
    c.stages.push_back({"metadata", 0, 2 * kMs, std::nullopt, "unknown", 2 * kMs});
    c.stages.push_back({"nfs_client", 2 * kShard, data_ns - 2 * kMs, std::nullopt, "unknown", 0});
    c.stages.push_back({"rpc_queue", 2 * kShard, 2 * kMs, std::nullopt, "unknown", 2 * kMs});
    c.stages.push_back(
        {"rpc_rtt", 2 * kShard, data_ns - 4 * kMs, 1.25e9, "config", data_ns - 4 * kMs});
    t.checkpoints.push_back(std::move(c));
  }
  return t;
}

}  // namespace ckpt::testing
