// project() on traces whose scaling is known (node_runs.h): each node moves
// 96 MiB in 1 MiB RPCs, 16 in flight, at 96 MiB/s on its own; the shared
// storage allows 192 MiB/s, so N nodes take max(1, N/2) s of RPCs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/projection/projection.h"
#include "node_runs.h"

namespace ckpt::projection {
namespace {

using test::build;
using test::kMiB;
using test::kMs;
using test::kSec;
using test::NodeRun;

constexpr double kShared = 192.0 * kMiB;

NodeRun node(std::string name, uint64_t at_s, uint64_t window_ns, Direction d = Direction::Save) {
  NodeRun r;
  r.node = std::move(name);
  r.wall_at_ns = at_s * kSec;
  r.rpcs = 96;
  r.window_ns = window_ns;
  r.direction = d;
  return r;
}

// The runs of the same job at N = 1, 2 (node-limited) and 4 (shared-limited),
// far apart in time: three job checkpoints of 1, 2 and 4 nodes.
std::vector<NodeRun> runs_at_1_2_4() {
  std::vector<NodeRun> runs{node("s1-1", 0, kSec)};
  for (int i = 1; i <= 2; ++i) runs.push_back(node("s2-" + std::to_string(i), 100, kSec));
  for (int i = 1; i <= 4; ++i) runs.push_back(node("s4-" + std::to_string(i), 200, 2 * kSec));
  return runs;
}

ProjectionOptions with_max(std::vector<uint32_t> nodes) {
  ProjectionOptions o;
  o.nodes = std::move(nodes);
  o.storage_write_max_Bps = kShared;
  o.storage_read_max_Bps = kShared;
  return o;
}

const Forecast& at(const DirectionProjection& d, uint32_t n) {
  return *std::find_if(d.forecasts.begin(), d.forecasts.end(),
                       [&](const Forecast& f) { return f.nodes == n; });
}

TEST(Projection, OneNodeRunsForwardToTheSharedMaximum) {
  report::Report r = build({node("a", 0, kSec)});
  auto p = project(r, with_max({1, 8, 64}));
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_EQ(p->directions.size(), 1u);
  const DirectionProjection& d = p->directions[0];
  ASSERT_TRUE(d.supported) << d.why;
  EXPECT_EQ(d.shared_max_source, "--storage-write-max");
  EXPECT_NEAR(d.in_flight_per_node, 16, 1e-9);
  EXPECT_NEAR(d.service_ms, 1000.0 / 192, 1e-9);
  // At its own scale the model gives back what was measured.
  EXPECT_NEAR(at(d, 1).duration_s.value, 1.1, 1e-6);
  EXPECT_NEAR(at(d, 1).efficiency.value, 1.0, 1e-9);
  EXPECT_EQ(at(d, 1).side, "node");
  EXPECT_EQ(at(d, 1).bottleneck, "rpc_rtt");  // the stitcher's, on the node
  // Saturated: 8 x 96 MiB at 192 MiB/s, 64 x 96 MiB likewise.
  EXPECT_NEAR(at(d, 8).duration_s.value, 4.1, 4.1 * 0.02);
  EXPECT_NEAR(at(d, 64).duration_s.value, 32.1, 32.1 * 0.01);
  EXPECT_NEAR(at(d, 64).aggregate_Bps.value, 64 * 96.0 * kMiB / 32.1, 0.01 * kShared);
  EXPECT_NEAR(at(d, 64).shared_utilisation.value, 1.0, 0.01);
  EXPECT_EQ(at(d, 64).side, "shared");
  EXPECT_EQ(at(d, 64).bottleneck, d.shared_stage);
  // The knee is at 2 nodes: efficiency 1/(N/2) falls below 0.9 past N = 2.22.
  ASSERT_TRUE(d.crossover);
  EXPECT_GE(*d.crossover, 2u);
  EXPECT_LE(*d.crossover, 3u);
  EXPECT_EQ(d.crossover_on_grid, 8u);
  // One sample: no spread; the shared side's splits (shares.h) give the
  // range: evenly all end at 4.1 s, in turn two by two at 1.1 ... 4.1 s.
  EXPECT_NEAR(at(d, 8).duration_s.low, 4.1, 4.1 * 0.02);
  EXPECT_NEAR(at(d, 8).duration_s.high, 4.1, 4.1 * 0.02);
  // The mean RPC in turn: 16 in flight over a mean window of 2.5 s for 96,
  // at one RPC fewer in flight (kInFlightResolution).
  EXPECT_NEAR(at(d, 8).rpc_execute_ms.low, 1000.0 * 15 * 2.5 / 96, 1e-6);
  // Stages in the RPCs' time stretch with the window.
  ASSERT_EQ(at(d, 64).stages.size(), 1u);
  EXPECT_NEAR(at(d, 64).stages[0].busy_s.value, 32.0, 32 * 0.01);
}

// Three nodes on a shared side that fits two at their own rate: evenly each
// gets 64 MiB/s (1.5 s); in turn two go at 96 MiB/s, then the third alone, the
// shared side half idle (it ends at 2 s). The wait's range reaches as far as
// the duration's: the third node's RPCs end that late.
TEST(Projection, TheWaitsRangeReachesTheInTurnLastNode) {
  report::Report r = build({node("a", 0, kSec)});
  auto p = project(r, with_max({3}));
  ASSERT_TRUE(p);
  const Forecast& f = p->directions[0].forecasts[0];
  EXPECT_NEAR(f.duration_s.high, 2.1, 2.1 * 0.02);
  // Each end at one RPC more or fewer in flight than the sample's 16.
  EXPECT_NEAR(f.rpc_execute_ms.high, 1000.0 * 17 * 2.0 / 96, 1000.0 * 17 * 2.0 / 96 * 0.02);
  EXPECT_NEAR(f.rpc_wait_rise_ms.high, 1000.0 * 17 * 2.0 / 96 - 1000.0 / 6, 5);
  // In turn the mean node ends at 4/3 s (1, 1 and 2 s): the range's low end.
  EXPECT_NEAR(f.rpc_execute_ms.low, 1000.0 * 15 * (4.0 / 3) / 96,
              1000.0 * 15 * (4.0 / 3) / 96 * 0.02);
}

// By Little's law the mean execute is the RPCs in flight times the window
// over the RPCs: a checkpoint that settles one RPC lower than its samples
// (the VM's loads at N=4, 10.0 READs in flight against 11.0) waits that much
// less at the same duration. Samples that agree: the range holds one RPC
// either way. Samples 16 and 24 in flight: their own prediction interval,
// wider than one RPC, holds a new checkpoint's count.
TEST(Projection, TheExecutesRangeHoldsTheInFlightCountsOwnSpread) {
  report::Report one = build({node("a", 0, kSec)});
  auto p = project(one, with_max({4}));
  ASSERT_TRUE(p);
  const Forecast& f = p->directions[0].forecasts[0];
  // 64 RPCs in flight through 192 RPCs/s: 333 ms each at 16 per node.
  const double at16 = 1000.0 * 64 / 192;
  EXPECT_NEAR(f.rpc_execute_ms.value, at16, at16 * 0.03);
  // In turn, two nodes end at 1 s and two at 2 s: the mean window 1.5 s at 15
  // in flight is the low end, the last node's 2 s at 17 the high end.
  EXPECT_NEAR(f.rpc_execute_ms.low, 1000.0 * 15 * 1.5 / 96, 1e-6);
  EXPECT_NEAR(f.rpc_execute_ms.high, 1000.0 * 17 * 2.0 / 96, 1000.0 * 17 * 2.0 / 96 * 0.02);

  NodeRun wide = node("b", 100, kSec);
  wide.in_flight = 24;
  report::Report two = build({node("a", 0, kSec), wide});
  auto q = project(two, with_max({4}));
  ASSERT_TRUE(q);
  const Forecast& g = q->directions[0].forecasts[0];
  // t(0.95, 1) = 6.314, s = 5.66, sqrt(1 + 1/2): 44 RPCs either side of 20.
  EXPECT_LT(g.rpc_execute_ms.low, 0.5 * at16);
}

// Two one-node checkpoints whose RPCs took 1 s and 1.2 s (execute 167 and
// 200 ms): one more like them may execute as far from their mean as they
// differ, so the rise's range at one node, taken from the mean they measured,
// holds their 90% prediction interval (t(0.95, 1) = 6.314, s = 23.6 ms,
// sqrt(1 + 1/2)): 182 ms either side.
TEST(Projection, TheRisesRangeHoldsTheBaselinesSpread) {
  report::Report r = build({node("a", 0, kSec), node("b", 100, kSec + 200 * kMs)});
  auto p = project(r, with_max({1}));
  ASSERT_TRUE(p);
  const Forecast& f = p->directions[0].forecasts[0];
  const double e1 = 1000.0 * 16 * 1.0 / 96;
  const double e2 = 1000.0 * 16 * 1.2 / 96;
  const double s = std::abs(e2 - e1) / std::sqrt(2.0);
  const double half = 6.314 * s * std::sqrt(1.5);
  EXPECT_LE(f.rpc_wait_rise_ms.low, -half + 1);
  EXPECT_GE(f.rpc_wait_rise_ms.high, half - 1);
}

// The forecast's rise starts where the measured rows' does: from the wait the
// traces measured at their smallest scale, not from each sample's own model
// there. Here the one-node checkpoint's RPCs took 1.2 s (execute 200 ms) and
// the two-node ones' 1 s (167 ms): the measured rise at N=2 is -33 ms, and a
// rise taken from each sample's own model would be 0 there, whatever the
// samples' differences in RPCs in flight did to their waits.
TEST(Projection, TheRiseStartsFromTheWaitMeasuredAtTheSmallestScale) {
  report::Report r =
      build({node("s1-1", 0, kSec + 200 * kMs), node("s2-1", 100, kSec), node("s2-2", 100, kSec)});
  auto p = project(r, with_max({1, 2, 4}));
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  ASSERT_EQ(d.measured.size(), 2u);
  EXPECT_NEAR(d.measured[1].rpc_wait_rise_ms, 1000.0 * 16 / 96 - 1000.0 * 16 * 1.2 / 96, 1e-6);
  for (const Forecast& f : d.forecasts) {
    SCOPED_TRACE(f.nodes);
    // The same service is charged on both sides (a wait's range stops at 0, an
    // execute's at 0 too: the execute's is the one that holds the rise's ends).
    const double base = d.measured[0].rpc_execute_ms;
    EXPECT_NEAR(f.rpc_wait_rise_ms.value, f.rpc_execute_ms.value - base, 1e-6);
    EXPECT_NEAR(f.rpc_wait_rise_ms.low, f.rpc_execute_ms.low - base, 1e-6);
    EXPECT_NEAR(f.rpc_wait_rise_ms.high, f.rpc_execute_ms.high - base, 1e-6);
    EXPECT_NEAR(f.rpc_wait_rise_ms.value, f.rpc_wait_ms.value - d.measured[0].rpc_wait_ms, 1e-6);
  }
  // At N=2, where nothing queues, the measured rise is inside the forecast's range
  // and the forecast's value is below 0: two of its three samples waited less.
  const Forecast& two = at(d, 2);
  EXPECT_LT(two.rpc_wait_rise_ms.value, -10);
  EXPECT_LE(two.rpc_wait_rise_ms.low, d.measured[1].rpc_wait_rise_ms);
  EXPECT_GE(two.rpc_wait_rise_ms.high, d.measured[1].rpc_wait_rise_ms);
}

TEST(Projection, TheWaitRisesAsLittlesLawSaysOnceSaturated) {
  report::Report r = build({node("a", 0, kSec)});
  auto p = project(r, with_max({4}));
  ASSERT_TRUE(p);
  const Forecast& f = p->directions[0].forecasts[0];
  // 64 RPCs in flight through 192 RPCs/s: 333 ms each; alone 1 s / 6 = 167 ms.
  EXPECT_NEAR(f.rpc_execute_ms.value, 1000.0 * 64 / 192, 1000.0 * 64 / 192 * 0.03);
  EXPECT_NEAR(f.rpc_wait_rise_ms.value, 1000.0 * 64 / 192 - 1000.0 / 6, 5);
  EXPECT_NEAR(f.rpc_wait_ms.value, f.rpc_execute_ms.value - 1000.0 / 192, 1e-6);
}

TEST(Projection, MeasuredScalesAreComparedTheSameWay) {
  report::Report r = build(runs_at_1_2_4());
  auto p = project(r, with_max({4}));
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  ASSERT_EQ(d.measured.size(), 3u);
  EXPECT_EQ(d.measured[0].nodes, 1u);
  EXPECT_EQ(d.measured[2].nodes, 4u);
  EXPECT_EQ(d.measured[2].checkpoints, 1u);
  EXPECT_NEAR(d.measured[2].duration_s, 2.1, 1e-9);
  EXPECT_NEAR(d.measured[2].efficiency, 1.1 / 2.1, 1e-9);
  EXPECT_EQ(d.measured[1].side, "node");
  EXPECT_EQ(d.measured[2].side, "shared");
  EXPECT_EQ(d.measured_crossover, 4u);
  // Execute 1/6 s at N=1, 1/3 s at N=4 (each lane's 6 RPCs over 2 s).
  EXPECT_NEAR(d.measured[2].rpc_wait_rise_ms, 1000.0 / 3 - 1000.0 / 6, 1e-6);
  EXPECT_NEAR(d.measured[0].rpc_wait_ms, 1000.0 / 6 - 1000.0 / 192, 1e-6);
  // Seven samples, the forecast's range spans them; all agree here.
  EXPECT_EQ(d.samples.size(), 7u);
  EXPECT_NEAR(d.forecasts[0].duration_s.value, 2.1, 2.1 * 0.03);
}

// A node whose checkpoint a pause longer than the quiet gap split in two has a
// short second checkpoint beside the job's: a piece of that one, not a
// checkpoint at N = 1 (a scale run in CI counted one so: its N = 1 load row
// took the median of the real one and the piece, and the measured crossover
// fell to 2). Left out of the samples and the rows, and said.
TEST(Projection, APieceOfANodesCheckpointIsNoCheckpointAtASmallerScale) {
  std::vector<report::NodeTrace> traces;
  traces.push_back(test::node_trace(node("s1-1", 0, kSec)));
  for (int i = 1; i <= 4; ++i)
    traces.push_back(test::node_trace(node("s4-" + std::to_string(i), 200, 2 * kSec)));
  Trace& t = traces[3].trace;  // s4-3: its last 8 MiB a checkpoint of their own
  CheckpointRecord piece = t.checkpoints[0];
  piece.id = 2;
  piece.start_ns = t.checkpoints[0].end_ns + 1200 * kMs;
  piece.end_ns = piece.start_ns + 500 * kMs;
  piece.bytes = 8 * kMiB;
  t.checkpoints.push_back(piece);
  t.job.end_mono_ns = piece.end_ns + kSec;
  for (uint64_t j = 0; j < 8; ++j) {
    RpcCallRecord rpc = t.rpc_calls[0];
    rpc.start_ns = piece.start_ns;
    rpc.end_ns = piece.end_ns;
    rpc.execute_ns = piece.end_ns - piece.start_ns;
    rpc.checkpoint_id = 2;
    t.rpc_calls.push_back(rpc);
  }
  auto built = report::build_report(std::move(traces), {});
  ASSERT_TRUE(built) << built.error().message;
  ASSERT_EQ(built->checkpoints.size(), 3u) << "the report shows the piece as a checkpoint";
  EXPECT_EQ(built->checkpoints[2].nodes.size(), 1u);

  auto p = project(*built, with_max({4}));
  ASSERT_TRUE(p) << p.error().message;
  const DirectionProjection& d = p->directions[0];
  ASSERT_EQ(d.measured.size(), 2u);
  EXPECT_EQ(d.measured[0].nodes, 1u);
  EXPECT_EQ(d.measured[0].checkpoints, 1u);
  EXPECT_NEAR(d.measured[0].duration_s, 1.1, 1e-9);
  EXPECT_NEAR(d.measured[0].rpc_wait_ms, 1000.0 / 6 - 1000.0 / 192, 1e-6);
  EXPECT_EQ(d.measured_crossover, 4u);
  EXPECT_EQ(d.samples.size(), 5u);
  const bool said = std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) {
    return n.find("#3 (s4-3) of #2") != std::string::npos;
  });
  EXPECT_TRUE(said) << "no note names the piece";
}

