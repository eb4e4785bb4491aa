// The node exporter's metrics for known sequences of stitched records: a
// golden exposition (every family, label and bucket), known answers beside
// it, and the same figures from a recorded NFS trace replayed record by
// record. CKPTSCOPE_UPDATE_GOLDEN=1 rewrites the golden file.
#include "exporters/prometheus/checkpoint_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "exporters/prometheus/http_metrics.h"
#include "exporters/sqlite/trace_store.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;
const std::string kData = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/";

MetricsOptions options() {
  MetricsOptions o;
  o.version = "0.1.0";
  o.kernel = "6.12.0-test";
  o.storage_write_Bps = 250e9;
  o.storage_read_Bps = 700e9;
  return o;
}

StageRecord stage(const char* name, uint64_t bytes, uint64_t busy_ns, std::optional<double> max) {
  StageRecord s;
  s.name = name;
  s.bytes = bytes;
  s.busy_ns = busy_ns;
  s.max_Bps = max;
  return s;
}

// A save of 16 MiB in 500 ms (host_io at half its 64 MiB/s maximum), a
// load whose read failed with EIO, a GPU Xid between them, three WRITE RPCs
// (one with a major timeout), two connections to one server, drops.
void feed_known(CheckpointMetrics& m) {
  CheckpointRecord save;
  save.direction = Direction::Save;
  save.start_ns = 1000 * kMs;
  save.end_ns = 1500 * kMs;
  save.stages = {stage("serialize", 16 * kMiB, 100 * kMs, std::nullopt),
                 stage("host_io", 16 * kMiB, 500 * kMs, 64.0 * kMiB)};
  m.observe_checkpoint("slurm-4242", save);
  CheckpointRecord load;
  load.direction = Direction::Load;
  load.start_ns = 3000 * kMs;
  load.end_ns = 3020 * kMs;
  load.stages = {stage("host_io", 4 * kMiB, 20 * kMs, 800.0 * kMiB)};
  load.failures = {{"eio", 3010 * kMs, "read(...) = -EIO", 2}};
  m.observe_checkpoint("slurm-4242", load);
  m.observe_failure("slurm-4242", {"gpu_xid", 4000 * kMs, "Xid 79", std::nullopt});

  for (uint64_t i = 0; i < 3; ++i) {
    RpcCallRecord rpc;
    rpc.op = "WRITE";
    rpc.server = "10.0.0.5:2049";
    rpc.queue_ns = (i + 1) * kMs;  // 1, 2, 3 ms
    rpc.rtt_ns = 4 * kMs;
    rpc.execute_ns = rpc.queue_ns + rpc.rtt_ns;
    rpc.major_timeouts = i == 2 ? 1 : 0;
    m.observe_rpc(rpc);
  }
  auto sample = [&](uint64_t cookie, uint32_t in_flight, uint32_t backlog, uint32_t retrans,
                    uint64_t zw, const char* event = "sample", int state = 0) {
    TcpSampleRecord s;
    s.cookie = cookie;
    s.in_flight = in_flight;
    s.backlog = backlog;
    s.total_retrans = retrans;
    s.zero_window_ns = zw;
    s.event = event;
    s.new_state = state;
    m.observe_tcp("10.0.0.5:2049", s);
  };
  sample(1, 1000, 5000, 10, 0);         // baseline: its 10 earlier retransmits are not ours
  sample(1, 2000, 7000, 13, 50 * kMs);  // +3 retransmits, +50 ms zero window
  sample(2, 500, 500, 0, 0);            // a second connection (nconnect)
  sample(2, 0, 0, 1, 0, "state", 7);    // +1, then closed: forgotten
  m.set_rpc_backlog_depth("10.0.0.5:2049", 12);
  m.set_drops({{"jobio", "ringbuf_full", 5}, {"nfs", "task_table_full", 0}});
  m.set_drops({{"jobio", "ringbuf_full", 7}, {"nfs", "task_table_full", 0}});
  m.observe_collection("jobio", 0.0025, true);
  m.observe_collection("nfs", 0.001, false);
  m.add_kernel_records("jobio", 1000);
  m.add_kernel_records("jobio", 234);
  m.add_kernel_records("nfs", 56);
  // The registration socket's refusals (issue 22): every reason at 0, two malformed.
  m.register_rejection_reasons({"malformed", "not_permitted", "too_many_clients", "flood",
                                "line_too_long", "register_timeout", "uid_limit"});
  m.count_registration_rejected("malformed");
  m.count_registration_rejected("malformed");
  m.count_registration_rejected("register_timeout");
  // A setuid program run by an unprivileged client's job (issue 36).
  m.register_process_left_reasons({"credentials_changed"});
  m.count_registration_process_left("credentials_changed");
  // A server not responding between checkpoints: the node's, not a workload's.
  m.observe_node_failure(FailureRecord{"nfs_server_not_responding", 4000 * kMs, "", std::nullopt});
  // logwatch beside the exporter: a known fault, and lines its budget held back.
  m.observe_node_failure(FailureRecord{"machine_check", 4100 * kMs, "", std::nullopt});
  m.count_log_anomalies_held_back(3);
  m.count_log_anomalies_held_back(4);
  // The probe mode, set twice: one series, the last mode (issue 18).
  m.set_probe_mode("syscall");
  m.set_probe_mode("file_layer");
  // The HTTP server's own counts (issue 36), in the same registry: every
  // code and reason at 0, two scrapes and a 404 answered, one connection
  // evicted, one answered and closed.
  HttpMetrics http(*m.registry(), {200, 404, 400, 405, 431, 500, 505},
                   {"answered", "peer_closed", "request_timeout", "keep_alive_timeout",
                    "write_timeout", "evicted", "refused", "too_large", "malformed"});
  http.count_request(200);
  http.count_request(200);
  http.count_request(404);
  http.count_closed("evicted");
  http.count_closed("answered");
  http.set_open_connections(3);
  http.set_connection_limit(768);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CheckpointMetrics, GoldenExpositionOfAKnownSequence) {
  CheckpointMetrics m(options());
  feed_known(m);
  const std::string text = m.exposition();
  const std::string golden = kData + "exporter/known.prom";
  if (std::getenv("CKPTSCOPE_UPDATE_GOLDEN")) {
    std::filesystem::create_directories(kData + "exporter");
    std::ofstream(golden) << text;
  }
  EXPECT_EQ(text, read_file(golden)) << "differs from " << golden;
}

