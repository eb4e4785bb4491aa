#include "analysis/fleet/attribution/dominance.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

namespace ckpt::fleet::attribution {

std::vector<MetricStanding> metric_standings(const std::vector<EventRanking>& events,
                                             std::size_t k) {
  std::map<std::string, MetricStanding> by_metric;
  std::map<std::string, double> rank_sum;
  for (const auto& e : events) {
    for (std::size_t i = 0; i < e.metrics.size(); ++i) {
      auto& s = by_metric[e.metrics[i]];
      s.metric = e.metrics[i];
      ++s.events_ranked;
      rank_sum[e.metrics[i]] += static_cast<double>(i + 1);
      if (i < k) ++s.top_k_count;
      if (i == 0) ++s.rank1_count;
    }
  }
  std::vector<MetricStanding> out;
  for (auto& [name, s] : by_metric) {
    if (s.top_k_count == 0) continue;
    s.mean_rank = rank_sum[name] / static_cast<double>(s.events_ranked);
    s.top_k_share = static_cast<double>(s.top_k_count) / static_cast<double>(events.size());
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const MetricStanding& a, const MetricStanding& b) {
    if (a.top_k_count != b.top_k_count) return a.top_k_count > b.top_k_count;
    if (a.mean_rank != b.mean_rank) return a.mean_rank < b.mean_rank;
    return a.metric < b.metric;
  });
  return out;
}

std::vector<double> fractional_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] > values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && values[order[j]] == values[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t t = i; t < j; ++t) ranks[order[t]] = mean_rank;
    i = j;
  }
  return ranks;
}

std::optional<double> kendall_w(const std::vector<std::vector<double>>& ranks) {
  const std::size_t m = ranks.size();
  if (m < 2) return std::nullopt;
  const std::size_t n = ranks.front().size();
  if (n < 2) return std::nullopt;
  const double md = static_cast<double>(m);
  const double nd = static_cast<double>(n);
  double ties = 0;  // sum over raters of sum over tie groups of t^3 - t
  std::vector<double> rank_sums(n, 0.0);
  for (const auto& rater : ranks) {
    if (rater.size() != n) return std::nullopt;
    std::map<double, double> group_sizes;
    for (std::size_t i = 0; i < n; ++i) {
      rank_sums[i] += rater[i];
      group_sizes[rater[i]] += 1;
    }
    for (const auto& [rank, t] : group_sizes) ties += t * t * t - t;
  }
  const double mean_sum = md * (nd + 1) / 2;
  double s = 0;
  for (double r : rank_sums) s += (r - mean_sum) * (r - mean_sum);
  const double denominator = md * md * (nd * nd * nd - nd) - md * ties;
  if (denominator <= 0) return std::nullopt;
  return 12 * s / denominator;
}

double jaccard(const std::set<std::string>& a, const std::set<std::string>& b) {
  if (a.empty() && b.empty()) return 1;
  std::size_t common = 0;
  for (const auto& x : a) common += b.count(x);
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

namespace {

std::vector<TypeTop> type_tops(const std::vector<EventRanking>& events, std::size_t k) {
  std::map<std::string, std::vector<const EventRanking*>> by_type;
  for (const auto& e : events) by_type[e.type].push_back(&e);
  std::vector<TypeTop> out;
  for (const auto& [type, members] : by_type) {
    std::map<std::string, std::pair<double, std::size_t>> rank_sum_count;
    for (const auto* e : members)
      for (std::size_t i = 0; i < e->metrics.size(); ++i) {
        auto& [sum, count] = rank_sum_count[e->metrics[i]];
        sum += static_cast<double>(i + 1);
        ++count;
      }
    std::vector<std::pair<double, std::string>> mean_ranks;
    mean_ranks.reserve(rank_sum_count.size());
    for (const auto& [metric, sc] : rank_sum_count)
      mean_ranks.emplace_back(sc.first / static_cast<double>(sc.second), metric);
    std::sort(mean_ranks.begin(), mean_ranks.end());
    TypeTop t{.type = type, .events = members.size(), .top = {}};
    for (std::size_t i = 0; i < mean_ranks.size() && i < k; ++i)
      t.top.push_back(mean_ranks[i].second);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

Dominance dominance(const std::vector<EventRanking>& events, std::size_t k) {
  Dominance d;
  d.events = events.size();
  d.k = k;
  std::map<std::string, std::size_t> rank1;
  for (const auto& e : events)
    if (!e.metrics.empty()) ++rank1[e.metrics.front()];
  for (const auto& [metric, count] : rank1) {
    const double share = static_cast<double>(count) / static_cast<double>(events.size());
    if (share > d.max_rank1_share) {
      d.max_rank1_share = share;
      d.max_rank1_metric = metric;
    }
  }

  d.types = type_tops(events, k);
  if (d.types.size() >= 2) {
    double sum = 0;
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < d.types.size(); ++i)
      for (std::size_t j = i + 1; j < d.types.size(); ++j) {
        sum += jaccard({d.types[i].top.begin(), d.types[i].top.end()},
                       {d.types[j].top.begin(), d.types[j].top.end()});
        ++pairs;
      }
    d.mean_top_k_overlap = sum / static_cast<double>(pairs);
  }

  // Kendall's W over the metrics every event ranked.
  if (events.size() >= 2) {
    std::set<std::string> common(events.front().metrics.begin(), events.front().metrics.end());
    for (const auto& e : events) {
      std::set<std::string> here(e.metrics.begin(), e.metrics.end());
      std::set<std::string> kept;
      std::set_intersection(common.begin(), common.end(), here.begin(), here.end(),
                            std::inserter(kept, kept.begin()));
      common = std::move(kept);
    }
    d.kendall_w_metrics = common.size();
    std::vector<std::vector<double>> ranks;
    for (const auto& e : events) {
      std::vector<double> values;  // in the order of `common`
      values.reserve(common.size());
      std::map<std::string, double> value_of;
      for (std::size_t i = 0; i < e.metrics.size(); ++i) value_of[e.metrics[i]] = e.values[i];
      for (const auto& metric : common) values.push_back(value_of[metric]);
      ranks.push_back(fractional_ranks(values));
    }
    d.kendall_w = kendall_w(ranks);
  }
  return d;
}

}  // namespace ckpt::fleet::attribution