// One node alone (the N = 1 run every projection starts from) whose load
// was closed while its last read was in flight: the read, when it returned,
// began a checkpoint of its own, of the same one node. It began before the
// first had been quiet for the trace's gap, so by the stitcher's rule it
// belonged to it: a piece. A second checkpoint a gap later is a checkpoint.
TEST(Projection, ACheckpointCutShortOnOneNodeLeavesAPieceNotASecondSample) {
  const std::string kGap1s = R"({"checkpoint": {"quiet_gap_ms": 1000}})";
  auto one_node = [](uint64_t piece_after_ns, std::string config_json) {
    NodeRun run = node("s1-1", 0, kSec);
    run.config_json = std::move(config_json);
    std::vector<report::NodeTrace> traces;
    traces.push_back(test::node_trace(run));
    Trace& t = traces[0].trace;
    CheckpointRecord piece = t.checkpoints[0];
    piece.id = 2;
    piece.start_ns = t.checkpoints[0].end_ns + piece_after_ns;
    piece.end_ns = piece.start_ns + 300 * kMs;
    piece.bytes = kMiB;
    t.checkpoints.push_back(piece);
    t.job.end_mono_ns = piece.end_ns + kSec;
    auto built = report::build_report(std::move(traces), {});
    EXPECT_TRUE(built) << built.error().message;
    return std::move(*built);
  };
  {
    const report::Report r = one_node(0, kGap1s);  // the next read, at once
    ASSERT_EQ(r.checkpoints.size(), 2u);
    auto p = project(r, with_max({4}));
    ASSERT_TRUE(p) << p.error().message;
    const DirectionProjection& d = p->directions[0];
    ASSERT_EQ(d.measured.size(), 1u);
    EXPECT_EQ(d.measured[0].checkpoints, 1u);
    EXPECT_NEAR(d.measured[0].duration_s, 1.1, 1e-9) << "the piece's 0.3 s took part";
    const bool said = std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) {
      return n.find("#2 (s1-1) of #1") != std::string::npos;
    });
    EXPECT_TRUE(said) << "no note names the piece";
  }
  // 1.5 s later: past the default gap (1 s), a checkpoint of its own.
  {
    auto p = project(one_node(1500 * kMs, kGap1s), with_max({4}));
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(p->directions[0].measured[0].checkpoints, 2u);
  }
  // A trace that does not say its gap: no piece is guessed.
  {
    auto p = project(one_node(0, ""), with_max({4}));
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(p->directions[0].measured[0].checkpoints, 2u);
  }
  // The same 1.5 s inside a trace stitched with a 2 s gap: a piece again.
  {
    auto p =
        project(one_node(1500 * kMs, R"({"checkpoint": {"quiet_gap_ms": 2000}})"), with_max({4}));
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(p->directions[0].measured[0].checkpoints, 1u);
  }
}

