#include "analysis/projection/mva.h"

#include <algorithm>
#include <cmath>

namespace ckpt::projection {

MvaLadder::MvaLadder(double delay_s, double service_s)
    : delay_s_(std::max(0.0, delay_s)), service_s_(std::max(0.0, service_s)) {
  reset();
}

// R(m) = D (1 + Q(m-1)), X(m) = m / (Z + R(m)), Q(m) = X(m) R(m).
MvaLadder::Step MvaLadder::step(size_t m, const Step& previous) const {
  Step s;
  s.residence = service_s_ * (1.0 + previous.queue);
  const double cycle = delay_s_ + s.residence;
  s.throughput = cycle > 0 ? static_cast<double>(m) / cycle : 0.0;
  s.queue = s.throughput * s.residence;
  return s;
}

void MvaLadder::reset() {
  m_ = 0;
  below_ = Step{};
  above_ = step(1, below_);
}

void MvaLadder::climb_to(size_t m) {
  if (m < m_) reset();
  while (m_ < m) {
    below_ = above_;
    ++m_;
    above_ = step(m_ + 1, below_);
  }
}

MvaPoint MvaLadder::at(double population) {
  population = std::max(0.0, population);
  const auto lo = static_cast<size_t>(std::floor(population));
  climb_to(lo);
  const double f = population - static_cast<double>(lo);
  auto mix = [&](double a, double b) { return a * (1 - f) + b * f; };
  MvaPoint p;
  p.throughput = mix(below_.throughput, above_.throughput);
  p.queue_length = mix(below_.queue, above_.queue);
  // Below one customer, the one there is meets no queue.
  p.residence_s = lo == 0 ? service_s_ : mix(below_.residence, above_.residence);
  p.cycle_s = p.throughput > 0 ? population / p.throughput : delay_s_ + service_s_;
  p.utilisation = p.throughput * service_s_;
  return p;
}

Calibration calibrate_delay(double population, double throughput, double service_s) {
  Calibration c;
  if (population <= 0 || throughput <= 0) return c;
  // Throughput falls as the delay grows: X(Z=0) is the most the centre lets
  // through; population / throughput (no queue at all) bounds Z above.
  double lo = 0;
  double hi = population / throughput;
  if (MvaLadder(0, service_s).at(population).throughput < throughput) {
    c.reachable = false;
    return c;
  }
  for (int i = 0; i < 100 && hi - lo > 1e-12 * std::max(1.0, hi); ++i) {
    const double mid = 0.5 * (lo + hi);
    if (MvaLadder(mid, service_s).at(population).throughput > throughput)
      lo = mid;
    else
      hi = mid;
  }
  c.delay_s = 0.5 * (lo + hi);
  return c;
}

}  // namespace ckpt::projection
