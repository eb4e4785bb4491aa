#include "analysis/fleet/attribution/robust_stats.h"

#include <cmath>
#include <numeric>
#include <utility>

#include "analysis/fleet/common/percentile.h"

namespace ckpt::fleet::attribution {

double median(std::vector<double> values) { return percentile_linear(std::move(values), 0.5); }

double interquartile_range(const std::vector<double>& values) {
  return percentile_linear(values, 0.75) - percentile_linear(values, 0.25);
}

double standard_deviation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double sum_sq = 0;
  for (double v : values) sum_sq += (v - mean) * (v - mean);
  return std::sqrt(sum_sq / static_cast<double>(values.size()));
}

RobustScale robust_scale(const std::vector<double>& values) {
  RobustScale s;
  s.centre = median(values);
  if (const double iqr = interquartile_range(values); iqr > 0) {
    s.scale = iqr;
    s.source = RobustScale::Source::kIqr;
  } else if (const double sd = standard_deviation(values); sd > 0) {
    s.scale = sd;
    s.source = RobustScale::Source::kStd;
  } else if (std::abs(s.centre) > 0) {
    s.scale = 1e-3 * std::abs(s.centre);
    s.source = RobustScale::Source::kMedianFraction;
  } else {
    s.scale = 1;
    s.source = RobustScale::Source::kUnit;
  }
  return s;
}

}  // namespace ckpt::fleet::attribution
