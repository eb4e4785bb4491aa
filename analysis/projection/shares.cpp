#include "analysis/projection/shares.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace ckpt::projection {

Shares split_shares(uint32_t nodes, double rpcs, double node_rate, double shared_rate) {
  Shares s;
  if (nodes == 0 || rpcs <= 0 || node_rate <= 0 || shared_rate <= 0) return s;
  const double n = nodes;
  s.even_window_s = rpcs / std::min(node_rate, shared_rate / n);

  // In turn: the first nodes in line at their own rate while the shared rate
  // lasts, the next one with the rest; whoever finishes leaves the line.
  std::deque<double> left;  // work left of the nodes in service, in line order
  uint32_t waiting = nodes;
  double t = 0;
  double sum_end = 0;
  uint64_t steps = 0;
  while (waiting > 0 || !left.empty()) {
    // Fill the service with waiting nodes while rate is left to give.
    while (waiting > 0 && static_cast<double>(left.size()) * node_rate < shared_rate) {
      left.push_back(rpcs);
      --waiting;
    }
    // Rates in line order; the next event is the first node to finish.
    double spare = shared_rate;
    double dt = INFINITY;
    for (double w : left) {
      const double rate = std::min(node_rate, spare);
      spare -= rate;
      if (rate > 0) dt = std::min(dt, w / rate);
    }
    if (!std::isfinite(dt)) return s;
    spare = shared_rate;
    t += dt;
    for (auto& w : left) {
      const double rate = std::min(node_rate, spare);
      spare -= rate;
      w -= rate * dt;
      steps += 1;
    }
    if (steps > kMaxInTurnSteps) return s;
    // Those done (within rounding) leave.
    auto done = [&](double w) { return w <= 1e-9 * rpcs; };
    sum_end += t * static_cast<double>(std::count_if(left.begin(), left.end(), done));
    left.erase(std::remove_if(left.begin(), left.end(), done), left.end());
  }
  s.in_turn_mean_s = sum_end / n;
  s.in_turn_last_s = t;
  return s;
}

}  // namespace ckpt::projection
