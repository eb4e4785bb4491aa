// Report time for a trace with a million I/O events (target: under 2 s), end
// to end as a user runs it: `ckptscope report TRACE.db -o report.html` (and
// --format json, md), the real binary started once per run, wall time and
// peak RSS from wait4(). Then the same three steps in this process, timed
// apart, so that a regression points at read_trace, build_report (and its
// timelines) or one rendering.
//
// The traces are synthetic but shaped like a real one: a 2-hour job on one
// node whose 4 processes of 4 threads each save (and now and then load)
// 20 checkpoints of one 1 MiB call after another to one shard per thread on
// NFS, with open/fsync/close and a metadata file; the RPC behind every call,
// and TCP samples every 10 ms for the 2 connections (nconnect=2) during
// checkpoints. 1,000,000 io_calls on one node, and the same job on 3 nodes
// (333,334 + 333,333 + 333,333 calls, clocks a few ms apart, one node a
// straggler) merged into one report.
//
// Runs alternate: every round runs each case once, in an order rotated by
// one each round; medians are quoted (bench/README.md).
//
//   report_bench [--ckptscope PATH] [--runs N] [--events N] [--checkpoints N] [--dir DIR] [--keep]
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report/report.h"
#include "analysis/report/report_internal.h"  // build_timeline, timed apart
#include "bench/child_run.h"
#include "exporters/sqlite/trace_store.h"

#ifndef CKPT_BENCH_CKPTSCOPE
#define CKPT_BENCH_CKPTSCOPE "ckptscope"
#endif

namespace {

using namespace ckpt;
using bench::ChildRun;
using bench::median;
using bench::run_child;
using bench::seconds_since;
namespace fs = std::filesystem;

constexpr double kTargetSeconds = 2.0;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSec = 1'000'000'000;
constexpr uint64_t kMiB = 1ull << 20;

// ---------------------------------------------------------------------------
// The synthetic trace.

struct Shape {
  std::string node;
  size_t io_calls = 1'000'000;
  uint64_t start_mono_ns = 0;  // the node's uptime at the job's start
  int64_t clock_skew_ns = 0;   // its wall clock against the first node's
  double slowdown = 1.0;       // > 1: a straggler
  uint64_t seed = 1;
  int checkpoints = 20;  // over the 2-hour job
};

constexpr int kProcs = 4;
constexpr int kThreadsPerProc = 4;
constexpr int kThreads = kProcs * kThreadsPerProc;
constexpr uint64_t kJobNs = 7200 * kSec;
constexpr uint64_t kFirstCheckpointNs = 60 * kSec;
constexpr uint64_t kTcpEveryNs = 10 * kMs;
constexpr uint64_t kWallStart = 1'796'018'400 * kSec;  // 2026-11-30 06:00 UTC
const char* const kServer = "10.20.0.5:2049";
constexpr uint64_t kCookies[] = {0x51a7e0001, 0x51a7e0002};
constexpr double kStorageWriteBps = 20e9;  // the whole cluster's, from the config
constexpr double kStorageReadBps = 60e9;
constexpr double kNicBps = 12.5e9;  // 100 Gbit/s
constexpr double kPcieBps = 25.2e9;

// A resume at the start, then evaluations that read a checkpoint back.
bool is_load(int i) { return i % 5 == 0; }

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  // Uniform in [lo, hi).
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + g_() % std::max<uint64_t>(hi - lo, 1); }
  // Around `mean`, spread by +-`spread` (a fraction), with a tail now and then.
  uint64_t around(uint64_t mean, double spread) {
    std::uniform_real_distribution<double> u(1.0 - spread, 1.0 + spread);
    double v = static_cast<double>(mean) * u(g_);
    if (g_() % 50 == 0) v *= 3.0;
    return static_cast<uint64_t>(v);
  }

 private:
  std::mt19937_64 g_;
};

DurationStats stats_of(std::vector<uint64_t> v) {
  DurationStats d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  auto rank = [&](double p) {
    size_t r = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(r, 1, v.size()) - 1];
  };
  uint64_t sum = 0;
  for (uint64_t x : v) sum += x;
  d.count = v.size();
  d.mean_ns = sum / v.size();
  d.p50_ns = rank(0.50);
  d.p90_ns = rank(0.90);
  d.p99_ns = rank(0.99);
  d.max_ns = v.back();
  return d;
}

