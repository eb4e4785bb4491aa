// Per-step fleet aggregates on a fixed time grid, and the pieces that build
// them from Prometheus samples without keeping raw series: counters become
// per-step increases, checkpoints' bytes are spread over their spans, bursts
// are found in a bandwidth series. Pure functions: unit-tested on inputs whose
// answers are known.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/fleet/prometheus/prometheus_client.h"
#include "common/expected.h"

namespace ckpt::fleet::checkpoints {

// Evaluation times t_k = from + k*step, k = 0..last. Step k (k >= 1) is the
// interval (t_{k-1}, t_k]: what a counter gained between two evaluations is
// booked to the later one. Index 0 only sets counters' starting values.
struct StepGrid {
  double from_s = 0;
  double step_s = 60;
  size_t last = 0;  // index of the last evaluation time

  [[nodiscard]] size_t size() const { return last + 1; }
  [[nodiscard]] double time_at(size_t k) const { return from_s + static_cast<double>(k) * step_s; }
  // The index of an evaluation time the API returned (rounded: the API sends
  // from + k*step with float noise).
  [[nodiscard]] long long index_of(double t_s) const;
};
// The grid of range at step_s; the errors of last_evaluation_index
// (chunk_plan.h): a bad step, or more evaluation times than the cap.
Expected<StepGrid> make_grid(const TimeRange& range, double step_s);

// Turns each counter series' samples into increases per step, keeping only
// the last value of each series (a series is identified by its labels). A
// value below the previous one is a counter reset: the increase is the new
// value (Prometheus's own rule, counter_increase in analysis/fleet/common). The first sample of a
// series gives no increase; a gap (steps without a sample) books the whole
// increase to the step after it.
class CounterIncreases {
 public:
  using Sink = std::function<void(const Labels& labels, size_t step, double increase)>;
  explicit CounterIncreases(StepGrid grid) : grid_(grid) {}
  void add(const SeriesChunk& chunk, const Sink& sink);

 private:
  StepGrid grid_;
  std::map<Labels, std::pair<long long, double>> last_;  // labels -> (step, value)
};

// A node's checkpoint as its exporter reports it: bytes counted when it
// closed (in step close_step) and its duration.
struct ClosedCheckpoint {
  size_t close_step = 0;
  double bytes = 0;
  double duration_s = 0;
};
// The duration a checkpoint's span is given: its measured duration, but never
// less than kMinSpanS (also for NaN), so a close whose _count rose while its
// _sum did not still covers its close step, in spread_bytes and in
// steps_overlapping alike.
inline constexpr double kMinSpanS = 1e-9;
double span_duration_s(double measured_s);

// Adds the checkpoint's bytes, spread evenly over
// [t_close - span_duration_s(duration), t_close], to bytes_per_step (bytes
// booked to each step by overlap): the bandwidth series the counter's burst at
// close time stands for. Parts before the grid are dropped.
void spread_bytes(const StepGrid& grid, const ClosedCheckpoint& checkpoint,
                  std::vector<double>& bytes_per_step);

// The steps k (1 <= first <= last <= grid.last) whose interval (t_{k-1}, t_k]
// overlaps [start_s, end_s]: the steps a checkpoint's figures are taken over.
// A span of no length at t_k is step k's, where spread_bytes books its bytes;
// a span reaching past either end of the grid is clamped to it. Requires
// grid.last >= 1.
std::pair<size_t, size_t> steps_overlapping(const StepGrid& grid, double start_s, double end_s);

// Runs of steps whose value exceeds threshold (strictly), runs separated by at
// most max_gap_steps steps at or below it merged: {first, last} step indices,
// inclusive, in order. Index 0 is never part of a run.
std::vector<std::pair<size_t, size_t>> find_bursts(const std::vector<double>& values,
                                                   double threshold, size_t max_gap_steps);

}  // namespace ckpt::fleet::checkpoints
