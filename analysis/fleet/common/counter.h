// Prometheus counters: how much a counter rose between two samples.
#pragma once

namespace ckpt::fleet {

// Prometheus's rule (promql/functions.go, extrapolatedRate; docs "rate()"):
// a decrease is a reset (the process restarted from 0), so the increase is
// then `current` itself; otherwise `current - previous`. NaN in, NaN out.
double counter_increase(double previous, double current);

}  // namespace ckpt::fleet