// The piece is the checkpoint closed next, whenever its call began: a read in
// flight from before the checkpoint's first returned call (its thread was
// never asked about) still makes the later record the piece, not the whole.
// And a checkpoint the other way between two saves keeps them two.
TEST(Projection, APieceIsTheNextCheckpointItsNodeClosed) {
  auto trace_with = [](std::vector<CheckpointRecord> extra) {
    NodeRun run = node("s1-1", 0, kSec);
    run.config_json = R"({"checkpoint": {"quiet_gap_ms": 1000}})";
    std::vector<report::NodeTrace> traces;
    traces.push_back(test::node_trace(run));
    Trace& t = traces[0].trace;
    for (auto& c : extra) {
      t.job.end_mono_ns = std::max(t.job.end_mono_ns, c.end_ns + kSec);
      t.checkpoints.push_back(std::move(c));
    }
    auto built = report::build_report(std::move(traces), {});
    EXPECT_TRUE(built) << built.error().message;
    return std::move(*built);
  };
  {
    const CheckpointRecord whole = test::node_trace(node("s1-1", 0, kSec)).trace.checkpoints[0];
    CheckpointRecord straggler = whole;
    straggler.id = 2;
    straggler.start_ns = whole.start_ns - 10 * kMs;
    straggler.end_ns = whole.end_ns + 3 * kSec;
    straggler.bytes = kMiB;
    auto p = project(trace_with({straggler}), with_max({4}));
    ASSERT_TRUE(p) << p.error().message;
    const DirectionProjection& d = p->directions[0];
    ASSERT_EQ(d.measured.size(), 1u);
    EXPECT_EQ(d.measured[0].checkpoints, 1u);
    EXPECT_NEAR(d.measured[0].duration_s, 1.1, 1e-9) << "the straggler was taken for the whole";
  }
  {
    const CheckpointRecord first = test::node_trace(node("s1-1", 0, kSec)).trace.checkpoints[0];
    CheckpointRecord load = first;
    load.id = 2;
    load.direction = Direction::Load;
    load.start_ns = first.end_ns + 100 * kMs;
    load.end_ns = load.start_ns + 200 * kMs;
    CheckpointRecord save = first;
    save.id = 3;
    save.start_ns = load.end_ns + 100 * kMs;
    save.end_ns = save.start_ns + 200 * kMs;
    auto p = project(trace_with({load, save}), with_max({4}));
    ASSERT_TRUE(p) << p.error().message;
    const auto saves = std::find_if(p->directions.begin(), p->directions.end(),
                                    [](const auto& d) { return d.direction == Direction::Save; });
    ASSERT_NE(saves, p->directions.end());
    ASSERT_FALSE(saves->measured.empty());
    EXPECT_EQ(saves->measured[0].checkpoints, 2u) << "a save, a load, a save: two saves";
  }
}

