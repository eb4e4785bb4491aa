#include "runner/child_process.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

ExitStatus run(const std::vector<std::string>& argv) {
  auto child = HeldChild::spawn(argv);
  EXPECT_TRUE(child);
  (void)child->release();
  return child->wait();
}

TEST(HeldChildTest, ExitCodesPassThrough) {
  EXPECT_EQ(run({"/bin/sh", "-c", "exit 0"}).shell_code(), 0);
  EXPECT_EQ(run({"/bin/sh", "-c", "exit 3"}).shell_code(), 3);
  auto term = run({"/bin/sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(term.signal, SIGTERM);
  EXPECT_EQ(term.shell_code(), 128 + SIGTERM);
  EXPECT_EQ(run({"/bin/sh", "-c", "kill -KILL $$"}).shell_code(), 137);
}

TEST(HeldChildTest, CommandNotFoundIs127AndSaysWhy) {
  auto child = HeldChild::spawn({"/nonexistent/ckptscope-no-such-command"});
  ASSERT_TRUE(child);
  auto released = child->release();
  ASSERT_FALSE(released);
  EXPECT_THAT(released.error().message, ::testing::HasSubstr("No such file"));
  EXPECT_EQ(child->wait().shell_code(), 127);
}

TEST(HeldChildTest, HeldUntilReleased) {
  char tmpl[] = "/tmp/ckpt-held-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  unlink(tmpl);
  auto child = HeldChild::spawn({"/bin/sh", "-c", std::string("touch ") + tmpl});
  ASSERT_TRUE(child);
  usleep(100'000);
  EXPECT_NE(access(tmpl, F_OK), 0) << "ran before release";
  EXPECT_FALSE(child->try_wait());
  ASSERT_TRUE(child->release());
  EXPECT_EQ(child->wait().shell_code(), 0);
  EXPECT_EQ(access(tmpl, F_OK), 0);
  unlink(tmpl);
}

TEST(HeldChildTest, EnvironmentAdditionsReachTheChild) {
  auto child =
      HeldChild::spawn({"/bin/sh", "-c", "test \"$CKPT_TEST_VAR\" = yes"}, {"CKPT_TEST_VAR=yes"});
  ASSERT_TRUE(child);
  ASSERT_TRUE(child->release());
  EXPECT_EQ(child->wait().shell_code(), 0);
}

TEST(HeldChildTest, ForwardedSignalReachesTheChild) {
  auto child =
      HeldChild::spawn({"/bin/sh", "-c", "trap 'exit 42' TERM; while :; do sleep 0.05; done"});
  ASSERT_TRUE(child);
  SignalForwarder fwd(child->pid());
  ASSERT_TRUE(child->release());
  usleep(200'000);
  // As if someone asked us to stop: from another process (a signal we send
  // ourselves, as the kernel's SIGXFSZ for our own write, is not the job's).
  ASSERT_EQ(std::system(fmt::format("kill -TERM {}", getpid()).c_str()), 0);
  EXPECT_EQ(child->wait().shell_code(), 42);
  EXPECT_EQ(SignalForwarder::last_signal(), SIGTERM);
}

}  // namespace
}  // namespace ckpt
