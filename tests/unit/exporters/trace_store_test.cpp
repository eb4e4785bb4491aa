// The SQLite trace store: exact round trips (write_trace and TraceWriter),
// crash survival of the incremental writer, and clear errors on bad files.
#include "exporters/sqlite/trace_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "exporters/sqlite/json_text.h"
#include "exporters/sqlite/schema.h"

namespace ckpt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kAbove63 = (uint64_t{1} << 63) + 12345;  // stored as a negative int64
// Quantities (bytes, times, counts, ids) never reach 2^63 (issue 36: a
// negative INTEGER there is damage); identifiers (st_dev, st_ino, socket
// cookies) and the numbers in JSON columns take every 64-bit value.
constexpr uint64_t kQuantityMax = std::numeric_limits<int64_t>::max();
constexpr uint64_t kBelow63 = (uint64_t{1} << 62) + 12345;
constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();

// ---- whole-record comparison ----

// Every record compared whole with its defaulted operator== (model/records.h),
// one list element at a time so a failure says which. Doubles compare with
// ==: exact, so a value one ulp away differs (SQLite REAL keeps all 64 bits).
template <typename Record>
void expect_same_list(const std::string& what, const std::vector<Record>& expected,
                      const std::vector<Record>& actual) {
  ASSERT_EQ(actual.size(), expected.size()) << what << " size";
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i], expected[i]) << what << "[" << i << "]";
  }
}

void expect_same_trace(const Trace& expected, const Trace& actual) {
  EXPECT_EQ(actual.job, expected.job);
  expect_same_list("checkpoints", expected.checkpoints, actual.checkpoints);
  expect_same_list("failures", expected.failures, actual.failures);
  expect_same_list("io_calls", expected.io_calls, actual.io_calls);
  expect_same_list("rpc_calls", expected.rpc_calls, actual.rpc_calls);
  expect_same_list("connections", expected.connections, actual.connections);
  expect_same_list("tcp_samples", expected.tcp_samples, actual.tcp_samples);
  expect_same_list("drops", expected.drops, actual.drops);
  expect_same_list("nfs_mounts", expected.nfs_mounts, actual.nfs_mounts);
  EXPECT_EQ(actual.unrecognised_io.has_value(), expected.unrecognised_io.has_value());
  if (actual.unrecognised_io && expected.unrecognised_io) {
    EXPECT_TRUE(*actual.unrecognised_io == *expected.unrecognised_io) << "unrecognised_io";
    expect_same_list("unrecognised_io.largest", expected.unrecognised_io->largest,
                     actual.unrecognised_io->largest);
  }
  // The lists above are what a Trace holds; the whole comparison catches one
  // added to Trace and not here.
  EXPECT_TRUE(actual == expected) << "the traces differ";
}

// ---- fixtures ----

