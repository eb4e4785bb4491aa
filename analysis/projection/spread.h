// How a figure's samples spread, and the range it is forecast within.
#pragma once

#include <vector>

#include "analysis/projection/projection.h"

namespace ckpt::projection {

double median(std::vector<double> values);

// The median and the extremes.
Range span_of(std::vector<double> values);

// The mean and a 90% prediction interval for one more sample (Student's t:
// mean +- t(0.95, n-1) * s * sqrt(1 + 1/n)), widened to hold every sample
// and kept within [floor, ceiling]: where the figure of a checkpoint like
// the measured ones is expected to fall, given how far apart they were. With
// two samples t is 6.31, so a range from few checkpoints is wide, as it
// should be; with one, there is no spread and the range is the value.
Range prediction_range(const std::vector<double>& values, double floor = 0, double ceiling = 1e300);

// `r` stretched to hold `values` too (its value unchanged).
Range widened(Range r, const std::vector<double>& values);

}  // namespace ckpt::projection
