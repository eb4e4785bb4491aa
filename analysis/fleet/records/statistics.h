// The figures `fleet exclusions` and `fleet retries` report
// (docs/fleet/records.md).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/fleet/records/records.h"

namespace ckpt::fleet::records {

// Gini coefficient of non-negative values: sum_i sum_j |x_i - x_j| / (2 n^2
// mean); 0 = all equal, (n-1)/n = everything on one. nullopt when the sum is 0.
std::optional<double> gini(std::vector<double> values);

// Lorenz curve: (0, 0), then (i/n, share of the total held by the i
// smallest), ascending.
std::vector<std::pair<double, double>> lorenz_curve(std::vector<double> values);

struct NodeExclusions {
  std::string node;
  int exclusions = 0;
  double share = 0;  // of all exclusions
  std::map<std::string, int> reasons;
};

struct ExclusionStats {
  int total = 0;
  std::vector<NodeExclusions> nodes;  // every node of the population, most excluded first
  std::map<int, double> top_k_share;  // k → share held by the k most excluded nodes
  std::optional<double> gini;         // over the population, zeros included
  std::vector<std::pair<double, double>> lorenz;
  std::map<std::string, int> reasons;
  int unattributed_node_failures = 0;
};

// The population is every node the records named plus extra_nodes (--nodes).
ExclusionStats exclusion_stats(const Records& records, const std::set<std::string>& extra_nodes,
                               const std::vector<int>& top_ks);

struct Chain {
  std::string id;
  std::vector<Attempt> attempts;  // in attempt order
  Trigger kind = Trigger::automatic;
  bool succeeded = false;                 // its last attempt succeeded
  std::vector<double> intervals_minutes;  // end of one attempt → start of the next, when known
};

struct KindStats {
  int chains = 0, attempts = 0, succeeded = 0;
  std::optional<double> success_rate;  // succeeded / chains; nullopt without chains
};

struct IntervalStats {
  size_t count = 0;
  std::optional<double> median, p25, p75;
  std::vector<double> sorted_minutes;
};

struct RetryStats {
  int chains = 0, attempts = 0;
  KindStats automatic, manual;
  IntervalStats intervals;  // all chains
  IntervalStats auto_intervals, manual_intervals;
  std::map<int, int> chains_by_attempts;  // attempts per chain → chains
  std::vector<Chain> chain_list;          // by first start
  int lone_runs = 0;                      // attempts in no chain
  int unrecorded_requeues = 0;
};

// A chain is manual when any retry (an attempt numbered above 1, or after the
// first in start order where attempts are not numbered) was started by a
// person, automatic otherwise; a chain without retries takes the kind of its
// first attempt's trigger. Interval quartiles: percentile_linear (numpy's).
RetryStats retry_stats(const Records& records);

}  // namespace ckpt::fleet::records
