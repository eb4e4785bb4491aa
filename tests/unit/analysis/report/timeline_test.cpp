// The timeline's series against what the calls, RPCs and TCP samples say:
// bytes conserved across bins, RPC queue means, the backlog as a step.
#include <gtest/gtest.h>

#include <numeric>

#include "analysis/report/report.h"
#include "trace_builder.h"

namespace ckpt::report {
namespace {

using test::kMs;
using test::kSec;
using test::must_build;
using test::TraceBuilder;

double bytes_in(const Timeline& t) {
  double sum = 0;
  for (double bw : t.bandwidth_Bps) sum += bw * static_cast<double>(t.bin_ns) / 1e9;
  return sum;
}

TEST(ReportTimeline, EveryByteOfTheDataCallsIsInTheBandwidthSeries) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  a.checkpoint(Direction::Save, 10 * kSec, 3 * kSec, 3'000'000'007, 7);
  ReportOptions o;
  o.timeline_bins = 50;
  Report r = must_build({a.node_trace()}, o);
  const Timeline& t = r.checkpoints[0].timeline;
  EXPECT_EQ(t.bin_ns, 60 * kMs);
  EXPECT_EQ(t.bandwidth_Bps.size(), 50u);
  // 7 calls of 428571429 B (bytes / calls, as the builder splits them).
  EXPECT_NEAR(bytes_in(t), 7.0 * 428'571'429, 1e-3);
  // Evenly spread calls back to back: a flat line.
  for (double bw : t.bandwidth_Bps) EXPECT_NEAR(bw, 7.0 * 428'571'429 / 3.0, 1e-6 * bw);
  EXPECT_FALSE(t.has_rpc);
  EXPECT_FALSE(t.has_tcp);
}

TEST(ReportTimeline, NodesAddUpOnTheWallClock) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  TraceBuilder b("node-b", 500 * kSec, static_cast<int64_t>(kSec), 100 * kSec);  // 1 s later
  a.checkpoint(Direction::Save, 10 * kSec, 2 * kSec, 2'000'000'000, 2);
  b.checkpoint(Direction::Save, 10 * kSec, 2 * kSec, 2'000'000'000, 2);  // wall +11..+13
  ReportOptions o;
  o.timeline_bins = 3;
  Report r = must_build({a.node_trace(), b.node_trace()}, o);
  ASSERT_EQ(r.checkpoints.size(), 1u);
  const Timeline& t = r.checkpoints[0].timeline;
  ASSERT_EQ(t.bandwidth_Bps.size(), 3u);
  EXPECT_NEAR(t.bandwidth_Bps[0], 1e9, 1);  // a alone
  EXPECT_NEAR(t.bandwidth_Bps[1], 2e9, 1);  // both
  EXPECT_NEAR(t.bandwidth_Bps[2], 1e9, 1);  // b alone
}

TEST(ReportTimeline, RpcQueueIsTheMeanOfTheCheckpointsIoRpcsSentInTheBin) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  auto& c = a.checkpoint(Direction::Save, 10 * kSec, kSec, 1 << 20);
  auto rpc = [&](uint64_t start_off, uint64_t queue, bool io) {
    RpcCallRecord call;
    call.start_ns = c.start_ns + start_off;
    call.queue_ns = queue;
    call.end_ns = call.start_ns + queue + kMs;
    call.op = "WRITE";
    call.checkpoint_io = io;
    call.checkpoint_id = c.id;
    a.trace().rpc_calls.push_back(call);
  };
  a.trace().rpc_calls.reserve(8);
  rpc(0, 100 * kMs, true);         // sent at 100 ms: bin 1
  rpc(50 * kMs, 130 * kMs, true);  // sent at 180 ms: bin 1
  rpc(0, 150 * kMs, false);        // a GETATTR's: not the checkpoint's data
  rpc(500 * kMs, 10 * kMs, true);  // sent at 510 ms: bin 5
  ReportOptions o;
  o.timeline_bins = 10;
  Report r = must_build({a.node_trace()}, o);
  const Timeline& t = r.checkpoints[0].timeline;
  ASSERT_TRUE(t.has_rpc);
  ASSERT_EQ(t.rpc_queue_ms.size(), 10u);
  EXPECT_FALSE(t.rpc_queue_ms[0]);
  ASSERT_TRUE(t.rpc_queue_ms[1]);
  EXPECT_DOUBLE_EQ(*t.rpc_queue_ms[1], 115.0);
  EXPECT_DOUBLE_EQ(*t.rpc_queue_ms[5], 10.0);
  EXPECT_FALSE(t.rpc_queue_ms[9]);
}

TEST(ReportTimeline, NfsPayloadIsOnTheWireFromTransmissionToReply) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  auto& c = a.checkpoint(Direction::Save, 10 * kSec, kSec, 1 << 20);
  RpcCallRecord w;
  w.op = "WRITE";
  w.checkpoint_io = true;
  w.checkpoint_id = c.id;
  w.start_ns = c.start_ns + 50 * kMs;
  w.queue_ns = 50 * kMs;              // sent at 100 ms
  w.end_ns = c.start_ns + 300 * kMs;  // replied at 300 ms
  w.payload_bytes = 1'000'000;
  a.trace().rpc_calls.push_back(w);
  RpcCallRecord commit = w;  // no payload: not on the data line
  commit.op = "COMMIT";
  commit.payload_bytes = 0;
  a.trace().rpc_calls.push_back(commit);
  ReportOptions o;
  o.timeline_bins = 10;
  Report r = must_build({a.node_trace()}, o);
  const Timeline& t = r.checkpoints[0].timeline;
  ASSERT_EQ(t.nfs_bandwidth_Bps.size(), 10u);
  EXPECT_DOUBLE_EQ(t.nfs_bandwidth_Bps[0], 0);
  EXPECT_DOUBLE_EQ(t.nfs_bandwidth_Bps[1], 5e6);  // half the bytes in each 100 ms bin
  EXPECT_DOUBLE_EQ(t.nfs_bandwidth_Bps[2], 5e6);
  EXPECT_DOUBLE_EQ(t.nfs_bandwidth_Bps[3], 0);

