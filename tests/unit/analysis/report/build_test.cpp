// build_report on traces with known answers: nodes aligned on the wall
// clock, checkpoints grouped across nodes, aggregate bandwidth against the
// storage maximum, stragglers, the checkpoint cost and the verdict.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/report/report.h"
#include "analysis/report/report_internal.h"
#include "trace_builder.h"

namespace ckpt::report {
namespace {

using test::kMs;
using test::kSec;
using test::kWall0;
using test::must_build;
using test::TraceBuilder;

TEST(ReportBuild, OneNodesCheckpointHasItsBandwidthAgainstTheStorageMaximum) {
  TraceBuilder a("node-a", 5 * kSec, 0, 100 * kSec);
  auto& c = a.checkpoint(Direction::Save, 10 * kSec, 2 * kSec, 4ull << 30);
  c.bottleneck = "host_io";
  TraceBuilder::stage(c, kStageHostIo, 4ull << 30, 2 * kSec);
  ReportOptions o;
  o.storage_write_max_Bps = 8.0 * (1ull << 30);
  Report r = must_build({a.node_trace()}, o);
  ASSERT_EQ(r.checkpoints.size(), 1u);
  const CheckpointReport& cp = r.checkpoints[0];
  EXPECT_EQ(cp.index, 1u);
  EXPECT_EQ(cp.start_wall_ns, kWall0 + 10 * kSec);
  EXPECT_EQ(cp.duration_ns(), 2 * kSec);
  EXPECT_DOUBLE_EQ(cp.aggregate_Bps, 2.0 * (1ull << 30));
  ASSERT_TRUE(cp.fraction_of_storage_max);
  EXPECT_DOUBLE_EQ(*cp.fraction_of_storage_max, 0.25);
  EXPECT_EQ(cp.storage_max_source, "--storage-write-max");
  EXPECT_EQ(r.nodes[0].wall_offset_ns,
            static_cast<int64_t>(kWall0) - static_cast<int64_t>(5 * kSec));
}

// With a storage stage, the fraction of the storage's maximum is of the
// bytes that reached it: a load the page cache served reached none (0%, and
// no "below the storage's maximum" evidence), a cold one all of them; one
// above 105% is said to be a calibration warning.
TEST(ReportBuild, TheStorageFractionIsOfTheBytesThatReachedTheStorage) {
  TraceBuilder a("node-a", 5 * kSec, 0, 100 * kSec);
  auto& warm = a.checkpoint(Direction::Load, 10 * kSec, kSec, 4ull << 30);
  warm.bottleneck = "host_io";
  TraceBuilder::stage(warm, kStageHostIo, 4ull << 30, kSec);
  TraceBuilder::stage(warm, kStageStorage, 0, 0);
  auto& cold = a.checkpoint(Direction::Load, 20 * kSec, 2 * kSec, 4ull << 30);
  cold.bottleneck = "storage";
  TraceBuilder::stage(cold, kStageHostIo, 4ull << 30, 2 * kSec);
  TraceBuilder::stage(cold, kStageStorage, 4ull << 30, 2 * kSec);
  ReportOptions o;
  o.storage_read_max_Bps = 1.0 * (1ull << 30);
  Report r = must_build({a.node_trace()}, o);
  ASSERT_EQ(r.checkpoints.size(), 2u);
  const CheckpointReport& w = r.checkpoints[0];
  EXPECT_EQ(w.storage_bytes, 0u);
  EXPECT_DOUBLE_EQ(*w.fraction_of_storage_max, 0.0) << "not 400%: the cache served it";
  EXPECT_DOUBLE_EQ(w.aggregate_Bps, 4.0 * (1ull << 30)) << "what the job moved stays";
  const CheckpointReport& c = r.checkpoints[1];
  EXPECT_EQ(c.storage_bytes, 4ull << 30);
  EXPECT_DOUBLE_EQ(*c.fraction_of_storage_max, 2.0);
  EXPECT_EQ(storage_fraction_text(c, "unknown"), "200.0% (calibration warning: above the maximum)");
  EXPECT_EQ(storage_fraction_text(w, "unknown"), "0.0%");
}

TEST(ReportBuild, TheStorageMaximumComesFromTheTracesConfigWhenNotGiven) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  a.trace().job.config_json = R"({"storage":{"read_bandwidth":7e11,"write_bandwidth":2.5e11}})";
  a.checkpoint(Direction::Load, kSec, kSec, 7'000'000'000);
  Report r = must_build({a.node_trace()});
  const CheckpointReport& cp = r.checkpoints[0];
  ASSERT_TRUE(cp.storage_max_Bps);
  EXPECT_DOUBLE_EQ(*cp.storage_max_Bps, 7e11);
  EXPECT_EQ(cp.storage_max_source, "config:storage.read_bandwidth (node-a)");
  EXPECT_DOUBLE_EQ(*cp.fraction_of_storage_max, 0.01);

  TraceBuilder b("node-b", kSec, 0, 100 * kSec);
  b.checkpoint(Direction::Save, kSec, kSec, 1000);
  Report unknown = must_build({b.node_trace()});
  EXPECT_FALSE(unknown.checkpoints[0].storage_max_Bps);
  EXPECT_EQ(unknown.checkpoints[0].storage_max_source, "unknown");
  EXPECT_FALSE(unknown.checkpoints[0].fraction_of_storage_max);
}

// Three nodes, each on its own monotonic clock, their jobs starting at
// slightly different wall times: a save at the same wall time on all three
// is one checkpoint of the job; node-c takes three times as long.
std::vector<NodeTrace> three_nodes() {
  TraceBuilder a("node-a", 1000 * kSec, 0, 300 * kSec);
  TraceBuilder b("node-b", 77 * kSec, 300 * kMs, 300 * kSec);       // started 0.3 s later
  TraceBuilder c("node-c", 123456 * kSec, -200 * kMs, 300 * kSec);  // 0.2 s earlier
  for (TraceBuilder* n : {&a, &b, &c}) {
    const int64_t skew = static_cast<int64_t>(n->trace().job.start_wall_ns - kWall0);
    const uint64_t at =
        static_cast<uint64_t>(static_cast<int64_t>(10 * kSec) - skew);  // wall +10 s
    const bool slow = n == &c;
    auto& s1 = n->checkpoint(Direction::Save, at, slow ? 6 * kSec : 2 * kSec, 1ull << 30);
    s1.bottleneck = slow ? "serialize" : "host_io";
    TraceBuilder::stage(s1, kStageHostIo, 1ull << 30, slow ? 1 * kSec : 2 * kSec);
    TraceBuilder::stage(s1, kStageSerialize, 1ull << 30, slow ? 5 * kSec : kSec / 2);
    auto& s2 = n->checkpoint(Direction::Save, at + 100 * kSec, 2 * kSec, 1ull << 30);
    s2.bottleneck = "host_io";
    TraceBuilder::stage(s2, kStageHostIo, 1ull << 30, 2 * kSec);
    if (n != &c) {  // node-c never loads
      auto& l = n->checkpoint(Direction::Load, at + 200 * kSec, kSec, 1ull << 30);
      l.bottleneck = "host_io";
      TraceBuilder::stage(l, kStageHostIo, 1ull << 30, kSec);
    }
  }
  return {a.node_trace(), b.node_trace(), c.node_trace()};
}

TEST(ReportBuild, NodesCheckpointsMergeOnTheWallClock) {
  Report r = must_build(three_nodes());
  ASSERT_EQ(r.nodes.size(), 3u);
  ASSERT_EQ(r.checkpoints.size(), 3u);
  const CheckpointReport& s1 = r.checkpoints[0];
  EXPECT_EQ(s1.direction, Direction::Save);
  ASSERT_EQ(s1.nodes.size(), 3u);
  EXPECT_EQ(s1.start_wall_ns, kWall0 + 10 * kSec);
  EXPECT_EQ(s1.end_wall_ns, kWall0 + 16 * kSec);
  EXPECT_EQ(s1.bytes, 3ull << 30);
  EXPECT_DOUBLE_EQ(s1.aggregate_Bps, static_cast<double>(3ull << 30) / 6.0);
  EXPECT_EQ(r.nodes[s1.nodes[s1.slowest].node].node, "node-c");
  EXPECT_EQ(s1.median_node_ns, 2 * kSec);
  EXPECT_DOUBLE_EQ(s1.straggler_ratio, 3.0);
  EXPECT_EQ(s1.slowest_record().bottleneck, "serialize");

  EXPECT_EQ(r.checkpoints[1].nodes.size(), 3u);
  EXPECT_EQ(r.checkpoints[1].start_wall_ns, kWall0 + 110 * kSec);
  const CheckpointReport& load = r.checkpoints[2];
  EXPECT_EQ(load.direction, Direction::Load);
  EXPECT_EQ(load.nodes.size(), 2u);  // the node that did not load is not invented
  EXPECT_EQ(load.index, 3u);
  EXPECT_EQ(r.start_wall_ns, kWall0 - 200 * kMs);
}

// Issue 36: an item looks only at the groups still open around it (those
// whose end, with the slack, it does not start after). A long checkpoint
// stays open for as long as it lasts, while many short ones of another node
// open and close beside it: a third node's checkpoint near its end still
// joins it, as when every group was scanned.
TEST(ReportBuild, ALongCheckpointStaysOpenWhileShortOnesCloseBesideIt) {
  TraceBuilder a("node-a", kSec, 0, 400 * kSec);
  a.checkpoint(Direction::Save, 10 * kSec, 200 * kSec, 1ull << 30);
  TraceBuilder c("node-c", 2 * kSec, 0, 400 * kSec);
  for (uint64_t i = 0; i < 40; ++i)
    c.checkpoint(Direction::Save, (10 + 5 * i) * kSec, kSec, 1ull << 20);
  TraceBuilder b("node-b", 3 * kSec, 0, 400 * kSec);
  b.checkpoint(Direction::Save, 212 * kSec, kSec, 1ull << 30);  // 2 s after a's end: the slack
  Report r = must_build({a.node_trace(), c.node_trace(), b.node_trace()});
  // a's with c's first and b's; c's other 39 alone.
  ASSERT_EQ(r.checkpoints.size(), 40u);
  const CheckpointReport& first = r.checkpoints[0];
  ASSERT_EQ(first.nodes.size(), 3u);
  EXPECT_TRUE(std::any_of(first.nodes.begin(), first.nodes.end(), [&](const NodeCheckpoint& nc) {
    return r.nodes[nc.node].node == "node-b";
  }));
  EXPECT_EQ(first.end_wall_ns, kWall0 + 213 * kSec);
  for (size_t i = 1; i < r.checkpoints.size(); ++i)
    EXPECT_EQ(r.checkpoints[i].nodes.size(), 1u) << i;
}

TEST(ReportBuild, TwoTracesOfOneNodeAreAnErrorNamingBoth) {
  TraceBuilder a("node-a", kSec, 0, 10 * kSec);
  NodeTrace first = a.node_trace();
  NodeTrace second = a.node_trace();
  first.path = "/runs/a.db";
  second.path = "/runs/a-again.db";
  auto r = build_report({first, second}, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/runs/a.db"), std::string::npos);
  EXPECT_NE(r.error().message.find("/runs/a-again.db"), std::string::npos);
  EXPECT_NE(r.error().message.find("--node-name"), std::string::npos);
  EXPECT_FALSE(build_report({}, {}));
}

TEST(ReportBuild, TheCostIsTheBlockedShareOfWallTime) {
  // 100 s job: a 10 s save from the main thread (the job waits for all of
  // it), then a 20 s save from a background thread whose GPU copy took 1 s.
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  a.checkpoint(Direction::Save, 10 * kSec, 10 * kSec, 1 << 30, 4, 100, 100);
  auto& async = a.checkpoint(Direction::Save, 50 * kSec, 20 * kSec, 1 << 30, 4, 100, 101);
  TraceBuilder::stage(async, kStageGpuCopy, 1 << 30, kSec);
  a.checkpoint(Direction::Load, 80 * kSec, 5 * kSec, 1 << 30, 4, 100, 100);
  Report r = must_build({a.node_trace()});
  ASSERT_EQ(r.checkpoints.size(), 3u);
  EXPECT_TRUE(r.checkpoints[0].nodes[0].synchronous);
  EXPECT_FALSE(r.checkpoints[1].nodes[0].synchronous);
  EXPECT_EQ(r.checkpoints[1].nodes[0].blocked_ns, kSec);
  EXPECT_EQ(r.cost.job_wall_ns, 100 * kSec);
  EXPECT_EQ(r.cost.blocked_ns, 16 * kSec);
  EXPECT_EQ(r.cost.save_blocked_ns, 11 * kSec);
  EXPECT_EQ(r.cost.load_blocked_ns, 5 * kSec);
  ASSERT_TRUE(r.cost.share);
  EXPECT_DOUBLE_EQ(*r.cost.share, 0.16);
}

TEST(ReportBuild, TheCostIsPerNodeAveragedWithTheWorstNodeBeside) {
  Report r = must_build(three_nodes());
  // a, b: 2 + 2 + 1 = 5 s of 300; c: 6 + 2 = 8 s of 300.
  EXPECT_EQ(r.cost.blocked_ns, 6 * kSec);
  EXPECT_DOUBLE_EQ(*r.cost.share, 18.0 / 900.0);
  EXPECT_EQ(r.cost.worst_node, "node-c");
  EXPECT_DOUBLE_EQ(*r.cost.worst_node_share, 8.0 / 300.0);
}

TEST(ReportBuild, AnUnfinishedJobHasNoCostShare) {
  TraceBuilder a("node-a", kSec, 0, 0);
  a.trace().job.end_mono_ns = 0;
  a.checkpoint(Direction::Save, kSec, kSec, 1 << 20);
  Report r = must_build({a.node_trace()});
  EXPECT_FALSE(r.cost.share);
}

TEST(ReportBuild, TheVerdictIsTheStageThatHeldBackMostCheckpointTime) {
  Report r = must_build(three_nodes());
  // host_io bounds save #2 (2 s) and the load (1 s); serialize bounds save
  // #1 (6 s, its slowest node's bottleneck).
  EXPECT_EQ(r.verdict.bottleneck, "serialize");
  EXPECT_EQ(r.verdict.checkpoints, std::vector<uint64_t>{1});
  EXPECT_EQ(r.verdict.held_ns, 6 * kSec);
  EXPECT_EQ(r.verdict.total_ns, 9 * kSec);
  EXPECT_EQ(r.verdict.worst, 1u);
  EXPECT_NE(r.verdict.text.find("serialize held back 1 of 3 checkpoints"), std::string::npos)
      << r.verdict.text;
  EXPECT_NE(r.verdict.text.find("on node-c, its slowest node"), std::string::npos)
      << r.verdict.text;
}

TEST(ReportBuild, NoCheckpointAndNoTracingAreSaidNotGuessed) {
  TraceBuilder a("node-a", kSec, 0, 10 * kSec);
  Report quiet = must_build({a.node_trace()});
  EXPECT_TRUE(quiet.verdict.bottleneck.empty());
  EXPECT_NE(quiet.verdict.text.find("No checkpoint I/O"), std::string::npos);

  a.trace().job.traced = false;
  a.trace().job.trace_warning = "eBPF: permission denied";
  a.trace().drops.push_back({"jobio", "ringbuf_full", 12});
  Report untraced = must_build({a.node_trace()});
  EXPECT_NE(untraced.verdict.text.find("Nothing was traced"), std::string::npos);
  ASSERT_EQ(untraced.warnings.size(), 2u);
  EXPECT_NE(untraced.warnings[0].find("permission denied"), std::string::npos);
  EXPECT_NE(untraced.warnings[1].find("12 events were dropped"), std::string::npos);
}

TEST(ReportBuild, FailuresJoinTheJobsCheckpointOnTheWallClock) {
  auto traces = three_nodes();
  Trace& b = traces[1].trace;
  b.checkpoints[1].failures.push_back(
      {"enospc", b.checkpoints[1].start_ns + kSec, "write = -ENOSPC", 2});
  b.failures.push_back({"gpu_xid", b.job.start_mono_ns + 250 * kSec, "Xid 79", std::nullopt});
  Report r = must_build(std::move(traces));
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0].failure.kind, "enospc");
  EXPECT_EQ(r.failures[0].checkpoint, 2u);
  EXPECT_EQ(r.nodes[r.failures[0].node].node, "node-b");
  EXPECT_EQ(r.failures[0].wall_ns, kWall0 + 111 * kSec);
  EXPECT_EQ(r.failures[1].failure.kind, "gpu_xid");
  EXPECT_FALSE(r.failures[1].checkpoint);
}

TEST(ReportBuild, TracesThatDoNotOverlapInTimeAreFlagged) {
  TraceBuilder a("node-a", kSec, 0, 10 * kSec);
  TraceBuilder b("node-b", kSec, 3600 * static_cast<int64_t>(kSec), 10 * kSec);
  Report r = must_build({a.node_trace(), b.node_trace()});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("do not overlap in time"), std::string::npos);
}

}  // namespace
}  // namespace ckpt::report
