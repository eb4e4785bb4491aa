#include "analysis/fleet/checkpoints/step_series.h"

#include <algorithm>
#include <cmath>

#include "analysis/fleet/common/counter.h"
#include "analysis/fleet/prometheus/chunk_plan.h"

namespace ckpt::fleet::checkpoints {

long long StepGrid::index_of(double t_s) const { return std::llround((t_s - from_s) / step_s); }

Expected<StepGrid> make_grid(const TimeRange& range, double step_s) {
  auto last = last_evaluation_index(range, step_s);
  if (!last) return last.error();
  StepGrid grid;
  grid.from_s = range.from_s;
  grid.step_s = step_s;
  grid.last = static_cast<size_t>(*last);
  return grid;
}

void CounterIncreases::add(const SeriesChunk& chunk, const Sink& sink) {
  auto [it, inserted] = last_.try_emplace(chunk.labels, -1, 0.0);
  auto& [last_step, last_value] = it->second;
  for (const auto& sample : chunk.samples) {
    const long long k = grid_.index_of(sample.time_s);
    if (k < 0 || k >= static_cast<long long>(grid_.size()) || !std::isfinite(sample.value))
      continue;
    if (last_step >= 0 && k > last_step) {
      const double increase = counter_increase(last_value, sample.value);
      if (increase != 0) sink(chunk.labels, static_cast<size_t>(k), increase);
    }
    last_step = k;
    last_value = sample.value;
  }
}

double span_duration_s(double measured_s) {
  return measured_s > kMinSpanS ? measured_s : kMinSpanS;
}

void spread_bytes(const StepGrid& grid, const ClosedCheckpoint& checkpoint,
                  std::vector<double>& bytes_per_step) {
  const double duration = span_duration_s(checkpoint.duration_s);
  // Times as offsets from the close, exact multiples of the step: against Unix
  // times (~1.7e9 s, whose spacing is 2.4e-7 s) t_close - kMinSpanS is t_close,
  // and the span's bytes would vanish.
  for (size_t k = checkpoint.close_step; k >= 1; --k) {
    const double step_end = -static_cast<double>(checkpoint.close_step - k) * grid.step_s;
    const double step_start = step_end - grid.step_s;
    if (step_end <= -duration) break;
    const double overlap = std::min(step_end, 0.0) - std::max(step_start, -duration);
    if (overlap > 0) bytes_per_step[k] += checkpoint.bytes * (overlap / duration);
  }
}

namespace {

// std::clamp, but NaN gives lo: the result is always safe to cast.
double clamp_to(double value, double lo, double hi) {
  if (!(value >= lo)) return lo;
  return value > hi ? hi : value;
}

}  // namespace

std::pair<size_t, size_t> steps_overlapping(const StepGrid& grid, double start_s, double end_s) {
  // Clamped as doubles before the cast (a span's start may lie far before the
  // grid, or be -inf): an out-of-range double cast to an integer is undefined.
  const double eps = 1e-6;  // in steps: the API's float noise on t_k
  const auto last_step = static_cast<double>(grid.last);
  const double last =
      clamp_to(std::ceil((end_s - grid.from_s) / grid.step_s - eps), 1.0, last_step);
  // floor(...) + 1 is k + 1 for a start at t_k (step k ends there); a span of
  // no length at t_k would get first = k + 1 > last = k: it is step k's.
  const double first =
      clamp_to(std::floor((start_s - grid.from_s) / grid.step_s + eps) + 1, 1.0, last);
  return {static_cast<size_t>(first), static_cast<size_t>(last)};
}

std::vector<std::pair<size_t, size_t>> find_bursts(const std::vector<double>& values,
                                                   double threshold, size_t max_gap_steps) {
  std::vector<std::pair<size_t, size_t>> bursts;
  for (size_t k = 1; k < values.size(); ++k) {
    if (!(values[k] > threshold)) continue;
    if (!bursts.empty() && k - bursts.back().second - 1 <= max_gap_steps) {
      bursts.back().second = k;
    } else {
      bursts.emplace_back(k, k);
    }
  }
  return bursts;
}

}  // namespace ckpt::fleet::checkpoints