TEST(Projection, TheSharedMaximumIsFittedFromTwoScalesWhenTheLargerShowsIt) {
  std::vector<NodeRun> runs{node("s1-1", 0, kSec)};
  for (int i = 1; i <= 4; ++i) runs.push_back(node("s4-" + std::to_string(i), 200, 2 * kSec));
  report::Report r = build(runs);
  ProjectionOptions o;
  o.nodes = {8};
  auto p = project(r, o);
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  ASSERT_TRUE(d.supported) << d.why;
  EXPECT_EQ(d.shared_max_source, "fitted from N=1 and N=4");
  EXPECT_NEAR(*d.shared_max_Bps, kShared, kShared * 0.05);
  EXPECT_NEAR(d.forecasts[0].duration_s.value, 4.1, 4.1 * 0.05);
}

TEST(Projection, ScalesThatDoNotShowTheSharedSideAskForItsMaximum) {
  std::vector<NodeRun> runs{node("s1-1", 0, kSec), node("s2-1", 100, kSec),
                            node("s2-2", 100, kSec)};
  report::Report r = build(runs);
  ProjectionOptions o;
  o.nodes = {8};
  auto p = project(r, o);
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  EXPECT_FALSE(d.supported);
  EXPECT_TRUE(d.forecasts.empty());
  EXPECT_NE(d.why.find("N=1,2"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("--storage-write-max"), std::string::npos) << d.why;
  EXPECT_EQ(d.measured.size(), 2u);  // still shown
}

TEST(Projection, NoNfsRpcMeansNoForecast) {
  NodeRun local = node("a", 0, kSec);
  local.with_rpcs = false;
  report::Report r = build({local});
  auto p = project(r, with_max({8}));
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  EXPECT_FALSE(d.supported);
  EXPECT_NE(d.why.find("no NFS WRITE RPC"), std::string::npos) << d.why;
}

TEST(Projection, TheTracesConfigGivesTheMaximum) {
  NodeRun a = node("a", 0, kSec, Direction::Load);
  a.config_json = R"({"storage":{"read_bandwidth":201326592,"write_bandwidth":1e9}})";
  report::Report r = build({a});
  ProjectionOptions o;
  o.nodes = {8};
  auto p = project(r, o);
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  EXPECT_EQ(d.direction, Direction::Load);
  ASSERT_TRUE(d.supported) << d.why;
  EXPECT_EQ(d.shared_max_source, "config:storage.read_bandwidth (a)");
  EXPECT_NEAR(d.forecasts[0].duration_s.value, 4.1, 4.1 * 0.02);
}

TEST(Projection, ReadPlusIsALoadsReadAndAFailedRpcIsLeftOut) {
  NodeRun a = node("a", 0, kSec, Direction::Load);
  a.read_op = "READ_PLUS";
  report::NodeTrace t = test::node_trace(a);
  t.trace.rpc_calls.back().status = -5;  // EIO
  std::vector<report::NodeTrace> traces;
  traces.push_back(std::move(t));
  auto built = report::build_report(std::move(traces), {});
  ASSERT_TRUE(built);
  auto p = project(*built, with_max({8}));
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  ASSERT_TRUE(d.supported) << d.why;
  EXPECT_EQ(d.samples[0].rpcs, 95u);
}

TEST(Projection, TheRangeSpansTheSamples) {
  report::Report r = build({node("a", 0, kSec), node("b", 0, 1200 * kMs)});
  auto p = project(r, with_max({2, 8}));
  ASSERT_TRUE(p);
  const Forecast& f = p->directions[0].forecasts[0];
  EXPECT_LT(f.duration_s.low, f.duration_s.high);
  EXPECT_LE(f.duration_s.low, f.duration_s.value);
  EXPECT_LE(f.duration_s.value, f.duration_s.high);
  // Each sample's own scale gives its own measurement back; two samples
  // give the mean and a 90% prediction interval: 1.2 +- 6.314 * 0.1414 *
  // sqrt(1.5) s.
  EXPECT_NEAR(f.duration_s.value, 1.2, 1e-6);
  const double half = 6.314 * std::sqrt(0.02) * std::sqrt(1.5);
  EXPECT_NEAR(f.duration_s.low, std::max(0.0, 1.2 - half), 1e-6);
  EXPECT_NEAR(f.duration_s.high, 1.2 + half, 1e-6);
}

TEST(Projection, AMaximumBelowWhatWasMeasuredIsSaid) {
  report::Report r = build({node("a", 0, kSec)});
  ProjectionOptions o = with_max({8});
  o.storage_write_max_Bps = 50.0 * kMiB;  // the node alone moved 96 MiB/s
  auto p = project(r, o);
  ASSERT_TRUE(p);
  const DirectionProjection& d = p->directions[0];
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes[0].find("checkpoint #1 (96.0 MiB/s) moved more"), std::string::npos)
      << d.notes[0];
  EXPECT_NE(d.notes[0].find("too low"), std::string::npos) << d.notes[0];
  EXPECT_TRUE(d.samples[0].above_max);
}

TEST(Projection, BadNodeCountsAreRefused) {
  report::Report r = build({node("a", 0, kSec)});
  ProjectionOptions o;
  EXPECT_FALSE(project(r, o));
  o.nodes = {0, 4};
  auto p = project(r, o);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("0"), std::string::npos);
}

TEST(Projection, NodeCountsParse) {
  auto ok = parse_node_counts("64,8,16,8");
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, (std::vector<uint32_t>{8, 16, 64}));
  for (const char* bad : {"", "8,,16", "0", "x", "8,-1", "99999999999", "1.5"}) {
    auto e = parse_node_counts(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_NE(e.error().message.find("--nodes"), std::string::npos) << e.error().message;
  }
}

}  // namespace
}  // namespace ckpt::projection
