// The summary: the JSON contract key by key on a trace with known answers,
// and the terminal table's rows.
#include "analysis/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "json/json_io.h"

namespace ckpt {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kSec = 1'000'000'000;
constexpr uint64_t kMs = 1'000'000;

// One save with three measured stages (host_io the bottleneck at 1 GiB/s of
// a 1.25 GiB/s maximum), one load with nothing measured, failures inside and
// outside checkpoints, one NFS connection, zero drops.
Trace known_trace() {
  Trace t;
  t.job.command = {"python", "train.py", "--lr", "0.1"};
  t.job.mode = "run";
  t.job.node = "gpu-node-07";
  t.job.kernel = "6.1.0-18-amd64";
  t.job.ckptscope_version = "0.1.0";
  t.job.start_wall_ns = 1'714'564'800 * kSec;  // 2024-05-01 12:00:00 UTC
  t.job.start_mono_ns = 1 * kSec;
  t.job.end_mono_ns = 61 * kSec;
  t.job.exit_code = 0;
  t.job.traced = true;
  t.job.root_pids = {4242};

  CheckpointRecord save;
  save.id = 1;
  save.direction = Direction::Save;
  save.start_ns = 11 * kSec;
  save.end_ns = 14 * kSec;
  save.bytes = 3 * kGiB;
  save.files = 4;
  save.bottleneck = "host_io";
  save.stages = {
      {"gpu_copy", 3 * kGiB, 1 * kSec, 24.0 * kGiB, "config:gpu.copy_Bps"},
      {"host_io", 3 * kGiB, 3 * kSec, 1.25 * kGiB, "config:storage.write_Bps", 2500 * kMs},
      {"transport", 3 * kGiB, 2 * kSec, std::nullopt, "unknown", 2 * kSec},
  };
  save.failures = {{"enospc", 13'500'000'000, "write(/ckpt/step100/model.pt) = -ENOSPC", 1}};
  save.file_io = {
      {"/ckpt/step100/model.pt", 1, 2, 3 * kGiB, 0, 3072, 0, 2, 1, 3 * kSec, 11 * kSec, 14 * kSec}};

  CheckpointRecord load;
  load.id = 2;
  load.direction = Direction::Load;
  load.start_ns = 30 * kSec;
  load.end_ns = 31 * kSec;
  load.bytes = 512;
  load.files = 1;

  t.checkpoints = {save, load};
  t.failures = {{"tcp_reset", 40 * kSec, "RST from 10.0.0.5:2049", std::nullopt}};
  t.connections = {{77, "10.0.0.2:901", "10.0.0.5:2049", 1 * kSec, 60 * kSec, 3 * kGiB,
                    12 * (uint64_t{1} << 20), 3, 250'000'000, 1, 1.25e9, "sysfs:eth0"}};
  t.drops = {{"jobio", "ringbuf_full", 0}, {"tcp", "ringbuf_full", 0}};
  return t;
}

// known_trace() for a job that failed: its GPU fell off the bus, which the
// classifier found in the kernel log and the job's own log, with an NCCL
// symptom; the kernel log also gave job-level failures.
constexpr std::string_view kLog = "/scratch/logs/train-20261130-140000-1234.log";
constexpr std::string_view kXid =
    "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";

Trace failed_trace() {
  Trace t = known_trace();
  t.job.exit_code = 1;
  t.job.name = "train";
  t.job.log_path = std::string(kLog);
  JobFailure& f = t.job.failure.emplace();
  f.cls = "gpu_lost";
  f.rule = "xid-79-fallen-off-bus";
  f.evidence = {
      {812, std::string(kXid), "kmsg"},
      {57, "RuntimeError: CUDA error: unspecified launch failure", std::string(kLog)},
      {0, "the process exited with status 1", "exit_status"},
  };
  f.symptoms = {"nccl (rule nccl) at line 8"};
  t.failures.push_back({"kernel_nfs_not_responding", 45 * kSec,
                        "nfs: server 10.0.0.5 not responding, still trying", std::nullopt});
  t.failures.push_back({"gpu_xid", 50 * kSec, std::string(kXid), std::nullopt});
  t.failures.push_back(
      {"oom_kill", 55 * kSec, "Out of memory: Killed process 4242 (python)", std::nullopt});
  return t;
}

constexpr uint64_t kMiB = uint64_t{1} << 20;

// known_trace() plus NFS: the save's RPCs (the load has none), and two mounts:
// an NFSv4.2 one the eBPF probes also saw, and an NFSv3 one they did not.
//
// The cross-check of the first mount, by construction:
//   WRITE    1000 vs 990 ops (1.0%, agrees at the limit), bytes equal
//   READ     0 ops in mountstats, not in eBPF: no entry
//   COMMIT   4 vs 5 ops (20%), 1200 vs 1500 bytes (20%): disagrees
//   SETATTR  100 vs 100 ops, 10000 vs 10200 bytes (1.96%): disagrees on bytes
//   GETATTR  eBPF only, 3 ops, 900 bytes: disagrees (100%)
//   ACCESS   eBPF only, nothing counted: agrees (0 and 0)
Trace nfs_trace() {
  Trace t = known_trace();
  NfsCheckpointRecord& n = t.checkpoints[0].nfs.emplace();
  n.servers = {"10.0.0.5:2049"};
  n.io_rpcs = 132;
  n.io_bytes = 3 * kGiB;
  n.rpc_ops = {
      {"WRITE", 128, 1, 0, 129, 3 * kGiB + 128 * 200, 128 * 120, 150'000'000, 110'000'000,
       270'000'000},
      {"COMMIT", 4, 0, 0, 4, 4 * 200, 4 * 120, 100'000, 4'000'000, 4'200'000},
      {"GETATTR", 3, 0, 1, 3, 3 * 100, 3 * 200, 3'000, 600'000, 610'000},
  };
  n.queue_wait = {132, 1'500'000, 1'200'000, 3'000'000, 4'500'000, 9'000'000};
  n.rtt = {132, 900'000, 850'000, 1'500'000, 2'100'000, 5'000'000};
  n.wait_by_queue_ns = {
      {"backlog", 0}, {"sending", 20'000'000}, {"pending", 110'000'000}, {"other", 5}};
  n.tcp_in_flight_max = kMiB;
  n.tcp_in_flight_mean = 524'288.5;
  n.tcp_backlog_max = 4 * kMiB;
  n.tcp_backlog_mean = 1'572'864.25;
  n.tcp_retransmits = 2;

  NfsMountRecord v4;
  v4.device = "10.0.0.5:/export";
  v4.mount_point = "/ckpt";
  v4.fstype = "nfs4";
  v4.version = "4.2";
  v4.server = "10.0.0.5";
  v4.interval_s = 60;
  v4.normal_read_bytes = 12 * kMiB;
  v4.normal_write_bytes = 3 * kGiB;
  v4.direct_read_bytes = 1;
  v4.direct_write_bytes = 2;
  v4.server_read_bytes = 12 * kMiB + 3;
  v4.server_write_bytes = 3 * kGiB + 4;
  v4.xprt_sends = 1107;
  v4.xprt_receives = 1106;
  v4.avg_backlog_queue = 0.25;
  v4.avg_sending_queue = 1.5;
  v4.avg_pending_queue = 12.75;
  v4.ops = {
      {"WRITE", 1000, 1002, 0, 3'100'000, 120'000, 50, 900, 1000, uint64_t{0}},
      {"READ", 0, 0, 0, 0, 0, 0, 0, 0, uint64_t{0}},
      {"COMMIT", 4, 4, 0, 800, 400, 1, 2, 3, std::nullopt},
      {"SETATTR", 100, 100, 0, 6'000, 4'000, 0, 10, 12, uint64_t{1}},
  };
  v4.ebpf_ops = std::vector<RpcOpStats>{
      {"WRITE", 990, 0, 0, 992, 3'100'000, 120'000, 51'000'000, 900'000'000, 1'000'000'000},
      {"COMMIT", 5, 0, 0, 5, 1'000, 500, 1'000'000, 2'000'000, 3'000'000},
      {"GETATTR", 3, 0, 0, 3, 300, 600, 1'000, 2'000, 3'000},
      {"SETATTR", 100, 1, 0, 100, 6'100, 4'100, 0, 10'000'000, 12'000'000},
      {"ACCESS", 0, 0, 0, 0, 0, 0, 0, 0, 0},
  };
  NfsMountRecord v3;
  v3.device = "nas:/vol";
  v3.mount_point = "/mnt/nas";
  v3.fstype = "nfs";
  v3.version = "3";
  v3.server = "192.168.1.9";
  v3.interval_s = 30;
  v3.since_mount = true;
  v3.normal_read_bytes = 512;
  v3.server_read_bytes = 512;
  v3.ops = {{"READ", 1, 1, 0, 120, 632, 0, 1, 1, uint64_t{0}}};
  t.nfs_mounts = {v4, v3};
  return t;
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (const auto& item : object.items()) keys.insert(item.key());
  return keys;
}

// ---- summary_json ----

TEST(SummaryJsonTest, TopLevelKeys) {
  const json j = summary_json(known_trace());
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(keys_of(j), (std::set<std::string>{"checkpoints", "drops", "job", "failures",
                                               "connections", "nfs_mounts", "probe_mode",
                                               "unrecognised_io", "io_accounting"}));
  EXPECT_TRUE(j["unrecognised_io"].is_null()) << "the trace did not count it";
  EXPECT_TRUE(j["io_accounting"].is_null()) << "the trace did not count it";
  EXPECT_EQ(j["probe_mode"], "") << "the trace does not say";
  ASSERT_TRUE(j["checkpoints"].is_array());
  EXPECT_EQ(j["checkpoints"].size(), 2u);
  EXPECT_EQ(j["nfs_mounts"], json::array());  // no mounts: empty, never null
}

TEST(SummaryJsonTest, CheckpointMatchesTheContract) {
  const json c = summary_json(known_trace())["checkpoints"][0];
  // The contract's keys, plus the documented additions and nothing else.
  EXPECT_EQ(keys_of(c), (std::set<std::string>{
                            "id", "direction", "start_ns", "end_ns", "bytes", "files", "bottleneck",
                            "stages", "failures", "duration_ns", "start_offset_ns", "absent_stages",
                            "nfs", "gpu", "bytes_by_via", "notes", "dirty_at_end_bytes"}));
  EXPECT_EQ(c["bytes_by_via"], json::object()) << "the trace does not say";
  EXPECT_TRUE(c["dirty_at_end_bytes"].is_null()) << "the trace does not say";
  EXPECT_TRUE(c["nfs"].is_null());
  EXPECT_TRUE(c["gpu"].is_null());
  EXPECT_EQ(c["notes"], json::array()) << "no stage above its maximum";
  EXPECT_EQ(c["id"], 1);
  EXPECT_EQ(c["direction"], "save");
  EXPECT_EQ(c["start_ns"], 11 * kSec);
  EXPECT_EQ(c["end_ns"], 14 * kSec);
  EXPECT_EQ(c["duration_ns"], 3 * kSec);
  EXPECT_EQ(c["start_offset_ns"], 10 * kSec);
  EXPECT_EQ(c["bytes"], 3 * kGiB);
  EXPECT_EQ(c["files"], 4);
  EXPECT_EQ(c["bottleneck"], "host_io");
  EXPECT_EQ(c["absent_stages"],
            json({"serialize", "metadata", "storage", "nfs_client", "rpc_queue", "rpc_rtt"}));
  ASSERT_EQ(c["failures"].size(), 1u);
  EXPECT_EQ(c["failures"][0], json({{"kind", "enospc"},
                                    {"time_ns", 13'500'000'000},
                                    {"evidence", "write(/ckpt/step100/model.pt) = -ENOSPC"}}));
}

TEST(SummaryJsonTest, ProbeModeAndBytesByVia) {
  Trace t = known_trace();
  t.job.probe_mode = "file_layer";
  t.checkpoints[0].bytes_by_via = {{"syscall", kGiB}, {"io_uring", kGiB}, {"mmap", kGiB}};
  const json j = summary_json(t);
  EXPECT_EQ(j["probe_mode"], "file_layer");
  EXPECT_EQ(j["checkpoints"][0]["bytes_by_via"],
            json({{"syscall", kGiB}, {"io_uring", kGiB}, {"mmap", kGiB}}));
  EXPECT_EQ(j["checkpoints"][1]["bytes_by_via"], json::object());
}

TEST(SummaryJsonTest, StagesCarryBandwidthMaxAndFraction) {
  const json stages = summary_json(known_trace())["checkpoints"][0]["stages"];
  ASSERT_EQ(stages.size(), 3u);
  for (const json& s : stages) {
    EXPECT_EQ(keys_of(s), (std::set<std::string>{"name", "bytes", "busy_ns", "exclusive_ns",
                                                 "bandwidth_Bps", "max_Bps", "max_source",
                                                 "fraction_of_max", "calibration_warning"}));
    EXPECT_FALSE(s["calibration_warning"].get<bool>()) << "every stage within its maximum";
  }
  EXPECT_TRUE(stages[0]["exclusive_ns"].is_null()) << "not known: null, never 0";
  EXPECT_EQ(stages[1]["exclusive_ns"], 2500 * kMs);
  EXPECT_EQ(stages[2]["exclusive_ns"], 2 * kSec);
  const json& gpu = stages[0];
  EXPECT_EQ(gpu["name"], "gpu_copy");
  EXPECT_DOUBLE_EQ(gpu["bandwidth_Bps"].get<double>(), 3.0 * kGiB);
  EXPECT_DOUBLE_EQ(gpu["max_Bps"].get<double>(), 24.0 * kGiB);
  EXPECT_DOUBLE_EQ(gpu["fraction_of_max"].get<double>(), 0.125);

  const json& host = stages[1];
  EXPECT_EQ(host["name"], "host_io");
  EXPECT_EQ(host["bytes"], 3 * kGiB);
  EXPECT_EQ(host["busy_ns"], 3 * kSec);
  EXPECT_DOUBLE_EQ(host["bandwidth_Bps"].get<double>(), 1.0 * kGiB);
  EXPECT_DOUBLE_EQ(host["max_Bps"].get<double>(), 1.25 * kGiB);
  EXPECT_EQ(host["max_source"], "config:storage.write_Bps");
  EXPECT_DOUBLE_EQ(host["fraction_of_max"].get<double>(), 0.8);

  const json& transport = stages[2];
  EXPECT_EQ(transport["name"], "transport");
  EXPECT_DOUBLE_EQ(transport["bandwidth_Bps"].get<double>(), 1.5 * kGiB);
  EXPECT_TRUE(transport["max_Bps"].is_null());
  EXPECT_TRUE(transport["fraction_of_max"].is_null());
  EXPECT_EQ(transport["max_source"], "unknown");
}

TEST(SummaryJsonTest, UnmeasuredCheckpointHasNullBottleneckAndAllStagesAbsent) {
  const json c = summary_json(known_trace())["checkpoints"][1];
  EXPECT_EQ(c["direction"], "load");
  EXPECT_TRUE(c["bottleneck"].is_null());
  EXPECT_EQ(c["stages"], json::array());
  EXPECT_EQ(c["failures"], json::array());
  ASSERT_EQ(c["absent_stages"].size(), std::size(kAllStages));
  for (size_t i = 0; i < std::size(kAllStages); ++i) {
    EXPECT_EQ(c["absent_stages"][i], std::string(kAllStages[i]));
  }
}

TEST(SummaryJsonTest, IncompleteCheckpointHasNullDuration) {
  Trace t = known_trace();
  t.checkpoints[0].end_ns = 0;
  t.checkpoints[0].start_ns = 0;  // before the job's start
  const json c = summary_json(t)["checkpoints"][0];
  EXPECT_EQ(c["duration_ns"], 0);
  EXPECT_EQ(c["start_offset_ns"], -1 * static_cast<int64_t>(kSec));
  t.checkpoints[0].start_ns = 5;
  EXPECT_TRUE(summary_json(t)["checkpoints"][0]["duration_ns"].is_null());
}

TEST(SummaryJsonTest, DropsAreKeyedBySourceAndCauseWithTotal) {
  Trace t = known_trace();
  EXPECT_EQ(summary_json(t)["drops"],
            json({{"jobio.ringbuf_full", 0}, {"tcp.ringbuf_full", 0}, {"total", 0}}));
  t.drops = {
      {"jobio", "ringbuf_full", 5}, {"tcp", "ringbuf_full", 2}, {"jobio", "ringbuf_full", 1}};
  EXPECT_EQ(summary_json(t)["drops"],
            json({{"jobio.ringbuf_full", 6}, {"tcp.ringbuf_full", 2}, {"total", 8}}));
  t.drops.clear();
  EXPECT_EQ(summary_json(t)["drops"], json({{"total", 0}}));
}

TEST(SummaryJsonTest, JobFailuresAndConnections) {
  const json j = summary_json(known_trace());
  const json& job = j["job"];
  EXPECT_EQ(job["command"], json({"python", "train.py", "--lr", "0.1"}));
  EXPECT_EQ(job["mode"], "run");
  EXPECT_EQ(job["node"], "gpu-node-07");
  EXPECT_EQ(job["kernel"], "6.1.0-18-amd64");
  EXPECT_EQ(job["exit_code"], 0);
  EXPECT_TRUE(job["exit_signal"].is_null());
  EXPECT_EQ(job["traced"], true);
  EXPECT_EQ(job["trace_warning"], "");
  EXPECT_EQ(job["start_wall_ns"], 1'714'564'800 * kSec);
  EXPECT_EQ(job["duration_ns"], 60 * kSec);

  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0], json({{"kind", "tcp_reset"},
                                    {"time_ns", 40 * kSec},
                                    {"evidence", "RST from 10.0.0.5:2049"},
                                    {"checkpoint_id", nullptr}}));

  ASSERT_EQ(j["connections"].size(), 1u);
  const json& c = j["connections"][0];
  EXPECT_EQ(c["remote"], "10.0.0.5:2049");
  EXPECT_EQ(c["local"], "10.0.0.2:901");
  EXPECT_EQ(c["bytes_sent"], 3 * kGiB);
  EXPECT_EQ(c["bytes_received"], 12u << 20);
  EXPECT_EQ(c["retransmits"], 3);
  EXPECT_EQ(c["zero_window_ns"], 250'000'000);
  EXPECT_EQ(c["resets"], 1);
  EXPECT_DOUBLE_EQ(c["link_max_Bps"].get<double>(), 1.25e9);
}

TEST(SummaryJsonTest, JobMatchesTheContract) {
  const json job = summary_json(known_trace())["job"];
  EXPECT_EQ(
      keys_of(job),
      (std::set<std::string>{"command", "name", "mode", "node", "kernel", "ckptscope_version",
                             "exit_code", "exit_signal", "traced", "trace_warning", "start_wall_ns",
                             "duration_ns", "root_pids", "log", "log_incomplete", "failure"}));
  EXPECT_EQ(job["name"], "");
  EXPECT_TRUE(job["log"].is_null()) << "no log: null, never \"\"";
  EXPECT_TRUE(job["log_incomplete"].is_null()) << "a whole log (or none) is not incomplete";
  EXPECT_TRUE(job["failure"].is_null()) << "a job that did not fail has no failure";
}

TEST(SummaryJsonTest, FailedJobCarriesItsNameLogAndFailureCause) {
  const json j = summary_json(failed_trace());
  const json& job = j["job"];
  EXPECT_EQ(job["name"], "train");
  EXPECT_EQ(job["log"], kLog);
  EXPECT_EQ(job["exit_code"], 1);
  ASSERT_TRUE(job["failure"].is_object());
  EXPECT_EQ(
      job["failure"],
      json({{"class", "gpu_lost"},
            {"rule", "xid-79-fallen-off-bus"},
            {"evidence", json::array({json({{"line", 812}, {"text", kXid}, {"source", "kmsg"}}),
                                      json({{"line", 57},
                                            {"text",
                                             "RuntimeError: CUDA error: unspecified launch "
                                             "failure"},
                                            {"source", kLog}}),
                                      json({{"line", 0},
                                            {"text", "the process exited with status 1"},
                                            {"source", "exit_status"}})})},
            {"symptoms", json::array({"nccl (rule nccl) at line 8"})}}));
  // The kernel log's job-level failures are among the top-level failures.
  std::vector<std::string> kinds;
  for (const json& f : j["failures"]) {
    kinds.push_back(f["kind"]);
    EXPECT_TRUE(f["checkpoint_id"].is_null());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"tcp_reset", "kernel_nfs_not_responding", "gpu_xid",
                                             "oom_kill"}));
  EXPECT_EQ(j["failures"][2]["evidence"], kXid);
}

TEST(SummaryJsonTest, UnknownFailureHasAnEmptyRuleAndEmptyLists) {
  Trace t = known_trace();
  t.job.exit_signal = 9;
  t.job.exit_code.reset();
  t.job.failure.emplace().cls = "unknown";
  EXPECT_EQ(summary_json(t)["job"]["failure"], json({{"class", "unknown"},
                                                     {"rule", ""},
                                                     {"evidence", json::array()},
                                                     {"symptoms", json::array()}}));
}

TEST(SummaryJsonTest, FailureTextIsMadeValidUtf8) {
  Trace t = failed_trace();
  t.job.name = "tr\xffin";
  t.job.log_path = "/logs/caf\xe9.log";
  t.job.failure->evidence[1].text = "open(/ckpt/\xff.pt) failed";
  t.job.failure->evidence[1].source = t.job.log_path;
  t.job.failure->symptoms[0] = "\xfe";
  const json j = summary_json(t);
  ASSERT_NO_THROW((void)j.dump());
  EXPECT_EQ(j["job"]["name"], "tr\uFFFDin");
  EXPECT_EQ(j["job"]["log"], "/logs/caf\uFFFD.log");
  EXPECT_EQ(j["job"]["failure"]["evidence"][1]["text"], "open(/ckpt/\uFFFD.pt) failed");
  EXPECT_EQ(j["job"]["failure"]["evidence"][1]["source"], "/logs/caf\uFFFD.log");
  EXPECT_EQ(j["job"]["failure"]["symptoms"][0], "\uFFFD");
}

TEST(SummaryJsonTest, KilledUntracedJob) {
  Trace t = known_trace();
  t.job.exit_code.reset();
  t.job.exit_signal = 9;
  t.job.traced = false;
  t.job.trace_warning = "bpf: Operation not permitted";
  const json job = summary_json(t)["job"];
  EXPECT_TRUE(job["exit_code"].is_null());
  EXPECT_EQ(job["exit_signal"], 9);
  EXPECT_EQ(job["traced"], false);
  EXPECT_EQ(job["trace_warning"], "bpf: Operation not permitted");
}

TEST(SummaryJsonTest, InvalidUtf8StillDumps) {
  Trace t = known_trace();
  t.checkpoints[0].failures[0].evidence = "open(/ckpt/\xff\xfe.pt) = -EIO";
  t.job.command.push_back("caf\xe9");  // Latin-1
  const json j = summary_json(t);
  std::string dumped;
  ASSERT_NO_THROW(dumped = j.dump());
  EXPECT_EQ(j["checkpoints"][0]["failures"][0]["evidence"], "open(/ckpt/\uFFFD\uFFFD.pt) = -EIO");
  EXPECT_EQ(j["job"]["command"][4], "caf\uFFFD");
}

TEST(SummaryJsonTest, CheckpointNfsMatchesTheContract) {
  const json j = summary_json(nfs_trace());
  EXPECT_TRUE(j["checkpoints"][1]["nfs"].is_null()) << "the load has no NFS figures";
  const json& n = j["checkpoints"][0]["nfs"];
  ASSERT_TRUE(n.is_object());
  EXPECT_EQ(keys_of(n),
            (std::set<std::string>{"servers", "io_rpcs", "io_bytes", "rpc_ops", "queue_wait", "rtt",
                                   "wait_by_queue_ns", "tcp_in_flight_max", "tcp_in_flight_mean",
                                   "tcp_backlog_max", "tcp_backlog_mean", "tcp_retransmits"}));
  EXPECT_EQ(n["servers"], json({"10.0.0.5:2049"}));
  EXPECT_EQ(n["io_rpcs"], 132);
  EXPECT_EQ(n["io_bytes"], 3 * kGiB);
  ASSERT_EQ(n["rpc_ops"].size(), 3u);
  EXPECT_EQ(n["rpc_ops"][0], json({{"op", "WRITE"},
                                   {"count", 128},
                                   {"errors", 1},
                                   {"major_timeouts", 0},
                                   {"transmissions", 129},
                                   {"bytes_sent", 3 * kGiB + 128 * 200},
                                   {"bytes_received", 128 * 120},
                                   {"queue_ns", 150'000'000},
                                   {"rtt_ns", 110'000'000},
                                   {"execute_ns", 270'000'000}}));
  EXPECT_EQ(n["rpc_ops"][1]["op"], "COMMIT");  // in the record's order
  EXPECT_EQ(n["rpc_ops"][2]["op"], "GETATTR");
  EXPECT_EQ(n["rpc_ops"][2]["major_timeouts"], 1);
  EXPECT_EQ(n["queue_wait"], json({{"count", 132},
                                   {"mean_ns", 1'500'000},
                                   {"p50_ns", 1'200'000},
                                   {"p90_ns", 3'000'000},
                                   {"p99_ns", 4'500'000},
                                   {"max_ns", 9'000'000}}));
  EXPECT_EQ(n["rtt"], json({{"count", 132},
                            {"mean_ns", 900'000},
                            {"p50_ns", 850'000},
                            {"p90_ns", 1'500'000},
                            {"p99_ns", 2'100'000},
                            {"max_ns", 5'000'000}}));
  EXPECT_EQ(
      n["wait_by_queue_ns"],
      json({{"backlog", 0}, {"sending", 20'000'000}, {"pending", 110'000'000}, {"other", 5}}));
  EXPECT_EQ(n["tcp_in_flight_max"], kMiB);
  EXPECT_DOUBLE_EQ(n["tcp_in_flight_mean"].get<double>(), 524'288.5);
  EXPECT_EQ(n["tcp_backlog_max"], 4 * kMiB);
  EXPECT_TRUE(n["tcp_backlog_max"].is_number_unsigned());
  EXPECT_DOUBLE_EQ(n["tcp_backlog_mean"].get<double>(), 1'572'864.25);
  EXPECT_TRUE(n["tcp_backlog_mean"].is_number_float());
  EXPECT_EQ(n["tcp_retransmits"], 2);
}

TEST(SummaryJsonTest, CheckpointNfsUnknownsAreNull) {
  Trace t = nfs_trace();
  NfsCheckpointRecord& n = *t.checkpoints[0].nfs;
  n.tcp_in_flight_max.reset();
  n.tcp_in_flight_mean.reset();
  n.tcp_backlog_max.reset();
  n.tcp_backlog_mean.reset();
  n.tcp_retransmits.reset();
  n.rpc_ops.clear();
  n.servers.clear();
  n.wait_by_queue_ns = {{"pending", 5}, {"backlog", 1}, {"pending", 7}};  // repeats are summed
  const json nfs = summary_json(t)["checkpoints"][0]["nfs"];
  EXPECT_TRUE(nfs["tcp_in_flight_max"].is_null());
  EXPECT_TRUE(nfs["tcp_in_flight_mean"].is_null());
  EXPECT_TRUE(nfs["tcp_backlog_max"].is_null());
  EXPECT_TRUE(nfs["tcp_backlog_mean"].is_null());
  EXPECT_TRUE(nfs["tcp_retransmits"].is_null());
  EXPECT_EQ(nfs["rpc_ops"], json::array());
  EXPECT_EQ(nfs["servers"], json::array());
  EXPECT_EQ(nfs["wait_by_queue_ns"], json({{"pending", 12}, {"backlog", 1}}));
  n.wait_by_queue_ns.clear();
  EXPECT_EQ(summary_json(t)["checkpoints"][0]["nfs"]["wait_by_queue_ns"], json::object());
}

TEST(SummaryJsonTest, NfsMountsMatchTheContract) {
  const json mounts = summary_json(nfs_trace())["nfs_mounts"];
  ASSERT_EQ(mounts.size(), 2u);
  const json& m = mounts[0];
  EXPECT_EQ(keys_of(m), (std::set<std::string>{"device", "mount_point", "fstype", "version",
                                               "server", "interval_s", "since_mount", "bytes",
                                               "xprt", "ops", "ebpf_ops", "crosscheck"}));
  EXPECT_EQ(m["device"], "10.0.0.5:/export");
  EXPECT_EQ(m["mount_point"], "/ckpt");
  EXPECT_EQ(m["fstype"], "nfs4");
  EXPECT_EQ(m["version"], "4.2");
  EXPECT_EQ(m["server"], "10.0.0.5");
  EXPECT_EQ(m["interval_s"], 60);
  EXPECT_EQ(m["since_mount"], false);
  EXPECT_EQ(m["bytes"], json({{"normal_read", 12 * kMiB},
                              {"normal_write", 3 * kGiB},
                              {"direct_read", 1},
                              {"direct_write", 2},
                              {"server_read", 12 * kMiB + 3},
                              {"server_write", 3 * kGiB + 4}}));
  EXPECT_EQ(keys_of(m["xprt"]), (std::set<std::string>{"sends", "receives", "avg_backlog_queue",
                                                       "avg_sending_queue", "avg_pending_queue"}));
  EXPECT_EQ(m["xprt"]["sends"], 1107);
  EXPECT_EQ(m["xprt"]["receives"], 1106);
  EXPECT_DOUBLE_EQ(m["xprt"]["avg_backlog_queue"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(m["xprt"]["avg_sending_queue"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(m["xprt"]["avg_pending_queue"].get<double>(), 12.75);

  ASSERT_EQ(m["ops"].size(), 4u);  // every mountstats op, zero ones included
  EXPECT_EQ(m["ops"][0], json({{"op", "WRITE"},
                               {"ops", 1000},
                               {"transmissions", 1002},
                               {"major_timeouts", 0},
                               {"bytes_sent", 3'100'000},
                               {"bytes_received", 120'000},
                               {"queue_ms", 50},
                               {"rtt_ms", 900},
                               {"execute_ms", 1000},
                               {"errors", 0}}));
  EXPECT_TRUE(m["ops"][2]["errors"].is_null()) << "COMMIT's iostats had no error count";
  EXPECT_EQ(m["ops"][3]["errors"], 1);

  ASSERT_EQ(m["ebpf_ops"].size(), 5u);
  EXPECT_EQ(
      keys_of(m["ebpf_ops"][0]),
      (std::set<std::string>{"op", "count", "errors", "major_timeouts", "transmissions",
                             "bytes_sent", "bytes_received", "queue_ns", "rtt_ns", "execute_ns"}));
  EXPECT_EQ(m["ebpf_ops"][3]["op"], "SETATTR");
  EXPECT_EQ(m["ebpf_ops"][3]["errors"], 1);
  EXPECT_EQ(m["ebpf_ops"][0]["execute_ns"], 1'000'000'000);

  const json& v3 = mounts[1];
  EXPECT_EQ(v3["since_mount"], true);
  EXPECT_EQ(v3["fstype"], "nfs");
  EXPECT_TRUE(v3["ebpf_ops"].is_null());
  EXPECT_TRUE(v3["crosscheck"].is_null()) << "nothing to cross-check without eBPF";
  ASSERT_EQ(v3["ops"].size(), 1u);
  EXPECT_EQ(v3["ops"][0]["errors"], 0);
}

TEST(SummaryJsonTest, CrosscheckComparesOpsAndBytesPerOp) {
  const json x = summary_json(nfs_trace())["nfs_mounts"][0]["crosscheck"];
  ASSERT_TRUE(x.is_array());
  std::vector<std::string> ops;
  for (const json& e : x) {
    EXPECT_EQ(keys_of(e), (std::set<std::string>{"op", "mountstats_ops", "ebpf_ops",
                                                 "ops_diff_fraction", "mountstats_bytes",
                                                 "ebpf_bytes", "bytes_diff_fraction", "agree"}));
    ops.push_back(e["op"]);
  }
  // Mountstats' ops with ops > 0 in their order (READ had none), then eBPF-only ones.
  EXPECT_EQ(ops, (std::vector<std::string>{"WRITE", "COMMIT", "SETATTR", "GETATTR", "ACCESS"}));

  const json& write = x[0];  // 1000 vs 990: exactly 1%, still agreeing
  EXPECT_EQ(write["mountstats_ops"], 1000);
  EXPECT_EQ(write["ebpf_ops"], 990);
  EXPECT_DOUBLE_EQ(write["ops_diff_fraction"].get<double>(), 0.01);
  EXPECT_EQ(write["mountstats_bytes"], 3'220'000);
  EXPECT_EQ(write["ebpf_bytes"], 3'220'000);
  EXPECT_EQ(write["bytes_diff_fraction"].get<double>(), 0.0);
  EXPECT_EQ(write["agree"], true);

  const json& commit = x[1];
  EXPECT_EQ(commit["mountstats_ops"], 4);
  EXPECT_EQ(commit["ebpf_ops"], 5);
  EXPECT_DOUBLE_EQ(commit["ops_diff_fraction"].get<double>(), 0.2);
  EXPECT_EQ(commit["mountstats_bytes"], 1200);
  EXPECT_EQ(commit["ebpf_bytes"], 1500);
  EXPECT_DOUBLE_EQ(commit["bytes_diff_fraction"].get<double>(), 0.2);
  EXPECT_EQ(commit["agree"], false);

  const json& setattr = x[2];  // same ops, bytes 1.96% apart: disagrees
  EXPECT_EQ(setattr["ops_diff_fraction"].get<double>(), 0.0);
  EXPECT_EQ(setattr["mountstats_bytes"], 10'000);
  EXPECT_EQ(setattr["ebpf_bytes"], 10'200);
  EXPECT_DOUBLE_EQ(setattr["bytes_diff_fraction"].get<double>(), 200.0 / 10'200.0);
  EXPECT_EQ(setattr["agree"], false);

  const json& getattr = x[3];  // only eBPF saw it
  EXPECT_EQ(getattr["mountstats_ops"], 0);
  EXPECT_EQ(getattr["ebpf_ops"], 3);
  EXPECT_DOUBLE_EQ(getattr["ops_diff_fraction"].get<double>(), 1.0);
  EXPECT_EQ(getattr["mountstats_bytes"], 0);
  EXPECT_EQ(getattr["ebpf_bytes"], 900);
  EXPECT_DOUBLE_EQ(getattr["bytes_diff_fraction"].get<double>(), 1.0);
  EXPECT_EQ(getattr["agree"], false);

  const json& access = x[4];  // both zero: no difference
  EXPECT_EQ(access["ops_diff_fraction"].get<double>(), 0.0);
  EXPECT_EQ(access["bytes_diff_fraction"].get<double>(), 0.0);
  EXPECT_EQ(access["agree"], true);
}

TEST(SummaryJsonTest, CrosscheckJustOverOnePercentDisagrees) {
  Trace t = nfs_trace();
  (*t.nfs_mounts[0].ebpf_ops)[0].count = 989;  // 1.1% fewer WRITEs than mountstats
  json write = summary_json(t)["nfs_mounts"][0]["crosscheck"][0];
  EXPECT_DOUBLE_EQ(write["ops_diff_fraction"].get<double>(), 0.011);
  EXPECT_EQ(write["agree"], false);
  (*t.nfs_mounts[0].ebpf_ops)[0].count = 1011;  // the larger side is the denominator
  write = summary_json(t)["nfs_mounts"][0]["crosscheck"][0];
  EXPECT_DOUBLE_EQ(write["ops_diff_fraction"].get<double>(), 11.0 / 1011.0);
  EXPECT_EQ(write["agree"], false);
}

TEST(SummaryJsonTest, CrosscheckSumsRepeatedOpsAndEmptyEbpfListsStillCheck) {
  Trace t = nfs_trace();
  NfsMountRecord& m = t.nfs_mounts[1];
  m.ops.push_back({"READ", 2, 2, 0, 10, 20, 0, 0, 0, uint64_t{0}});
  m.ebpf_ops.emplace();  // eBPF ran and saw nothing on this mount
  json x = summary_json(t)["nfs_mounts"][1]["crosscheck"];
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0]["op"], "READ");
  EXPECT_EQ(x[0]["mountstats_ops"], 3);
  EXPECT_EQ(x[0]["mountstats_bytes"], 120 + 632 + 10 + 20);
  EXPECT_EQ(x[0]["ebpf_ops"], 0);
  EXPECT_DOUBLE_EQ(x[0]["ops_diff_fraction"].get<double>(), 1.0);
  EXPECT_EQ(x[0]["agree"], false);
  EXPECT_EQ(summary_json(t)["nfs_mounts"][1]["ebpf_ops"], json::array());
}

TEST(SummaryJsonTest, NfsStringsAreMadeValidUtf8) {
  Trace t = nfs_trace();
  t.checkpoints[0].nfs->servers = {"\xff:2049"};
  t.nfs_mounts[0].mount_point = "/ckpt/\xfe";
  t.nfs_mounts[0].ops[0].op = "WR\xffITE";
  const json j = summary_json(t);
  ASSERT_NO_THROW((void)j.dump());
  EXPECT_EQ(j["checkpoints"][0]["nfs"]["servers"][0], "\uFFFD:2049");
  EXPECT_EQ(j["nfs_mounts"][0]["mount_point"], "/ckpt/\uFFFD");
  EXPECT_EQ(j["nfs_mounts"][0]["crosscheck"][0]["op"], "WR\uFFFDITE");
}

// ---- summary_table ----

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Columns on a terminal: code points, not bytes (the table uses "—").
size_t columns(const std::string& line) {
  return static_cast<size_t>(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

const std::string* find_line(const std::vector<std::string>& lines, const std::string& start) {
  for (const std::string& l : lines) {
    if (l.rfind(start, 0) == 0) return &l;
  }
  return nullptr;
}

TEST(SummaryTableTest, JobLine) {
  const std::string table = summary_table(known_trace());
  const auto lines = lines_of(table);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "job: python train.py --lr 0.1  (exit 0, traced)");
  EXPECT_EQ(lines[1],
            "  gpu-node-07 (kernel 6.1.0-18-amd64), mode run, started 2024-05-01 12:00:00 UTC, "
            "ran 1m 00s");
}

TEST(SummaryTableTest, ProbeModeOnTheJobLineAndAViaLineForOtherInterfaces) {
  Trace t = known_trace();
  t.job.probe_mode = "file_layer";
  t.checkpoints[0].bytes_by_via = {{"syscall", kGiB}, {"io_uring", 2 * kGiB}};
  t.checkpoints[1].bytes_by_via = {{"syscall", t.checkpoints[1].bytes}};
  const std::string table = summary_table(t);
  const auto lines = lines_of(table);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "job: python train.py --lr 0.1  (exit 0, traced, probe mode: file_layer)");
  const std::string* via = find_line(lines, "  via: ");
  ASSERT_NE(via, nullptr);
  EXPECT_EQ(*via, "  via: syscall 1.00 GiB, io_uring 2.00 GiB");
  size_t via_lines = 0;
  for (const auto& l : lines) via_lines += l.rfind("  via: ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(via_lines, 1u) << "a checkpoint that moved bytes through syscalls only has none";
}

TEST(SummaryTableTest, FailedJobShowsItsCauseEvidenceSymptomsAndLogUnderTheExitLine) {
  const auto lines = lines_of(summary_table(failed_trace()));
  ASSERT_GE(lines.size(), 7u);
  EXPECT_EQ(lines[0], "job: python train.py --lr 0.1  (exit 1, traced)");
  EXPECT_EQ(lines[1], "  failure: gpu_lost (rule xid-79-fallen-off-bus)");
  // The kernel log's line is cut to 100 columns; the job's own log is "line N".
  EXPECT_EQ(lines[2],
            "    kmsg:812: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU "
            "has fallen off...");
  EXPECT_EQ(lines[3], "    line 57: RuntimeError: CUDA error: unspecified launch failure");
  EXPECT_EQ(lines[4], "    exit_status: the process exited with status 1");
  EXPECT_EQ(lines[5], "    also seen: nccl (rule nccl) at line 8");
  EXPECT_EQ(lines[6], "  log: /scratch/logs/train-20261130-140000-1234.log");
  EXPECT_THAT(lines[7], ::testing::StartsWith("  gpu-node-07 (kernel 6.1.0-18-amd64)"));
  for (size_t i = 1; i <= 6; ++i) EXPECT_LE(columns(lines[i]), 100u) << lines[i];
}

// `run` could not write the whole log (a full disk): the trace's
// job_log_incomplete failure says why, and the summary says so with the log.
Trace incomplete_log_trace() {
  Trace t = failed_trace();
  FailureRecord f;
  f.kind = "job_log_incomplete";
  f.time_ns = t.job.end_mono_ns;
  f.evidence = std::string("the job log ") + std::string(kLog) +
               " is incomplete: 3 writes failed (No space left on device), 81234 bytes are not in "
               "it";
  t.failures.push_back(f);
  return t;
}

TEST(SummaryJsonTest, AnIncompleteLogSaysSoWithTheJob) {
  const json job = summary_json(incomplete_log_trace())["job"];
  ASSERT_TRUE(job["log_incomplete"].is_string()) << job.dump();
  EXPECT_NE(job["log_incomplete"].get<std::string>().find("3 writes failed (No space left on "
                                                          "device), 81234 bytes are not in it"),
            std::string::npos);
  EXPECT_EQ(job["log"], kLog);
}

TEST(SummaryTableTest, AnIncompleteLogSaysSoUnderTheLogLine) {
  const auto lines = lines_of(summary_table(incomplete_log_trace()));
  ASSERT_GE(lines.size(), 8u);
  EXPECT_EQ(lines[6], "  log: /scratch/logs/train-20261130-140000-1234.log");
  EXPECT_EQ(lines[7],
            "  LOG INCOMPLETE: the job log /scratch/logs/train-20261130-140000-1234.log is "
            "incomplete: 3 writes failed (No space left on device), 81234 bytes are not in it");
}

TEST(SummaryTableTest, EvidenceFromAnotherFileAndUnknownCauses) {
  Trace t = failed_trace();
  t.job.failure->cls = "unknown";
  t.job.failure->rule.clear();
  t.job.failure->symptoms.clear();
  t.job.failure->evidence = {
      {3, "Traceback (most recent call last):", "/other/rank1.log"},  // not the job's log
      {9, "no source: the job's own log", ""},
  };
  t.job.log_path.clear();
  const auto lines = lines_of(summary_table(t));
  EXPECT_EQ(lines[1], "  failure: unknown");
  EXPECT_EQ(lines[2], "    /other/rank1.log:3: Traceback (most recent call last):");
  EXPECT_EQ(lines[3], "    line 9: no source: the job's own log");
  EXPECT_THAT(lines[4], ::testing::StartsWith("  gpu-node-07")) << "no log line without a log";
}

TEST(SummaryTableTest, LongOrMessyEvidenceIsCutToOneLine) {
  Trace t = failed_trace();
  t.job.failure->evidence = {
      {57, "\x1b[31mRuntimeError\x1b[0m: boom\r", std::string(kLog)},
      {58, std::string(200, 'x') + "TAIL", std::string(kLog)},
      {59, "模" + std::string(97, 'y') + "型型型型型", std::string(kLog)},  // cut inside no char
  };
  t.job.failure->symptoms = {"traceback (rule python-exception) at line 60 " +
                             std::string(100, 'z')};
  const std::string table = summary_table(t);
  const auto lines = lines_of(table);
  EXPECT_EQ(lines[2], "    line 57:  [31mRuntimeError [0m: boom") << "control bytes are spaces";
  EXPECT_EQ(columns(lines[3]), 100u);
  EXPECT_THAT(lines[3], ::testing::EndsWith("xxx..."));
  EXPECT_THAT(lines[3], Not(HasSubstr("TAIL")));
  EXPECT_LE(lines[4].size(), 100u);
  EXPECT_THAT(lines[4], ::testing::EndsWith("..."));
  EXPECT_EQ(valid_utf8(lines[4]), lines[4]) << "no UTF-8 sequence is split";
  EXPECT_THAT(lines[5], ::testing::StartsWith("    also seen: traceback (rule python-exception)"));
  EXPECT_EQ(lines[5].size(), 100u);
  EXPECT_THAT(lines[5], ::testing::EndsWith("zzz..."));
  EXPECT_EQ(std::count(table.begin(), table.end(), '\r'), 0);
}

TEST(SummaryTableTest, NoFailureNoFailureLines) {
  Trace t = known_trace();
  std::string table = summary_table(t);
  EXPECT_THAT(table, Not(HasSubstr("  failure: ")));
  EXPECT_THAT(table, Not(HasSubstr("  log: ")));
  t.job.log_path = std::string(kLog);  // a log, and a job that did not fail
  const auto lines = lines_of(summary_table(t));
  EXPECT_EQ(lines[1], "  log: /scratch/logs/train-20261130-140000-1234.log");
  EXPECT_THAT(summary_table(t), Not(HasSubstr("  failure: ")));
}

TEST(SummaryTableTest, KernelLogFailuresAreListedWithAlignedColumns) {
  const std::string table = summary_table(failed_trace());
  EXPECT_THAT(table, HasSubstr("\nfailures (5)\n"));
  // The kind column widens to the longest kind, so every row stays aligned.
  EXPECT_THAT(table, HasSubstr("   +44.00 s  kernel_nfs_not_responding  job            "
                               "nfs: server 10.0.0.5 not responding, still trying\n"));
  EXPECT_THAT(table, HasSubstr("   +49.00 s  gpu_xid                    job            NVRM: Xid"));
  EXPECT_THAT(table, HasSubstr("   +54.00 s  oom_kill                   job            "
                               "Out of memory: Killed process 4242 (python)\n"));
  EXPECT_THAT(table, HasSubstr("   +12.50 s  enospc                     checkpoint 1   "));
  EXPECT_LT(table.find("tcp_reset "), table.find("kernel_nfs_not_responding "));
  EXPECT_LT(table.find("  oom_kill "), table.find("\nconnections ("));
}

TEST(SummaryTableTest, UntracedJobShowsTheWarning) {
  Trace t = known_trace();
  t.job.exit_code.reset();
  t.job.exit_signal = 9;
  t.job.traced = false;
  t.job.trace_warning = "bpf: Operation not permitted";
  const auto lines = lines_of(summary_table(t));
  EXPECT_EQ(lines[0], "job: python train.py --lr 0.1  (killed by signal 9, NOT TRACED)");
  EXPECT_EQ(lines[1], "  warning: bpf: Operation not permitted");
}

TEST(SummaryTableTest, CheckpointHeaderAndStageRows) {
  const auto lines = lines_of(summary_table(known_trace()));
  const std::string* header = find_line(lines, "checkpoint 1 ");
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(*header,
            "checkpoint 1  save  at +10.00 s  took 3.00 s  3.00 GiB  4 files  "
            "bottleneck: host_io (*)");
  const std::string* host = find_line(lines, "  * host_io");
  ASSERT_NE(host, nullptr) << "the bottleneck row is marked";
  EXPECT_EQ(*host,
            "  * host_io     3.00 GiB   3.00 s   2.50 s  1.00 GiB/s  1.25 GiB/s   80.0%  "
            "config:storage.write_Bps");
  const std::string* columns = find_line(lines, "    stage ");
  ASSERT_NE(columns, nullptr);
  EXPECT_EQ(*columns,
            "    stage          bytes     busy      own   bandwidth         max  of max  max from");
  const std::string* gpu = find_line(lines, "    gpu_copy");
  ASSERT_NE(gpu, nullptr);
  EXPECT_THAT(*gpu, HasSubstr("3.00 GiB/s"));
  EXPECT_THAT(*gpu, HasSubstr("24.0 GiB/s"));
  EXPECT_THAT(*gpu, HasSubstr("12.5%"));
  const std::string* transport = find_line(lines, "    transport");
  ASSERT_NE(transport, nullptr);
  EXPECT_THAT(*transport, HasSubstr("1.50 GiB/s"));
  EXPECT_THAT(*transport, HasSubstr("unknown"));
  const std::string* serialize = find_line(lines, "    serialize");
  ASSERT_NE(serialize, nullptr);
  EXPECT_THAT(*serialize, HasSubstr("not measured: nothing of it in this checkpoint, or not "
                                    "traced here"));

  const std::string* load = find_line(lines, "checkpoint 2 ");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(*load,
            "checkpoint 2  load  at +29.00 s  took 1.00 s  512 B  1 file  no bottleneck measured");
}

TEST(SummaryTableTest, StageRowsFollowPipelineOrder) {
  const auto lines = lines_of(summary_table(known_trace()));
  // The first checkpoint's block: its header up to the next blank line.
  auto begin = std::find_if(lines.begin(), lines.end(),
                            [](const std::string& l) { return l.rfind("checkpoint 1 ", 0) == 0; });
  ASSERT_NE(begin, lines.end());
  auto end = std::find(begin, lines.end(), "");
  std::vector<std::string> names;
  for (auto it = begin + 2; it != end; ++it) {  // skip the header and the column titles
    std::istringstream row(it->substr(4));
    std::string name;
    row >> name;
    names.push_back(name);
  }
  EXPECT_EQ(names, std::vector<std::string>(std::begin(kAllStages), std::end(kAllStages)));
}

TEST(SummaryTableTest, FailuresConnectionsAndDrops) {
  Trace t = known_trace();
  std::string table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("failures (2)\n"));
  EXPECT_THAT(table, HasSubstr("   +12.50 s  enospc                checkpoint 1   "
                               "write(/ckpt/step100/model.pt) = -ENOSPC\n"));
  EXPECT_THAT(table, HasSubstr("   +39.00 s  tcp_reset             job            "
                               "RST from 10.0.0.5:2049\n"));
  EXPECT_LT(table.find("enospc"), table.find("tcp_reset")) << "failures in time order";
  EXPECT_THAT(table, HasSubstr("connections (1)\n"));
  EXPECT_THAT(table, HasSubstr("  10.0.0.5:2049  10.0.0.2:901    3.00 GiB    12.0 MiB        3"
                               "       250 ms       1\n"));
  EXPECT_THAT(table, HasSubstr("\ndrops: none\n"));

  t.drops = {
      {"jobio", "ringbuf_full", 12}, {"tcp", "ringbuf_full", 0}, {"tcp", "inflight_full", 3}};
  t.failures.clear();
  t.checkpoints[0].failures.clear();
  t.connections.clear();
  table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("\ndrops: jobio.ringbuf_full 12, tcp.inflight_full 3 (total 15)"));
  EXPECT_THAT(table, Not(HasSubstr("tcp.ringbuf_full")));
  EXPECT_THAT(table, HasSubstr("\nfailures: none\n"));
  EXPECT_THAT(table, HasSubstr("\nconnections: none\n"));
}

TEST(SummaryTableTest, FitsInOneHundredColumns) {
  Trace t = known_trace();
  t.job.command.push_back(std::string(300, 'x'));  // a long command is shortened
  t.checkpoints[0].stages[0].max_source =
      "sysfs:/sys/devices/pci0000:00/0000:00:03.0/net/eth0/speed";
  const auto lines = lines_of(summary_table(t));
  for (const std::string& line : lines) {
    if (line.find("ENOSPC") != std::string::npos) continue;  // evidence is never cut
    EXPECT_LE(columns(line), 100u) << line;
  }
  EXPECT_THAT(lines[0], HasSubstr("python train.py --lr 0.1 xxx"));
  EXPECT_THAT(lines[0], HasSubstr("...  (exit 0, traced)"));
  const std::string* gpu = find_line(lines, "    gpu_copy");
  ASSERT_NE(gpu, nullptr);
  EXPECT_THAT(*gpu, HasSubstr("  ..."));  // the source keeps its tail
  EXPECT_THAT(*gpu, HasSubstr("/net/eth0/speed"));
}

TEST(SummaryTableTest, ACalibratedSourceKeepsItsDateWhenCut) {
  Trace t = known_trace();
  t.checkpoints[0].stages[0].max_source = "calibrated 2026-12-02 (memory copy, 12 threads)";
  const auto lines = lines_of(summary_table(t));
  const std::string* row = find_line(lines, "    gpu_copy");
  ASSERT_NE(row, nullptr);
  EXPECT_LE(columns(*row), 100u) << *row;
  EXPECT_THAT(*row, ::testing::EndsWith("  calibrated 2026-12-02...")) << *row;
}

// The lines from the one starting with `start` up to (not including) the next
// line that does not start with `indent`.
std::vector<std::string> block_of(const std::vector<std::string>& lines, const std::string& start,
                                  const std::string& indent) {
  auto it = std::find_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.rfind(start, 0) == 0; });
  std::vector<std::string> out;
  if (it == lines.end()) return out;
  out.push_back(*it);
  for (++it; it != lines.end() && it->rfind(indent, 0) == 0; ++it) out.push_back(*it);
  return out;
}

TEST(SummaryTableTest, NfsLineFollowsTheStagesOfACheckpointWithNfs) {
  const auto lines = lines_of(summary_table(nfs_trace()));
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.rfind("  nfs: ", 0) == 0; }),
            1)
      << "only the save has NFS figures";
  auto nfs = std::find_if(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.rfind("  nfs: ", 0) == 0; });
  ASSERT_NE(nfs, lines.end());
  ASSERT_NE(nfs + 1, lines.end());
  EXPECT_THAT(*(nfs - 1), ::testing::StartsWith("    transport")) << "right after the stages";
  // One line, broken after a "; " where it would pass 100 columns.
  EXPECT_EQ(*nfs,
            "  nfs: RPCs: WRITE 128, COMMIT 4, GETATTR 3; queue wait p50 1.20 ms, p99 4.50 ms;");
  EXPECT_EQ(*(nfs + 1),
            "       rtt p50 850 us, p99 2.10 ms; TCP in flight max 1.00 MiB, backlog max 4.00 MiB, "
            "2 retransmits");
  EXPECT_EQ(*(nfs + 2), "");
  EXPECT_THAT(*(nfs + 3), ::testing::StartsWith("checkpoint 2 "));
}

TEST(SummaryTableTest, NfsLineLeavesOutWhatIsNotKnown) {
  Trace t = nfs_trace();
  NfsCheckpointRecord& n = *t.checkpoints[0].nfs;
  n.tcp_in_flight_max.reset();
  n.tcp_backlog_max.reset();
  n.tcp_retransmits = 1;
  n.rpc_ops.resize(1);
  auto nfs_text = [&]() {
    const auto block = block_of(lines_of(summary_table(t)), "  nfs: ", "       ");
    std::string joined;
    for (const std::string& l : block) joined += l + "\n";
    return joined;
  };
  EXPECT_EQ(nfs_text(),
            "  nfs: RPCs: WRITE 128; queue wait p50 1.20 ms, p99 4.50 ms; "
            "rtt p50 850 us, p99 2.10 ms;\n"
            "       TCP 1 retransmit\n");
  n.tcp_retransmits.reset();
  n.tcp_in_flight_max = 64 * 1024;
  EXPECT_THAT(nfs_text(),
              HasSubstr("rtt p50 850 us, p99 2.10 ms;\n       TCP in flight max 64.0 KiB\n"));
  EXPECT_THAT(nfs_text(), Not(HasSubstr("retransmit")));
  EXPECT_THAT(nfs_text(), Not(HasSubstr("backlog")));
  n.tcp_in_flight_max.reset();
  n.tcp_backlog_max = 96 * 1024;  // backlog alone
  EXPECT_THAT(nfs_text(),
              HasSubstr("rtt p50 850 us, p99 2.10 ms;\n       TCP backlog max 96.0 KiB\n"));
  EXPECT_THAT(nfs_text(), Not(HasSubstr("in flight")));
  n.tcp_in_flight_max = 64 * 1024;
  n.tcp_retransmits = 3;  // all three, in that order
  EXPECT_THAT(nfs_text(), HasSubstr("TCP in flight max 64.0 KiB, backlog max 96.0 KiB, "
                                    "3 retransmits\n"));
  n.tcp_retransmits.reset();
  n.tcp_in_flight_max.reset();
  n.tcp_in_flight_mean.reset();
  n.tcp_backlog_max.reset();  // a mean without a max shows nothing
  ASSERT_TRUE(n.tcp_backlog_mean.has_value());
  n.rpc_ops.clear();
  n.queue_wait = {};
  n.rtt = {};
  EXPECT_EQ(nfs_text(), "  nfs: RPCs: none; queue wait -; rtt -\n");
}

TEST(SummaryTableTest, NfsMountsSectionWithTheEbpfCrossCheck) {
  const std::string table = summary_table(nfs_trace());
  const auto lines = lines_of(table);
  const auto section = block_of(lines, "NFS mounts (mountstats)", "  ");
  EXPECT_EQ(section,
            (std::vector<std::string>{
                "NFS mounts (mountstats)",
                "  10.0.0.5:/export on /ckpt  (nfs4 4.2, server 10.0.0.5)  over 1m 00s",
                "    1104 ops: WRITE 1000 (3.07 MiB), COMMIT 4 (1.17 KiB), SETATTR 100 (9.77 KiB)",
                "    applications wrote 3.00 GiB and read 12.0 MiB; WRITE payload 3.00 GiB, "
                "READ payload 12.0 MiB",
                "    mountstats vs eBPF: DISAGREE by more than 1.0% on 3 ops (agree on 2 ops)",
                "      COMMIT: ops 4 vs 5 (20.0%), bytes 1.17 KiB vs 1.46 KiB (20.0%)",
                "      SETATTR: ops 100 vs 100 (0.0%), bytes 9.77 KiB vs 9.96 KiB (2.0%)",
                "      GETATTR: ops 0 vs 3 (100.0%), bytes 0 B vs 900 B (100.0%)",
                "  nas:/vol on /mnt/nas  (nfs 3, server 192.168.1.9)  since mount, 30.0 s",
                "    1 op: READ 1 (752 B)",
                "    applications wrote 0 B and read 512 B; WRITE payload 0 B, READ payload 512 B",
            }))
      << "no cross-check line for the mount eBPF did not see";
  EXPECT_LT(table.find("\ncheckpoint 2 "), table.find("\nNFS mounts (mountstats)\n"));
  EXPECT_LT(table.find("\nNFS mounts (mountstats)\n"), table.find("\nfailures ("));
}

TEST(SummaryTableTest, NfsMountThatAgreesWithEbpfSaysSo) {
  Trace t = nfs_trace();
  NfsMountRecord& m = t.nfs_mounts[0];
  m.ebpf_ops = std::vector<RpcOpStats>{};
  for (const NfsMountOpRecord& op : m.ops) {
    if (op.ops == 0) continue;
    m.ebpf_ops->push_back({op.op, op.ops, 0, 0, 0, op.bytes_sent, op.bytes_received, 0, 0, 0});
  }
  (*m.ebpf_ops)[0].count = 999;  // 0.1% off: within the tolerance
  const auto lines = lines_of(summary_table(t));
  EXPECT_NE(
      std::find(lines.begin(), lines.end(), "    mountstats vs eBPF: agree within 1.0% on 3 ops"),
      lines.end());
  EXPECT_EQ(find_line(lines, "    mountstats vs eBPF: DISAGREE"), nullptr);
}

TEST(SummaryTableTest, NoNfsNoNfsLines) {
  const std::string table = summary_table(known_trace());
  EXPECT_THAT(table, Not(HasSubstr("nfs: ")));
  EXPECT_THAT(table, Not(HasSubstr("NFS mounts")));
}

TEST(SummaryTableTest, NfsLinesFitInOneHundredColumns) {
  Trace t = nfs_trace();
  for (int i = 0; i < 20; ++i) {
    const std::string op = "OP" + std::to_string(i);
    t.checkpoints[0].nfs->rpc_ops.push_back({op, 1000u + i, 0, 0, 0, 0, 0, 0, 0, 0});
    t.nfs_mounts[1].ops.push_back({op, 1000u + i, 0, 0, 4096, 0, 0, 0, 0, std::nullopt});
  }
  const auto lines = lines_of(summary_table(t));
  for (const std::string& line : lines) {
    if (line.find("ENOSPC") != std::string::npos) continue;  // evidence is never cut
    EXPECT_LE(columns(line), 100u) << line;
  }
  const auto nfs = block_of(lines, "  nfs: ", "       ");
  EXPECT_GE(nfs.size(), 3u);
  std::string joined;  // the lines as one, continuation indents dropped
  for (const std::string& l : nfs) joined += (joined.empty() ? l : l.substr(7)) + " ";
  EXPECT_THAT(joined, HasSubstr("OP19 1019"));
  EXPECT_THAT(joined, HasSubstr("TCP in flight max 1.00 MiB, backlog max 4.00 MiB, 2 retransmits"));
  for (const std::string& l : nfs) {
    EXPECT_THAT(l, Not(::testing::EndsWith(" TCP"))) << "TCP stays with its first figure";
  }
  const auto ops = block_of(lines, "    20191 ops: ", "      ");  // 1 + 20 * 1000 + 190
  ASSERT_GE(ops.size(), 2u);
  EXPECT_THAT(ops.back(), HasSubstr("OP19 1019 (4.00 KiB)"));
}

TEST(SummaryTableTest, NoCheckpoints) {
  Trace t;
  t.job.command = {"sleep", "1"};
  const std::string table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("job: sleep 1  (exit status unknown, NOT TRACED)\n"));
  EXPECT_THAT(table, HasSubstr("\ncheckpoints: none detected\n"));
  EXPECT_THAT(table, HasSubstr("\ndrops: none\n"));
}

}  // namespace
}  // namespace ckpt

namespace ckpt {
namespace {

// The gpu_copy stage's detail, where a reader of the summary looks for it.
TEST(SummaryGpuTest, StageCarriesPageableAndPinnedAndTheCheckpointItsGpuDetail) {
  Trace t = known_trace();
  CheckpointGpuRecord& g = t.checkpoints[0].gpu.emplace();
  g.copies = 40;
  g.copy_count = 48;
  g.pageable_bytes = 2 * kGiB;
  g.pinned_bytes = 1 * kGiB;
  g.async_copies = 8;
  g.devices = {"0000:3b:00.0", "0000:5e:00.0"};
  const json c = summary_json(t)["checkpoints"][0];
  const json& stage = c["stages"][0];
  ASSERT_EQ(stage["name"], "gpu_copy");
  EXPECT_EQ(stage["pageable_bytes"], 2 * kGiB);
  EXPECT_EQ(stage["pinned_bytes"], 1 * kGiB);
  EXPECT_EQ(stage["copies"], 48);
  EXPECT_FALSE(c["stages"][1].contains("pageable_bytes"));  // host_io: no such detail
  EXPECT_EQ(c["gpu"]["devices"], json({"0000:3b:00.0", "0000:5e:00.0"}));
  EXPECT_EQ(c["gpu"]["async_copies"], 8);
  EXPECT_TRUE(summary_json(t)["checkpoints"][1]["gpu"].is_null());
  const std::string table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("  gpu: 48 copies (8 async) on 0000:3b:00.0, 0000:5e:00.0; host "
                               "memory: pageable 2.00 GiB, pinned 1.00 GiB\n"));
}

}  // namespace
}  // namespace ckpt
