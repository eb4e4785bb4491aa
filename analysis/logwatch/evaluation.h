// `ckptscope eval-anomaly`: the detector and three baselines (baselines.h)
// on a labelled Loghub sample (BGL_2k: first field `-` is a normal line),
// scored per line, and Drain's grouping accuracy against the sample's
// structured CSV; and on healthy samples, its false alarms.
//
// Protocol (docs/logwatch.md), chronological only: train on the normal lines
// of the earlier part (DeepLog's setting: the model learns normal behaviour;
// labelled alerts in the training part are left out, as a deployment trains
// on logs believed normal), then score every line of the rest in order. The
// same forward over k contiguous folds: fold f (f >= 1) is scored by a model
// trained on the normal lines of folds 0..f-1, never on a later one; folds
// are summed (micro average). The detector's lines are what its alarms
// (alarm_grouper.h) cover: a line held back by the alert budget is not
// flagged.
//
// Healthy logs (no labelled anomalies: Thunderbird_2k, HDFS_2k): trained on
// the first half, every flag on the second half is a false alarm.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/logwatch/alarm_grouper.h"
#include "analysis/logwatch/detector.h"
#include "analysis/logwatch/line_format.h"
#include "common/expected.h"

namespace ckpt::logwatch {

struct LabelledLine {
  std::string message;               // the Content field
  bool anomaly = false;              // label other than `-`
  std::string event_id;              // the ground-truth template (structured CSV), may be empty
  std::optional<Severity> severity;  // the Level field (severity.h's bgl_level)
};

// BGL_2k.log and, when `structured_csv` is not empty, its EventId column.
Expected<std::vector<LabelledLine>> load_bgl(const std::string& log_path,
                                             const std::string& structured_csv);
// Any Loghub sample in `format` (a line labelled other than `-` is an anomaly).
Expected<std::vector<LabelledLine>> load_log(const std::string& log_path, LineFormat format);

struct Confusion {
  std::uint64_t tp = 0, fp = 0, fn = 0, tn = 0;
  [[nodiscard]] double precision() const;
  [[nodiscard]] double recall() const;
  [[nodiscard]] double f1() const;
  Confusion& operator+=(const Confusion& o);
};

Confusion confusion(const std::vector<bool>& predicted, const std::vector<bool>& truth);

// Loghub's grouping accuracy (Zhu et al., ICSE-SEIP 2019): the share of
// messages whose predicted group holds exactly the messages of their
// ground-truth group.
double grouping_accuracy(const std::vector<TemplateId>& predicted,
                         const std::vector<std::string>& truth);

struct CountBaselineConfig {
  std::size_t window = 20;  // lines per window
  double z = 3.0;           // a count this many std above the training mean
  double min_std = 0.5;     // std floor (a template constant in training)
};

struct MethodResult {
  std::string name;
  Confusion counts;
  std::uint64_t alarms = 0;  // flags grouped as the detector's are (template, window)
};

struct SplitResult {
  std::size_t train_lines = 0;  // normal lines learned
  std::size_t test_lines = 0;
  std::size_t test_anomalies = 0;
  std::vector<MethodResult> methods;  // detector, new_template, count_outlier, severity
  std::uint64_t held = 0;             // detector lines held back by the budget
  std::uint64_t false_alarms = 0;     // detector alarms raised on a normal line
  // The same with no budget (grouping only): what the detector itself
  // raises, the figure its false-alarm floor is taken on.
  std::uint64_t false_alarms_unbudgeted = 0;
  // Lines the detector found to be known faults (known_faults.h), and of
  // them those it showed (never held back, so all of them).
  std::uint64_t known_fault_lines = 0;
  std::uint64_t known_fault_lines_shown = 0;
};

struct EvalOptions {
  DetectorConfig detector;
  CountBaselineConfig counts;
  Severity severity_at_least = 2;  // the severity baseline flags crit and worse (BGL FATAL)
  bool use_severity = true;        // false: the detector is given no severity (ablation)
  AlarmConfig alarms;
  double train_fraction = 0.5;
  int folds = 5;
};

struct EvalResult {
  std::size_t lines = 0;
  std::size_t anomalies = 0;
  double grouping_accuracy = 0;
  std::size_t templates_mined = 0;
  std::size_t templates_truth = 0;
  SplitResult split;
  std::vector<MethodResult> kfold;  // folds 1..k-1, each after the earlier ones; summed
};

// A healthy log: trained on its first half (every line), scored on the rest.
struct HealthyResult {
  std::size_t train_lines = 0;
  std::size_t test_lines = 0;
  std::vector<MethodResult> methods;  // flags are false alarms: counts.fp, alarms
  std::uint64_t held = 0;
  std::uint64_t false_alarms = 0;
  std::uint64_t false_alarms_unbudgeted = 0;  // the detector with no budget
  // Alarms per 1,000 test lines.
  [[nodiscard]] double rate(const MethodResult& m) const {
    return test_lines == 0 ? 0.0 : 1000.0 * static_cast<double>(m.alarms) / test_lines;
  }
  // The detector's false alarms per 1,000 test lines with no budget: what
  // its false-alarm floor is taken on (the budget caps rate(methods[0])).
  [[nodiscard]] double rate_before_budget() const {
    return test_lines == 0 ? 0.0
                           : 1000.0 * static_cast<double>(false_alarms_unbudgeted) / test_lines;
  }
};
HealthyResult evaluate_healthy(const std::vector<LabelledLine>& lines, const EvalOptions& options);

// Scores the lines [test_begin, test_end) after training on the normal
// lines listed in `train`.
SplitResult evaluate_split(const std::vector<LabelledLine>& lines,
                           const std::vector<std::size_t>& train, std::size_t test_begin,
                           std::size_t test_end, const EvalOptions& options);

Expected<EvalResult> evaluate(const std::vector<LabelledLine>& lines, const EvalOptions& options);

}  // namespace ckpt::logwatch
