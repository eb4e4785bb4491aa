// The probe mode is chosen once and kept in the trace (issue 18): a
// collector fed by the node exporter records the exporter's mode; one that
// asked for another mode than the exporter's loads probes of its own (here:
// cannot, without privileges) and says why.
#include "apps/collector/collector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scratch_dir.h"
#include "tests/unit/apps/exporter/exporter_thread.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;

class CollectorProbeModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registration_.socket_path = scratch_ / "run/exporter.sock";
    options_.exporter_socket = registration_.socket_path;
    options_.tcp = false;
    options_.nfs = false;
    features_.bpf_privileged = false;  // probes of our own cannot load
    features_.privilege_note = "not privileged (test)";
  }
  test::ScratchDir scratch_;
  RegistrationOptions registration_;
  ProbeOptions options_;
  KernelFeatures features_;
};

TEST_F(CollectorProbeModeTest, TheExportersModeIsTheTraces) {
  test::ExporterThread exporter(registration_);
  ASSERT_EQ(exporter.error(), "");
  auto c = Collector::create(Config::defaults(), scratch_ / "t.db", JobRecord{});
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE((*c)->start(options_, features_));
  EXPECT_EQ((*c)->probe_mode(), "file_layer");
  auto trace = (*c)->finish(JobRecord{});
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->job.probe_mode, "file_layer");
  EXPECT_TRUE(trace->job.traced);
}

TEST_F(CollectorProbeModeTest, AnotherModeAskedForIsNotTakenFromTheExporter) {
  test::ExporterThread exporter(registration_);
  options_.probe_mode = RequestedProbeMode::Syscall;
  auto c = Collector::create(Config::defaults(), scratch_ / "t.db", JobRecord{});
  ASSERT_TRUE(c);
  auto started = (*c)->start(options_, features_);
  ASSERT_FALSE(started);  // its own probes need privileges
  EXPECT_THAT(started.error().message, HasSubstr("not privileged (test)"));
  ASSERT_FALSE((*c)->notes().empty());
  EXPECT_THAT((*c)->notes().front(),
              HasSubstr("traces in file_layer mode, --probe-mode syscall was asked for"));
  auto trace = (*c)->finish(JobRecord{});
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->job.probe_mode, "");
  EXPECT_FALSE(trace->job.traced);
}

}  // namespace
}  // namespace ckpt
