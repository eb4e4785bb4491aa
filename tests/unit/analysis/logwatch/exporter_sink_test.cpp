// `logwatch --exporter-socket`: anomalies reach a real exporter's
// RegistrationServer (served from a thread, as the exporter's loop does) as
// "log_anomaly" failures; an exporter that goes away gives one warning and
// the sink stops sending; a socket with no exporter is an error naming it.
#include "analysis/logwatch/exporter_sink.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/scratch_dir.h"
#include "tests/unit/apps/exporter/exporter_thread.h"

namespace ckpt::logwatch {
namespace {

// The exporter's registration socket, served from a thread.
struct ExporterAt : test::ExporterThread {
  explicit ExporterAt(const std::string& socket_path)
      : test::ExporterThread([&] {
          RegistrationOptions o;
          o.socket_path = socket_path;
          return o;
        }()) {}
};

Anomaly nfs_anomaly(std::uint64_t line) {
  return {line, "nfs: server fs1 not responding, still trying",
          "nfs: server <*> not responding, still trying", 0.8, "new_template"};
}

TEST(ExporterSink, EvidenceNamesTheLineReasonScoreAndText) {
  FailureRecord f = anomaly_failure(nfs_anomaly(7), 42);
  EXPECT_EQ(f.kind, "log_anomaly");
  EXPECT_EQ(f.time_ns, 42U);
  EXPECT_EQ(f.evidence,
            "line 7: new_template (score 0.80): nfs: server fs1 not responding, still trying");
  EXPECT_FALSE(f.checkpoint_id.has_value());
}

// A known fault goes as a failure of its own kind; lines held back as a count.
TEST(ExporterSink, AKnownFaultIsItsKindAndHeldBackLinesACount) {
  Anomaly mce = {9, "mce: [Hardware Error]: Machine check events logged",
                 "mce: [Hardware Error]: Machine check events logged", 1.0, "known_fault"};
  mce.kind = "machine_check";
  mce.fault_id = "machine-check";
  mce.rank = AlarmRank::kKnownFault;
  EXPECT_EQ(anomaly_failure(mce, 42).kind, "machine_check");
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the exporter takes reports from root only";
  test::ScratchDir scratch;
  const std::string path = scratch.path() / "run/exporter.sock";
  ExporterAt exporter(path);
  ASSERT_EQ(exporter.error(), "");
  auto sink = ExporterSink::connect(path);
  ASSERT_TRUE(sink.has_value()) << sink.error().message;
  EXPECT_EQ((*sink)->send(mce), std::nullopt);
  EXPECT_EQ((*sink)->send_held_back(12), std::nullopt);
  EXPECT_EQ((*sink)->send_held_back(0), std::nullopt);  // nothing to say: nothing sent
  std::vector<FailureRecord> got;
  for (int i = 0; i < 2000 && (got.empty() || exporter.held_back() < 12); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    got = exporter.failures();
  }
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].kind, "machine_check");
  EXPECT_EQ(exporter.held_back(), 12U);
}

TEST(ExporterSink, NoExporterIsAnErrorNamingTheSocket) {
  test::ScratchDir scratch;
  const std::string path = scratch.path() / "none.sock";
  auto sink = ExporterSink::connect(path);
  ASSERT_FALSE(sink.has_value());
  EXPECT_NE(sink.error().message.find(path), std::string::npos) << sink.error().message;
}

TEST(ExporterSink, AnomaliesAreCountedByTheExporterAndItsGoingAwayIsOneWarning) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root: the exporter takes failure reports from root only";
  test::ScratchDir scratch;
  const std::string path = scratch.path() / "run/exporter.sock";
  ExporterAt exporter(path);
  ASSERT_EQ(exporter.error(), "");
  auto sink = ExporterSink::connect(path);
  ASSERT_TRUE(sink.has_value()) << sink.error().message;
  EXPECT_EQ((*sink)->send(nfs_anomaly(3)), std::nullopt);
  EXPECT_EQ((*sink)->send(nfs_anomaly(4)), std::nullopt);
  std::vector<FailureRecord> got;
  for (int i = 0; i < 2000 && got.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    got = exporter.failures();
  }
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].kind, "log_anomaly");
  EXPECT_EQ(got[0].evidence, anomaly_evidence(nfs_anomaly(3)));
  EXPECT_EQ(got[1].evidence, anomaly_evidence(nfs_anomaly(4)));
  EXPECT_GT(got[0].time_ns, 0U);
  EXPECT_EQ((*sink)->sent(), 2U);

  exporter.stop();
  // The first report after it went away (or the next: a send into a closed
  // peer may succeed once) warns; every later one is silent.
  std::vector<std::string> warnings;
  for (std::uint64_t line = 5; line < 200; ++line) {
    if (auto w = (*sink)->send(nfs_anomaly(line))) warnings.push_back(*w);
    if (!warnings.empty() && line > 10) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find(path), std::string::npos) << warnings[0];
  EXPECT_FALSE((*sink)->connected());
  EXPECT_EQ((*sink)->send(nfs_anomaly(300)), std::nullopt);
}

}  // namespace
}  // namespace ckpt::logwatch
