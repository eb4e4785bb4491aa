// How consistent the attribution is across failures: the numbers that make
// "no single metric is dominant" a measurement (docs/fleet/attribute.md).
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ckpt::fleet::attribution {

// One failure's ranking of its node's metrics, best first.
struct EventRanking {
  std::string type;                  // XID / failure kind: groups events for the overlap
  std::vector<std::string> metrics;  // best first, no repeats
  std::vector<double> values;        // what they were ranked by (higher = more anomalous)
};

struct MetricStanding {
  std::string metric;
  std::size_t top_k_count = 0;    // events where it ranked in the top k
  double top_k_share = 0;         // top_k_count / events
  std::size_t rank1_count = 0;    // events where it ranked first
  double mean_rank = 0;           // over the events whose node had it (1 = first)
  std::size_t events_ranked = 0;  // events whose node had it
};
// Metrics that made some event's top k, by top_k_count (desc), mean rank, name.
std::vector<MetricStanding> metric_standings(const std::vector<EventRanking>& events,
                                             std::size_t k);

// Ranks 1..n of values, largest first, ties sharing their mean rank (the
// "fractional ranking" Kendall's W with the tie correction expects).
std::vector<double> fractional_ranks(const std::vector<double>& values);

// Kendall's coefficient of concordance W of m raters' rankings of the same n
// items (ranks[rater][item], fractional), with the tie correction:
//   W = 12 S / (m^2 (n^3 - n) - m sum_j T_j),  S = sum_i (R_i - m (n + 1) / 2)^2,
//   T_j = sum over tie groups of rater j of (t^3 - t)
// (Kendall & Babington Smith 1939; Siegel & Castellan, "Nonparametric
// Statistics", 2nd ed., 9.4). nullopt for fewer than 2 raters or 2 items, or
// when every rater ties every item.
std::optional<double> kendall_w(const std::vector<std::vector<double>>& ranks);

double jaccard(const std::set<std::string>& a, const std::set<std::string>& b);

struct TypeTop {
  std::string type;
  std::size_t events = 0;
  std::vector<std::string> top;  // the k metrics of smallest mean rank over its events
};

struct Dominance {
  std::size_t events = 0;
  double max_rank1_share = 0;    // the largest share of rank-1 places held by one metric
  std::string max_rank1_metric;  // that metric (the first by name on a tie)
  std::size_t k = 0;
  std::vector<TypeTop> types;
  // Mean Jaccard index |A ∩ B| / |A ∪ B| of the types' top-k sets over all
  // pairs of types; nullopt with fewer than two types.
  std::optional<double> mean_top_k_overlap;
  // Kendall's W across events over the metrics every event's node has.
  std::optional<double> kendall_w;
  std::size_t kendall_w_metrics = 0;
};
Dominance dominance(const std::vector<EventRanking>& events, std::size_t k);

}  // namespace ckpt::fleet::attribution
