#include "analysis/logwatch/evaluation.h"

#include <tuple>

#include <gtest/gtest.h>

#include "analysis/logwatch/baselines.h"

namespace ckpt::logwatch {
namespace {

TEST(Evaluation, GroupingAccuracyFollowsLoghubsDefinition) {
  // Truth groups {0,1,2} {3,4} {5}. Predicted: {0,1,2} right; {3} and {4}
  // split a group (both wrong); {5} right.
  std::vector<TemplateId> predicted = {1, 1, 1, 2, 3, 4};
  std::vector<std::string> truth = {"A", "A", "A", "B", "B", "C"};
  EXPECT_DOUBLE_EQ(grouping_accuracy(predicted, truth), 4.0 / 6.0);
  // Merging two truth groups makes all their messages wrong.
  EXPECT_DOUBLE_EQ(grouping_accuracy({1, 1, 1, 1, 1, 2}, truth), 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(grouping_accuracy({7, 7, 7, 8, 8, 9}, truth), 1.0);
}

TEST(Evaluation, ConfusionAndF1) {
  Confusion c = confusion({true, true, false, false, true}, {true, false, true, false, true});
  EXPECT_EQ(c.tp, 2U);
  EXPECT_EQ(c.fp, 1U);
  EXPECT_EQ(c.fn, 1U);
  EXPECT_EQ(c.tn, 1U);
  EXPECT_DOUBLE_EQ(c.precision(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(c.recall(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(c.f1(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(Confusion{}.f1(), 0.0);
}

TEST(Evaluation, Baselines) {
  EXPECT_EQ(new_template_baseline({1, 5, 2, 6}, 5), (std::vector<bool>{false, true, false, true}));
  // Training windows of 4: template 1 twice, template 2 twice per window.
  CountOutlierBaseline counts({4, 3.0, 0.5});
  counts.fit({1, 1, 2, 2, 1, 2, 1, 2});
  // A window with template 1 four times (z = (4-2)/0.5 = 4 > 3) is flagged;
  // a normal window and one lone unknown template (z = 2) are not.
  EXPECT_EQ(counts.flag({1, 1, 1, 1, 1, 2, 1, 2, 9, 1, 1, 2}),
            (std::vector<bool>{true, true, true, true, false, false, false, false, false, false,
                               false, false}));
}

TEST(Evaluation, BglSampleGroupingMatchesDrainsPublishedAccuracy) {
  const std::string dir = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/third_party/loghub/BGL";
  // The Loghub sample (tests/data/third_party) is an input of the suite, not optional: a
  // missing file fails here, named by load_bgl's error.
  auto lines = load_bgl(dir + "/BGL_2k.log", dir + "/BGL_2k.log_structured.csv");
  ASSERT_TRUE(lines.has_value()) << lines.error().message;
  ASSERT_EQ(lines->size(), 2000U);
  std::size_t anomalies = 0;
  for (const auto& l : *lines) anomalies += l.anomaly ? 1 : 0;
  EXPECT_EQ(anomalies, 143U);  // the Loghub README's count
  EvalOptions options;
  options.folds = 2;
  auto r = evaluate(*lines, options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  // Measured 0.970 (Drain published 0.963 on this sample).
  EXPECT_GE(r->grouping_accuracy, 0.95);
  EXPECT_EQ(r->templates_truth, 120U);
  EXPECT_EQ(r->split.test_lines, 1000U);
  EXPECT_EQ(r->split.test_anomalies, 47U);
  // The severity baseline (Level FATAL, crit) on the second half: its 47
  // labelled anomalies and 82 of its normal lines. Two chronological folds
  // score the second half only, after the first.
  ASSERT_EQ(r->kfold.size(), 4U);
  EXPECT_EQ(r->kfold[3].name, "severity");
  EXPECT_EQ(r->kfold[3].counts.tp, 47U);
  EXPECT_EQ(r->kfold[3].counts.fp, 82U);
  EXPECT_EQ(r->kfold[3].counts.fn, 0U);
  std::size_t levelled = 0;
  for (const auto& l : *lines) levelled += l.severity.has_value() ? 1 : 0;
  EXPECT_EQ(levelled, 2000U);
}

// Issue 21's floors, at the library's defaults (the CLI's): on BGL_2k's
// chronological split the detector is above 0.60 and above every baseline;
// on the healthy samples it raises at most 2 alarms per 1,000 lines.
TEST(Evaluation, TheDetectorBeatsEveryBaselineAndStaysQuietOnHealthyLogs) {
  const std::string dir = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/third_party/loghub";
  auto lines = load_bgl(dir + "/BGL/BGL_2k.log", "");
  ASSERT_TRUE(lines.has_value()) << lines.error().message;
  auto r = evaluate(*lines, EvalOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& split = r->split.methods;
  ASSERT_EQ(split[0].name, "detector");
  EXPECT_GT(split[0].counts.f1(), 0.60);
  for (std::size_t m = 1; m < split.size(); ++m)
    EXPECT_GT(split[0].counts.f1(), split[m].counts.f1()) << split[m].name;
  // Healthy logs: the detector's own false alarms, taken with no budget (the
  // budget caps the rate at its own 2 per 1,000, which a floor of 2 would
  // measure). Floors just above the figures docs/logwatch.md gives: 7.0 for
  // Thunderbird_2k (its healthy half prints `failed` and `error` lines its
  // first half never showed), 0.0 for HDFS_2k.
  for (auto [path, format, floor] :
       {std::tuple{"/Thunderbird/Thunderbird_2k.log", LineFormat::kThunderbird, 8.0},
        std::tuple{"/HDFS/HDFS_2k.log", LineFormat::kHdfs, 1.0}}) {
    auto healthy = load_log(dir + path, format);
    ASSERT_TRUE(healthy.has_value()) << healthy.error().message;
    HealthyResult h = evaluate_healthy(*healthy, EvalOptions{});
    EXPECT_GE(h.test_lines, 999U) << path;
    EXPECT_LE(h.rate_before_budget(), floor) << path;
    EXPECT_EQ(h.false_alarms, h.methods[0].alarms) << path;
    EXPECT_LE(h.false_alarms, h.false_alarms_unbudgeted) << path;
  }
}

TEST(Evaluation, MismatchedStructuredCsvIsAnError) {
  const std::string dir = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/logwatch";
  auto lines = load_bgl(dir + "/bgl_sample.txt", dir + "/bgl_sample_short.csv");
  ASSERT_FALSE(lines.has_value());
  EXPECT_NE(lines.error().message.find("bgl_sample_short.csv"), std::string::npos);
}

}  // namespace
}  // namespace ckpt::logwatch
