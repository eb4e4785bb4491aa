// The baselines `eval-anomaly` compares the detector with. Two over the same
// Drain templates (ids as a learning miner assigns them, so a test message
// unlike any training one gets an id of its own), neither using severity:
//   new_template   a line is anomalous when its template did not exist when
//                  training ended;
//   count_outlier  per window of `window` consecutive lines, each
//                  template's count against its mean and standard deviation
//                  over the training windows (a count z-score; Xu et al.'s
//                  event-count vectors without the PCA); a line is anomalous
//                  when its template's count in its window is more than `z`
//                  standard deviations (floored at `min_std`) above the mean.
// A third uses the severity alone (evaluation.cpp, `severity`): a line is
// anomalous when its level is `severity_at_least` or worse (BGL: FATAL), so
// readers see what the severity the detector weighs by gives on its own.
#pragma once

#include <unordered_map>
#include <vector>

#include "analysis/logwatch/drain.h"
#include "analysis/logwatch/evaluation.h"

namespace ckpt::logwatch {

std::vector<bool> new_template_baseline(const std::vector<TemplateId>& test_ids,
                                        TemplateId first_new_id);

class CountOutlierBaseline {
 public:
  explicit CountOutlierBaseline(CountBaselineConfig config) : config_(config) {}
  void fit(const std::vector<TemplateId>& train_ids);
  [[nodiscard]] std::vector<bool> flag(const std::vector<TemplateId>& test_ids) const;

 private:
  struct Stats {
    double mean = 0;
    double std = 0;
  };
  CountBaselineConfig config_;
  std::unordered_map<TemplateId, Stats> stats_;
};

}  // namespace ckpt::logwatch
