// Splitting a range query into chunks the API accepts: Prometheus refuses a
// query_range whose result would exceed 11,000 points per series
// ("exceeded maximum resolution of 11,000 points per timeseries",
// web/api/v1/api.go), and a long range should never sit in memory whole.
#pragma once

#include <vector>

#include "analysis/fleet/prometheus/prometheus_client.h"
#include "common/expected.h"

namespace ckpt::fleet {

// The most evaluation times one range may hold (10 million: 115 days at a 1 s
// step). Past it a query takes hours and the per-step aggregates of `fleet
// checkpoints` reach gigabytes, so a tiny --step is refused up front
// (docs/fleet/prometheus.md) instead of being cast to an integer it overflows.
inline constexpr long long kMaxEvaluationTimes = 10'000'000;

// The index of the last evaluation time from + k*step <= to (so the range holds
// that plus one times). Errors for step <= 0 or not finite, to < from, and,
// naming --step and the range, when the range would hold more than
// kMaxEvaluationTimes times. Every range query and step grid goes through it.
Expected<long long> last_evaluation_index(const TimeRange& range, double step_s);

// Chunks covering the evaluation times from, from+step, ..., (the last one
// <= to) in order: each at most max_points steps (both ends inclusive, as the
// API evaluates them), the next starting one step after the previous end, so
// no time is evaluated twice or skipped. Times are computed as from + k*step
// (no accumulated rounding). Errors: last_evaluation_index's, max_points < 1.
Expected<std::vector<TimeRange>> plan_chunks(const TimeRange& range, double step_s, int max_points);

}  // namespace ckpt::fleet
