#include "analysis/fleet/common/counter.h"

#include <cmath>
#include <limits>

namespace ckpt::fleet {

double counter_increase(double previous, double current) {
  if (std::isnan(previous) || std::isnan(current)) return std::numeric_limits<double>::quiet_NaN();
  return current < previous ? current : current - previous;
}

}  // namespace ckpt::fleet
