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

// The budget ranks, it does not queue: a routine (benign) line that came
// first never holds back an error-level one; an error-level one competes only
// with its rank and above; a known fault is always raised and counts.
TEST(AlarmGrouper, TheBudgetRanksItDoesNotQueue) {
  AlarmGrouper g({0, 2, 1000});
  EXPECT_EQ(g.add(10, "unit started", 1.0, std::nullopt, AlarmRank::kBenign),
            AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(20, "device found", 1.0, std::nullopt, AlarmRank::kBenign),
            AlarmDecision::kNewAlarm);
  // The window holds two benign alarms: another benign one is held...
  EXPECT_EQ(g.add(30, "timer added", 1.0, std::nullopt, AlarmRank::kBenign), AlarmDecision::kHeld);
  // ...but an error-level one does not compete with them.
  EXPECT_EQ(g.add(40, "scrub failed", 1.0, std::nullopt, AlarmRank::kError),
            AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(50, "read failed", 1.0, std::nullopt, AlarmRank::kError),
            AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(60, "write failed", 1.0, std::nullopt, AlarmRank::kError), AlarmDecision::kHeld);
  // A known fault is raised whatever the window holds.
  for (std::uint64_t line = 70; line < 120; line += 10)
    EXPECT_EQ(
        g.add(line, "fault " + std::to_string(line), 1.0, std::nullopt, AlarmRank::kKnownFault),
        AlarmDecision::kNewAlarm);
  // Known faults count: now an error-level line competes with them too.
  EXPECT_EQ(g.add(130, "flush failed", 1.0, std::nullopt, AlarmRank::kError), AlarmDecision::kHeld);
  EXPECT_EQ(g.alarms(), 9U);
  EXPECT_EQ(g.held(), 3U);
}

// A known fault joining a group the budget held back (the same template) is
// raised: never held back.
TEST(AlarmGrouper, AKnownFaultInAHeldGroupIsRaised) {
  AlarmGrouper g({100, 1, 1000});
  EXPECT_EQ(g.add(1, "a", 1.0), AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(2, "b", 1.0), AlarmDecision::kHeld);
  EXPECT_EQ(g.add(3, "b", 1.0, std::nullopt, AlarmRank::kKnownFault), AlarmDecision::kNewAlarm);
  EXPECT_EQ(g.add(4, "b", 1.0), AlarmDecision::kGrouped);
}

// Held back is not lost: per template, its count, first and last line, rank
// and highest score; the digest gives what was held since the last one, the
// totals stay; templates past the cap are counted together.
TEST(AlarmGrouper, WhatIsHeldBackIsCountedByTemplate) {
  AlarmGrouper g({0, 1, 1000});
  EXPECT_EQ(g.add(1, "shown", 1.0), AlarmDecision::kNewAlarm);
  g.add(2, "x", 0.5, std::nullopt, AlarmRank::kBenign);
  g.add(3, "y", 0.7);
  g.add(4, "x", 0.9);
  auto first = g.digest();
  ASSERT_EQ(first.size(), 2U);
  EXPECT_EQ(first[0].template_text, "x");
  EXPECT_EQ(first[0].count, 2U);
  EXPECT_EQ(first[0].first_line, 2U);
  EXPECT_EQ(first[0].last_line, 4U);
  EXPECT_EQ(first[0].rank, AlarmRank::kError);  // the highest its lines had
  EXPECT_DOUBLE_EQ(first[0].score, 0.9);
  EXPECT_EQ(first[1].template_text, "y");
  EXPECT_TRUE(g.digest().empty()) << "a digest empties it";
  g.add(5, "y", 0.6);
  auto second = g.digest();
  ASSERT_EQ(second.size(), 1U);
  EXPECT_EQ(second[0].count, 1U);
  EXPECT_EQ(second[0].first_line, 5U);
  auto totals = g.held_templates();
  ASSERT_EQ(totals.size(), 2U);
  EXPECT_EQ(totals[0].count, 2U);
  EXPECT_EQ(totals[1].count, 2U);
  EXPECT_EQ(totals[1].first_line, 3U);
  EXPECT_EQ(totals[1].last_line, 5U);
  EXPECT_EQ(g.held(), 4U);
  // Past the cap, counted together, never dropped.
  for (std::size_t i = 0; i < kMaxHeldTemplates + 5; ++i) g.add(10, "t" + std::to_string(i), 0.1);
  EXPECT_EQ(g.held_templates().size(), kMaxHeldTemplates);
  EXPECT_EQ(g.held_untracked(), 7U);  // x and y took two places
  EXPECT_EQ(g.held(), 4U + kMaxHeldTemplates + 5);
}

}  // namespace
}  // namespace ckpt::logwatch
