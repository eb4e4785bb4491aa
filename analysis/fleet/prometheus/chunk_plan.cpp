#include "analysis/fleet/prometheus/chunk_plan.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ckpt::fleet {

Expected<long long> last_evaluation_index(const TimeRange& range, double step_s) {
  if (!(step_s > 0) || !std::isfinite(step_s))
    return make_error(
        fmt::format("query step must be a positive number of seconds, not {}", step_s));
  if (!std::isfinite(range.from_s) || !std::isfinite(range.to_s))
    return make_error(fmt::format("time range {} .. {} is not finite", range.from_s, range.to_s));
  if (!(range.to_s >= range.from_s))
    return make_error(
        fmt::format("time range ends ({}) before it starts ({})", range.to_s, range.from_s));
  // The API evaluates at from + k*step for k = 0.. while <= to. The bound is
  // checked in floating point, before the cast: a double past long long's range
  // (or infinite) cast to it is undefined behaviour.
  const double last = std::floor((range.to_s - range.from_s) / step_s + 1e-9);
  if (!(last + 1 <= static_cast<double>(kMaxEvaluationTimes)))
    return make_error(fmt::format(
        "--step {} s over the range {} .. {} (Unix s, {} s long) makes {:.3g} evaluation times, "
        "more than the {} allowed: use a larger --step or a shorter range",
        step_s, range.from_s, range.to_s, range.to_s - range.from_s, last + 1,
        kMaxEvaluationTimes));
  return static_cast<long long>(last);
}

Expected<std::vector<TimeRange>> plan_chunks(const TimeRange& range, double step_s,
                                             int max_points) {
  if (max_points < 1)
    return make_error(fmt::format("points per chunk must be at least 1, not {}", max_points));
  auto last_index = last_evaluation_index(range, step_s);
  if (!last_index) return last_index.error();
  std::vector<TimeRange> chunks;
  for (long long first = 0; first <= *last_index; first += max_points) {
    const long long last = std::min(*last_index, first + max_points - 1);
    chunks.push_back({range.from_s + static_cast<double>(first) * step_s,
                      range.from_s + static_cast<double>(last) * step_s});
  }
  return chunks;
}

}  // namespace ckpt::fleet
