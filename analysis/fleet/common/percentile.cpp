#include "analysis/fleet/common/percentile.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ckpt::fleet {
namespace {

// Sorted values, or false where the percentile is NaN (empty, bad p, NaN in).
bool sorted_sample(std::vector<double>& values, double p) {
  if (values.empty() || !(p >= 0 && p <= 1)) return false;
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); }))
    return false;
  std::sort(values.begin(), values.end());
  return true;
}

}  // namespace

double percentile_linear(std::vector<double> values, double p) {
  if (!sorted_sample(values, p)) return std::numeric_limits<double>::quiet_NaN();
  const double position = p * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double weight = position - static_cast<double>(below);
  return values[below] + weight * (values[above] - values[below]);
}

double percentile_nearest_rank(std::vector<double> values, double p) {
  if (!sorted_sample(values, p)) return std::numeric_limits<double>::quiet_NaN();
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

}  // namespace ckpt::fleet
