// The exporter's verdicts (issue 18): its workloads' stitchers decide with
// its config, but a file a registered client's process touched never gets
// CKPT_VERDICT_OTHER (the client may use other globs and must still get
// every record); CHECKPOINT verdicts and other files' verdicts go through.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "apps/exporter/node_collector.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kT0 = 1'000'000 * kMs;

class NodeVerdictsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MetricsOptions mo;
    mo.version = "test";
    mo.kernel = "test";
    metrics_ = std::make_unique<CheckpointMetrics>(mo);
    NodeCollectorOptions o;
    o.namer.proc_root = scratch_.path().string();
    o.namer.pod_log_root = scratch_ / "pods";
    config_ = Config::defaults();
    node_ = NodeCollector::without_probes(config_, o, *metrics_);
    for (uint32_t tgid : {100u, 300u}) {
      std::filesystem::create_directories(scratch_ / std::to_string(tgid));
      std::ofstream(scratch_ / (std::to_string(tgid) + "/cgroup"))
          << "0::/user.slice/user-1000.slice/session-1.scope\n";
    }
    // Process 100 is a registered `ckptscope run`'s job; 300 is not.
    node_->set_client_tracing([](uint32_t tgid) { return tgid == 100; });
    node_->set_verdict_sink([this](const FileId& f, bool ckpt) { written_.emplace_back(f, ckpt); });
    node_->step(kT0);
  }

  void read(uint32_t tgid, const std::string& path, uint64_t ino) {
    IoEvent e;
    e.tgid = tgid;
    e.tid = tgid;
    e.op = IoOp::Read;
    e.start_ns = kT0;
    e.end_ns = kT0 + kMs;
    e.path = path;
    e.file = FileId{8, ino};
    e.ret = 4096;
    e.requested = 4096;
    static_cast<EventSink&>(*node_).on_event(std::move(e));
  }

  test::ScratchDir scratch_;
  Config config_;
  std::unique_ptr<CheckpointMetrics> metrics_;
  std::unique_ptr<NodeCollector> node_;
  std::vector<std::pair<FileId, bool>> written_;
};

TEST_F(NodeVerdictsTest, NoOtherVerdictForAFileARegisteredClientsProcessTouched) {
  // The workloads' stitchers decide on the files these reads touch, through
  // the gate: neither is a checkpoint by the exporter's globs.
  read(100, "/data/client-globs/weights.bin", 11);  // the client's: it may call it a checkpoint
  read(300, "/usr/lib/libfoo.so", 22);
  ASSERT_EQ(written_.size(), 1u);
  EXPECT_EQ(written_[0], std::make_pair(FileId{8, 22}, false));
  EXPECT_EQ(node_->verdicts_withheld(), 1u);
  written_.clear();
  node_->on_verdict(FileId{8, 11}, false);  // withheld: left unknown
  node_->on_verdict(FileId{8, 22}, false);  // written
  node_->on_verdict(FileId{8, 11}, true);   // a checkpoint verdict only keeps records coming
  ASSERT_EQ(written_.size(), 2u);
  EXPECT_EQ(written_[0], std::make_pair(FileId{8, 22}, false));
  EXPECT_EQ(written_[1], std::make_pair(FileId{8, 11}, true));
  EXPECT_EQ(node_->verdicts_withheld(), 2u);
}

TEST_F(NodeVerdictsTest, WithoutProbesTheModeIsUnsaid) { EXPECT_EQ(node_->probe_mode(), ""); }

}  // namespace
}  // namespace ckpt
