#include "analysis/logwatch/alarm_grouper.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ckpt::logwatch {
namespace {

TEST(AlarmGrouper, ABurstOfOneTemplateIsOneAlarmWithACount) {
  AlarmGrouper g({10, 0, 1000});
  EXPECT_EQ(g.add(1, "nfs: server <*> not responding", 0.8), AlarmDecision::kNewAlarm);
  for (std::uint64_t line = 2; line <= 30; line += 2)
    EXPECT_EQ(g.add(line, "nfs: server <*> not responding", 0.8), AlarmDecision::kGrouped);
  EXPECT_FALSE(g.closed(35).has_value());  // still within the window
  auto ended = g.closed(41);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->first_line, 1U);
  EXPECT_EQ(ended->last_line, 30U);
  EXPECT_EQ(ended->count, 16U);
  // After a quiet window the same template is a new alarm.
  EXPECT_EQ(g.add(100, "nfs: server <*> not responding", 0.8), AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.alarms(), 2U);
}

TEST(AlarmGrouper, PastTheBudgetOnlyAMoreSevereAlarmIsRaisedAndItIsSaid) {
  std::vector<std::string> notices;
  AlarmGrouper g({0, 2, 1000}, [&](const std::string& n) { notices.push_back(n); });
  EXPECT_EQ(g.add(10, "a", 0.8), AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(20, "b", 0.8), AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(30, "c", 0.8), AlarmDecision::kHeld);  // budget of 2 per 1000 reached
  ASSERT_EQ(notices.size(), 1U);
  EXPECT_NE(notices[0].find("threshold raised"), std::string::npos) << notices[0];
  EXPECT_EQ(g.add(40, "d", 0.9), AlarmDecision::kNewAlarm);  // more severe: shown
  EXPECT_EQ(g.add(50, "e", 0.9), AlarmDecision::kHeld);
  // A line at crit or worse is never held.
  EXPECT_EQ(g.add(60, "f", 0.5, std::uint8_t{2}), AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.held(), 2U);
  // Once the window has passed, the threshold is back and says so.
  EXPECT_EQ(g.add(2000, "g", 0.5), AlarmDecision::kNewAlarm);
  ASSERT_EQ(notices.size(), 2U);
  EXPECT_NE(notices[1].find("back under the budget"), std::string::npos) << notices[1];
}

TEST(AlarmGrouper, TheNoticesNameTheLinesAndTheFlagAsConfigured) {
  std::vector<std::string> notices;
  AlarmConfig config{0, 1, 1000};
  EXPECT_EQ(config.line_noun, "line");
  config.line_noun = "kernel log record";
  config.rate_flag = "--logwatch-max-alarm-rate";
  AlarmGrouper g(config, [&](const std::string& n) { notices.push_back(n); });
  g.add(10, "a", 0.8);
  g.add(20, "b", 0.8);
  g.add(2000, "c", 0.5);
  ASSERT_EQ(notices.size(), 2U);
  EXPECT_EQ(notices[0].rfind("kernel log record 20: 1 alarms in the last 1000 lines", 0), 0U)
      << notices[0];
  EXPECT_NE(notices[0].find("(--logwatch-max-alarm-rate)"), std::string::npos) << notices[0];
  EXPECT_EQ(notices[1].rfind("kernel log record 2000: alarms back under", 0), 0U) << notices[1];
}

TEST(AlarmGrouper, ALineJoiningAHeldGroupIsHeldToo) {
  AlarmGrouper g({100, 1, 1000});
  EXPECT_EQ(g.add(1, "a", 1.0), AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(2, "b", 1.0), AlarmDecision::kHeld);
  EXPECT_EQ(g.add(3, "b", 1.0), AlarmDecision::kHeld);
  EXPECT_EQ(g.add(4, "a", 1.0), AlarmDecision::kGrouped);
  EXPECT_EQ(g.held(), 2U);
}

}  // namespace
}  // namespace ckpt::logwatch
