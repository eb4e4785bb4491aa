// The recommendation rule base: each rule fires on the evidence it names,
// with the numbers, and stays quiet just short of its threshold.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "analysis/report/report.h"
#include "analysis/report/report_internal.h"
#include "trace_builder.h"

namespace ckpt::report {
namespace {

using test::kMs;
using test::kSec;
using test::must_build;
using test::TraceBuilder;

std::set<std::string> fired(const Report& r) {
  std::set<std::string> ids;
  for (const auto& rec : r.recommendations) ids.insert(rec.id);
  return ids;
}

const Recommendation* find(const Report& r, const std::string& id) {
  for (const auto& rec : r.recommendations)
    if (rec.id == id) return &rec;
  return nullptr;
}

// A 1000 s job with one 1 s save of 256 MiB in 4 write calls from 4 threads.
struct OneSave {
  TraceBuilder node{"node-a", kSec, 0, 1000 * kSec};
  CheckpointRecord* save = nullptr;
  explicit OneSave(uint64_t calls = 4) {
    save = &node.checkpoint(Direction::Save, 10 * kSec, kSec, 256ull << 20, calls);
    // Four writer threads, so single_writer stays out of the way.
    for (size_t i = 0; i < node.trace().io_calls.size(); ++i)
      node.trace().io_calls[i].tid = 100 + (i % 4);
    save->bottleneck = "host_io";
    TraceBuilder::stage(*save, kStageHostIo, 256ull << 20, kSec);
  }
  Report build(const ReportOptions& o = {}) { return must_build({node.node_trace()}, o); }
};

TEST(ReportRules, AHealthySaveFiresNothing) {
  OneSave s;
  EXPECT_TRUE(s.build().recommendations.empty());
}

TEST(ReportRules, PageableStagingIsASlowGpuCopy) {
  OneSave s;
  TraceBuilder::stage(*s.save, kStageGpuCopy, 256ull << 20, 200 * kMs,
                      25e9);  // 1.34 GB/s of 25: 5%
  Report r = s.build();
  ASSERT_TRUE(fired(r).count("pageable_staging"));
  EXPECT_NE(find(r, "pageable_staging")->evidence[0].text.find("5.4% of"), std::string::npos)
      << find(r, "pageable_staging")->evidence[0].text;
  OneSave fast;
  TraceBuilder::stage(*fast.save, kStageGpuCopy, 256ull << 20, 20 * kMs, 25e9);  // 13.4 GB/s: 54%
  EXPECT_FALSE(fired(fast.build()).count("pageable_staging"));
}

TEST(ReportRules, SerializationBoundIsHalfTheCheckpointOnCpu) {
  OneSave s;
  TraceBuilder::stage(*s.save, kStageSerialize, 256ull << 20, 500 * kMs);
  EXPECT_TRUE(fired(s.build()).count("serialization_bound"));
  OneSave under;
  TraceBuilder::stage(*under.save, kStageSerialize, 256ull << 20, 499 * kMs);
  EXPECT_FALSE(fired(under.build()).count("serialization_bound"));
}

TEST(ReportRules, MetadataBoundIsManySmallFilesOrTheBottleneck) {
  OneSave s;
  s.save->files = 1000;
  TraceBuilder::stage(*s.save, kStageMetadata, 0, 600 * kMs);
  Report r = s.build();
  ASSERT_TRUE(fired(r).count("metadata_bound"));
  EXPECT_NE(find(r, "metadata_bound")->evidence[0].text.find("1000 files of 262 KiB"),
            std::string::npos)
      << find(r, "metadata_bound")->evidence[0].text;
  OneSave big_files;
  big_files.save->files = 4;  // 64 MiB each: metadata time is not about file count
  TraceBuilder::stage(*big_files.save, kStageMetadata, 0, 600 * kMs);
  EXPECT_FALSE(fired(big_files.build()).count("metadata_bound"));
}

NfsCheckpointRecord nfs(uint64_t queue_p50, uint64_t rtt_p50, uint64_t backlog_wait,
                        uint64_t sending_wait) {
  NfsCheckpointRecord n;
  n.io_rpcs = 256;
  n.queue_wait.count = 256;
  n.queue_wait.p50_ns = queue_p50;
  n.rtt.count = 256;
  n.rtt.p50_ns = rtt_p50;
  n.wait_by_queue_ns = {
      {"backlog", backlog_wait}, {"sending", sending_wait}, {"pending", 1000 * kMs}};
  n.tcp_backlog_mean = 200000;
  n.tcp_backlog_max = 300000;
  n.tcp_retransmits = 0;
  return n;
}

TEST(ReportRules, SlotStarvationIsWaitingForARequestSlot) {
  OneSave s;
  s.save->nfs = nfs(40 * kMs, 10 * kMs, 500 * kMs, 100 * kMs);  // 500 of 1600 ms: 31%
  EXPECT_TRUE(fired(s.build()).count("rpc_slot_starvation"));
  OneSave few;
  few.save->nfs = nfs(40 * kMs, 10 * kMs, 300 * kMs, 100 * kMs);  // 300 of 1400: 21%
  EXPECT_FALSE(fired(few.build()).count("rpc_slot_starvation"));
}

TEST(ReportRules, ASaturatedTransportIsQueueingAndBacklogTogether) {
  OneSave s;
  s.save->nfs = nfs(50 * kMs, 10 * kMs, 0, 2000 * kMs);
  s.save->bottleneck = "transport";
  TraceBuilder::stage(*s.save, kStageTransport, 256ull << 20, kSec, 300e6);  // 268 MB/s of 300: 89%
  Report r = s.build();
  ASSERT_TRUE(fired(r).count("transport_saturated"));
  EXPECT_NE(find(r, "transport_saturated")->evidence[0].text.find("TCP backlog 195 KiB on average"),
            std::string::npos)
      << find(r, "transport_saturated")->evidence[0].text;
  OneSave short_queue;  // queue wait under twice the round trip: the link keeps up
  short_queue.save->nfs = nfs(19 * kMs, 10 * kMs, 0, 2000 * kMs);
  short_queue.save->bottleneck = "transport";
  TraceBuilder::stage(*short_queue.save, kStageTransport, 256ull << 20, kSec, 300e6);
  EXPECT_FALSE(fired(short_queue.build()).count("transport_saturated"));
}

TEST(ReportRules, SmallWritesAreManyCallsUnder64KiB) {
  OneSave s(8192);  // 32 KiB each
  Report r = s.build();
  ASSERT_TRUE(fired(r).count("small_writes"));
  EXPECT_NE(find(r, "small_writes")->evidence[0].text.find("8192 write calls of 32.0 KiB"),
            std::string::npos);
  OneSave big(2048);  // 128 KiB each
  EXPECT_FALSE(fired(big.build()).count("small_writes"));
  OneSave nfs_small;
  RpcOpStats w;
  w.op = "WRITE";
  w.count = 4096;
  w.bytes_sent = 4096ull * 4096;  // 4 KiB wsize
  nfs_small.save->nfs = NfsCheckpointRecord{};
  nfs_small.save->nfs->rpc_ops.push_back(w);
  EXPECT_TRUE(fired(nfs_small.build()).count("small_writes"));
}

TEST(ReportRules, TransportLossIsRetransmitsOverATenthOfAPercent) {
  OneSave s;
  s.save->nfs = nfs(kMs, kMs, 0, 0);
  s.save->nfs->tcp_retransmits = 186;  // 256 MiB = 185,376 segments: 0.1003%
  EXPECT_TRUE(fired(s.build()).count("transport_loss"));
  OneSave few;
  few.save->nfs = nfs(kMs, kMs, 0, 0);
  few.save->nfs->tcp_retransmits = 185;
  EXPECT_FALSE(fired(few.build()).count("transport_loss"));
}

TEST(ReportRules, ASingleWriterIsOneThreadMovingABigCheckpoint) {
  TraceBuilder a("node-a", kSec, 0, 1000 * kSec);
  auto& c = a.checkpoint(Direction::Save, 10 * kSec, kSec, 256ull << 20);
  c.bottleneck = "host_io";
  TraceBuilder::stage(c, kStageHostIo, 256ull << 20, kSec);
  Report r = must_build({a.node_trace()});
  ASSERT_TRUE(fired(r).count("single_writer"));
  EXPECT_NE(find(r, "single_writer")->evidence[0].text.find("one thread wrote all 256 MiB"),
            std::string::npos);
  OneSave four_threads;
  EXPECT_FALSE(fired(four_threads.build()).count("single_writer"));
  c.bottleneck = "transport";  // the network bounds it, not the one thread
  EXPECT_FALSE(fired(must_build({a.node_trace()})).count("single_writer"));
}

TEST(ReportRules, BelowTheStorageMaximumNeedsTheMaximum) {
  TraceBuilder a("node-a", kSec, 0, 1000 * kSec);
  a.checkpoint(Direction::Load, 10 * kSec, kSec, 1'000'000'000, 4, 100, 101);
  a.checkpoint(Direction::Save, 100 * kSec, kSec, 1'000'000'000, 4, 100, 101);
  auto unknown = fired(must_build({a.node_trace()}));  // maxima unknown: silent
  EXPECT_FALSE(unknown.count("load_below_read_max"));
  EXPECT_FALSE(unknown.count("save_below_write_max"));
  ReportOptions o;
  o.storage_read_max_Bps = 2.01e9;   // 1 GB/s is 49.8%
  o.storage_write_max_Bps = 1.99e9;  // 50.3%
  Report r = must_build({a.node_trace()}, o);
  EXPECT_TRUE(fired(r).count("load_below_read_max"));
  EXPECT_FALSE(fired(r).count("save_below_write_max"));
}

TEST(ReportRules, AStragglerIsTheSlowestNodeWellPastTheMedian) {
  auto make = [](uint64_t slow_ns) {
    std::vector<NodeTrace> nodes;
    for (int i = 0; i < 3; ++i) {
      TraceBuilder n("node-" + std::to_string(i), kSec, 0, 1000 * kSec);
      n.checkpoint(Direction::Save, 10 * kSec, i == 2 ? slow_ns : kSec, 1 << 20, 4, 100, 101);
      nodes.push_back(n.node_trace());
    }
    return must_build(std::move(nodes));
  };
  Report r = make(1500 * kMs);
  ASSERT_TRUE(fired(r).count("stragglers"));
  EXPECT_EQ(find(r, "stragglers")->evidence[0].node, "node-2");
  EXPECT_FALSE(fired(make(1499 * kMs)).count("stragglers"));
}

TEST(ReportRules, CostIsHighFromATenthOfTheJob) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  a.checkpoint(Direction::Save, 10 * kSec, 10 * kSec, 1 << 20);
  EXPECT_TRUE(fired(must_build({a.node_trace()})).count("checkpoint_cost_high"));
  TraceBuilder b("node-a", kSec, 0, 100 * kSec);
  b.checkpoint(Direction::Save, 10 * kSec, 9 * kSec, 1 << 20);
  EXPECT_FALSE(fired(must_build({b.node_trace()})).count("checkpoint_cost_high"));
}

TEST(ReportRules, FailuresFireTheirRulesWithTheirEvidence) {
  OneSave s;
  s.save->failures.push_back({"enospc", s.save->start_ns, "write(/ckpt/shard.pt) = -ENOSPC", 1});
  for (int i = 0; i < 5; ++i)
    s.node.trace().failures.push_back({"kernel_nfs_not_responding",
                                       s.save->end_ns + static_cast<uint64_t>(i) * kSec,
                                       "nfs: server not responding", std::nullopt});
  s.node.trace().failures.push_back({"gpu_xid", 900 * kSec, "NVRM: Xid 79", std::nullopt});
  Report r = s.build();
  auto ids = fired(r);
  EXPECT_TRUE(ids.count("storage_full"));
  EXPECT_TRUE(ids.count("server_unresponsive"));
  EXPECT_TRUE(ids.count("gpu_faults"));
  EXPECT_FALSE(ids.count("io_errors"));
  const Recommendation* server = find(r, "server_unresponsive");
  ASSERT_EQ(server->evidence.size(), 4u);  // three in full, then the count
  EXPECT_EQ(server->evidence[3].text, "2 more kernel_nfs_not_responding failures (see Failures)");
  EXPECT_EQ(find(r, "storage_full")->evidence[0].checkpoint, 1u);
}

TEST(ReportRules, EveryRuleIsDocumented) {
  std::ifstream in(std::string(CKPTSCOPE_SOURCE_DIR) + "/docs/report.md");
  ASSERT_TRUE(in) << "docs/report.md";
  std::stringstream text;
  text << in.rdbuf();
  for (auto id : recommendation_ids())
    EXPECT_NE(text.str().find("| `" + std::string(id) + "` |"), std::string::npos)
        << id << " is not in docs/report.md's rule table";
}

}  // namespace
}  // namespace ckpt::report