StageRecord stage(std::string_view name, uint64_t bytes, uint64_t busy_ns,
                  std::optional<double> max, std::string source) {
  return StageRecord{std::string(name), bytes, busy_ns, max, std::move(source)};
}

struct CheckpointBuild {
  std::vector<IoCallRecord> calls;
  std::vector<RpcCallRecord> rpcs;
  std::vector<TcpSampleRecord> samples;
};

// One checkpoint of one node: the calls of its 16 threads, the RPCs behind
// them, the TCP samples meanwhile, and the stitched record they add up to.
CheckpointRecord make_checkpoint(const Shape& shape, int i, size_t n_calls, uint64_t start_ns,
                                 Rng& rng, CheckpointBuild& out,
                                 std::map<uint64_t, TcpSampleRecord>& tcp_state) {
  const bool load = is_load(i);
  const uint64_t id = static_cast<uint64_t>(i) + 1;
  const uint64_t step = 1000 * static_cast<uint64_t>(load ? std::max(i, 1) : i + 1);
  const std::string dir = fmt::format("/mnt/nfs/ckpt/llama-8b/step_{:07}", step);
  // Per shard: open, fsync (saves), close; the metadata file: open, the
  // data call, fsync, close, rename (saves), or open, read, close (loads).
  const size_t other_per_shard = load ? 2 : 3;
  const size_t metadata_calls = load ? 3 : 5;
  const size_t data = n_calls - kThreads * other_per_shard - metadata_calls;

  CheckpointRecord c;
  c.id = id;
  c.direction = load ? Direction::Load : Direction::Save;
  c.start_ns = start_ns;

  std::vector<IoCallRecord> calls;
  calls.reserve(n_calls);
  std::map<std::string, FileIoRecord> files;
  auto add = [&](uint32_t tgid, uint32_t tid, std::string op, uint64_t s, uint64_t dur, int64_t ret,
                 uint64_t bytes, const std::string& path) {
    IoCallRecord r{s, s + dur, tgid, tid, std::move(op), ret, bytes, path, id};
    FileIoRecord& f = files[path];
    if (f.path.empty()) {
      f.path = path;
      f.dev = 0x2b;
      f.ino = 7'340'000 + (std::hash<std::string>{}(path) % 1'000'000);
      f.first_ns = r.start_ns;
    }
    if (r.op == "write") {
      f.bytes_written += bytes;
      ++f.write_calls;
    } else if (r.op == "read") {
      f.bytes_read += bytes;
      ++f.read_calls;
    } else {
      ++f.other_calls;
    }
    f.busy_ns += dur;
    f.first_ns = std::min(f.first_ns, r.start_ns);
    f.last_ns = std::max(f.last_ns, r.end_ns);
    calls.push_back(std::move(r));
    return s + dur;
  };

  // 1 MiB per call at ~160 MB/s per thread when saving, faster loading; the
  // gaps between calls are the thread serializing the next piece.
  const auto call_ns =
      static_cast<uint64_t>(static_cast<double>(load ? 3'800'000 : 5'600'000) * shape.slowdown);
  const uint64_t gap_ns = load ? 150'000 : 700'000;
  uint64_t end_ns = start_ns;
  for (int t = 0; t < kThreads; ++t) {
    const auto tgid = static_cast<uint32_t>(41'000 + 100 * (t / kThreadsPerProc));
    const auto tid =
        tgid + static_cast<uint32_t>(t % kThreadsPerProc);  // the first is the main thread
    const std::string path =
        fmt::format("{}/__{}_{}.distcp", dir, t / kThreadsPerProc, t % kThreadsPerProc);
    const size_t mine = data / kThreads + (static_cast<size_t>(t) < data % kThreads ? 1 : 0);
    uint64_t now = start_ns + rng.between(0, 40 * kMs);
    now = add(tgid, tid, "open", now, rng.around(180'000, 0.3), 17 + t, 0, path) +
          rng.between(10'000, 50'000);
    for (size_t k = 0; k < mine; ++k) {
      const uint64_t bytes = k + 1 == mine ? kMiB / 2 + rng.between(0, kMiB / 2) : kMiB;
      now = add(tgid, tid, load ? "read" : "write", now, rng.around(call_ns, 0.25),
                static_cast<int64_t>(bytes), bytes, path);
      now += rng.around(gap_ns, 0.5);
    }
    if (!load) now = add(tgid, tid, "fsync", now, rng.around(120 * kMs, 0.4), 0, 0, path);
    now = add(tgid, tid, "close", now, rng.around(60'000, 0.3), 0, 0, path);
    if (t == 0) {
      // Rank 0's main thread writes (or reads) the checkpoint's metadata.
      const std::string meta = dir + "/.metadata";
      const std::string tmp = dir + "/.metadata.tmp";
      const std::string& p = load ? meta : tmp;
      now = add(tgid, tid, "open", now, rng.around(900'000, 0.3), 40, 0, p);
      now =
          add(tgid, tid, load ? "read" : "write", now, rng.around(400'000, 0.3), 48'312, 48'312, p);
      if (!load) now = add(tgid, tid, "fsync", now, rng.around(3 * kMs, 0.3), 0, 0, p);
      now = add(tgid, tid, "close", now, rng.around(700'000, 0.3), 0, 0, p);
      if (!load) now = add(tgid, tid, "rename", now, rng.around(1'400'000, 0.3), 0, 0, meta);
    }
    end_ns = std::max(end_ns, now);
  }
  c.end_ns = end_ns;
  std::sort(calls.begin(), calls.end(),
            [](const IoCallRecord& a, const IoCallRecord& b) { return a.start_ns < b.start_ns; });

  // The RPC behind each call (wsize/rsize 1 MiB): WRITE/READ and COMMIT
  // carry the checkpoint's pages; OPEN, CLOSE, GETATTR, RENAME do not. The
  // transport is full: requests wait to be sent longer than a round trip.
  std::vector<RpcCallRecord> rpcs;
  rpcs.reserve(calls.size() + files.size());
  std::vector<uint64_t> queue, rtt;
  uint64_t queue_total = 0;
  for (const IoCallRecord& call : calls) {
    RpcCallRecord r;
    r.start_ns = call.start_ns + (call.end_ns - call.start_ns) / 5;
    r.server = kServer;
    r.transmissions = 1;
    r.checkpoint_id = id;
    if (call.op == "write" || call.op == "read") {
      r.op = call.op == "write" ? "WRITE" : "READ";
      r.checkpoint_io = true;
      r.payload_bytes = call.bytes;
      r.queue_ns = rng.around(static_cast<uint64_t>(6.5e6 * shape.slowdown), 0.6);
      r.rtt_ns = rng.around(2'100'000, 0.3);
      r.bytes_sent = call.op == "write" ? call.bytes + 236 : 164;
      r.bytes_received = call.op == "write" ? 160 : call.bytes + 120;
      if (rng.between(0, 20'000) == 0) r.transmissions = 2;
    } else {
      r.op = call.op == "fsync"   ? "COMMIT"
             : call.op == "open"  ? "OPEN"
             : call.op == "close" ? "CLOSE"
                                  : "RENAME";
      r.checkpoint_io = call.op == "fsync";
      r.queue_ns = rng.around(300'000, 0.5);
      r.rtt_ns = rng.around(r.op == "COMMIT" ? 90 * kMs : 600'000, 0.3);
      r.bytes_sent = 220;
      r.bytes_received = 300;
    }
    r.execute_ns = r.queue_ns + r.rtt_ns;
    r.end_ns = r.start_ns + r.execute_ns;
    if (r.checkpoint_io) {
      queue.push_back(r.queue_ns);
      rtt.push_back(r.rtt_ns);
      queue_total += r.queue_ns;
    }
    rpcs.push_back(std::move(r));
  }
  for (const auto& [path, f] : files) {  // a GETATTR per file after its close
    RpcCallRecord r;
    r.start_ns = f.last_ns + 20'000;
    r.queue_ns = rng.around(200'000, 0.5);
    r.rtt_ns = rng.around(500'000, 0.3);
    r.execute_ns = r.queue_ns + r.rtt_ns;
    r.end_ns = r.start_ns + r.execute_ns;
    r.op = "GETATTR";
    r.server = kServer;
    r.bytes_sent = 180;
    r.bytes_received = 260;
    r.transmissions = 1;
    r.checkpoint_id = id;
    rpcs.push_back(std::move(r));
  }
  std::sort(rpcs.begin(), rpcs.end(),
            [](const RpcCallRecord& a, const RpcCallRecord& b) { return a.end_ns < b.end_ns; });

  NfsCheckpointRecord nfs;
  nfs.servers = {kServer};
  std::map<std::string, RpcOpStats> ops;
  for (const RpcCallRecord& r : rpcs) {
    if (r.checkpoint_io) {
      ++nfs.io_rpcs;
      nfs.io_bytes += r.payload_bytes;
    }
    RpcOpStats one;
    one.op = r.op;
    one.count = 1;
    one.transmissions = r.transmissions;
    one.bytes_sent = r.bytes_sent;
    one.bytes_received = r.bytes_received;
    one.queue_ns = r.queue_ns;
    one.rtt_ns = r.rtt_ns;
    one.execute_ns = r.execute_ns;
    auto [it, fresh] = ops.emplace(r.op, one);
    if (!fresh) it->second += one;
  }
  for (auto& [op, s] : ops) nfs.rpc_ops.push_back(s);
  nfs.queue_wait = stats_of(queue);
  nfs.rtt = stats_of(rtt);
  uint64_t rtt_total = 0;
  for (uint64_t x : rtt) rtt_total += x;
  nfs.wait_by_queue_ns = {{"backlog", queue_total / 10},
                          {"sending", queue_total * 8 / 10},
                          {"pending", rtt_total},
                          {"other", queue_total / 10}};

  // TCP every 10 ms on both connections from just before the first call to
  // just after the last: the backlog is high while the data flows.
  uint64_t in_flight_max = 0, backlog_max = 0, retrans = 0;
  double in_flight_sum = 0, backlog_sum = 0;
  size_t n_samples = 0;
  const uint64_t per_conn_bytes_per_tick = static_cast<uint64_t>(
      static_cast<double>(c.end_ns > c.start_ns ? n_calls * kMiB : 0) /
      (static_cast<double>(c.end_ns - c.start_ns) / static_cast<double>(kTcpEveryNs)) / 2);
  for (uint64_t t = c.start_ns - 10 * kMs; t <= c.end_ns + 20 * kMs; t += kTcpEveryNs) {
    const bool flowing = t > c.start_ns + 50 * kMs && t + 200 * kMs < c.end_ns;
    for (uint64_t cookie : kCookies) {
      TcpSampleRecord& s = tcp_state[cookie];
      s.time_ns = t;
      s.cookie = cookie;
      s.event = "sample";
      if (flowing) {
        (load ? s.bytes_received : s.bytes_acked) += rng.around(per_conn_bytes_per_tick, 0.2);
        (load ? s.bytes_acked : s.bytes_received) += rng.between(2'000, 9'000);
      }
      s.backlog = flowing ? static_cast<uint32_t>(load ? rng.between(64 * 1024, 512 * 1024)
                                                       : rng.between(5 * kMiB, 14 * kMiB))
                          : static_cast<uint32_t>(rng.between(0, 64 * 1024));
      s.in_flight =
          std::min<uint32_t>(s.backlog, static_cast<uint32_t>(rng.between(2 * kMiB, 3 * kMiB)));
      s.cwnd = static_cast<uint32_t>(rng.between(1'800, 2'400));
      s.srtt_us = static_cast<uint32_t>(rng.between(380, 900));
      s.snd_wnd = 6 * kMiB;
      if (rng.between(0, 400) == 0) {
        ++s.total_retrans;
        ++retrans;
      }
      in_flight_max = std::max<uint64_t>(in_flight_max, s.in_flight);
      backlog_max = std::max<uint64_t>(backlog_max, s.backlog);
      in_flight_sum += s.in_flight;
      backlog_sum += s.backlog;
      ++n_samples;
      out.samples.push_back(s);
    }
  }
  nfs.tcp_in_flight_max = in_flight_max;
  nfs.tcp_in_flight_mean = in_flight_sum / static_cast<double>(std::max<size_t>(n_samples, 1)) * 2;
  nfs.tcp_backlog_max = backlog_max;
  nfs.tcp_backlog_mean = backlog_sum / static_cast<double>(std::max<size_t>(n_samples, 1)) * 2;
  nfs.tcp_retransmits = retrans;

  // What the stitcher would have made of it.
  uint64_t bytes = 0;
  for (const auto& [path, f] : files) bytes += f.bytes_written + f.bytes_read;
  const uint64_t window = c.end_ns - c.start_ns;
  c.bytes = bytes;
  c.files = static_cast<uint32_t>(files.size());
  const std::string pcie =
      "sysfs:/sys/devices/pci0000:3a/0000:3a:00.0/current_link_speed (PCIe 32.0 GT/s PCIe x16)";
  c.stages.push_back(stage(kStageGpuCopy, bytes,
                           static_cast<uint64_t>(static_cast<double>(bytes) / 19.5e9 * 1e9),
                           kPcieBps, pcie));
  c.stages.push_back(stage(kStageSerialize, bytes, window / 8, std::nullopt, "unknown"));
  c.stages.push_back(
      stage(kStageHostIo, bytes, window * 97 / 100, load ? kStorageReadBps : kStorageWriteBps,
            load ? "config:storage.read_bandwidth" : "config:storage.write_bandwidth"));
  c.stages.push_back(stage(kStageMetadata, 0, 160 * kMs, std::nullopt, "n/a (moves no bytes)"));
  c.stages.push_back(
      stage(kStageNfsClient, nfs.io_bytes, window * 95 / 100, std::nullopt, "unknown"));
  c.stages.push_back(
      stage(kStageRpcQueue, nfs.io_bytes, window * 92 / 100, std::nullopt, "unknown"));
  c.stages.push_back(stage(kStageRpcRtt, nfs.io_bytes, window * 61 / 100, std::nullopt, "unknown"));
  c.stages.push_back(stage(kStageTransport, bytes + bytes / 400, window * 96 / 100, kNicBps,
                           "sysfs:/sys/class/net/ens1f0np0/speed"));
  c.bottleneck = std::string(load ? kStageHostIo : kStageTransport);
  if (i == 13)
    c.failures.push_back({"tcp_retransmit_storm", c.end_ns,
                          "412 retransmits in 20.31 s (20/s) on 10.20.1.41:812 -> 10.20.0.5:2049",
                          id});
  for (auto& [path, f] : files) c.file_io.push_back(std::move(f));
  c.nfs = std::move(nfs);

  for (auto& call : calls) out.calls.push_back(std::move(call));
  for (auto& r : rpcs) out.rpcs.push_back(std::move(r));
  return c;
}

Trace synthetic_trace(const Shape& shape) {
  Trace t;
  Rng rng(shape.seed);
  JobRecord& job = t.job;
  job.command = {"torchrun", "--nnodes=3", "--nproc-per-node=4",
                 "train.py", "--config",   "llama-8b.yaml"};
  job.name = "train";
  job.mode = "run";
  job.node = shape.node;
  job.kernel = "6.8.0-49-generic";
  job.ckptscope_version = "0.1.0";
  job.config_json = fmt::format(
      R"({{"checkpoint":{{"file_globs":["/mnt/nfs/ckpt/**"],"quiet_gap_ms":500}},)"
      R"("storage":{{"write_bandwidth":{},"read_bandwidth":{}}},"tcp":{{"sample_interval_ms":10}}}})",
      kStorageWriteBps, kStorageReadBps);
  job.start_mono_ns = shape.start_mono_ns;
  job.start_wall_ns = static_cast<uint64_t>(static_cast<int64_t>(kWallStart) + shape.clock_skew_ns);
  job.end_mono_ns = shape.start_mono_ns + kJobNs;
  job.exit_code = 0;
  job.traced = true;
  job.root_pids = {40'990};
  job.log_path = "/home/user/runs/ckptscope-train-20261130-060000-40990.log";

  for (uint64_t cookie : kCookies)
    t.connections.push_back({cookie, fmt::format("10.20.1.41:{}", 810 + (cookie & 0xf)), kServer,
                             shape.start_mono_ns + 2 * kSec, shape.start_mono_ns + kJobNs - kSec, 0,
                             0, 0, 0, 0, kNicBps, "sysfs:/sys/class/net/ens1f0np0/speed"});

  CheckpointBuild out;
  out.calls.reserve(shape.io_calls);
  out.rpcs.reserve(shape.io_calls + 64 * static_cast<size_t>(shape.checkpoints));
  std::map<uint64_t, TcpSampleRecord> tcp_state;
  for (uint64_t cookie : kCookies) {  // established at the job's start
    TcpSampleRecord s{};
    s.time_ns = shape.start_mono_ns + 2 * kSec;
    s.cookie = cookie;
    s.event = "state";
    s.new_state = 1;
    s.snd_wnd = 6 * kMiB;
    tcp_state[cookie] = s;
    out.samples.push_back(s);
  }
  // The checkpoints spread evenly from the first minute to the last two.
  const size_t n_checkpoints = static_cast<size_t>(shape.checkpoints);
  const uint64_t every_ns = (kJobNs - kFirstCheckpointNs - 120 * kSec) / n_checkpoints;
  for (int i = 0; i < shape.checkpoints; ++i) {
    const size_t n = shape.io_calls / n_checkpoints +
                     (static_cast<size_t>(i) < shape.io_calls % n_checkpoints ? 1 : 0);
    // The job decides when to checkpoint (the same on every node, up to 2 s
    // late); each node's ranks reach it up to 50 ms apart.
    const uint64_t job_jitter = (static_cast<uint64_t>(i) * 7919 * kMs) % (2 * kSec);
    const uint64_t start = shape.start_mono_ns + kFirstCheckpointNs +
                           static_cast<uint64_t>(i) * every_ns + job_jitter +
                           rng.between(0, 50 * kMs);
    t.checkpoints.push_back(make_checkpoint(shape, i, n, start, rng, out, tcp_state));
  }
  for (const auto& s : out.samples)
    for (auto& c : t.connections)
      if (c.cookie == s.cookie) {
        c.bytes_sent = s.bytes_acked;
        c.bytes_received = s.bytes_received;
        c.retransmits = s.total_retrans;
      }
  t.io_calls = std::move(out.calls);
  t.rpc_calls = std::move(out.rpcs);
  t.tcp_samples = std::move(out.samples);
  t.drops = {{"jobio", "ringbuf_full", 0}, {"tcp", "ringbuf_full", 0}};

  NfsMountRecord m;
  m.device = "10.20.0.5:/export/ckpt";
  m.mount_point = "/mnt/nfs/ckpt";
  m.fstype = "nfs4";
  m.version = "4.2";
  m.server = "10.20.0.5";
  m.interval_s = kJobNs / kSec;
  uint64_t written = 0, read = 0;
  for (const auto& c : t.checkpoints) (c.direction == Direction::Save ? written : read) += c.bytes;
  m.normal_write_bytes = m.server_write_bytes = written;
  m.normal_read_bytes = m.server_read_bytes = read;
  m.xprt_sends = m.xprt_receives = t.rpc_calls.size();
  m.avg_backlog_queue = 0.4;
  m.avg_sending_queue = 9.7;
  m.avg_pending_queue = 3.1;
  std::map<std::string, RpcOpStats> ebpf;
  for (const auto& c : t.checkpoints)
    for (const auto& o : c.nfs->rpc_ops) {
      auto [it, fresh] = ebpf.emplace(o.op, o);
      if (!fresh) it->second += o;
    }
  m.ebpf_ops.emplace();
  for (const auto& [op, s] : ebpf) {
    m.ebpf_ops->push_back(s);
    m.ops.push_back({op, s.count, s.transmissions, s.major_timeouts, s.bytes_sent, s.bytes_received,
                     s.queue_ns / kMs, s.rtt_ns / kMs, s.execute_ns / kMs, 0});
  }
  t.nfs_mounts.push_back(std::move(m));
  return t;
}

// ---------------------------------------------------------------------------
// Measuring.

std::string runs_text(const std::vector<double>& v, double scale, const char* fmtspec) {
  std::string out;
  for (double x : v) out += fmt::format(fmt::runtime(fmtspec), x * scale) + " ";
  if (!out.empty()) out.pop_back();
  return out;
}

std::string slurp(const std::string& path) {
  std::string out;
  if (FILE* f = fopen(path.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    fclose(f);
  }
  return out;
}

struct Case {
  std::string name;  // "1 node", "3 nodes"
  std::vector<std::string> traces;
  uint64_t events = 0;
};

const char* const kFormats[] = {"html", "json", "md"};

double mib(uint64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(kMiB); }

uint64_t file_size(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

void write_or_die(const std::string& path, const Trace& t) {
  if (auto w = write_trace(path, t); !w) {
    fmt::print(stderr, "report_bench: {}\n", w.error().message);
    std::exit(1);
  }
}

// The traces of one case, written; returns the number of io_calls.
uint64_t generate(const std::vector<Shape>& shapes, const std::vector<std::string>& paths) {
  uint64_t events = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    Trace t = synthetic_trace(shapes[i]);
    const double gen_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    write_or_die(paths[i], t);
    const double write_s = seconds_since(t0);
    events += t.io_calls.size();
    fmt::print(
        "  {}: node {}, {} checkpoints, {} io_calls, {} rpc_calls, {} tcp_samples: {:.1f} MiB "
        "(generated in {:.2f} s, written in {:.2f} s)\n",
        paths[i], t.job.node, t.checkpoints.size(), t.io_calls.size(), t.rpc_calls.size(),
        t.tcp_samples.size(), mib(file_size(paths[i])), gen_s, write_s);
  }
  return events;
}

struct Stages {
  std::vector<double> read, build, timelines, html, json, md, free;
};

}  // namespace

int main(int argc, char** argv) {
  std::string ckptscope = CKPT_BENCH_CKPTSCOPE;
  int runs = 5;
  size_t events = 1'000'000;
  int checkpoints = 20;
  std::string dir;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "report_bench: {} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ckptscope")
      ckptscope = next();
    else if (a == "--runs")
      runs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--events")
      events = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--checkpoints")
      checkpoints = std::max(1, std::atoi(next().c_str()));
    else if (a == "--dir")
      dir = next();
    else if (a == "--keep")
      keep = true;
    else {
      fmt::print(stderr,
                 "usage: report_bench [--ckptscope PATH] [--runs N] [--events N] [--checkpoints N] "
                 "[--dir DIR] [--keep]\n");
      return 2;
    }
  }
  if (events / 3 / static_cast<size_t>(checkpoints) < 64) {
    fmt::print(stderr, "report_bench: --events must be at least 192 per checkpoint\n");
    return 2;
  }
  if (access(ckptscope.c_str(), X_OK) != 0) {
    fmt::print(stderr, "report_bench: {} is not an executable (pass --ckptscope)\n", ckptscope);
    return 2;
  }
  const bool own_dir = dir.empty();
  if (own_dir)
    dir = (fs::temp_directory_path() / fmt::format("ckpt-report-bench-{}", getpid())).string();
  fs::create_directories(dir);

  // --- The traces.
  fmt::print("traces ({} I/O events per case, {} checkpoints per node):\n", events, checkpoints);
  std::vector<Case> cases;
  {
    Case one{"1 node", {dir + "/node1.db"}, 0};
    one.events = generate({{"gpu041", events, 5'000 * kSec, 0, 1.0, 1, checkpoints}}, one.traces);
    cases.push_back(std::move(one));
    Case three{"3 nodes", {dir + "/gpu041.db", dir + "/gpu042.db", dir + "/gpu043.db"}, 0};
    const size_t each = events / 3;
    three.events = generate(
        {{"gpu041", events - 2 * each, 5'000 * kSec, 0, 1.0, 11, checkpoints},
         {"gpu042", each, 812'000 * kSec, 3 * static_cast<int64_t>(kMs), 1.05, 12, checkpoints},
         {"gpu043", each, 91'000 * kSec, -5 * static_cast<int64_t>(kMs), 1.6, 13, checkpoints}},
        three.traces);
    cases.push_back(std::move(three));
  }

  // --- End to end: the real binary, every case and format once a round,
  // in an order rotated by one each round; one unrecorded run first.
  struct Slot {
    size_t c;
    const char* format;
    std::vector<ChildRun> runs;
    uint64_t out_bytes = 0;
  };
  std::vector<Slot> slots;
  for (size_t c = 0; c < cases.size(); ++c)
    for (const char* f : kFormats) slots.push_back({c, f, {}, 0});
  auto argv_of = [&](const Slot& s, std::string& out) {
    out = fmt::format("{}/out-{}.{}", dir, s.c, s.format);
    std::vector<std::string> a{ckptscope, "report"};
    for (const auto& t : cases[s.c].traces) a.push_back(t);
    a.insert(a.end(), {"-o", out, "--format", s.format});
    return a;
  };
  const std::string log = dir + "/report.log";
  for (auto& s : slots) {  // warm-up: the binary and the traces in the page cache
    std::string out;
    ChildRun r = run_child(argv_of(s, out), log);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
      fmt::print(stderr, "report_bench: ckptscope report failed (status {}):\n{}\n", r.status,
                 slurp(log));
      return 1;
    }
  }
  for (int round = 0; round < runs; ++round) {
    for (size_t k = 0; k < slots.size(); ++k) {
      Slot& s = slots[(k + static_cast<size_t>(round)) % slots.size()];
      std::string out;
      ChildRun r = run_child(argv_of(s, out), log);
      if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
        fmt::print(stderr, "report_bench: ckptscope report failed (status {}):\n{}\n", r.status,
                   slurp(log));
        return 1;
      }
      s.out_bytes = file_size(out);
      s.runs.push_back(r);
    }
  }
  fmt::print(
      "\nend to end: `ckptscope report TRACE... -o OUT --format F`, {} runs each, alternated, "
      "order rotated; target {:.1f} s\n",
      runs, kTargetSeconds);
  fmt::print("  {:<8} {:<5} {:>9} {:>8} {:>8} {:>10} {:>9} {:>9}  {}\n", "case", "fmt", "median s",
             "user s", "sys s", "peak RSS", "output", "of 2 s", "runs (s)");
  for (const auto& s : slots) {
    std::vector<double> wall, rss, user, sys;
    for (const auto& r : s.runs) {
      wall.push_back(r.wall_s);
      rss.push_back(r.max_rss_mib);
      user.push_back(r.user_s);
      sys.push_back(r.sys_s);
    }
    const double m = median(wall);
    fmt::print("  {:<8} {:<5} {:>9.3f} {:>8.3f} {:>8.3f} {:>6.0f} MiB {:>6.0f} KiB {:>7.2f}x  {}\n",
               cases[s.c].name, s.format, m, median(user), median(sys), median(rss),
               static_cast<double>(s.out_bytes) / 1024.0, m / kTargetSeconds,
               runs_text(wall, 1, "{:.3f}"));
  }

  // --- In process: the same steps timed apart. Each round reads, builds
  // and renders every case; the renderers' order rotates.
  fmt::print(
      "\nin process, median of {} (ms): read_trace | build_report (of which timelines) | "
      "report_html | report_json + dump | report_markdown | freeing the report\n",
      runs);
  std::vector<Stages> stages(cases.size());
  for (int round = 0; round < runs; ++round) {
    for (size_t k = 0; k < cases.size(); ++k) {
      const size_t ci = (k + static_cast<size_t>(round)) % cases.size();
      const Case& c = cases[ci];
      Stages& st = stages[ci];
      auto t0 = std::chrono::steady_clock::now();
      std::vector<report::NodeTrace> traces;
      for (const auto& path : c.traces) {
        auto t = read_trace(path);
        if (!t) {
          fmt::print(stderr, "report_bench: {}\n", t.error().message);
          return 1;
        }
        traces.push_back({path, std::move(*t)});
      }
      st.read.push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      auto built = report::build_report(std::move(traces), report::ReportOptions{});
      st.build.push_back(seconds_since(t0));
      if (!built) {
        fmt::print(stderr, "report_bench: {}\n", built.error().message);
        return 1;
      }
      // The timelines again, alone: the part of build_report that walks every call.
      t0 = std::chrono::steady_clock::now();
      size_t bins = 0;
      for (const auto& cp : built->checkpoints)
        bins += report::build_timeline(*built, cp, report::ReportOptions{}.timeline_bins)
                    .bandwidth_Bps.size();
      st.timelines.push_back(seconds_since(t0));
      if (bins == 0) return 1;
      const std::function<void()> renders[] = {
          [&] {
            auto t1 = std::chrono::steady_clock::now();
            std::string s = report::report_html(*built);
            st.html.push_back(seconds_since(t1));
          },
          [&] {
            auto t1 = std::chrono::steady_clock::now();
            std::string s = report::report_json(*built).dump(
                2, ' ', false, nlohmann::json::error_handler_t::replace);
            st.json.push_back(seconds_since(t1));
          },
          [&] {
            auto t1 = std::chrono::steady_clock::now();
            std::string s = report::report_markdown(*built);
            st.md.push_back(seconds_since(t1));
          },
      };
      for (size_t r = 0; r < 3; ++r) renders[(r + static_cast<size_t>(round)) % 3]();
      t0 = std::chrono::steady_clock::now();
      { report::Report gone = std::move(*built); }
      st.free.push_back(seconds_since(t0));
    }
  }
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Stages& st = stages[ci];
    fmt::print(
        "  {:<8} read {:>7.1f} | build {:>7.1f} (timelines {:>6.1f}) | html {:>6.1f} | "
        "json {:>6.1f} | md {:>6.1f} | free {:>5.1f}\n",
        cases[ci].name, median(st.read) * 1e3, median(st.build) * 1e3, median(st.timelines) * 1e3,
        median(st.html) * 1e3, median(st.json) * 1e3, median(st.md) * 1e3, median(st.free) * 1e3);
    fmt::print("  {:<8} read runs (ms): {}\n", "", runs_text(st.read, 1e3, "{:.0f}"));
  }

  if (!keep && own_dir)
    fs::remove_all(dir);
  else
    fmt::print("\nkept {}\n", dir);
  return 0;
}
