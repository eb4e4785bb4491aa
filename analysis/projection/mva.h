// The queueing model under the projection (docs/projection.md): a closed
// network of customers (RPCs in flight, all nodes together), each cycling
// through a delay (the time an RPC spends on its own node: client, slots,
// NIC) and one shared FIFO centre (the storage server and its link), solved
// by exact mean-value analysis (Reiser & Lavenberg, "Mean-value analysis of
// closed multichain queuing networks", JACM 27(2), 1980). Identical nodes
// make one class of N*k customers, which MVA solves exactly.
#pragma once

#include <cstddef>

namespace ckpt::projection {

// The network at one population.
struct MvaPoint {
  double throughput = 0;    // customers through the shared centre per second
  double residence_s = 0;   // time at the shared centre per visit (queue + service)
  double queue_length = 0;  // customers at the shared centre, waiting or served
  double cycle_s = 0;       // delay + residence: one RPC's start to done
  double utilisation = 0;   // of the shared centre
};

// MVA's recursion over populations 0, 1, 2, ...: populations asked for in
// ascending order cost one step each, once; a smaller one starts again from
// 0. It keeps two steps, not the whole ladder (a 10,000-node forecast at 64
// RPCs in flight each climbs 640,000 steps). A fractional population (N
// nodes times a measured mean of k in flight) interpolates linearly between
// its two integer neighbours.
class MvaLadder {
 public:
  MvaLadder(double delay_s, double service_s);

  MvaPoint at(double population);

 private:
  struct Step {
    double throughput = 0;  // X(m)
    double residence = 0;   // R(m)
    double queue = 0;       // Q(m)
  };
  void reset();
  void climb_to(size_t m);  // afterwards below_ is step m, above_ step m + 1
  [[nodiscard]] Step step(size_t m, const Step& previous) const;
  double delay_s_;
  double service_s_;
  size_t m_ = 0;
  Step below_;
  Step above_;
};

// The delay that makes the network at `population` move `throughput`
// customers per second through a centre of service `service_s`: what one
// measured checkpoint says of its node's own time per RPC. A delay of 0 and
// `reachable` false when even no delay is slow enough, i.e. the measured
// throughput is above what the centre allows (its maximum was set too low).
struct Calibration {
  double delay_s = 0;
  bool reachable = true;
};
Calibration calibrate_delay(double population, double throughput, double service_s);

}  // namespace ckpt::projection