  TraceBuilder quiet("node-b", kSec, 0, 100 * kSec);
  quiet.checkpoint(Direction::Save, 10 * kSec, kSec, 1 << 20);
  EXPECT_TRUE(must_build({quiet.node_trace()}).checkpoints[0].timeline.nfs_bandwidth_Bps.empty());
}

TEST(ReportTimeline, TcpBacklogHoldsBetweenSamplesAndConnectionsAdd) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  auto& c = a.checkpoint(Direction::Save, 10 * kSec, kSec, 1 << 20);
  auto sample = [&](uint64_t cookie, uint64_t off, uint32_t backlog) {
    TcpSampleRecord s;
    s.cookie = cookie;
    s.time_ns = c.start_ns + off;
    s.backlog = backlog;
    a.trace().tcp_samples.push_back(s);
  };
  sample(1, 0, 1000);
  sample(1, 450 * kMs, 5000);  // holds 1000 until 450 ms
  sample(1, 999 * kMs, 0);
  sample(2, 200 * kMs, 300);
  sample(2, 700 * kMs, 300);
  ReportOptions o;
  o.timeline_bins = 10;
  Report r = must_build({a.node_trace()}, o);
  const Timeline& t = r.checkpoints[0].timeline;
  ASSERT_TRUE(t.has_tcp);
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[0], 1000);
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[2], 1300);
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[4], 5300);  // the larger of 1000 and 5000 in the bin
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[6], 5300);
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[8], 5000);  // connection 2's last sample holds no longer
}

}  // namespace
}  // namespace ckpt::report

namespace ckpt::report {
namespace {

// The probes can deliver a connection's samples out of order (a state change
// from another CPU): the backlog steps in time order, not record order.
TEST(ReportTimeline, TcpSamplesCountInTimeOrder) {
  TraceBuilder a("node-a", test::kSec, 0, 100 * test::kSec);
  auto& c = a.checkpoint(Direction::Save, 10 * test::kSec, test::kSec, 1 << 20);
  for (auto [off, backlog] :
       {std::pair<uint64_t, uint32_t>{0, 100}, {600 * test::kMs, 600}, {300 * test::kMs, 300}}) {
    TcpSampleRecord s;
    s.cookie = 9;
    s.time_ns = c.start_ns + off;
    s.backlog = backlog;
    a.trace().tcp_samples.push_back(s);
  }
  ReportOptions o;
  o.timeline_bins = 10;
  Report r = must_build({a.node_trace()}, o);
  const Timeline& t = r.checkpoints[0].timeline;
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[1], 100);
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[4], 300);
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[5], 300);
  EXPECT_DOUBLE_EQ(*t.tcp_backlog_bytes[6], 600);
}

}  // namespace
}  // namespace ckpt::report
