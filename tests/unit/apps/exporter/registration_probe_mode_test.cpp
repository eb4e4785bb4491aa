// Issue 18 over a real registration socket: the exporter tells each client
// the probe mode in its register answer (the client's trace records it),
// and says when a client begins tracing processes (its verdicts made
// without the client's globs are then forgotten); which processes a client
// traces is asked of the server (the verdict rule, verdict_gate.h).
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exporter_thread.h"
#include "probes/exporter_feed.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

class RegistrationProbeModeTest : public ::testing::Test {
 protected:
  RegistrationOptions options() {
    RegistrationOptions o;
    o.socket_path = scratch_ / "run/exporter.sock";
    return o;
  }
  Expected<std::unique_ptr<ExporterFeed>> connect(const std::vector<uint32_t>& tgids) {
    auto ignore = [](const void*, size_t) {};
    return ExporterFeed::connect(options().socket_path, tgids, "test", ignore, ignore, ignore);
  }
  test::ScratchDir scratch_;
};

TEST_F(RegistrationProbeModeTest, TheClientIsToldTheExportersMode) {
  test::ExporterThread exporter(options());
  ASSERT_EQ(exporter.error(), "");
  auto feed = connect({});
  ASSERT_TRUE(feed) << feed.error().message;
  EXPECT_EQ((*feed)->probe_mode(), "file_layer");
  exporter.set_probe_mode("syscall");
  auto second = connect({});
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)->probe_mode(), "syscall");
}

TEST_F(RegistrationProbeModeTest, AModeTheClientDoesNotKnowIsUnsaid) {
  test::ExporterThread exporter(options());
  for (const char* mode : {"", "kprobe", "file_layer\xff"}) {
    exporter.set_probe_mode(mode);
    auto feed = connect({});
    ASSERT_TRUE(feed) << feed.error().message;
    EXPECT_EQ((*feed)->probe_mode(), "") << mode;
  }
}

TEST_F(RegistrationProbeModeTest, TracingStartsAtRegisterAndAtEachTraceAndIsAskable) {
  test::ExporterThread exporter(options());
  const auto me = static_cast<uint32_t>(getpid());
  auto empty = connect({});
  ASSERT_TRUE(empty);
  (*empty)->sync(2000);
  EXPECT_EQ(exporter.tracing_started_.load(), 0);  // no process: nothing to protect
  EXPECT_FALSE(exporter.ask([](const RegistrationServer& s) { return s.traces_any(); }));
  auto feed = connect({me});
  ASSERT_TRUE(feed);
  (*feed)->sync(2000);
  EXPECT_EQ(exporter.tracing_started_.load(), 1);
  EXPECT_TRUE(exporter.ask([me](const RegistrationServer& s) { return s.traces(me); }));
  EXPECT_FALSE(exporter.ask([me](const RegistrationServer& s) { return s.traces(me + 1); }));
  ASSERT_TRUE((*empty)->trace_tgid(me));
  EXPECT_EQ(exporter.tracing_started_.load(), 2);
  feed->reset();
  empty->reset();
  // Both clients gone: once the server has seen them go, nobody is traced.
  for (int i = 0; i < 200; ++i) {
    if (!exporter.ask([](const RegistrationServer& s) { return s.traces_any(); })) break;
    usleep(5000);
  }
  EXPECT_FALSE(exporter.ask([](const RegistrationServer& s) { return s.traces_any(); }));
}

}  // namespace
}  // namespace ckpt
