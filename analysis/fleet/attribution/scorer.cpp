#include "analysis/fleet/attribution/scorer.h"

#include <cmath>
#include <limits>

namespace ckpt::fleet::attribution {

std::optional<RobustScore> robust_score(const std::vector<Sample>& samples, double anchor_s,
                                        const WindowSpec& windows) {
  const double anomaly_start = anchor_s - windows.before_s;
  const double anomaly_end = anchor_s + windows.after_s;
  const double baseline_end = anomaly_start - windows.gap_s;
  const double baseline_start = baseline_end - windows.baseline_s;
  std::vector<double> baseline;
  for (const auto& s : samples)
    if (s.time_s >= baseline_start && s.time_s < baseline_end && std::isfinite(s.value))
      baseline.push_back(s.value);
  if (baseline.size() < windows.min_baseline_samples || baseline.empty()) return std::nullopt;
  const RobustScale scale = robust_scale(baseline);

  std::optional<RobustScore> best;
  for (const auto& s : samples) {
    if (s.time_s < anomaly_start || s.time_s > anomaly_end || !std::isfinite(s.value)) continue;
    const double deviation = s.value - scale.centre;
    const double score = std::abs(deviation) / scale.scale;
    if (best && score <= best->score) continue;  // the earliest of equal peaks
    best = RobustScore{.score = score,
                       .peak_time_s = s.time_s,
                       .lead_s = anchor_s - s.time_s,
                       .sign = deviation > 0 ? 1 : (deviation < 0 ? -1 : 0),
                       .baseline_median = scale.centre,
                       .baseline_scale = scale.scale,
                       .scale_source = scale.source};
  }
  return best;
}

Calibration calibrate(double score, const std::vector<double>& null_scores) {
  Calibration c;
  c.null_windows = null_scores.size();
  if (null_scores.empty()) {
    c.calibrated = c.p_value = std::numeric_limits<double>::quiet_NaN();
    return c;
  }
  const RobustScale null_scale = robust_scale(null_scores);
  c.calibrated = (score - null_scale.centre) / null_scale.scale;
  std::size_t at_least = 0;
  for (double n : null_scores)
    if (n >= score) ++at_least;
  c.p_value = static_cast<double>(1 + at_least) / static_cast<double>(1 + null_scores.size());
  return c;
}

}  // namespace ckpt::fleet::attribution
