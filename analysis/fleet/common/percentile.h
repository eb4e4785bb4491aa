// Percentiles of a sample, the two definitions the fleet reports use.
#pragma once

#include <vector>

namespace ckpt::fleet {

// Linear interpolation between order statistics: Hyndman & Fan's type 7,
// numpy.percentile's and R quantile()'s default. p in [0, 1]. NaN for an
// empty sample, a p outside [0, 1] or any NaN value (as numpy returns).
double percentile_linear(std::vector<double> values, double p);

// Nearest rank: the smallest value with at least p of the sample at or below
// it (Hyndman & Fan's type 1), always one of the values. p in [0, 1]; p = 0
// gives the minimum. NaN as percentile_linear.
double percentile_nearest_rank(std::vector<double> values, double p);

}  // namespace ckpt::fleet
