#include "analysis/fleet/records/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/fleet/common/percentile.h"

namespace ckpt::fleet::records {

std::optional<double> gini(std::vector<double> values) {
  double sum = std::accumulate(values.begin(), values.end(), 0.0);
  if (values.empty() || sum <= 0) return std::nullopt;
  std::sort(values.begin(), values.end());
  // With x ascending and i from 1: G = 2 sum(i x_i) / (n sum x) - (n + 1) / n,
  // equal to the mean absolute difference over twice the mean.
  double weighted = 0;
  for (size_t i = 0; i < values.size(); ++i) weighted += static_cast<double>(i + 1) * values[i];
  auto n = static_cast<double>(values.size());
  return 2 * weighted / (n * sum) - (n + 1) / n;
}

std::vector<std::pair<double, double>> lorenz_curve(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  double sum = std::accumulate(values.begin(), values.end(), 0.0);
  std::vector<std::pair<double, double>> points{{0.0, 0.0}};
  double running = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    running += values[i];
    points.emplace_back(static_cast<double>(i + 1) / static_cast<double>(values.size()),
                        sum > 0 ? running / sum : 0);
  }
  return points;
}

ExclusionStats exclusion_stats(const Records& records, const std::set<std::string>& extra_nodes,
                               const std::vector<int>& top_ks) {
  ExclusionStats stats;
  std::map<std::string, NodeExclusions> by_node;
  for (const auto& n : records.nodes) by_node[n].node = n;
  for (const auto& n : extra_nodes) by_node[n].node = n;
  for (const auto& e : records.exclusions) {
    auto& node = by_node[e.node];
    node.node = e.node;
    ++node.exclusions;
    ++node.reasons[e.reason];
    ++stats.reasons[e.reason];
    ++stats.total;
  }
  std::vector<double> counts;
  for (auto& [name, node] : by_node) {
    node.share = stats.total > 0 ? static_cast<double>(node.exclusions) / stats.total : 0;
    counts.push_back(node.exclusions);
    stats.nodes.push_back(node);
  }
  // Most excluded first; ties by name so the order is stable.
  std::stable_sort(
      stats.nodes.begin(), stats.nodes.end(),
      [](const NodeExclusions& a, const NodeExclusions& b) { return a.exclusions > b.exclusions; });
  for (int k : top_ks) {
    int held = 0;
    for (size_t i = 0; i < stats.nodes.size() && i < static_cast<size_t>(k); ++i)
      held += stats.nodes[i].exclusions;
    stats.top_k_share[k] = stats.total > 0 ? static_cast<double>(held) / stats.total : 0;
  }
  stats.gini = gini(counts);
  stats.lorenz = lorenz_curve(counts);
  stats.unattributed_node_failures = records.unattributed_node_failures;
  return stats;
}

namespace {

IntervalStats interval_stats(std::vector<double> minutes) {
  IntervalStats s;
  std::sort(minutes.begin(), minutes.end());
  s.count = minutes.size();
  if (!minutes.empty()) {
    s.median = percentile_linear(minutes, 0.5);
    s.p25 = percentile_linear(minutes, 0.25);
    s.p75 = percentile_linear(minutes, 0.75);
  }
  s.sorted_minutes = std::move(minutes);
  return s;
}

double sort_time(const Attempt& a) {
  return a.start_unix_s.value_or(a.submit_unix_s.value_or(a.end_unix_s.value_or(0)));
}

}  // namespace

RetryStats retry_stats(const Records& records) {
  RetryStats stats;
  std::map<std::string, Chain> chains;
  for (const auto& a : records.attempts) {
    if (a.chain_id.empty()) {
      ++stats.lone_runs;
      continue;
    }
    auto& chain = chains[a.chain_id];
    chain.id = a.chain_id;
    chain.attempts.push_back(a);
  }
  std::vector<double> all, automatic, manual;
  for (auto& [id, chain] : chains) {
    std::stable_sort(chain.attempts.begin(), chain.attempts.end(),
                     [](const Attempt& a, const Attempt& b) {
                       if (a.attempt_number != b.attempt_number)
                         return a.attempt_number < b.attempt_number;
                       return sort_time(a) < sort_time(b);
                     });
    const auto& attempts = chain.attempts;
    // A retry is an attempt after the first: numbered above 1 where the
    // records number attempts (a chain whose attempt 1 is missing has retries
    // only), after the first in start order where they do not (number 0).
    bool has_retry = false, manual_retry = false;
    for (size_t i = 0; i < attempts.size(); ++i) {
      const bool retry =
          attempts[i].attempt_number > 1 || (attempts[i].attempt_number == 0 && i > 0);
      has_retry = has_retry || retry;
      manual_retry = manual_retry || (retry && attempts[i].trigger == Trigger::manual);
    }
    if (!has_retry)
      chain.kind = attempts.front().trigger;
    else
      chain.kind = manual_retry ? Trigger::manual : Trigger::automatic;
    chain.succeeded = attempts.back().outcome == Outcome::success;
    for (size_t i = 1; i < attempts.size(); ++i)
      if (attempts[i - 1].end_unix_s && attempts[i].start_unix_s)
        chain.intervals_minutes.push_back(
            (*attempts[i].start_unix_s - *attempts[i - 1].end_unix_s) / 60.0);
    auto& kind = chain.kind == Trigger::automatic ? stats.automatic : stats.manual;
    auto& kind_intervals = chain.kind == Trigger::automatic ? automatic : manual;
    ++kind.chains;
    kind.attempts += static_cast<int>(attempts.size());
    kind.succeeded += chain.succeeded ? 1 : 0;
    ++stats.chains;
    stats.attempts += static_cast<int>(attempts.size());
    ++stats.chains_by_attempts[static_cast<int>(attempts.size())];
    all.insert(all.end(), chain.intervals_minutes.begin(), chain.intervals_minutes.end());
    kind_intervals.insert(kind_intervals.end(), chain.intervals_minutes.begin(),
                          chain.intervals_minutes.end());
    stats.chain_list.push_back(std::move(chain));
  }
  auto set_rate = [](KindStats& kind) {
    if (kind.chains > 0) kind.success_rate = static_cast<double>(kind.succeeded) / kind.chains;
  };
  set_rate(stats.automatic);
  set_rate(stats.manual);
  stats.intervals = interval_stats(std::move(all));
  stats.auto_intervals = interval_stats(std::move(automatic));
  stats.manual_intervals = interval_stats(std::move(manual));
  std::stable_sort(stats.chain_list.begin(), stats.chain_list.end(),
                   [](const Chain& a, const Chain& b) {
                     return sort_time(a.attempts.front()) < sort_time(b.attempts.front());
                   });
  stats.unrecorded_requeues = records.unrecorded_requeues;
  return stats;
}

}  // namespace ckpt::fleet::records