// Every field set to something distinctive: extremes of each integer type,
// doubles that only survive bit-exact storage, optionals both present and
// absent, and strings with quotes, control bytes, non-UTF-8 bytes and CJK.
Trace full_trace() {
  Trace t;
  JobRecord& j = t.job;
  j.command = {"python",       "train.py",           "--name=run \"1\" \\ 'x'",      "tab\there\n",
               "naïve-模型-🚀", "\xff\xfe not utf-8", std::string("nul\0inside", 10), ""};
  j.mode = "run";
  j.node = "gpu-node-07";
  j.kernel = "6.1.0-18-amd64";
  j.ckptscope_version = "0.1.0";
  j.config_json = R"({"storage":{"write_Bps":1.25e9},"paths":["/ckpt/**"]})";
  j.start_wall_ns = 1'714'564'800'123'456'789;
  j.start_mono_ns = 1'000'000'000;
  j.end_mono_ns = kQuantityMax;
  j.exit_code = -1;
  j.exit_signal = std::nullopt;
  j.traced = true;
  j.trace_warning = "nfs_client probes unavailable: kernel 6.1 lacks rpc_task tracepoints";
  j.root_pids = {1, 4242, kU32Max};
  j.name = "train \"模\" \xff";
  j.log_path = "/scratch/logs/train-20261130-140000-1234.log";
  // Evidence from all three sources, in an order that is not sorted by any
  // column (the classifier's order must survive).
  JobFailure& failure = j.failure.emplace();
  failure.cls = "gpu_lost";
  failure.rule = "xid-79-fallen-off-bus";
  failure.evidence = {
      {812,
       "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
       "bus.",
       "kmsg"},
      {57, "RuntimeError: CUDA error: unspecified launch failure\r\x1b[0m", j.log_path},
      {0, "killed by signal 6 (SIGABRT)", "exit_status"},
      {kQuantityMax, "\xff\xfe not utf-8 \"q\" 模", "kmsg"},
      {kBelow63, "", ""},
      {3, std::string("nul\0inside", 10), "/other/log \xc3\x28"},
  };
  failure.symptoms = {"nccl (rule nccl) at line 8", "cuda_runtime (rule cuda-runtime) at line 57",
                      "\xff\xfe \"q\"", ""};

  CheckpointRecord save;
  save.id = 1;
  save.direction = Direction::Save;
  save.start_ns = 11'000'000'000;
  save.end_ns = 14'000'000'000;
  save.bytes = kBelow63;
  save.files = kU32Max;
  save.bottleneck = "host_io";
  save.stages = {
      {"gpu_copy", 3'221'225'472, 1'000'000'000, 0.1 + 0.2, "config:gpu.copy_Bps", 999'999'999},
      {"host_io", kQuantityMax, kBelow63, DBL_MAX, "sysfs:/sys/class/net/eth0/speed", kBelow63},
      {"metadata", 0, 0, 5e-324, "denormal", 0},
      {"transport", 42, 7, std::nullopt, "unknown", std::nullopt},
  };
  save.failures = {
      {"enospc", 13'500'000'000, "write(/ckpt/模型.pt) = -ENOSPC", uint64_t{1}},
      {"io_error", kQuantityMax, "", std::nullopt},
  };
  save.file_io = {
      {"/ckpt/step-100/模型-🚀.pt", kAbove63, kU64Max, 1, 2, 3, 4, 5, 6, 7, 8, 9},
      {"/ckpt/\xc3\x28 bad utf-8 'quote\".bin", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  };
  NfsCheckpointRecord& nfs = save.nfs.emplace();  // every optional present
  nfs.servers = {"10.0.0.5:2049", "[fe80::2]:2049", "\xff\xfe not utf-8 \"q\"", ""};
  nfs.io_rpcs = kBelow63;
  nfs.io_bytes = kQuantityMax;
  nfs.rpc_ops = {
      {"WRITE", 128, 1, 2, 131, 3'221'250'000, 15'360, 5'000'000, 90'000'000, 100'000'000},
      {"COMMIT", kQuantityMax, kBelow63, kQuantityMax, kBelow63, kQuantityMax, kBelow63,
       kQuantityMax, kBelow63, kQuantityMax},
      {"GETATTR 模", 3, 4, 5, 6, 7, 8, 9, 10, 11},
  };
  nfs.queue_wait = {128, 39'062, 20'000, 80'000, 400'000, kQuantityMax};
  nfs.rtt = {kBelow63, 703'125, 650'000, 900'000, 2'000'000, kBelow63};
  nfs.wait_by_queue_ns = {{"backlog", 11}, {"sending", kU64Max}, {"pending", kAbove63},
                          {"other", 7},    {"backlog", 12},      {"q\"uote\\ 模\n", 1},
                          {"\xff\xfe", 2}};  // order and a repeated name survive
  nfs.tcp_in_flight_max = kBelow63;
  nfs.tcp_in_flight_mean = 0.1 + 0.2;
  nfs.tcp_backlog_max = kQuantityMax - 1;
  nfs.tcp_backlog_mean = 1.0 / 3.0;
  nfs.tcp_retransmits = kQuantityMax;

  CheckpointRecord load;  // id near 2^62; nothing measured
  load.id = kBelow63;
  load.direction = Direction::Load;
  load.start_ns = 30'000'000'000;
  load.end_ns = 29'000'000'000;  // end before start: stored as given
  t.checkpoints = {save, load};

  t.failures = {
      {"tcp_reset", 40'000'000'000, "RST from 10.0.0.5:2049", std::nullopt},
      {"estale", 41'000'000'000, "open(/ckpt/x) = -ESTALE", kBelow63},
  };
  t.io_calls = {
      {11'000'000'000, 11'500'000'000, 100, 101, "write", 1'048'576, 1'048'576, "/ckpt/模型.pt",
       uint64_t{1}},
      {12'000'000'000, 12'000'000'100, kU32Max, kU32Max, "fsync", -28, 0, "/ckpt/模型.pt",
       std::nullopt},
      {0, kQuantityMax, 0, 0, "open", std::numeric_limits<int64_t>::min(), kBelow63, "", kBelow63},
  };
  // One call each, traced through syscalls: what files of every version
  // before 6 read back as (busy_ns = end_ns - start_ns).
  for (auto& c : t.io_calls) c.busy_ns = c.end_ns - c.start_ns;
  t.rpc_calls = {
      {11'100'000'000, 11'105'000'000, 1'000'000, 4'000'000, 5'000'000, "WRITE", "10.0.0.5:2049",
       1'048'776, 120, 1'048'576, 0, 1, 0, true, uint64_t{1}},
      {kBelow63, kQuantityMax, kQuantityMax, kBelow63, kQuantityMax, "GETATTR 模",
       "\xff\xfe not utf-8 \"q\"", kQuantityMax, kBelow63, kQuantityMax,
       std::numeric_limits<int32_t>::min(), kU32Max, kU32Max, false, std::nullopt},
      {0, 0, 0, 0, 0, "", "", 0, 0, 0, -5, 0, 7, true, kBelow63},
      {12'000'000'000, 11'000'000'000, 3, 2, 1, "READ_PLUS", "[fe80::2]:2049", 1, 2, 3,
       std::numeric_limits<int32_t>::max(), 2, 0, false, uint64_t{1}},
  };
  t.connections = {
      {kAbove63, "10.0.0.2:901", "10.0.0.5:2049", 1, 2, 3, 4, 5, 6, 7, 1.25e9, "sysfs:eth0"},
      {7, "[fe80::1]:40000", "[fe80::2]:2049", 0, kQuantityMax, kQuantityMax, 0, 0, 0, 0,
       std::nullopt, "unknown"},
  };
  t.tcp_samples = {
      {1, kAbove63, "sample", 10, 20, 30, 35, 40, 50, 60, 70, 80, 1},
      {kQuantityMax, 7, "state", kQuantityMax, kQuantityMax, kU32Max, kU32Max, kU32Max, kU32Max,
       kU32Max, kU32Max, kQuantityMax, -7},
  };
  t.drops = {
      {"jobio", "ringbuf_full", 0}, {"tcp", "ringbuf_full", kQuantityMax}, {"collector", "x", 3}};

  NfsMountRecord v4;  // eBPF ran: ebpf_ops present
  v4.device = "10.0.0.5:/export/模型";
  v4.mount_point = "/ckpt \"quoted\" \xff";
  v4.fstype = "nfs4";
  v4.version = "4.2";
  v4.server = "10.0.0.5";
  v4.interval_s = 61;
  v4.since_mount = true;
  v4.normal_read_bytes = 1;
  v4.normal_write_bytes = kQuantityMax;
  v4.direct_read_bytes = kBelow63;
  v4.direct_write_bytes = 4;
  v4.server_read_bytes = 5;
  v4.server_write_bytes = 6;
  v4.xprt_sends = 7;
  v4.xprt_receives = kBelow63;
  v4.avg_backlog_queue = 0.1 + 0.2;
  v4.avg_sending_queue = DBL_MAX;
  v4.avg_pending_queue = 5e-324;
  v4.ops = {
      {"WRITE", 128, 131, 1, 2, 3, 4, 5, 6, uint64_t{7}},
      {"GETATTR", kQuantityMax, kBelow63, kQuantityMax, kBelow63, kQuantityMax, kBelow63,
       kQuantityMax, kBelow63, std::nullopt},
  };
  v4.ebpf_ops = std::vector<RpcOpStats>{
      {"WRITE", 127, 1, 2, 3, 4, 5, 6, 7, 8},
      {"READ 模", kQuantityMax, kBelow63, kQuantityMax, kBelow63, kQuantityMax, kBelow63,
       kQuantityMax, kBelow63, kQuantityMax},
  };
  NfsMountRecord v3;  // eBPF did not run: ebpf_ops absent
  v3.device = "nas:/vol";
  v3.mount_point = "/mnt/nas";
  v3.fstype = "nfs";
  v3.version = "3";
  v3.server = "192.168.1.9";
  v3.interval_s = kQuantityMax;
  v3.since_mount = false;
  v3.normal_read_bytes = 11;
  v3.normal_write_bytes = 12;
  v3.direct_read_bytes = 13;
  v3.direct_write_bytes = 14;
  v3.server_read_bytes = kQuantityMax;
  v3.server_write_bytes = kBelow63;
  v3.xprt_sends = kQuantityMax;
  v3.xprt_receives = 15;
  v3.avg_backlog_queue = -0.5;
  v3.avg_sending_queue = 1e300;
  v3.avg_pending_queue = 2.5;
  v3.ops = {{"READ", 1, 2, 3, 4, 5, 6, 7, 8, uint64_t{0}}};
  t.nfs_mounts = {v4, v3};
  return t;
}

class TraceStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ckpt-store-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  static void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  static std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Runs SQL against a trace file directly, to damage it on purpose.
  static void exec_sql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    std::string message = err != nullptr ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  static std::string query_text(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
          sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
        out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return out;
  }

  std::filesystem::path dir_;
};

// ---- round trips ----

TEST_F(TraceStoreTest, FullyPopulatedTraceRoundTripsFieldByField) {
  const Trace original = full_trace();
  const std::string path = file("full.ckpt.db");
  auto written = write_trace(path, original);
  ASSERT_TRUE(written) << written.error().message;

  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(original, *read);

  // Spot checks that do not go through the comparator.
  EXPECT_EQ(read->checkpoints[1].id, kBelow63);
  EXPECT_EQ(read->checkpoints[0].stages[1].bytes, kQuantityMax);
  EXPECT_EQ(read->checkpoints[0].file_io[0].dev, kAbove63);
  EXPECT_EQ(read->checkpoints[0].file_io[0].ino, kU64Max);
  EXPECT_EQ(read->connections[0].cookie, kAbove63);
  EXPECT_EQ(read->checkpoints[0].stages[0].max_Bps, 0.1 + 0.2);
  EXPECT_FALSE(read->checkpoints[0].stages[3].max_Bps.has_value());
  EXPECT_EQ(read->job.command[5], "\xff\xfe not utf-8");
  EXPECT_EQ(read->job.command[6], std::string("nul\0inside", 10));
  EXPECT_EQ(read->checkpoints[0].file_io[0].path, "/ckpt/step-100/模型-🚀.pt");
  EXPECT_EQ(read->io_calls[2].ret, std::numeric_limits<int64_t>::min());
  ASSERT_THAT(read->rpc_calls, SizeIs(4));
  EXPECT_EQ(read->rpc_calls[1].status, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(read->rpc_calls[1].transmissions, kU32Max);
  EXPECT_FALSE(read->rpc_calls[1].checkpoint_id.has_value());
  EXPECT_TRUE(read->rpc_calls[2].checkpoint_io);
  EXPECT_EQ(read->rpc_calls[2].checkpoint_id, kBelow63);
  EXPECT_EQ(read->tcp_samples[0].backlog, 35u);
  EXPECT_EQ(read->tcp_samples[1].backlog, kU32Max);
  EXPECT_EQ(read->tcp_samples[1].new_state, -7);
  EXPECT_EQ(read->job.exit_code, -1);
  EXPECT_FALSE(read->job.exit_signal.has_value());
  ASSERT_TRUE(read->checkpoints[0].nfs.has_value());
  EXPECT_FALSE(read->checkpoints[1].nfs.has_value());
  EXPECT_EQ(read->checkpoints[0].nfs->rpc_ops[1].count, kQuantityMax);
  EXPECT_EQ(read->checkpoints[0].nfs->wait_by_queue_ns[1],
            (std::pair<std::string, uint64_t>{"sending", kU64Max}));
  EXPECT_EQ(read->checkpoints[0].nfs->tcp_in_flight_mean, 0.1 + 0.2);
  EXPECT_EQ(read->checkpoints[0].nfs->tcp_backlog_max, kQuantityMax - 1);
  EXPECT_EQ(read->checkpoints[0].nfs->tcp_backlog_mean, 1.0 / 3.0);
  ASSERT_THAT(read->nfs_mounts, SizeIs(2));
  ASSERT_TRUE(read->nfs_mounts[0].ebpf_ops.has_value());
  EXPECT_THAT(*read->nfs_mounts[0].ebpf_ops, SizeIs(2));
  EXPECT_FALSE(read->nfs_mounts[0].ops[1].errors.has_value());
  EXPECT_FALSE(read->nfs_mounts[1].ebpf_ops.has_value());
  EXPECT_EQ(read->nfs_mounts[1].ops[0].errors, uint64_t{0});
  EXPECT_EQ(read->job.name, "train \"模\" \xff");
  EXPECT_EQ(read->job.log_path, "/scratch/logs/train-20261130-140000-1234.log");
  ASSERT_TRUE(read->job.failure.has_value());
  EXPECT_EQ(read->job.failure->cls, "gpu_lost");
  EXPECT_EQ(read->job.failure->rule, "xid-79-fallen-off-bus");
  ASSERT_THAT(read->job.failure->evidence, SizeIs(6));
  std::vector<std::string> sources;
  for (const JobEvidence& e : read->job.failure->evidence) sources.push_back(e.source);
  EXPECT_THAT(sources, ElementsAre("kmsg", read->job.log_path, "exit_status", "kmsg", "",
                                   "/other/log \xc3\x28"))
      << "evidence keeps the classifier's order";
  EXPECT_EQ(read->job.failure->evidence[0].line, 812u);
  EXPECT_EQ(read->job.failure->evidence[2].line, 0u);
  EXPECT_EQ(read->job.failure->evidence[3].line, kQuantityMax);
  EXPECT_EQ(read->job.failure->evidence[5].text, std::string("nul\0inside", 10));
  EXPECT_THAT(read->job.failure->symptoms, SizeIs(4));
}

TEST_F(TraceStoreTest, RecordEqualityCatchesEveryDifference) {
  // Guards the round-trip tests, which rely on the records' defaulted
  // operator==: each change below, on its own, must make the traces differ.
  const Trace a = full_trace();
  const std::pair<const char*, void (*)(Trace&)> changes[] = {
      {"job.exit_signal", [](Trace& t) { t.job.exit_signal = 9; }},
      {"checkpoints[0].stages[3].max_Bps (presence)",
       [](Trace& t) { t.checkpoints[0].stages[3].max_Bps = 0.0; }},
      {"checkpoints[0].file_io[1].last_ns",
       [](Trace& t) { t.checkpoints[0].file_io[1].last_ns = 1; }},
      {"checkpoints[0].stages[0].max_Bps, one ulp away",
       [](Trace& t) { t.checkpoints[0].stages[0].max_Bps = std::nextafter(0.1 + 0.2, 1.0); }},
      {"io_calls size", [](Trace& t) { t.io_calls.pop_back(); }},
      {"checkpoints[0].nfs.rpc_ops[1].execute_ns",
       [](Trace& t) { t.checkpoints[0].nfs->rpc_ops[1].execute_ns = 1; }},
      {"checkpoints[0].nfs.rtt.p90_ns", [](Trace& t) { t.checkpoints[0].nfs->rtt.p90_ns = 1; }},
      {"checkpoints[0].nfs.wait_by_queue_ns",
       [](Trace& t) { t.checkpoints[0].nfs->wait_by_queue_ns.pop_back(); }},
      {"checkpoints[0].nfs.tcp_in_flight_mean (presence)",
       [](Trace& t) { t.checkpoints[0].nfs->tcp_in_flight_mean.reset(); }},
      {"checkpoints[0].nfs.tcp_backlog_max",
       [](Trace& t) { t.checkpoints[0].nfs->tcp_backlog_max.reset(); }},
      {"checkpoints[0].nfs.tcp_backlog_mean",
       [](Trace& t) { t.checkpoints[0].nfs->tcp_backlog_mean = std::nextafter(1.0 / 3.0, 1.0); }},
      {"checkpoints[1].nfs (presence)", [](Trace& t) { t.checkpoints[1].nfs.emplace(); }},
      {"tcp_samples[0].backlog", [](Trace& t) { t.tcp_samples[0].backlog = 36; }},
      {"nfs_mounts[0].avg_pending_queue", [](Trace& t) { t.nfs_mounts[0].avg_pending_queue = 0; }},
      {"nfs_mounts[0].ebpf_ops[0].op",
       [](Trace& t) { t.nfs_mounts[0].ebpf_ops->at(0).op = "READ"; }},
      {"nfs_mounts[1].ops[0].errors", [](Trace& t) { t.nfs_mounts[1].ops[0].errors.reset(); }},
      {"nfs_mounts[1].ebpf_ops (presence)", [](Trace& t) { t.nfs_mounts[1].ebpf_ops.emplace(); }},
      {"job.name", [](Trace& t) { t.job.name = "eval"; }},
      {"job.failure.evidence[1].line", [](Trace& t) { t.job.failure->evidence[1].line = 58; }},
      {"job.failure.evidence[2].source",
       [](Trace& t) { t.job.failure->evidence[2].source = "kmsg"; }},
      {"job.failure.symptoms", [](Trace& t) { t.job.failure->symptoms.pop_back(); }},
      {"job.log_path", [](Trace& t) { t.job.log_path.clear(); }},
      {"job.failure.evidence size", [](Trace& t) { t.job.failure->evidence.pop_back(); }},
      {"job.failure (presence)", [](Trace& t) { t.job.failure.reset(); }},
      {"rpc_calls[0].payload_bytes", [](Trace& t) { t.rpc_calls[0].payload_bytes = 1; }},
      {"rpc_calls[1].checkpoint_id", [](Trace& t) { t.rpc_calls[1].checkpoint_id = 1; }},
      {"rpc_calls[2].checkpoint_io", [](Trace& t) { t.rpc_calls[2].checkpoint_io = false; }},
      {"rpc_calls[3].status", [](Trace& t) { t.rpc_calls[3].status = 0; }},
      {"rpc_calls size", [](Trace& t) { t.rpc_calls.pop_back(); }},
      {"checkpoints[0].gpu (presence)", [](Trace& t) { t.checkpoints[0].gpu.emplace(); }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    Trace b = a;
    change(b);
    EXPECT_FALSE(a == b);
  }
  EXPECT_TRUE(a == full_trace());
}

// ---- the table descriptors ----

// A record with every column its table describes set through the descriptor
// itself, each to a distinct value that is not the field's default.
template <typename Record>
Record filled(const table::Table<Record>& t, uint64_t& seed) {
  Record r{};
  seed = table::fill_every_field(t, r, seed);
  return r;
}

// One row in every table, every column filled by its descriptor: a column
// the descriptor lists is written and read back whatever its record, without
// this test naming it. Only where the rows go is spelled out here.
Trace trace_filled_by_the_descriptors() {
  using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
  uint64_t seed = 1;
  Trace t;
  t.job = filled(kJobTable, seed);  // through job.failure: the failure is present
  t.job.failure->evidence = {filled(kJobFailureEvidenceTable, seed),
                             filled(kJobFailureEvidenceTable, seed)};
  CheckpointRecord c = filled(kCheckpointsTable, seed);
  c.stages = {filled(kStagesTable, seed), filled(kStagesTable, seed)};
  c.failures = {filled(kFailuresTable, seed)};
  c.file_io = {filled(kFilesTable, seed)};
  c.nfs = filled(kCheckpointNfsTable, seed);
  c.nfs->rpc_ops = {filled(kRpcOpsTable, seed)};
  c.gpu = filled(kCheckpointGpuTable, seed);
  t.checkpoints = {c};
  t.failures = {filled(kFailuresTable, seed)};
  t.io_calls = {filled(kIoCallsTable, seed)};
  t.rpc_calls = {filled(kRpcCallsTable, seed)};
  t.connections = {filled(kConnectionsTable, seed)};
  t.tcp_samples = {filled(kTcpSamplesTable, seed)};
  t.drops = {filled(kDropsTable, seed)};
  NfsMountRecord m = filled(kNfsMountsTable, seed);  // has_ebpf_ops: the list is present
  m.ops = {filled(kNfsMountOpsTable, seed)};
  m.ebpf_ops->push_back(filled(kNfsMountEbpfOpsTable, seed));
  t.nfs_mounts = {m};
  t.unrecognised_io = filled(kUnrecognisedIoTable, seed);
  t.unrecognised_io->largest = {filled(kUnrecognisedFilesTable, seed),
                                filled(kUnrecognisedFilesTable, seed)};
  return t;
}

TEST_F(TraceStoreTest, EveryColumnOfEveryDescriptorRoundTrips) {
  const Trace written = trace_filled_by_the_descriptors();
  const std::string path = file("descriptors.db");
  auto ok = write_trace(path, written);
  ASSERT_TRUE(ok) << ok.error().message;
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(written, *read);
}

// Each field column's sample is not its field's default, or the round trip
// above could not tell a column that is never written from one that is.
template <typename Record>
void expect_every_field_column_changes_the_record(const table::Table<Record>& t) {
  for (const auto& c : t.columns) {
    if (c.role != table::Role::Field) continue;
    SCOPED_TRACE(std::string(t.name) + "." + std::string(c.name));
    ASSERT_NE(c.bind, nullptr);
    ASSERT_NE(c.read, nullptr);
    ASSERT_NE(c.fill, nullptr);
    Record r{};
    c.fill(r, 7);
    EXPECT_FALSE(r == Record{});
  }
}

TEST_F(TraceStoreTest, EveryDescriptorColumnIsBoundReadAndFilled) {
  trace_tables::for_each_table(
      [](const auto& t) { expect_every_field_column_changes_the_record(t); });
}

uint64_t fnv1a(const std::string& text) {
  uint64_t fnv = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (unsigned char ch : text) fnv = (fnv ^ ch) * 1099511628211ull;
  return fnv;
}

TEST_F(TraceStoreTest, SchemaTextIsStillVersion5AsShipped) {
  // The descriptors generate the schema; the text of version 5 is the file
  // format (SQLite keeps it in every trace) and must not move by a byte:
  // rebuilt without version 6's columns, it is what version 5 wrote.
  const std::string sql = trace_schema_sql_of(5);
  EXPECT_EQ(sql.size(), 20781u);
  EXPECT_EQ(fnv1a(sql), 0xb4f26fe4cdea653full);
}

TEST_F(TraceStoreTest, SchemaTextIsStillVersion6AsShipped) {
  // Rebuilt without version 7's column and version 8's tables, it is what
  // version 6 wrote.
  const std::string sql = trace_schema_sql_of(6);
  EXPECT_EQ(sql.size(), 23054u);
  EXPECT_EQ(fnv1a(sql), 0xceac83db2ae730ebull);
}

TEST_F(TraceStoreTest, SchemaTextIsStillVersion7AsShipped) {
  // Rebuilt without version 8's tables, it is what version 7 wrote.
  const std::string sql = trace_schema_sql_of(7);
  EXPECT_EQ(sql.size(), 23496u);
  EXPECT_EQ(fnv1a(sql), 0xf9601aad162bbebbull);
}

TEST_F(TraceStoreTest, SchemaTextIsStillVersion8AsShipped) {
  // Rebuilt without version 9's table, it is what version 8 wrote.
  const std::string sql = trace_schema_sql_of(8);
  EXPECT_EQ(sql.size(), 25316u);
  EXPECT_EQ(fnv1a(sql), 0xa6360dd49030ab11ull);
}

TEST_F(TraceStoreTest, SchemaTextIsStillVersion9AsShipped) {
  // Rebuilt without version 10's column and history, it is what version 9 wrote.
  const std::string sql = trace_schema_sql_of(9);
  EXPECT_EQ(sql.size(), 26945u);
  EXPECT_EQ(fnv1a(sql), 0xb5f53d8f19f04398ull);
}

TEST_F(TraceStoreTest, SchemaTextIsVersion10AsShipped) {
  // A deliberate change bumps kTraceSchemaVersion and adds a fingerprint:
  // compare `sqlite3 TRACE.db .schema` of traces from before and after.
  const std::string& sql = trace_schema_sql();
  EXPECT_EQ(kTraceSchemaVersion, 10);
  EXPECT_EQ(sql, trace_schema_sql_of(10));
  EXPECT_EQ(sql.size(), 27814u);
  EXPECT_EQ(fnv1a(sql), 0x54db98349db5f1cbull);
  const std::string path = file("schema.db");
  ASSERT_TRUE(write_trace(path, Trace{}));
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master "
                       "WHERE type = 'table' ORDER BY rowid)"),
            "meta,job,checkpoints,stages,failures,files,io_calls,connections,tcp_samples,drops,"
            "checkpoint_nfs,rpc_ops,nfs_mounts,nfs_mount_ops,nfs_mount_ebpf_ops,"
            "job_failure_evidence,rpc_calls,checkpoint_gpu,unrecognised_io,unrecognised_files,"
            "io_accounting");
  // Only columns were added, at the ends of their tables.
  EXPECT_EQ(query_text(path, "SELECT group_concat(name, ',') FROM pragma_table_info('io_calls')"),
            "seq,start_ns,end_ns,tgid,tid,op,ret,bytes,path,checkpoint_id,calls,via,busy_ns,"
            "storage_bytes");
  EXPECT_EQ(query_text(path, "SELECT group_concat(name, ',') FROM pragma_table_info('stages')"),
            "checkpoint_id,ordinal,name,bytes,busy_ns,max_Bps,max_source,exclusive_ns");
  EXPECT_EQ(
      query_text(path, "SELECT group_concat(name, ',') FROM pragma_table_info('checkpoints')"),
      "seq,id,direction,start_ns,end_ns,bytes,files,bottleneck,bytes_by_via,dirty_at_end_bytes");
}

TEST_F(TraceStoreTest, UnsignedAbove2To63IsStoredTwosComplementAndDocumentedSo) {
  // Identifiers take every 64-bit value: st_dev, st_ino, socket cookies.
  Trace t;
  t.checkpoints.push_back({});
  t.checkpoints[0].id = 1;
  t.checkpoints[0].file_io.push_back({"/ckpt/a", kU64Max, kAbove63});
  t.connections.push_back({kAbove63, "a", "b"});
  const std::string path = file("u64.db");
  ASSERT_TRUE(write_trace(path, t));
  EXPECT_EQ(query_text(path, "SELECT ino FROM files"),
            std::to_string(static_cast<int64_t>(kAbove63)));
  EXPECT_EQ(query_text(path, "SELECT dev FROM files"), "-1");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->checkpoints[0].file_io[0].ino, kAbove63);
  EXPECT_EQ(read->checkpoints[0].file_io[0].dev, kU64Max);
  EXPECT_EQ(read->connections[0].cookie, kAbove63);
}

// Issue 36: a quantity (bytes, nanoseconds, counts, a checkpoint's id) never
// reaches 2^63, so a negative INTEGER there is damage, named by table,
// column and row, not 18446744073709551611 bytes.
TEST_F(TraceStoreTest, ANegativeOrOutOfRangeIntegerIsDamageNamingTableColumnAndRow) {
  struct Case {
    std::string sql;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"UPDATE checkpoints SET bytes = -5 WHERE id = 1",
       "checkpoints.bytes (row seq 1) is -5, out of its range (0 to 9223372036854775807; an "
       "unsigned quantity is never negative)"},
      {"UPDATE files SET bytes_read = -1 WHERE seq = 2",
       "files.bytes_read of checkpoint 1 (row seq 2) is -1"},
      {"UPDATE io_calls SET tgid = 4294967296 WHERE seq = 1",
       "io_calls.tgid (row seq 1) is 4294967296, out of its range (0 to 4294967295)"},
      {"UPDATE io_calls SET tid = -1 WHERE seq = 3", "io_calls.tid (row seq 3) is -1"},
      {"UPDATE checkpoints SET files = -2 WHERE id = 1", "checkpoints.files (row seq 1) is -2"},
      {"UPDATE stages SET busy_ns = -7 WHERE checkpoint_id = 1 AND ordinal = 0",
       "stages.busy_ns of checkpoint 1 is -7"},
      {"UPDATE stages SET exclusive_ns = -7 WHERE checkpoint_id = 1 AND ordinal = 0",
       "stages.exclusive_ns of checkpoint 1 is -7"},
      {"UPDATE checkpoint_nfs SET io_rpcs = -3", "checkpoint_nfs.io_rpcs of checkpoint 1 is -3"},
      {"UPDATE job SET start_mono_ns = -1", "job.start_mono_ns is -1"},
      {"UPDATE job SET exit_code = 2147483648", "job.exit_code is 2147483648, out of its range"},
      {"UPDATE rpc_calls SET status = -2147483649 WHERE seq = 1",
       "rpc_calls.status (row seq 1) is -2147483649"},
      {"UPDATE rpc_calls SET checkpoint_io = 2 WHERE seq = 1",
       "rpc_calls.checkpoint_io (row seq 1) is 2, out of its range (0 to 1)"},
      {"UPDATE tcp_samples SET backlog = -1 WHERE seq = 1", "tcp_samples.backlog (row seq 1)"},
      {"UPDATE drops SET count = -9 WHERE seq = 1", "drops.count (row seq 1) is -9"},
      {"UPDATE nfs_mounts SET server_read_bytes = -1 WHERE seq = 1",
       "nfs_mounts.server_read_bytes (row seq 1) is -1"},
      {"UPDATE nfs_mounts SET has_ebpf_ops = 7 WHERE seq = 1",
       "nfs_mounts.has_ebpf_ops (row seq 1) is 7"},
      {"UPDATE checkpoint_gpu SET pinned_bytes = -1",
       "checkpoint_gpu.pinned_bytes of checkpoint 1"},
      {"UPDATE job_failure_evidence SET line = -1 WHERE seq = 1",
       "job_failure_evidence.line (row seq 1) is -1"},
      {"UPDATE unrecognised_io SET bytes_read = -1", "unrecognised_io.bytes_read is -1"},
      // Not an integer at all: a real, text, a blob.
      {"UPDATE checkpoints SET bytes = 1.5 WHERE id = 1",
       "checkpoints.bytes (row seq 1) is a real number ('1.5'), not a whole number"},
      {"UPDATE checkpoints SET start_ns = 'soon' WHERE id = 1",
       "checkpoints.start_ns (row seq 1) is text ('soon'), not a whole number"},
      {"UPDATE io_calls SET bytes = x'00ff' WHERE seq = 1", "io_calls.bytes (row seq 1) is a blob"},
      // CREATE TABLE ... AS drops the NOT NULL constraints, letting a NULL in.
      {"CREATE TABLE c AS SELECT * FROM drops; DROP TABLE drops; ALTER TABLE c RENAME TO drops; "
       "UPDATE drops SET count = NULL",
       "drops.count (row seq 1) is NULL, not a whole number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql);
    const std::string path = file("bad-int.db");
    Trace t = full_trace();
    t.checkpoints[0].gpu.emplace();
    t.unrecognised_io.emplace();
    ASSERT_TRUE(write_trace(path, t));
    exec_sql(path, c.sql);
    auto read = read_trace(path);
    ASSERT_FALSE(read);
    EXPECT_THAT(read.error().message, HasSubstr("'" + path + "' is a damaged ckptscope trace: "));
    EXPECT_THAT(read.error().message, HasSubstr(c.expected));
  }
  // The same values where every 64-bit pattern is one: identifiers.
  const std::string path = file("ids.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path,
           "UPDATE files SET dev = -5, ino = -6; UPDATE connections SET cookie = -7; "
           "UPDATE tcp_samples SET cookie = -8");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->checkpoints[0].file_io[0].dev, uint64_t(-5));
  EXPECT_EQ(read->checkpoints[0].file_io[0].ino, uint64_t(-6));
  EXPECT_EQ(read->connections[0].cookie, uint64_t(-7));
  EXPECT_EQ(read->tcp_samples[1].cookie, uint64_t(-8));
}

// Issue 36: meta.schema_version must say what PRAGMA user_version says, a
// version this reader reads; otherwise the error says which it reads.
TEST_F(TraceStoreTest, MetaSchemaVersionNotOneItReadsIsRefusedSayingWhichItReads) {
  struct Case {
    std::string sql;
    std::string expected;
  };
  const std::string reads =
      "this ckptscope reads schema versions 1 to " + std::to_string(kTraceSchemaVersion);
  const std::vector<Case> cases = {
      {"UPDATE meta SET value = '999' WHERE key = 'schema_version'",
       "meta.schema_version is 999, not a version it reads (" + reads + ")"},
      {"UPDATE meta SET value = 'eight' WHERE key = 'schema_version'",
       "meta.schema_version is 'eight', not a schema version (" + reads + ")"},
      {"UPDATE meta SET value = '' WHERE key = 'schema_version'",
       "meta.schema_version is '', not a schema version"},
      {"UPDATE meta SET value = '8.0' WHERE key = 'schema_version'",
       "meta.schema_version is '8.0', not a schema version"},
      {"UPDATE meta SET value = '0' WHERE key = 'schema_version'",
       "meta.schema_version is 0, not a version it reads"},
      {"UPDATE meta SET value = '-8' WHERE key = 'schema_version'",
       "meta.schema_version is -8, not a version it reads"},
      {"DELETE FROM meta WHERE key = 'schema_version'",
       "meta.schema_version is missing (" + reads + ")"},
      {"UPDATE meta SET value = '7' WHERE key = 'schema_version'",
       "meta.schema_version is 7 but PRAGMA user_version is " +
           std::to_string(kTraceSchemaVersion)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql);
    const std::string path = file("meta.db");
    ASSERT_TRUE(write_trace(path, full_trace()));
    exec_sql(path, c.sql);
    auto read = read_trace(path);
    ASSERT_FALSE(read);
    EXPECT_THAT(read.error().message, HasSubstr("'" + path + "' is a damaged ckptscope trace: "));
    EXPECT_THAT(read.error().message, HasSubstr(c.expected));
  }
}

TEST_F(TraceStoreTest, EmptyTraceRoundTrips) {
  const std::string path = file("empty.db");
  ASSERT_TRUE(write_trace(path, Trace{}));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(Trace{}, *read);
}

TEST_F(TraceStoreTest, NfsRecordsWithOptionalsAbsentAndEmptyListsRoundTrip) {
  Trace t;
  CheckpointRecord c;
  c.id = 5;
  c.nfs.emplace();  // present, but every list empty and every optional absent
  t.checkpoints.push_back(c);
  c.id = 6;
  c.nfs->servers = {"10.0.0.5:2049"};
  c.nfs->io_rpcs = 1;
  c.nfs->rpc_ops = {{"WRITE", 1, 0, 0, 1, 100, 50, 1, 2, 3}};
  c.nfs->tcp_in_flight_max = 0;  // present zeros stay present
  c.nfs->tcp_in_flight_mean = 0.0;
  c.nfs->tcp_backlog_max = 0;
  c.nfs->tcp_backlog_mean = 0.0;
  t.checkpoints.push_back(c);
  NfsMountRecord m;
  m.device = "nas:/empty";
  m.ebpf_ops.emplace();  // the probes ran and saw nothing: not the same as absent
  t.nfs_mounts = {m, NfsMountRecord{}};
  const std::string path = file("nfs-absent.db");
  ASSERT_TRUE(write_trace(path, t));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(t, *read);
  ASSERT_TRUE(read->checkpoints[0].nfs.has_value());
  EXPECT_FALSE(read->checkpoints[0].nfs->tcp_in_flight_max.has_value());
  EXPECT_FALSE(read->checkpoints[0].nfs->tcp_in_flight_mean.has_value());
  EXPECT_FALSE(read->checkpoints[0].nfs->tcp_backlog_max.has_value());
  EXPECT_FALSE(read->checkpoints[0].nfs->tcp_backlog_mean.has_value());
  EXPECT_FALSE(read->checkpoints[0].nfs->tcp_retransmits.has_value());
  EXPECT_EQ(read->checkpoints[1].nfs->tcp_in_flight_max, uint64_t{0});
  EXPECT_EQ(read->checkpoints[1].nfs->tcp_backlog_max, uint64_t{0});
  EXPECT_EQ(read->checkpoints[1].nfs->tcp_backlog_mean, 0.0);
  EXPECT_FALSE(read->checkpoints[1].nfs->tcp_retransmits.has_value());
  ASSERT_TRUE(read->nfs_mounts[0].ebpf_ops.has_value());
  EXPECT_THAT(*read->nfs_mounts[0].ebpf_ops, IsEmpty());
  EXPECT_FALSE(read->nfs_mounts[1].ebpf_ops.has_value());
}

TEST_F(TraceStoreTest, NfsTablesAreQueryableInPlainSql) {
  const std::string path = file("nfs-sql.db");
  Trace t = full_trace();
  t.checkpoints[0].nfs->servers = {"10.0.0.5:2049", "[fe80::2]:2049"};
  t.checkpoints[0].nfs->wait_by_queue_ns = {{"backlog", 1}, {"sending", kU64Max}};
  ASSERT_TRUE(write_trace(path, t));
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM checkpoint_nfs"), "1");
  EXPECT_EQ(query_text(path, "SELECT servers FROM checkpoint_nfs WHERE checkpoint_id = 1"),
            R"(["10.0.0.5:2049","[fe80::2]:2049"])");
  // JSON numbers are plain unsigned decimals, not two's complement.
  EXPECT_EQ(query_text(path, "SELECT wait_by_queue FROM checkpoint_nfs"),
            R"({"backlog":1,"sending":18446744073709551615})");
  EXPECT_EQ(query_text(path, "SELECT rtt_p99_ns FROM checkpoint_nfs"), "2000000");
  EXPECT_EQ(query_text(path, "SELECT typeof(tcp_backlog_max) FROM checkpoint_nfs"), "integer");
  EXPECT_EQ(query_text(path, "SELECT typeof(tcp_backlog_mean) FROM checkpoint_nfs"), "real");
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(backlog, ',') FROM "
                       "(SELECT backlog FROM tcp_samples ORDER BY seq)"),
            "35,4294967295");
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(op, ',') FROM (SELECT op FROM rpc_ops "
                       "WHERE checkpoint_id = 1 ORDER BY seq)"),
            "WRITE,COMMIT,GETATTR 模");
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(has_ebpf_ops, ',') FROM "
                       "(SELECT has_ebpf_ops FROM nfs_mounts ORDER BY seq)"),
            "1,0");
  EXPECT_EQ(query_text(path,
                       "SELECT count(*) FROM nfs_mount_ops o JOIN nfs_mounts m "
                       "ON o.mount_seq = m.seq WHERE m.fstype = 'nfs4'"),
            "2");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM nfs_mount_ops WHERE errors IS NULL"), "1");
  EXPECT_EQ(query_text(path, "SELECT sum(count) FROM nfs_mount_ebpf_ops WHERE op = 'WRITE'"),
            "127");
}

TEST_F(TraceStoreTest, NanQueueAveragesReadBackAsNan) {
  // SQLite stores NaN as NULL; a non-optional double comes back NaN, and the
  // write does not fail on it.
  Trace t;
  t.nfs_mounts.resize(1);
  t.nfs_mounts[0].avg_backlog_queue = std::nan("");
  t.nfs_mounts[0].avg_pending_queue = 1.5;
  const std::string path = file("nan.db");
  ASSERT_TRUE(write_trace(path, t));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_THAT(read->nfs_mounts, SizeIs(1));
  EXPECT_TRUE(std::isnan(read->nfs_mounts[0].avg_backlog_queue));
  EXPECT_EQ(read->nfs_mounts[0].avg_sending_queue, 0.0);
  EXPECT_EQ(read->nfs_mounts[0].avg_pending_queue, 1.5);
}

TEST_F(TraceStoreTest, SetNfsMountsReplacesMountsAndTheirOps) {
  const Trace full = full_trace();
  const std::string path = file("mounts.db");
  auto w = TraceWriter::open(path);
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(w->set_nfs_mounts(full.nfs_mounts));
  ASSERT_TRUE(w->commit());
  ASSERT_TRUE(w->set_nfs_mounts({full.nfs_mounts[1]}));
  ASSERT_TRUE(w->close());
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM nfs_mounts"), "1");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM nfs_mount_ops"), "1");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM nfs_mount_ebpf_ops"), "0");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  Trace expected;
  expected.nfs_mounts = {full.nfs_mounts[1]};
  expect_same_trace(expected, *read);

  auto again = TraceWriter::open(path);
  ASSERT_TRUE(again) << again.error().message;
  ASSERT_TRUE(again->set_nfs_mounts(full.nfs_mounts));
  ASSERT_TRUE(again->set_nfs_mounts({}));
  ASSERT_TRUE(again->close());
  read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_THAT(read->nfs_mounts, IsEmpty());
}

// ---- the job's name, log and failure cause ----

TEST_F(TraceStoreTest, JobWithoutAFailureRoundTripsAsAbsent) {
  Trace t = full_trace();
  t.job.failure.reset();
  t.job.name.clear();
  t.job.log_path.clear();
  const std::string path = file("no-failure.db");
  ASSERT_TRUE(write_trace(path, t));
  EXPECT_EQ(query_text(path,
                       "SELECT count(*) FROM job WHERE failure_class IS NULL AND "
                       "failure_rule IS NULL AND failure_symptoms IS NULL"),
            "1");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM job_failure_evidence"), "0");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(t, *read);
  EXPECT_FALSE(read->job.failure.has_value());
  EXPECT_EQ(read->job.name, "");
  EXPECT_EQ(read->job.log_path, "");
}

TEST_F(TraceStoreTest, EmptyFailureIsStillAFailure) {
  // An unknown cause with no evidence and no symptoms is present, not absent.
  Trace t;
  t.job.exit_code = 1;
  t.job.failure.emplace().cls = "unknown";
  const std::string path = file("unknown.db");
  ASSERT_TRUE(write_trace(path, t));
  EXPECT_EQ(query_text(path, "SELECT failure_rule || '|' || failure_symptoms FROM job"), "|[]");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(t, *read);
  ASSERT_TRUE(read->job.failure.has_value());
  EXPECT_EQ(read->job.failure->cls, "unknown");
  EXPECT_EQ(read->job.failure->rule, "");
  EXPECT_THAT(read->job.failure->evidence, IsEmpty());
  EXPECT_THAT(read->job.failure->symptoms, IsEmpty());
}

TEST_F(TraceStoreTest, WriteJobReplacesTheFailureAndItsEvidence) {
  const Trace full = full_trace();
  const std::string path = file("job-rewrite.db");
  auto w = TraceWriter::open(path);
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(w->write_job(full.job));
  ASSERT_TRUE(w->commit());
  JobRecord other = full.job;
  other.failure->cls = "nccl";
  other.failure->evidence = {{8, "NCCL error: unhandled system error", other.log_path}};
  ASSERT_TRUE(w->write_job(other));  // evidence replaced, not appended
  ASSERT_TRUE(w->commit());
  auto mid = read_trace(path);
  ASSERT_TRUE(mid) << mid.error().message;
  Trace expected;
  expected.job = other;
  expect_same_trace(expected, *mid);

  JobRecord running = full.job;
  running.failure.reset();
  ASSERT_TRUE(w->write_job(running));  // and gone with the failure
  ASSERT_TRUE(w->close());
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM job_failure_evidence"), "0");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expected.job = running;
  expect_same_trace(expected, *read);
}

TEST_F(TraceStoreTest, JobFailureIsQueryableInPlainSql) {
  const std::string path = file("failure-sql.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  EXPECT_EQ(query_text(path, "SELECT failure_class || ' ' || failure_rule FROM job"),
            "gpu_lost xid-79-fallen-off-bus");
  EXPECT_EQ(query_text(path, "SELECT log_path FROM job"),
            "/scratch/logs/train-20261130-140000-1234.log");
  EXPECT_EQ(query_text(path, "SELECT json_extract(failure_symptoms, '$[0]') FROM job"),
            "nccl (rule nccl) at line 8");
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(source || ':' || line, ',') FROM (SELECT source, line "
                       "FROM job_failure_evidence WHERE source IN ('kmsg', 'exit_status') "
                       "ORDER BY seq)"),
            "kmsg:812,exit_status:0,kmsg:9223372036854775807");
  EXPECT_EQ(query_text(path,
                       "SELECT e.line FROM job_failure_evidence e JOIN job j "
                       "ON e.source = j.log_path"),
            "57");
}

TEST_F(TraceStoreTest, Version3FileMissingTheEvidenceTableIsNamed) {
  const std::string path = file("v3-partial.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path, "DROP TABLE job_failure_evidence");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message,
              HasSubstr("'" + path +
                        "' is a damaged ckptscope trace: table 'job_failure_evidence' is missing"));
}

TEST_F(TraceStoreTest, Version3FileWithoutAJobColumnNamesIt) {
  const std::string path = file("v3-no-log.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path,
           "CREATE TABLE j AS SELECT id, command, mode, node, kernel, ckptscope_version, "
           "config_json, start_wall_ns, start_mono_ns, end_mono_ns, exit_code, exit_signal, "
           "traced, trace_warning, root_pids, name, failure_class, failure_rule, "
           "failure_symptoms FROM job; DROP TABLE job; ALTER TABLE j RENAME TO job");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("'" + path + "'"));
  EXPECT_THAT(read.error().message, HasSubstr("log_path"));
}

// ---- older schema versions ----

// What a file of a version before 7 holds of `t`: no stage's own time.
void forget_exclusive_times(Trace& t) {
  for (CheckpointRecord& c : t.checkpoints)
    for (StageRecord& st : c.stages) st.exclusive_ns.reset();
}

// The DDL of an older version, derived from today's: version 3 is version 4
// without rpc_calls; version 2 is version 3 without the job's name, log and
// failure columns and job_failure_evidence; version 1 is version 2 without
// the NFS tables and tcp_samples.backlog. Empty when today's DDL no longer has
// the expected shape.
std::string ddl_of_version(int version) {
  // Version 5 as it shipped, rebuilt from the descriptors (version 6 only
  // added columns, left out here).
  std::string ddl = version < 6 ? trace_schema_sql_of(5) : trace_schema_sql_of(version);
  if (version < 5) {
    const size_t from = ddl.find("\n-- The gpu_copy stage's detail (since version 5)");
    const size_t to = from == std::string::npos ? from : ddl.find(");\n", from);
    if (to == std::string::npos) return {};
    ddl.erase(from, to + 3 - from);
  }
  if (version < 4) {
    const size_t from =
        ddl.find("\n-- Every RPC of a checkpoint's RPC clients during the checkpoint");
    const size_t to = from == std::string::npos ? from : ddl.find(");\n", from);
    if (to == std::string::npos) return {};
    ddl.erase(from, to + 3 - from);
  }
  if (version < 3) {
    const std::string last_v2 = "root_pids         TEXT NOT NULL,";
    const size_t from = ddl.find(last_v2);
    const size_t to = from == std::string::npos ? from : ddl.find("\n);", from);
    const size_t evidence = ddl.find("\n-- The lines that made the failure classifier decide");
    const size_t end = evidence == std::string::npos ? evidence : ddl.find(");\n", evidence);
    if (to == std::string::npos || end == std::string::npos || evidence < to) return {};
    ddl.erase(evidence, end + 3 - evidence);
    ddl.replace(from, to - from, "root_pids         TEXT NOT NULL");
  }
  if (version < 2) {
    const size_t nfs_at = ddl.find("-- The NFS side of a checkpoint");
    if (nfs_at == std::string::npos) return {};
    ddl.erase(nfs_at);
    const size_t backlog_at = ddl.find("\n  backlog ");
    const size_t cwnd_at = ddl.find("\n  cwnd ");
    if (backlog_at == std::string::npos || cwnd_at == std::string::npos || cwnd_at < backlog_at) {
      return {};
    }
    ddl.erase(backlog_at, cwnd_at - backlog_at);
  }
  return ddl;
}

TEST_F(TraceStoreTest, OlderDdlsAreWhatTheirVersionsHad) {
  // Guards ddl_of_version: the derived DDLs create exactly the tables and
  // columns their versions had.
  const std::string v4 = file("v4-shape.db");
  ASSERT_FALSE(ddl_of_version(4).empty());
  const std::string v3 = file("v3-shape.db");
  const std::string v2 = file("v2-shape.db");
  const std::string v1 = file("v1-shape.db");
  ASSERT_FALSE(ddl_of_version(3).empty());
  ASSERT_FALSE(ddl_of_version(2).empty());
  ASSERT_FALSE(ddl_of_version(1).empty());
  exec_sql(v4, ddl_of_version(4));
  exec_sql(v3, ddl_of_version(3));
  exec_sql(v2, ddl_of_version(2));
  exec_sql(v1, ddl_of_version(1));
  const std::string tables =
      "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'table' "
      "ORDER BY name)";
  EXPECT_EQ(query_text(v4, tables),
            "checkpoint_nfs,checkpoints,connections,drops,failures,files,io_calls,job,"
            "job_failure_evidence,meta,nfs_mount_ebpf_ops,nfs_mount_ops,nfs_mounts,rpc_calls,"
            "rpc_ops,stages,tcp_samples");
  EXPECT_EQ(query_text(v3, tables),
            "checkpoint_nfs,checkpoints,connections,drops,failures,files,io_calls,job,"
            "job_failure_evidence,meta,nfs_mount_ebpf_ops,nfs_mount_ops,nfs_mounts,rpc_ops,"
            "stages,tcp_samples");
  EXPECT_EQ(query_text(v2, tables),
            "checkpoint_nfs,checkpoints,connections,drops,failures,files,io_calls,job,meta,"
            "nfs_mount_ebpf_ops,nfs_mount_ops,nfs_mounts,rpc_ops,stages,tcp_samples");
  EXPECT_EQ(query_text(v1, tables),
            "checkpoints,connections,drops,failures,files,io_calls,job,meta,stages,tcp_samples");
  const std::string job_columns =
      "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('job') ORDER BY "
      "cid)";
  const std::string v1_v2_job =
      "id,command,mode,node,kernel,ckptscope_version,config_json,start_wall_ns,start_mono_ns,"
      "end_mono_ns,exit_code,exit_signal,traced,trace_warning,root_pids";
  EXPECT_EQ(query_text(v2, job_columns), v1_v2_job);
  EXPECT_EQ(query_text(v1, job_columns), v1_v2_job);
  EXPECT_EQ(query_text(v2,
                       "SELECT count(*) FROM pragma_table_info('tcp_samples') "
                       "WHERE name = 'backlog'"),
            "1");
  EXPECT_EQ(query_text(v1,
                       "SELECT count(*) FROM pragma_table_info('tcp_samples') "
                       "WHERE name = 'backlog'"),
            "0");
}

TEST_F(TraceStoreTest, Version2FileFromTheVersion3WriterMinusTheJobFailureStillReads) {
  const std::string path = file("v2.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  // The job table rebuilt without the version 3 columns (ALTER TABLE DROP
  // COLUMN needs SQLite 3.35).
  exec_sql(path,
           "DROP TABLE rpc_calls; DROP TABLE job_failure_evidence; "
           "CREATE TABLE j AS SELECT id, command, mode, node, kernel, ckptscope_version, "
           "config_json, start_wall_ns, start_mono_ns, end_mono_ns, exit_code, exit_signal, "
           "traced, trace_warning, root_pids FROM job; DROP TABLE job; "
           "ALTER TABLE j RENAME TO job; "
           "PRAGMA user_version = 2; UPDATE meta SET value = '2' WHERE key = 'schema_version'");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  Trace expected = full_trace();
  forget_exclusive_times(expected);
  expected.rpc_calls.clear();
  expected.job.name.clear();
  expected.job.log_path.clear();
  expected.job.failure.reset();
  expect_same_trace(expected, *read);
}

TEST_F(TraceStoreTest, Version2FileWithTheVersion2DdlStillReads) {
  const std::string path = file("v2-ddl.db");
  const std::string ddl = ddl_of_version(2);
  ASSERT_FALSE(ddl.empty());
  exec_sql(path, ddl +
                     "PRAGMA user_version = 2;"
                     "INSERT INTO meta VALUES ('schema_version', '2');"
                     "INSERT INTO job VALUES (1, '[\"python\",\"train.py\"]', 'run', 'n', 'k', "
                     "'0.1.0', '{}', 5, 10, 20, 1, NULL, 1, '', '[42]');"
                     "INSERT INTO checkpoints (id, direction, start_ns, end_ns, bytes, files, "
                     "bottleneck) VALUES (1, 'save', 10, 20, 4096, 1, 'host_io');");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->job.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(read->job.exit_code, 1);
  EXPECT_EQ(read->job.root_pids, std::vector<uint32_t>{42});
  EXPECT_EQ(read->job.name, "") << "version 2 has no job name";
  EXPECT_EQ(read->job.log_path, "") << "nor a log";
  EXPECT_FALSE(read->job.failure.has_value()) << "nor a failure cause";
  ASSERT_THAT(read->checkpoints, SizeIs(1));
  EXPECT_EQ(read->checkpoints[0].bytes, 4096u);
}

TEST_F(TraceStoreTest, Version1FileFromTheVersion2WriterMinusNfsTablesStillReads) {
  const std::string path = file("v1.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  // Version 1 has neither the NFS tables nor tcp_samples.backlog (the table is
  // rebuilt rather than ALTER TABLE DROP COLUMN, which needs SQLite 3.35).
  exec_sql(path,
           "DROP TABLE rpc_calls; DROP TABLE rpc_ops; DROP TABLE checkpoint_nfs; "
           "DROP TABLE nfs_mount_ebpf_ops; "
           "DROP TABLE nfs_mount_ops; DROP TABLE nfs_mounts; "
           "CREATE TABLE t AS SELECT seq, time_ns, cookie, event, bytes_acked, bytes_received, "
           "in_flight, cwnd, srtt_us, snd_wnd, total_retrans, zero_window_ns, new_state "
           "FROM tcp_samples; DROP TABLE tcp_samples; ALTER TABLE t RENAME TO tcp_samples; "
           "DROP TABLE job_failure_evidence; "
           "CREATE TABLE j AS SELECT id, command, mode, node, kernel, ckptscope_version, "
           "config_json, start_wall_ns, start_mono_ns, end_mono_ns, exit_code, exit_signal, "
           "traced, trace_warning, root_pids FROM job; DROP TABLE job; "
           "ALTER TABLE j RENAME TO job; "
           "PRAGMA user_version = 1; UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  Trace expected = full_trace();
  forget_exclusive_times(expected);
  expected.rpc_calls.clear();
  expected.job.name.clear();
  expected.job.log_path.clear();
  expected.job.failure.reset();
  for (CheckpointRecord& c : expected.checkpoints) c.nfs.reset();
  for (TcpSampleRecord& s : expected.tcp_samples) s.backlog = 0;
  expected.nfs_mounts.clear();
  expect_same_trace(expected, *read);
}

TEST_F(TraceStoreTest, Version1FileWithTheVersion1DdlStillReads) {
  // The version 1 DDL is the version 2 DDL up to the first NFS table, without
  // tcp_samples.backlog.
  const std::string v1_ddl = ddl_of_version(1);
  ASSERT_FALSE(v1_ddl.empty());
  const std::string path = file("v1-ddl.db");
  exec_sql(path,
           v1_ddl +
               "PRAGMA user_version = 1;"
               "INSERT INTO meta VALUES ('schema_version', '1');"
               "INSERT INTO checkpoints (id, direction, start_ns, end_ns, bytes, files, "
               "bottleneck) VALUES (1, 'save', 10, 20, 4096, 1, 'host_io');"
               "INSERT INTO stages VALUES (1, 0, 'host_io', 4096, 10, NULL, 'unknown');"
               "INSERT INTO drops (source, cause, count) VALUES ('jobio', 'ringbuf_full', 2);"
               "INSERT INTO tcp_samples (time_ns, cookie, event, bytes_acked, bytes_received, "
               "in_flight, cwnd, srtt_us, snd_wnd, total_retrans, zero_window_ns, new_state) "
               "VALUES (15, 77, 'sample', 4096, 0, 1448, 10, 250, 65535, 0, 0, 0)");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%nfs%'"), "0");
  EXPECT_EQ(query_text(path,
                       "SELECT count(*) FROM pragma_table_info('tcp_samples') "
                       "WHERE name = 'backlog'"),
            "0");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_THAT(read->checkpoints, SizeIs(1));
  EXPECT_EQ(read->checkpoints[0].bytes, 4096u);
  ASSERT_THAT(read->checkpoints[0].stages, SizeIs(1));
  EXPECT_FALSE(read->checkpoints[0].nfs.has_value());
  EXPECT_THAT(read->nfs_mounts, IsEmpty());
  ASSERT_THAT(read->drops, SizeIs(1));
  EXPECT_EQ(read->drops[0].count, 2u);
  ASSERT_THAT(read->tcp_samples, SizeIs(1));
  EXPECT_EQ(read->tcp_samples[0].in_flight, 1448u);
  EXPECT_EQ(read->tcp_samples[0].backlog, 0u) << "version 1 has no backlog: read as 0";
  EXPECT_EQ(read->tcp_samples[0].cwnd, 10u);
}

TEST_F(TraceStoreTest, Version2FileMissingAnNfsTableIsNamed) {
  for (const char* table :
       {"checkpoint_nfs", "rpc_ops", "nfs_mounts", "nfs_mount_ops", "nfs_mount_ebpf_ops"}) {
    SCOPED_TRACE(table);
    const std::string path = file("v2-partial.db");
    ASSERT_TRUE(write_trace(path, full_trace()));
    exec_sql(path, std::string("DROP TABLE ") + table + "; PRAGMA user_version = 2");
    auto read = read_trace(path);
    ASSERT_FALSE(read);
    EXPECT_THAT(
        read.error().message,
        HasSubstr("'" + path + "' is a damaged ckptscope trace: table '" + table + "' is missing"));
  }
}

TEST_F(TraceStoreTest, Version2FileWithoutTheBacklogColumnNamesIt) {
  const std::string path = file("v2-no-backlog.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path,
           "CREATE TABLE t AS SELECT seq, time_ns, cookie, event, bytes_acked, bytes_received, "
           "in_flight, cwnd, srtt_us, snd_wnd, total_retrans, zero_window_ns, new_state "
           "FROM tcp_samples; DROP TABLE tcp_samples; ALTER TABLE t RENAME TO tcp_samples; "
           "PRAGMA user_version = 2; UPDATE meta SET value = '2' WHERE key = 'schema_version'");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("tcp_samples"));
  EXPECT_THAT(read.error().message, HasSubstr("backlog"));
}

TEST_F(TraceStoreTest, Version3FileFromTheVersion4WriterMinusRpcCallsReadsWithoutThem) {
  const std::string path = file("v3.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path,
           "DROP TABLE rpc_calls; "
           "PRAGMA user_version = 3; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_THAT(read->rpc_calls, IsEmpty());
  Trace expected = full_trace();
  forget_exclusive_times(expected);
  expected.rpc_calls.clear();
  expect_same_trace(expected, *read);  // everything else as written
}

TEST_F(TraceStoreTest, Version3FileReadsNoRpcCallsEvenWithSuchATable) {
  // A version 3 file has no rpc_calls; should it have a table of that name,
  // it is not the version 4 table and is not read.
  const std::string path = file("v3-stray.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path,
           "PRAGMA user_version = 3; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_THAT(read->rpc_calls, IsEmpty());
  EXPECT_THAT(read->io_calls, SizeIs(3));
}

TEST_F(TraceStoreTest, Version3FileWithTheVersion3DdlStillReads) {
  const std::string path = file("v3-ddl.db");
  const std::string ddl = ddl_of_version(3);
  ASSERT_FALSE(ddl.empty());
  exec_sql(path, ddl +
                     "PRAGMA user_version = 3;"
                     "INSERT INTO meta VALUES ('schema_version', '3');"
                     "INSERT INTO job VALUES (1, '[\"python\",\"train.py\"]', 'run', 'n', 'k', "
                     "'0.1.0', '{}', 5, 10, 20, 0, NULL, 1, '', '[42]', 'train', '/l.log', NULL, "
                     "NULL, NULL);"
                     "INSERT INTO checkpoints (id, direction, start_ns, end_ns, bytes, files, "
                     "bottleneck) VALUES (1, 'save', 10, 20, 4096, 1, 'nfs_client');"
                     "INSERT INTO checkpoint_nfs (checkpoint_id, servers, io_rpcs, io_bytes, "
                     "queue_wait_count, queue_wait_mean_ns, queue_wait_p50_ns, queue_wait_p90_ns, "
                     "queue_wait_p99_ns, queue_wait_max_ns, rtt_count, rtt_mean_ns, rtt_p50_ns, "
                     "rtt_p90_ns, rtt_p99_ns, rtt_max_ns, wait_by_queue) VALUES (1, "
                     "'[\"10.0.0.5:2049\"]', 1, 4096, 1, 5, 5, 5, 5, 5, 1, 7, 7, 7, 7, 7, '{}');"
                     "INSERT INTO rpc_ops (checkpoint_id, op, count, errors, major_timeouts, "
                     "transmissions, bytes_sent, bytes_received, queue_ns, rtt_ns, execute_ns) "
                     "VALUES (1, 'WRITE', 1, 0, 0, 1, 4296, 120, 5, 7, 12);");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM sqlite_master WHERE name = 'rpc_calls'"), "0");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->job.name, "train");
  ASSERT_THAT(read->checkpoints, SizeIs(1));
  ASSERT_TRUE(read->checkpoints[0].nfs.has_value());
  EXPECT_EQ(read->checkpoints[0].nfs->io_rpcs, 1u);
  ASSERT_THAT(read->checkpoints[0].nfs->rpc_ops, SizeIs(1));
  EXPECT_THAT(read->rpc_calls, IsEmpty()) << "version 3 kept no per-RPC rows";
}

// A save with its gpu_copy stage's detail (version 5), and a load without.
Trace gpu_trace() {
  Trace t;
  t.job.command = {"python", "train.py"};
  t.job.traced = true;
  CheckpointRecord save;
  save.id = 1;
  save.start_ns = 10;
  save.end_ns = 20;
  save.bytes = 4096;
  save.stages = {StageRecord{"gpu_copy", 4096, 9, 6.4e10, "sysfs:x (PCIe 32.0 GT/s PCIe x16)"}};
  CheckpointGpuRecord& g = save.gpu.emplace();
  g.copies = kBelow63;
  g.copy_count = kQuantityMax;
  g.pageable_bytes = 1;
  g.pinned_bytes = kQuantityMax - 1;
  g.other_bytes = 3;
  g.async_copies = 4;
  g.first_ns = 10;
  g.last_ns = kQuantityMax;
  g.devices = {"0000:3b:00.0", "device 7", "\xff not utf-8"};
  CheckpointRecord load;
  load.id = 2;
  load.direction = Direction::Load;
  load.start_ns = 30;
  load.end_ns = 40;
  t.checkpoints = {save, load};
  return t;
}

TEST_F(TraceStoreTest, GpuDetailRoundTripsFieldByFieldAndIsQueryable) {
  const std::string path = file("gpu.db");
  ASSERT_TRUE(write_trace(path, gpu_trace()));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(gpu_trace(), *read);
  ASSERT_TRUE(read->checkpoints[0].gpu.has_value());
  EXPECT_EQ(read->checkpoints[0].gpu->pinned_bytes, kQuantityMax - 1);
  EXPECT_FALSE(read->checkpoints[1].gpu.has_value());
  EXPECT_EQ(query_text(path, "SELECT pageable_bytes || '/' || other_bytes FROM checkpoint_gpu"),
            "1/3");
}

TEST_F(TraceStoreTest, Version4FileFromTheVersion5WriterMinusGpuReadsWithoutIt) {
  const std::string path = file("v4.db");
  ASSERT_TRUE(write_trace(path, gpu_trace()));
  exec_sql(path,
           "DROP TABLE checkpoint_gpu; "
           "PRAGMA user_version = 4; UPDATE meta SET value = '4' WHERE key = 'schema_version'");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->checkpoints[0].gpu.has_value());
  Trace expected = gpu_trace();
  expected.checkpoints[0].gpu.reset();
  expect_same_trace(expected, *read);  // everything else as written
}

// The file layer's figures (version 6): a folded call, an mmap row, a
// checkpoint's bytes by interface, the job's probe mode.
Trace file_layer_trace() {
  Trace t;
  t.job.probe_mode = "file_layer";
  CheckpointRecord load;
  load.id = 1;
  load.direction = Direction::Load;
  load.bytes = 45156;
  load.bytes_by_via = {{"syscall", 4096}, {"mmap", 41060}};
  FileIoRecord f;
  f.path = "/ckpt/model.safetensors";
  f.bytes_read = 45156;
  f.read_calls = 7;
  f.mmap_bytes = 41060;
  f.storage_bytes = 32868;
  load.file_io = {f};
  t.checkpoints = {load};
  t.io_calls = {
      IoCallRecord{100, 1100, 1, 2, "read", 4096, 4096, f.path, 1, 2, "io_uring", 300, 0},
      IoCallRecord{2000, 2500, 1, 2, "mmap", 41060, 41060, f.path, 1, 5, "mmap", 400, 32868}};
  return t;
}

TEST_F(TraceStoreTest, Version6FileLayerFiguresRoundTripAndAreQueryable) {
  const std::string path = file("v6.db");
  ASSERT_TRUE(write_trace(path, file_layer_trace()));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(file_layer_trace(), *read);
  EXPECT_EQ(query_text(path, "SELECT probe_mode FROM job"), "file_layer");
  EXPECT_EQ(query_text(path, "SELECT bytes_by_via FROM checkpoints"),
            R"({"syscall":4096,"mmap":41060})");
  EXPECT_EQ(query_text(path, "SELECT mmap_bytes || '/' || storage_bytes FROM files"),
            "41060/32868");
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(calls || ' ' || via || ' ' || busy_ns || ' ' || "
                       "storage_bytes, ',') FROM io_calls"),
            "2 io_uring 300 0,5 mmap 400 32868");
}

TEST_F(TraceStoreTest, Version5FileReadsTheFileLayerDefaults) {
  // A version 5 file: version 5's DDL, with every row of the version 6
  // writer's file copied in but for the columns version 6 added.
  const std::string v6 = file("v6-source.db");
  ASSERT_TRUE(write_trace(v6, file_layer_trace()));
  const std::string path = file("v5.db");
  exec_sql(path, ddl_of_version(5));
  std::string copy = "ATTACH DATABASE '" + v6 + "' AS v6; ";
  for (const TraceTable& t : kTraceTables) {
    if (t.since > 5) continue;  // not in a version 5 file
    const std::string name(t.name);
    const std::string columns =
        query_text(path, "SELECT group_concat(name, ',') FROM pragma_table_info('" + name + "')");
    ASSERT_FALSE(columns.empty()) << name;
    EXPECT_EQ(columns.find("probe_mode"), std::string::npos);
    EXPECT_EQ(columns.find("via"), std::string::npos);
    copy += "INSERT INTO main." + name + " (" + columns + ") SELECT " + columns + " FROM v6." +
            name + "; ";
  }
  copy +=
      "DETACH DATABASE v6; PRAGMA user_version = 5; "
      "UPDATE meta SET value = '5' WHERE key = 'schema_version'";
  exec_sql(path, copy);
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  Trace expected = file_layer_trace();
  expected.job.probe_mode = "";
  expected.checkpoints[0].bytes_by_via.clear();
  expected.checkpoints[0].file_io[0].mmap_bytes = 0;
  expected.checkpoints[0].file_io[0].storage_bytes = 0;
  for (auto& c : expected.io_calls) {
    c.calls = 1;
    c.via = "syscall";
    c.busy_ns = c.end_ns - c.start_ns;  // every call was traced one by one
    c.storage_bytes = 0;
  }
  expect_same_trace(expected, *read);
}

TEST_F(TraceStoreTest, Version7ExclusiveTimesRoundTripAndAreQueryable) {
  const std::string path = file("v7.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(full_trace(), *read);
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(name || ' ' || coalesce(exclusive_ns, 'NULL'), ',') "
                       "FROM stages WHERE checkpoint_id = 1"),
            "gpu_copy 999999999,host_io " + std::to_string(static_cast<int64_t>(kBelow63)) +
                ",metadata 0,transport NULL");
}

TEST_F(TraceStoreTest, Version6FileReadsExclusiveTimesAsUnknown) {
  // A version 6 file: version 6's DDL, with every row of the version 7
  // writer's file copied in but for the column version 7 added.
  const std::string v7 = file("v7-source.db");
  ASSERT_TRUE(write_trace(v7, full_trace()));
  const std::string path = file("v6-stages.db");
  exec_sql(path, ddl_of_version(6));
  std::string copy = "ATTACH DATABASE '" + v7 + "' AS v7; ";
  for (const TraceTable& t : kTraceTables) {
    if (t.since > 6) continue;
    const std::string name(t.name);
    const std::string columns =
        query_text(path, "SELECT group_concat(name, ',') FROM pragma_table_info('" + name + "')");
    ASSERT_FALSE(columns.empty()) << name;
    EXPECT_EQ(columns.find("exclusive_ns"), std::string::npos);
    copy += "INSERT INTO main." + name + " (" + columns + ") SELECT " + columns + " FROM v7." +
            name + "; ";
  }
  copy +=
      "DETACH DATABASE v7; PRAGMA user_version = 6; "
      "UPDATE meta SET value = '6' WHERE key = 'schema_version'";
  exec_sql(path, copy);
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  Trace expected = full_trace();
  forget_exclusive_times(expected);
  expect_same_trace(expected, *read);
}

// The unrecognised-I/O figures (version 8): the row and its largest files,
// in order, as written; the incremental writer replaces them.
Trace unrecognised_trace() {
  Trace t;
  t.job.traced = true;
  UnrecognisedIoRecord& io = t.unrecognised_io.emplace();
  io.bytes_read = 2 << 20;
  io.bytes_written = kBelow63;
  io.files = 3;
  io.notice_bytes = 16 << 20;
  io.largest = {{"/job/out/model_state.dat", 2049, 77, 0, kBelow63, "model_state.dat", ""},
                {"", 2049, 78, 2 << 20, 0, "", ""},
                {"/job/runs/1/w.pt", 2049, 79, 1, 1, "w.pt", "/job/runs/1"}};
  return t;
}

TEST_F(TraceStoreTest, UnrecognisedIoRoundTripsInOrderAndIsQueryable) {
  const std::string path = file("v8.db");
  ASSERT_TRUE(write_trace(path, unrecognised_trace()));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(unrecognised_trace(), *read);
  EXPECT_EQ(query_text(path, "SELECT files || '/' || notice_bytes FROM unrecognised_io"),
            "3/16777216");
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(ino, ',') FROM (SELECT ino FROM "
                       "unrecognised_files ORDER BY seq)"),
            "77,78,79");
  // Not counted: no row, read back as absent (not as zero).
  Trace none = unrecognised_trace();
  none.unrecognised_io.reset();
  ASSERT_TRUE(write_trace(path, none));
  read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->unrecognised_io.has_value());
}

TEST_F(TraceStoreTest, TheIncrementalWriterReplacesTheUnrecognisedFigures) {
  const std::string path = file("live.db");
  auto w = TraceWriter::open(path);
  ASSERT_TRUE(w) << w.error().message;
  Trace t = unrecognised_trace();
  ASSERT_TRUE(w->set_unrecognised_io(*t.unrecognised_io));
  ASSERT_TRUE(w->commit());
  t.unrecognised_io->bytes_read += 5;
  t.unrecognised_io->largest.resize(1);
  ASSERT_TRUE(w->set_unrecognised_io(*t.unrecognised_io));
  ASSERT_TRUE(w->close());
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->unrecognised_io);
  EXPECT_TRUE(*read->unrecognised_io == *t.unrecognised_io);
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM unrecognised_io"), "1");
}

// The end-of-run accounting (version 9): one row, as written; absent when
// not counted; a version 8 file has none.
TEST_F(TraceStoreTest, IoAccountingRoundTripsAndAnOlderFileHasNone) {
  Trace t;
  t.job.traced = true;
  IoAccountingRecord& io = t.io_accounting.emplace();
  io.threads = 12;
  io.processes_running = 0;
  io.kernel_read_bytes = 40 << 20;
  io.kernel_written_bytes = kBelow63;
  io.traced_written_bytes = 1ull << 30;
  io.files_written = 9;
  io.page_bytes = 4096;
  io.notice_bytes = 16 << 20;
  const std::string path = file("v9.db");
  ASSERT_TRUE(write_trace(path, t));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->io_accounting);
  EXPECT_TRUE(*read->io_accounting == io);
  EXPECT_EQ(query_text(path, "SELECT threads || '/' || files_written FROM io_accounting"), "12/9");
  t.io_accounting.reset();
  ASSERT_TRUE(write_trace(path, t));
  read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->io_accounting) << "not counted: no row";
  exec_sql(path,
           "DROP TABLE io_accounting; PRAGMA user_version = 8; "
           "UPDATE meta SET value = '8' WHERE key = 'schema_version'");
  read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->io_accounting) << "a version 8 file: not counted";
}

TEST_F(TraceStoreTest, Version7FileReadsWithoutUnrecognisedIo) {
  // A version 7 file: the version 8 writer's file without its new tables.
  const std::string path = file("v7-older.db");
  ASSERT_TRUE(write_trace(path, unrecognised_trace()));
  exec_sql(path,
           "DROP TABLE unrecognised_files; DROP TABLE unrecognised_io; PRAGMA user_version = 7; "
           "UPDATE meta SET value = '7' WHERE key = 'schema_version'");
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->unrecognised_io.has_value()) << "not counted, never zero";
}

TEST_F(TraceStoreTest, Version8FileMissingAnUnrecognisedTableOrItsRowIsDamaged) {
  for (const char* table : {"unrecognised_io", "unrecognised_files"}) {
    const std::string path = file(std::string("v8-no-") + table + ".db");
    ASSERT_TRUE(write_trace(path, unrecognised_trace()));
    exec_sql(path, std::string("DROP TABLE ") + table);
    auto read = read_trace(path);
    ASSERT_FALSE(read) << table;
    EXPECT_THAT(read.error().message, HasSubstr(std::string("table '") + table + "' is missing"));
  }
  const std::string path = file("v8-orphans.db");
  ASSERT_TRUE(write_trace(path, unrecognised_trace()));
  exec_sql(path, "DELETE FROM unrecognised_io");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message,
              HasSubstr("unrecognised_files has rows but unrecognised_io has none"));
}

TEST_F(TraceStoreTest, Version5FileMissingCheckpointGpuIsNamed) {
  const std::string path = file("v5-partial.db");
  ASSERT_TRUE(write_trace(path, gpu_trace()));
  exec_sql(path, "DROP TABLE checkpoint_gpu");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("table 'checkpoint_gpu' is missing"));
}

TEST_F(TraceStoreTest, Version4FileMissingRpcCallsIsNamed) {
  const std::string path = file("v4-partial.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path, "DROP TABLE rpc_calls");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(
      read.error().message,
      HasSubstr("'" + path + "' is a damaged ckptscope trace: table 'rpc_calls' is missing"));
}

TEST_F(TraceStoreTest, Version4FileWithoutAnRpcCallsColumnNamesIt) {
  const std::string path = file("v4-no-payload.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path,
           "CREATE TABLE t AS SELECT seq, start_ns, end_ns, queue_ns, rtt_ns, execute_ns, op, "
           "server, bytes_sent, bytes_received, status, transmissions, major_timeouts, "
           "checkpoint_io, checkpoint_id FROM rpc_calls; DROP TABLE rpc_calls; "
           "ALTER TABLE t RENAME TO rpc_calls");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("'" + path + "'"));
  EXPECT_THAT(read.error().message, HasSubstr("rpc_calls"));
  EXPECT_THAT(read.error().message, HasSubstr("payload_bytes"));
}

TEST_F(TraceStoreTest, RpcCallsAreQueryableInPlainSql) {
  const std::string path = file("rpc-sql.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM rpc_calls"), "4");
  EXPECT_EQ(query_text(path,
                       "SELECT group_concat(op || ':' || status || ':' || checkpoint_io, ',') FROM "
                       "(SELECT op, status, checkpoint_io FROM rpc_calls ORDER BY seq)"),
            "WRITE:0:1,GETATTR 模:-2147483648:0,:-5:1,READ_PLUS:2147483647:0");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM rpc_calls WHERE checkpoint_id IS NULL"), "1");
  EXPECT_EQ(query_text(path,
                       "SELECT (queue_ns / 1e6) || ' ms' FROM rpc_calls "
                       "WHERE checkpoint_id = 1 AND checkpoint_io = 1"),
            "1.0 ms");
}

TEST_F(TraceStoreTest, Version1FileMissingAVersion1TableIsStillNamed) {
  const std::string path = file("v1-partial.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path, "DROP TABLE drops; PRAGMA user_version = 1");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("table 'drops' is missing"));
}

TEST_F(TraceStoreTest, SchemaIsVersionedWithMeta) {
  const std::string path = file("meta.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  EXPECT_EQ(query_text(path, "PRAGMA user_version"), "10");
  EXPECT_EQ(query_text(path, "SELECT value FROM meta WHERE key = 'schema_version'"), "10");
  EXPECT_THAT(query_text(path, "SELECT value FROM meta WHERE key = 'ckptscope_version'"),
              ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+.*"));
  EXPECT_GT(std::stoll(query_text(path, "SELECT value FROM meta WHERE key = 'created_wall_ns'")),
            1'600'000'000'000'000'000LL);
  EXPECT_EQ(query_text(path, "SELECT command FROM job"),
            "[\"python\",\"train.py\",\"--name=run \\\"1\\\" \\\\ 'x'\",\"tab\\there\\n\","
            "\"naïve-模型-🚀\",\"\xff\xfe not utf-8\",\"nul\\u0000inside\",\"\"]");
  EXPECT_EQ(query_text(path, "SELECT root_pids FROM job"), "[1,4242,4294967295]");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM failures WHERE owner_checkpoint_id IS NULL"),
            "2");
  EXPECT_EQ(query_text(path, "PRAGMA journal_mode"), "delete");
}

TEST_F(TraceStoreTest, WriteReplacesAnExistingFileAndItsStaleWal) {
  const std::string path = file("replace.db");
  write_text(path, "an older file that is not even a trace");
  write_text(path + "-wal", "a stale write-ahead log SQLite must not replay");
  Trace t = full_trace();
  ASSERT_TRUE(write_trace(path, t));
  t.io_calls.resize(1);
  t.checkpoints.resize(1);
  ASSERT_TRUE(write_trace(path, t));
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(t, *read);
  // No temporary files left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(TraceStoreTest, FailedWriteLeavesThePreviousTraceIntact) {
  const std::string path = file("keep.db");
  const Trace good = full_trace();
  ASSERT_TRUE(write_trace(path, good));
  Trace bad = good;
  bad.checkpoints[1].id = bad.checkpoints[0].id;  // ids must be unique
  auto written = write_trace(path, bad);
  ASSERT_FALSE(written);
  EXPECT_THAT(written.error().message, HasSubstr("checkpoint 1"));
  EXPECT_THAT(written.error().message, HasSubstr("'" + path + "'"));
  EXPECT_THAT(written.error().message, HasSubstr("UNIQUE"));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(good, *read);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(TraceStoreTest, WriteIntoMissingDirectoryFailsWithThePath) {
  const std::string path = file("no/such/dir/t.db");
  auto written = write_trace(path, full_trace());
  ASSERT_FALSE(written);
  EXPECT_THAT(written.error().message, HasSubstr(path + ": cannot write: No such file"));
}

TEST_F(TraceStoreTest, ManyIoCallsRoundTrip) {
  Trace t;
  t.io_calls.resize(200'000);
  for (size_t i = 0; i < t.io_calls.size(); ++i) {
    IoCallRecord& c = t.io_calls[i];
    c.start_ns = i * 1000;
    c.end_ns = i * 1000 + 500;
    c.tgid = 10;
    c.tid = static_cast<uint32_t>(11 + i % 8);
    c.op = i % 2 ? "write" : "read";
    c.ret = static_cast<int64_t>(i);
    c.bytes = i;
    c.path = "/ckpt/shard-" + std::to_string(i % 16) + ".pt";
    if (i % 3) c.checkpoint_id = i / 1000;
  }
  const std::string path = file("many.db");
  ASSERT_TRUE(write_trace(path, t));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(t, *read);
}

TEST_F(TraceStoreTest, ManyRpcCallsRoundTrip) {
  Trace t;
  t.rpc_calls.resize(200'000);
  for (size_t i = 0; i < t.rpc_calls.size(); ++i) {
    RpcCallRecord& r = t.rpc_calls[i];
    r.start_ns = i * 1000;
    r.queue_ns = i % 977;
    r.rtt_ns = 300 + i % 13;
    r.execute_ns = r.queue_ns + r.rtt_ns;
    r.end_ns = r.start_ns + r.execute_ns;
    r.op = i % 5 ? "WRITE" : "COMMIT";
    r.server = "10.0.0.5:2049";
    r.bytes_sent = 131'272;
    r.bytes_received = 120;
    r.payload_bytes = i % 5 ? 131'072 : 0;
    r.status = i % 1000 ? 0 : -5;
    r.transmissions = 1;
    r.checkpoint_io = i % 7 != 0;
    r.checkpoint_id = 1 + i / 50'000;
  }
  const std::string path = file("many-rpcs.db");
  ASSERT_TRUE(write_trace(path, t));
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(t, *read);
}

// ---- TraceWriter ----

TEST_F(TraceStoreTest, IncrementalWriterThenReadGivesTheSameTrace) {
  const Trace full = full_trace();
  const std::string path = file("incremental.db");
  auto w = TraceWriter::open(path);
  ASSERT_TRUE(w) << w.error().message;

  JobRecord running = full.job;
  running.end_mono_ns = 0;
  running.exit_code.reset();
  ASSERT_TRUE(w->write_job(running));
  ASSERT_TRUE(w->append_io_calls({full.io_calls[0]}));
  ASSERT_TRUE(w->append_checkpoint(full.checkpoints[0]));
  ASSERT_TRUE(w->append_rpc_calls({full.rpc_calls[0], full.rpc_calls[1]}));
  ASSERT_TRUE(w->commit());
  ASSERT_TRUE(w->append_io_calls({full.io_calls[1], full.io_calls[2]}));
  ASSERT_TRUE(w->append_rpc_calls({}));
  ASSERT_TRUE(w->append_rpc_calls({full.rpc_calls[2], full.rpc_calls[3]}));
  ASSERT_TRUE(w->append_failure(full.failures[0]));
  // A connection updated in place keeps its position and ends with the last values.
  ConnectionRecord early = full.connections[0];
  early.bytes_sent = 1;
  early.link_max_Bps.reset();
  ASSERT_TRUE(w->upsert_connection(early));
  ASSERT_TRUE(w->append_connection(full.connections[1]));
  ASSERT_TRUE(w->upsert_connection(full.connections[0]));
  ASSERT_TRUE(w->append_tcp_samples({full.tcp_samples[0]}));
  ASSERT_TRUE(w->set_drops({{"jobio", "ringbuf_full", 99}}));
  ASSERT_TRUE(w->set_nfs_mounts({full.nfs_mounts[1], full.nfs_mounts[0], full.nfs_mounts[1]}));
  ASSERT_TRUE(w->commit());
  ASSERT_TRUE(w->append_checkpoint(full.checkpoints[1]));
  ASSERT_TRUE(w->append_failure(full.failures[1]));
  ASSERT_TRUE(w->append_tcp_samples({full.tcp_samples[1]}));
  ASSERT_TRUE(w->set_drops(full.drops));            // replaces, not appends
  ASSERT_TRUE(w->set_nfs_mounts(full.nfs_mounts));  // so do the mounts, with their ops
  ASSERT_TRUE(w->write_job(full.job));              // the final job row replaces the running one
  auto closed = w->close();
  ASSERT_TRUE(closed) << closed.error().message;
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));

  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(full, *read);
}

TEST_F(TraceStoreTest, ReadersSeeOnlyCommittedBatches) {
  const Trace full = full_trace();
  const std::string path = file("live.db");
  auto w = TraceWriter::open(path);
  ASSERT_TRUE(w) << w.error().message;

  auto fresh = read_trace(path);  // schema is committed at open
  ASSERT_TRUE(fresh) << fresh.error().message;
  EXPECT_THAT(fresh->checkpoints, IsEmpty());

  ASSERT_TRUE(w->write_job(full.job));
  ASSERT_TRUE(w->append_checkpoint(full.checkpoints[0]));
  ASSERT_TRUE(w->commit());
  ASSERT_TRUE(w->append_checkpoint(full.checkpoints[1]));

  auto mid = read_trace(path);
  ASSERT_TRUE(mid) << mid.error().message;
  ASSERT_THAT(mid->checkpoints, SizeIs(1));
  EXPECT_EQ(mid->checkpoints[0].stages.size(), 4u);
  EXPECT_EQ(mid->job.command, full.job.command);

  ASSERT_TRUE(w->commit());
  auto after = read_trace(path);
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_THAT(after->checkpoints, SizeIs(2));
}

TEST_F(TraceStoreTest, KilledWriterKeepsEverythingUpToItsLastCommit) {
  const Trace full = full_trace();
  const std::string path = file("killed.db");
  pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    // No gtest in the child: report through the exit code, and leave with
    // _exit so no destructor gets to tidy up, as with SIGKILL.
    auto w = TraceWriter::open(path);
    if (!w) ::_exit(10);
    if (!w->write_job(full.job) || !w->append_checkpoint(full.checkpoints[0]) ||
        !w->append_io_calls(full.io_calls) || !w->append_rpc_calls({full.rpc_calls[0]}) ||
        !w->commit()) {
      ::_exit(11);
    }
    if (!w->append_checkpoint(full.checkpoints[1]) || !w->append_failure(full.failures[0]) ||
        !w->append_rpc_calls({full.rpc_calls[1]})) {
      ::_exit(12);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  Trace expected;
  expected.job = full.job;
  expected.checkpoints = {full.checkpoints[0]};
  expected.io_calls = full.io_calls;
  expected.rpc_calls = {full.rpc_calls[0]};
  expect_same_trace(expected, *read);
}

TEST_F(TraceStoreTest, FailedAppendChangesNothingAndTheWriterGoesOn) {
  const Trace full = full_trace();
  const std::string path = file("dup.db");
  auto w = TraceWriter::open(path);
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(w->append_checkpoint(full.checkpoints[0]));
  CheckpointRecord again = full.checkpoints[1];
  again.id = full.checkpoints[0].id;
  auto dup = w->append_checkpoint(again);
  ASSERT_FALSE(dup);
  EXPECT_THAT(dup.error().message, HasSubstr("cannot write checkpoint 1 to trace '" + path + "'"));
  ASSERT_TRUE(w->append_checkpoint(full.checkpoints[1]));
  ASSERT_TRUE(w->close());

  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  Trace expected;
  expected.checkpoints = full.checkpoints;
  expect_same_trace(expected, *read);
}

TEST_F(TraceStoreTest, WriterIsMovableAndClosedWritersRefuseWork) {
  const std::string path = file("moved.db");
  auto opened = TraceWriter::open(path);
  ASSERT_TRUE(opened) << opened.error().message;
  TraceWriter w = std::move(opened).value();
  ASSERT_TRUE(w.set_drops({{"tcp", "ringbuf_full", 5}}));
  TraceWriter moved = std::move(w);
  ASSERT_TRUE(moved.commit());

  auto stale = w.commit();  // NOLINT(bugprone-use-after-move): the point of the test
  ASSERT_FALSE(stale);
  EXPECT_THAT(stale.error().message, HasSubstr("is closed"));

  ASSERT_TRUE(moved.close());
  auto late = moved.append_failure({});
  ASSERT_FALSE(late);
  EXPECT_THAT(late.error().message, HasSubstr("trace writer for '" + path + "' is closed"));

  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_THAT(read->drops, SizeIs(1));
  EXPECT_EQ(read->drops[0].count, 5u);
}

TEST_F(TraceStoreTest, DestructorCommitsPendingWork) {
  const std::string path = file("raii.db");
  {
    auto w = TraceWriter::open(path);
    ASSERT_TRUE(w) << w.error().message;
    ASSERT_TRUE(w->append_failure({"eio", 5, "read = -EIO", std::nullopt}));
  }
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_THAT(read->failures, SizeIs(1));
  EXPECT_EQ(read->failures[0].evidence, "read = -EIO");
}

TEST_F(TraceStoreTest, OpenReplacesAnOldTrace) {
  const std::string path = file("reopen.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  {
    auto w = TraceWriter::open(path);
    ASSERT_TRUE(w) << w.error().message;
  }
  auto read = read_trace(path);
  ASSERT_TRUE(read) << read.error().message;
  expect_same_trace(Trace{}, *read);
}

// ---- errors ----

TEST_F(TraceStoreTest, MissingFile) {
  const std::string path = file("nope.db");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("trace file '" + path + "' does not exist"));
}

TEST_F(TraceStoreTest, TextFileIsNotATrace) {
  const std::string path = file("notes.txt");
  write_text(path,
             "these are my notes, not a database\n"
             "they go on for a while so SQLite reads a full header from them ...........\n");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("'" + path + "' is not a ckptscope trace: "));
  EXPECT_THAT(read.error().message, HasSubstr("not a database"));
}

TEST_F(TraceStoreTest, EmptyFileIsNotATrace) {
  const std::string path = file("zero.db");
  write_text(path, "");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("'" + path + "' is not a ckptscope trace: "));
}

TEST_F(TraceStoreTest, TruncatedTraceIsReportedNotCrashedOn) {
  const std::string path = file("truncated.db");
  Trace t = full_trace();
  for (int i = 0; i < 2000; ++i) t.io_calls.push_back(t.io_calls[0]);
  ASSERT_TRUE(write_trace(path, t));
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("'" + path + "' is not a ckptscope trace: "));
}

TEST_F(TraceStoreTest, NewerSchemaAsksForAnUpgrade) {
  const std::string path = file("future.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path, "PRAGMA user_version = 99");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message,
              HasSubstr("'" + path +
                        "' has trace schema version 99, this ckptscope reads up to 10: "
                        "upgrade ckptscope"));
}

TEST_F(TraceStoreTest, ForeignSqliteDatabaseIsNotATrace) {
  const std::string path = file("other.sqlite");
  exec_sql(path, "CREATE TABLE recipes (name TEXT)");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("'" + path + "' is not a ckptscope trace: "));
  EXPECT_THAT(read.error().message, HasSubstr("without a ckptscope schema"));
}

TEST_F(TraceStoreTest, MissingTableIsNamed) {
  const std::string path = file("partial.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  exec_sql(path, "DROP TABLE tcp_samples");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("'" + path + "'"));
  EXPECT_THAT(read.error().message, HasSubstr("table 'tcp_samples' is missing"));
}

TEST_F(TraceStoreTest, MissingColumnIsNamed) {
  const std::string path = file("column.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  // Rebuilt rather than ALTER TABLE DROP COLUMN, which needs SQLite 3.35.
  exec_sql(path,
           "CREATE TABLE t AS SELECT seq, start_ns, end_ns, tgid, op, ret, bytes, path, "
           "checkpoint_id FROM io_calls; DROP TABLE io_calls; ALTER TABLE t RENAME TO io_calls");
  auto read = read_trace(path);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("io_calls"));
  EXPECT_THAT(read.error().message, HasSubstr("tid"));
}

TEST_F(TraceStoreTest, BadValuesAreReportedNotTrusted) {
  struct Case {
    std::string sql;
    std::string expected;
  };
  const Case cases[] = {
      {"UPDATE checkpoints SET direction = 'sideways' WHERE id = 1",
       "checkpoint 1 has unknown direction 'sideways'"},
      {"UPDATE job SET command = '[\"python\", 3]'", "job.command"},
      // CREATE TABLE ... AS drops the NOT NULL constraints, letting a NULL in.
      {"CREATE TABLE j AS SELECT * FROM job; DROP TABLE job; ALTER TABLE j RENAME TO job; "
       "UPDATE job SET command = NULL",
       "job.command"},
      {"UPDATE job SET root_pids = '[-1]'", "job.root_pids"},
      {"UPDATE stages SET checkpoint_id = 77 WHERE ordinal = 0", "checkpoint 77"},
      {"UPDATE files SET checkpoint_id = 78", "checkpoint 78"},
      {"UPDATE failures SET owner_checkpoint_id = 79", "checkpoint 79"},
      {"UPDATE checkpoint_nfs SET servers = '[\"a\", 1]'",
       "checkpoint_nfs.servers of checkpoint 1"},
      {"UPDATE checkpoint_nfs SET wait_by_queue = '{\"backlog\": -1}'",
       "checkpoint_nfs.wait_by_queue of checkpoint 1"},
      {"UPDATE checkpoint_nfs SET wait_by_queue = '[1]'", "checkpoint_nfs.wait_by_queue"},
      {"UPDATE checkpoint_nfs SET checkpoint_id = 80", "checkpoint 80"},
      {"UPDATE rpc_ops SET checkpoint_id = 81", "checkpoint 81"},
      {"UPDATE rpc_ops SET checkpoint_id = " + std::to_string(static_cast<int64_t>(kBelow63)),
       "rpc_ops refer to checkpoint " + std::to_string(kBelow63) +
           ", which has no checkpoint_nfs row"},
      {"UPDATE nfs_mount_ops SET mount_seq = 82", "NFS mount 82"},
      {"UPDATE nfs_mount_ebpf_ops SET mount_seq = 83", "NFS mount 83"},
      {"UPDATE nfs_mounts SET has_ebpf_ops = 0", "whose has_ebpf_ops is 0"},
      {"UPDATE job SET failure_symptoms = '[\"a\", 1]'",
       "job.failure_symptoms is not a JSON array of strings"},
      {"UPDATE job SET failure_rule = NULL", "are not all NULL or all set"},
      {"UPDATE job SET failure_class = NULL, failure_rule = NULL, failure_symptoms = NULL",
       "job_failure_evidence has rows but job.failure_class is NULL"},
      {"DELETE FROM job", "job_failure_evidence has rows but there is no job row"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql);
    const std::string path = file("bad.db");
    ASSERT_TRUE(write_trace(path, full_trace()));
    exec_sql(path, c.sql);
    auto read = read_trace(path);
    ASSERT_FALSE(read);
    EXPECT_THAT(read.error().message, HasSubstr("'" + path + "' is a damaged ckptscope trace: "));
    EXPECT_THAT(read.error().message, HasSubstr(c.expected));
  }
}

TEST_F(TraceStoreTest, CorruptBytesNeverCrashTheReader) {
  const std::string path = file("base.db");
  ASSERT_TRUE(write_trace(path, full_trace()));
  const std::string original = read_bytes(path);
  ASSERT_GT(original.size(), 4096u);
  int errors = 0;
  // Scribble over every 97th 32-byte window: headers, b-tree pages, cells.
  for (size_t at = 0; at + 32 <= original.size(); at += 97 * 32 / 8) {
    std::string damaged = original;
    for (size_t i = 0; i < 32; ++i) damaged[at + i] = static_cast<char>(0xA5 ^ (i * 37));
    const std::string bad = file("corrupt.db");
    write_text(bad, damaged);
    auto read = read_trace(bad);  // either answer is fine; crashing is not
    if (!read) {
      ++errors;
      EXPECT_THAT(read.error().message, HasSubstr("'" + bad + "'"));
    }
  }
  EXPECT_GT(errors, 0);
}

// ---- the JSON text of job.command / job.root_pids ----

TEST(JsonTextTest, StringsRoundTripByteForByte) {
  const std::vector<std::string> values = {
      "", "plain", "q\"b\\s/", "\n\t\r\b\f", std::string("\0\x01\x1f\x7f", 4), "é模🚀", "\xff\xc0"};
  EXPECT_EQ(json_text::decode_strings(json_text::encode_strings(values)), values);
  EXPECT_EQ(json_text::encode_strings({}), "[]");
  EXPECT_EQ(json_text::encode_strings({"a\"b", "\x01"}), "[\"a\\\"b\",\"\\u0001\"]");
}

TEST(JsonTextTest, DecodesStandardJsonEscapes) {
  EXPECT_EQ(json_text::decode_strings(R"( [ "caf\u00e9" , "\ud83d\ude80", "\/" ] )"),
            (std::vector<std::string>{"café", "🚀", "/"}));
  EXPECT_EQ(json_text::decode_u32s(" [ 1 , 4294967295 ] "),
            (std::vector<uint32_t>{1, 4294967295u}));
  EXPECT_EQ(json_text::decode_u32s("[]"), std::vector<uint32_t>{});
}

TEST(JsonTextTest, U64ObjectsRoundTripInOrderWithRepeatsAndRawBytes) {
  const std::vector<std::pair<std::string, uint64_t>> values = {
      {"backlog", 0},
      {"sending", kU64Max},
      {"backlog", kAbove63},
      {"", 1},
      {"q\"b\\\n模", 2},
      {"\xff\xc0", 3},
      {std::string("n\0ul", 4), 4294967296u}};
  EXPECT_EQ(json_text::decode_u64_object(json_text::encode_u64_object(values)), values);
  EXPECT_EQ(json_text::encode_u64_object({}), "{}");
  EXPECT_EQ(json_text::encode_u64_object({{"a", 1}, {"b\"", kU64Max}}),
            "{\"a\":1,\"b\\\"\":18446744073709551615}");
  EXPECT_EQ(json_text::decode_u64_object(R"( { "x" : 7 , "caf\u00e9" : 0 } )"),
            (std::vector<std::pair<std::string, uint64_t>>{{"x", 7}, {"café", 0}}));
  EXPECT_EQ(json_text::decode_u64_object(" { } "),
            (std::vector<std::pair<std::string, uint64_t>>{}));
}

TEST(JsonTextTest, RejectsMalformedText) {
  for (const char* bad :
       {"", "[", "[\"a\"", "[\"a\",]", "[\"a\"] x", "[\"\\ud83d\"]", "[\"\\ude80\"]", "[\"\\u12\"]",
        "[\"\\q\"]", "[\"raw\nnewline\"]", "[1]", "{}", "null"}) {
    EXPECT_FALSE(json_text::decode_strings(bad).has_value()) << bad;
  }
  for (const char* bad : {"[4294967296]", "[-1]", "[1.5]", "[\"1\"]", "[1,]", "1"}) {
    EXPECT_FALSE(json_text::decode_u32s(bad).has_value()) << bad;
  }
  for (const char* bad :
       {"", "{", "[]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1} x", "{a:1}", "{\"a\":-1}",
        "{\"a\":1.5}", "{\"a\":\"1\"}", "{\"a\":18446744073709551616}",
        "{\"a\":99999999999999999999}", "{\"a\" 1}", "{\"a\":1 \"b\":2}", "null"}) {
    EXPECT_FALSE(json_text::decode_u64_object(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace ckpt
