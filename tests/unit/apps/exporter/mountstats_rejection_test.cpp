// A mountstats sample the exporter cannot use (issue 22): counted as a drop
// (source "mountstats", cause "unreadable" or "malformed") and logged with
// the reason once per cause, not once per sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "apps/exporter/node_collector.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr uint64_t kSecond = 1'000'000'000;

class MountstatsRejectionTest : public ::testing::Test {
 protected:
  std::unique_ptr<NodeCollector> collector(const std::string& mountstats) {
    MetricsOptions mo;
    mo.version = "test";
    mo.kernel = "test";
    metrics_ = std::make_unique<CheckpointMetrics>(mo);
    NodeCollectorOptions o;
    o.procfs = scratch_.path().string();
    o.namer.proc_root = o.procfs;
    o.mountstats_path = mountstats;
    return NodeCollector::without_probes(Config::defaults(), o, *metrics_);
  }
  test::ScratchDir scratch_;
  std::unique_ptr<CheckpointMetrics> metrics_;
};

TEST_F(MountstatsRejectionTest, AMalformedSampleIsCountedEachTimeAndLoggedOnce) {
  const std::string path = scratch_ / "mountstats";
  std::ofstream(path) << "device srv:/export mounted on /mnt with fstype nfs4 statvers=1.1\n"
                      << "\tage:\tnot-a-number\n";
  auto node = collector(path);
  for (uint64_t s = 1; s <= 5; ++s) node->watch_mounts(s * kSecond);
  node->step(6 * kSecond);
  ASSERT_THAT(node->notes(), SizeIs(1));
  EXPECT_THAT(node->notes()[0], HasSubstr("mountstats sample rejected (malformed)"));
  EXPECT_THAT(node->notes()[0], HasSubstr(path));
  EXPECT_THAT(
      metrics_->exposition(),
      HasSubstr("ckptscope_dropped_events_total{cause=\"malformed\",source=\"mountstats\"} 5"));
  EXPECT_THAT(metrics_->exposition(),
              HasSubstr("ckptscope_scrape_collector_success{collector=\"mountstats\"} 0"));
}

TEST_F(MountstatsRejectionTest, AnUnreadableFileIsItsOwnCause) {
  auto node = collector(scratch_ / "no-such-mountstats");
  node->watch_mounts(kSecond);
  node->watch_mounts(2 * kSecond);
  node->step(3 * kSecond);
  ASSERT_THAT(node->notes(), SizeIs(1));
  EXPECT_THAT(node->notes()[0], HasSubstr("(unreadable)"));
  EXPECT_THAT(
      metrics_->exposition(),
      HasSubstr("ckptscope_dropped_events_total{cause=\"unreadable\",source=\"mountstats\"} 2"));
}

TEST_F(MountstatsRejectionTest, AGoodSampleIsNoDrop) {
  const std::string path = scratch_ / "mountstats";
  std::ofstream(path) << "device /dev/sda1 mounted on / with fstype ext4\n";
  auto node = collector(path);
  node->watch_mounts(kSecond);
  node->step(2 * kSecond);
  EXPECT_THAT(node->notes(), SizeIs(0));
  EXPECT_THAT(metrics_->exposition(),
              HasSubstr("ckptscope_scrape_collector_success{collector=\"mountstats\"} 1"));
}

}  // namespace
}  // namespace ckpt
