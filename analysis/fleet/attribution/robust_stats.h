// The order statistics the robust scorer needs: median, quantiles and the
// interquartile range, as scikit-learn's RobustScaler (BARO's scorer) and
// numpy compute them (linear interpolation between closest ranks).
#pragma once

#include <vector>

namespace ckpt::fleet::attribution {

// Median and quartiles by fleet::percentile_linear (numpy's default,
// analysis/fleet/common/percentile.h). NaN when empty.
double median(std::vector<double> values);
// Third quartile minus first quartile.
double interquartile_range(const std::vector<double>& values);
// Population standard deviation (divides by n); 0 when fewer than two values.
double standard_deviation(const std::vector<double>& values);

// Centre and scale of a robust z-score: median and IQR, with the fall-backs
// for a baseline whose IQR is 0 (a metric that mostly sits on one value):
// the standard deviation, else 1e-3 of |median|, else 1. docs/fleet/attribute.md.
struct RobustScale {
  double centre = 0;
  double scale = 1;
  enum class Source { kIqr, kStd, kMedianFraction, kUnit } source = Source::kIqr;
};
RobustScale robust_scale(const std::vector<double>& values);

}  // namespace ckpt::fleet::attribution
