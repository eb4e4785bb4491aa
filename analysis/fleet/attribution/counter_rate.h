// Counters are scored through their rate, computed here from the raw values
// a query_range of a plain selector returns, so that one query fetches every
// series of a node (a `rate({__name__=~...})` query drops __name__, and two
// series that differ only by it would collide). Resets are handled as
// Prometheus's rate() does: fleet::counter_increase
// (analysis/fleet/common/counter.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/fleet/prometheus/prometheus_client.h"

namespace ckpt::fleet::attribution {

// Per-second rate at each sample from the first one a full window_s after the
// first sample: (increase over the last window_s) / elapsed, where the
// increase adds up the reset-corrected differences of consecutive samples and
// the earlier end is the first sample at or after t - window_s. Samples must
// be in time order; non-finite values are skipped.
std::vector<Sample> counter_rate(const std::vector<Sample>& samples, double window_s);

// Whether a series named `name` is a counter: by its family's type from
// /api/v1/metadata (families are named without `_total`; a histogram's or
// summary's `_sum` and `_count` count), else, when the metadata does not
// know it (backfilled data has none), by the name's suffix (`_total`,
// `_count`, `_sum`), the OpenMetrics naming rules.
bool is_counter(const std::string& name, const std::map<std::string, std::string>& metric_types);

}  // namespace ckpt::fleet::attribution
