// BARO's robust scorer (Pham et al., "BARO: Robust Root Cause Analysis for
// Microservices via Multivariate Bayesian Online Change Point Detection",
// FSE 2024, RobustScaler-based root-cause ranking): a metric's anomaly score
// is the largest |x - median| / IQR in a window around the failure, the
// median and IQR taken from a baseline window before it. Then calibration:
// the same score on random windows of the node without failures gives each
// metric a null distribution, so a metric that always moves that much does
// not rank high. docs/fleet/attribute.md.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "analysis/fleet/attribution/robust_stats.h"
#include "analysis/fleet/prometheus/prometheus_client.h"

namespace ckpt::fleet::attribution {

// The windows around an anchor time t (a failure, or a random time):
//   baseline [t - before - gap - baseline, t - before - gap)
//   anomaly  [t - before, t + after]
struct WindowSpec {
  double baseline_s = 3600;
  double gap_s = 0;
  double before_s = 900;
  double after_s = 300;
  // Fewer baseline samples than this and the series is not scored.
  std::size_t min_baseline_samples = 5;

  [[nodiscard]] double span_before_s() const { return before_s + gap_s + baseline_s; }
};

struct RobustScore {
  double score = 0;        // max |x - median_b| / scale_b over the anomaly window
  double peak_time_s = 0;  // Unix seconds of that sample
  double lead_s = 0;       // anchor - peak time: positive = it moved before the failure
  int sign = 0;            // +1 the peak is above the baseline median, -1 below
  double baseline_median = 0;
  double baseline_scale = 0;
  RobustScale::Source scale_source = RobustScale::Source::kIqr;
};

// nullopt when the baseline holds fewer than min_baseline_samples finite
// samples or the anomaly window none. Samples in time order.
std::optional<RobustScore> robust_score(const std::vector<Sample>& samples, double anchor_s,
                                        const WindowSpec& windows);

struct Calibration {
  // (score - median_null) / scale_null, the robust z-score of the failure's
  // score within the metric's own null distribution (same fall-backs as the
  // baseline's scale). NaN when there are no null scores.
  double calibrated = 0;
  // Empirical exceedance p-value with the +1 correction (Davison & Hinkley):
  // (1 + #{null >= score}) / (1 + R). NaN when there are no null scores.
  double p_value = 0;
  std::size_t null_windows = 0;
};
Calibration calibrate(double score, const std::vector<double>& null_scores);

}  // namespace ckpt::fleet::attribution
