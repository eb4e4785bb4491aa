// Where `ckptscope run` puts a job log when nothing names a place: the state
// directory of whoever runs it, never the current directory.
#include <gtest/gtest.h>

#include "runner/job_log.h"

namespace ckpt {
namespace {

TEST(StateLogDir, RootLogsUnderVarLogWhateverItsEnvironmentSays) {
  auto dir = state_log_dir({.root = true, .xdg_state_home = "/x/state", .home = "/root"});
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, "/var/log/ckptscope");
}

TEST(StateLogDir, AUserLogsUnderXdgStateHome) {
  auto dir = state_log_dir({.root = false, .xdg_state_home = "/x/state", .home = "/home/u"});
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, "/x/state/ckptscope/logs");
}

TEST(StateLogDir, WithoutXdgStateHomeAUserLogsUnderTheHomesLocalState) {
  auto dir = state_log_dir({.root = false, .xdg_state_home = "", .home = "/home/u"});
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, "/home/u/.local/state/ckptscope/logs");
}

TEST(StateLogDir, ARelativeXdgStateHomeIsIgnoredAsTheXdgRulesSay) {
  auto dir = state_log_dir({.root = false, .xdg_state_home = "state", .home = "/home/u"});
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, "/home/u/.local/state/ckptscope/logs");
}

TEST(StateLogDir, AUserWithNoHomeIsAnErrorNotTheCurrentDirectory) {
  auto dir = state_log_dir({.root = false, .xdg_state_home = "", .home = ""});
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("no state directory"), std::string::npos)
      << dir.error().message;
}

}  // namespace
}  // namespace ckpt