TEST(CheckpointMetrics, KnownAnswers) {
  CheckpointMetrics m(options());
  feed_known(m);
  const std::string t = m.exposition();
  EXPECT_THAT(t, HasSubstr("ckptscope_registration_rejected_total{reason=\"malformed\"} 2\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_registration_rejected_total{reason=\"flood\"} 0\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_registration_rejected_total{reason=\"uid_limit\"} 0\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_registration_processes_left_total{reason=\"credentials_"
                           "changed\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_http_requests_total{code=\"200\"} 2\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_http_requests_total{code=\"431\"} 0\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_http_connections_closed_total{reason=\"evicted\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_http_connections_closed_total{reason=\"refused\"} 0\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_http_connections_open 3\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_http_connections_limit 768\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_build_info{kernel=\"6.12.0-test\",version=\"0.1.0\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_probe_info{mode=\"file_layer\"} 1\n"));
  EXPECT_THAT(t,
              HasSubstr("ckptscope_failures_total{kind=\"machine_check\",workload=\"node\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_log_anomalies_held_back_total{workload=\"node\"} 7\n"));
  EXPECT_THAT(t, Not(HasSubstr("ckptscope_probe_info{mode=\"syscall\"}")));
  // Labels come sorted by name; the workload's other counts exist at 0.
  EXPECT_THAT(t, HasSubstr("ckptscope_checkpoints_total{direction=\"save\",outcome=\"ok\","
                           "workload=\"slurm-4242\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_checkpoints_total{direction=\"save\",outcome=\"failed\","
                           "workload=\"slurm-4242\"} 0\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_checkpoints_total{direction=\"load\",outcome=\"failed\","
                           "workload=\"slurm-4242\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_checkpoint_bytes_total{direction=\"save\",stage=\"host_io\","
                           "workload=\"slurm-4242\"} 16777216\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_stage_last_max_fraction{direction=\"save\",stage=\"host_io\","
                           "workload=\"slurm-4242\"} 0.5\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_checkpoint_duration_seconds_sum{direction=\"save\"} 0.5\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_failures_total{kind=\"eio\",workload=\"slurm-4242\"} 1\n"));
  EXPECT_THAT(t,
              HasSubstr("ckptscope_failures_total{kind=\"gpu_xid\",workload=\"slurm-4242\"} 1\n"));
  EXPECT_THAT(
      t, HasSubstr("ckptscope_rpc_queue_seconds_count{op=\"WRITE\",server=\"10.0.0.5:2049\"} 3\n"));
  EXPECT_THAT(
      t,
      HasSubstr("ckptscope_rpc_queue_seconds_sum{op=\"WRITE\",server=\"10.0.0.5:2049\"} 0.006\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_rpc_major_timeouts_total{server=\"10.0.0.5:2049\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_tcp_retransmits_total{server=\"10.0.0.5:2049\"} 4\n"));
  EXPECT_THAT(
      t, HasSubstr("ckptscope_tcp_zero_window_seconds_total{server=\"10.0.0.5:2049\"} 0.05\n"));
  // Connection 2 closed: only connection 1's figures remain.
  EXPECT_THAT(t, HasSubstr("ckptscope_tcp_bytes_in_flight{server=\"10.0.0.5:2049\"} 2000\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_tcp_backlog_bytes{server=\"10.0.0.5:2049\"} 7000\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_rpc_backlog_depth{server=\"10.0.0.5:2049\"} 12\n"));
  EXPECT_THAT(
      t, HasSubstr("ckptscope_dropped_events_total{cause=\"ringbuf_full\",source=\"jobio\"} 7\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_scrape_collector_success{collector=\"nfs\"} 0\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_kernel_records_total{source=\"jobio\"} 1234\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_failures_total{kind=\"nfs_server_not_responding\","
                           "workload=\"node\"} 1\n"));
  // "node" is no workload: no checkpoint series of its own.
  EXPECT_THAT(t, Not(HasSubstr("workload=\"node\",")));
  EXPECT_THAT(
      t, HasSubstr("ckptscope_storage_max_bytes_per_second{direction=\"load\"} 700000000000\n"));
}

