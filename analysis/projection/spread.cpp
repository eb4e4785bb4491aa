#include "analysis/projection/spread.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ckpt::projection {
namespace {

// Student's t, one-sided 0.95 (a two-sided 90% interval), by degrees of freedom.
double t95(size_t df) {
  static constexpr double kTable[] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860,
                                      1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746,
                                      1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711,
                                      1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
  if (df == 0) return 0;
  if (df <= std::size(kTable)) return kTable[df - 1];
  return df <= 60 ? 1.671 : df <= 120 ? 1.658 : 1.645;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Range span_of(std::vector<double> values) {
  Range r;
  if (values.empty()) return r;
  r.value = median(values);
  r.low = *std::min_element(values.begin(), values.end());
  r.high = *std::max_element(values.begin(), values.end());
  return r;
}

Range prediction_range(const std::vector<double>& values, double floor, double ceiling) {
  Range r;
  if (values.empty()) return r;
  const auto n = static_cast<double>(values.size());
  r.value = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double ss = 0;
  for (double v : values) ss += (v - r.value) * (v - r.value);
  const double half = values.size() > 1
                          ? t95(values.size() - 1) * std::sqrt(ss / (n - 1)) * std::sqrt(1 + 1 / n)
                          : 0;
  r.low = std::min(r.value - half, *std::min_element(values.begin(), values.end()));
  r.high = std::max(r.value + half, *std::max_element(values.begin(), values.end()));
  r.low = std::clamp(r.low, floor, ceiling);
  r.high = std::clamp(r.high, floor, ceiling);
  r.value = std::clamp(r.value, r.low, r.high);
  return r;
}

Range widened(Range r, const std::vector<double>& values) {
  for (double v : values) {
    r.low = std::min(r.low, v);
    r.high = std::max(r.high, v);
  }
  return r;
}

}  // namespace ckpt::projection