TEST(CheckpointMetrics, JobsPastTheLimitAreOther) {
  MetricsOptions o = options();
  o.max_jobs = 2;
  CheckpointMetrics m(o);
  EXPECT_EQ(m.job_label("slurm-1"), "slurm-1");
  EXPECT_EQ(m.job_label("slurm-2"), "slurm-2");
  EXPECT_EQ(m.job_label("slurm-3"), "other");
  EXPECT_EQ(m.job_label("slurm-1"), "slurm-1");
}

TEST(CheckpointMetrics, ADropCounterThatRestartsKeepsCounting) {
  CheckpointMetrics m(options());
  m.set_drops({{"tcp", "ringbuf_full", 10}});
  m.set_drops({{"tcp", "ringbuf_full", 4}});  // the source restarted: 4 new drops
  EXPECT_THAT(
      m.exposition(),
      HasSubstr("ckptscope_dropped_events_total{cause=\"ringbuf_full\",source=\"tcp\"} 14\n"));
}

// The throttled NFS save recorded in the 6.12 guest, replayed record by
// record: the metrics add up to what the trace says.
TEST(CheckpointMetrics, ARecordedTraceAddsUp) {
  auto trace = read_trace(kData + "report/throttle.db");
  ASSERT_TRUE(trace) << trace.error().message;
  CheckpointMetrics m(options());
  uint64_t host_io_bytes = 0;
  for (const auto& c : trace->checkpoints) {
    m.observe_checkpoint("k8s-default/trainer-0", c);
    for (const auto& s : c.stages)
      if (s.name == "host_io") host_io_bytes += s.bytes;
  }
  std::map<uint64_t, std::string> server;
  for (const auto& conn : trace->connections) server[conn.cookie] = conn.remote;
  for (const auto& s : trace->tcp_samples) m.observe_tcp(server[s.cookie], s);
  std::map<std::string, uint64_t> rpcs_by_op;
  for (const auto& rpc : trace->rpc_calls) {
    m.observe_rpc(rpc);
    ++rpcs_by_op[rpc.op];
  }
  m.set_drops(trace->drops);
  const std::string t = m.exposition();
  EXPECT_EQ(host_io_bytes, 2 * 16 * kMiB);  // the workload's truth: two saves of 16 MiB
  EXPECT_THAT(t, HasSubstr("ckptscope_checkpoint_bytes_total{direction=\"save\",stage=\"host_io\","
                           "workload=\"k8s-default/trainer-0\"} 33554432\n"));
  EXPECT_THAT(t, HasSubstr("ckptscope_checkpoints_total{direction=\"save\",outcome=\"ok\","
                           "workload=\"k8s-default/trainer-0\"} 2\n"));
  ASSERT_FALSE(rpcs_by_op.empty());
  for (const auto& [op, count] : rpcs_by_op)
    EXPECT_THAT(t, HasSubstr("ckptscope_rpc_queue_seconds_count{op=\"" + op +
                             "\",server=\"127.0.0.1:2049\"} " + std::to_string(count) + "\n"))
        << op;
}

}  // namespace
}  // namespace ckpt
