#include "analysis/fleet/records/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/fleet/html/fleet_html.h"
#include "analysis/format.h"

namespace ckpt::fleet::records {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string percent(double fraction) { return format_percent(fraction); }
std::string percent(const std::optional<double>& fraction) {
  return fraction ? format_percent(*fraction) : std::string("-");
}
std::string number(const std::optional<double>& value, int digits = 1) {
  return value ? fmt::format("{:.{}f}", *value, digits) : std::string("-");
}

std::string reasons_text(const std::map<std::string, int>& reasons) {
  std::vector<std::pair<std::string, int>> sorted(reasons.begin(), reasons.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [reason, count] : sorted)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", reason, count);
  return text;
}

json interval_json(const IntervalStats& s) {
  return {{"median", optional_number(s.median)},
          {"p25", optional_number(s.p25)},
          {"p75", optional_number(s.p75)},
          {"count", s.count}};
}

json kind_json(const KindStats& k, const IntervalStats& intervals) {
  return {{"chains", k.chains},
          {"attempts", k.attempts},
          {"succeeded", k.succeeded},
          {"success_rate", optional_number(k.success_rate)},
          {"interval_minutes", interval_json(intervals)}};
}

std::string interval_text(const IntervalStats& s) {
  if (!s.median) return "-";
  return fmt::format("{} ({}-{})", number(s.median), number(s.p25), number(s.p75));
}

std::string chain_outcomes(const Chain& chain) {
  std::string text;
  for (const auto& a : chain.attempts)
    text += fmt::format("{}{}", text.empty() ? "" : " ",
                        a.state.empty() ? outcome_name(a.outcome) : a.state);
  return text;
}

std::string intervals_text(const Chain& chain) {
  std::string text;
  for (double m : chain.intervals_minutes)
    text += fmt::format("{}{:.1f}", text.empty() ? "" : " ", m);
  return text.empty() ? "-" : text;
}

}  // namespace

json exclusions_json(const ExclusionStats& stats) {
  json nodes = json::array();
  for (const auto& n : stats.nodes)
    nodes.push_back({{"node", n.node},
                     {"exclusions", n.exclusions},
                     {"share", n.share},
                     {"reasons", n.reasons}});
  json top = json::object();
  for (const auto& [k, share] : stats.top_k_share) top[std::to_string(k)] = share;
  json lorenz = json::array();
  for (const auto& [x, y] : stats.lorenz) lorenz.push_back({x, y});
  return {{"total", stats.total},
          {"nodes", nodes},
          {"top_k_share", top},
          {"gini", optional_number(stats.gini)},
          {"gini_population", stats.nodes.size()},
          {"lorenz", lorenz},
          {"reasons", stats.reasons},
          {"unattributed_node_failures", stats.unattributed_node_failures}};
}

std::string exclusions_table(const ExclusionStats& stats, int top_n) {
  std::string out = fmt::format(
      "Node exclusions: {} over {} nodes; Gini over all {} nodes (zeros included): {}\n",
      stats.total, stats.nodes.size(), stats.nodes.size(), number(stats.gini, 3));
  std::string shares;
  for (const auto& [k, share] : stats.top_k_share)
    shares += fmt::format("{}top-{} {}", shares.empty() ? "" : "   ", k, percent(share));
  out += "Share held by the most excluded nodes: " + shares + "\n";
  if (stats.unattributed_node_failures > 0)
    out +=
        fmt::format("{} NODE_FAIL jobs ran on several nodes without a FailedNode: not attributed\n",
                    stats.unattributed_node_failures);
  out += fmt::format("\n{:<24} {:>10} {:>7}  {}\n", "node", "exclusions", "share", "reasons");
  int shown = 0;
  for (const auto& n : stats.nodes) {
    if (shown == top_n || n.exclusions == 0) break;
    out += fmt::format("{:<24} {:>10} {:>7}  {}\n", n.node, n.exclusions, percent(n.share),
                       reasons_text(n.reasons));
    ++shown;
  }
  auto excluded = std::count_if(stats.nodes.begin(), stats.nodes.end(),
                                [](const NodeExclusions& n) { return n.exclusions > 0; });
  if (excluded > shown)
    out +=
        fmt::format("... {} more excluded nodes (--top N, or --json for all)\n", excluded - shown);
  if (!stats.reasons.empty()) out += "\nReasons: " + reasons_text(stats.reasons) + "\n";
  return out;
}

std::string exclusions_html(const ExclusionStats& stats, const std::string& inputs, int top_n) {
  namespace h = ckpt::fleet::html;
  h::Page page;
  page.title = "Node exclusions";
  page.subtitle = inputs;
  std::vector<std::pair<std::string, std::string>> figures{
      {"exclusions", std::to_string(stats.total)}, {"nodes", std::to_string(stats.nodes.size())}};
  for (const auto& [k, share] : stats.top_k_share)
    figures.emplace_back(fmt::format("top-{} share", k), percent(share));
  figures.emplace_back("Gini", number(stats.gini, 3));
  page.sections.push_back(h::figures(figures));

  h::LineChartOptions lorenz;
  lorenz.title = "Lorenz curve of exclusions over nodes";
  lorenz.x_label = "share of nodes (least excluded first)";
  lorenz.y_label = "share of exclusions";
  lorenz.y_max = 1;
  lorenz.x_min = 0;
  lorenz.x_max = 1;
  lorenz.diagonal = true;
  page.sections.push_back(
      h::section("How concentrated",
                 fmt::format("The further the curve sags below the diagonal, the more "
                             "exclusions fall on few nodes. Gini over all {} nodes, "
                             "those never excluded included.",
                             stats.nodes.size()),
                 h::line_chart({{"exclusions", stats.lorenz}}, lorenz)));

  std::vector<std::pair<std::string, double>> bars;
  for (const auto& n : stats.nodes) {
    if (static_cast<int>(bars.size()) == top_n || n.exclusions == 0) break;
    bars.emplace_back(n.node, n.exclusions);
  }
  h::BarChartOptions bar;
  bar.title = "Most excluded nodes";
  bar.value_label = "exclusions";
  page.sections.push_back(h::section("Most excluded nodes", "", h::bar_chart(bars, bar)));

  std::vector<std::vector<std::string>> rows;
  for (const auto& n : stats.nodes)
    rows.push_back(
        {n.node, std::to_string(n.exclusions), percent(n.share), reasons_text(n.reasons)});
  page.sections.push_back(
      h::section("Every node", "", h::table({"node", "exclusions", "share", "reasons"}, rows)));
  return h::render_page(page);
}

json retries_json(const RetryStats& stats) {
  json per_chain = json::object();
  for (const auto& [attempts, chains] : stats.chains_by_attempts)
    per_chain[std::to_string(attempts)] = chains;
  json chains = json::array();
  for (const auto& c : stats.chain_list) {
    json attempts = json::array();
    for (const auto& a : c.attempts)
      attempts.push_back({{"attempt", a.attempt_number},
                          {"trigger", trigger_name(a.trigger)},
                          {"outcome", outcome_name(a.outcome)},
                          {"state", a.state},
                          {"job_id", a.job_id},
                          {"start_unix_s", optional_number(a.start_unix_s)},
                          {"end_unix_s", optional_number(a.end_unix_s)},
                          {"source", a.source}});
    chains.push_back({{"chain", c.id},
                      {"kind", trigger_name(c.kind)},
                      {"succeeded", c.succeeded},
                      {"intervals_minutes", c.intervals_minutes},
                      {"attempts", attempts}});
  }
  return {{"chains", stats.chains},
          {"attempts", stats.attempts},
          {"auto", kind_json(stats.automatic, stats.auto_intervals)},
          {"manual", kind_json(stats.manual, stats.manual_intervals)},
          {"interval_minutes", interval_json(stats.intervals)},
          {"attempts_per_chain", per_chain},
          {"runs_outside_chains", stats.lone_runs},
          {"unrecorded_requeues", stats.unrecorded_requeues},
          {"chain_list", chains}};
}

std::string retries_table(const RetryStats& stats, int chains_shown) {
  std::string out = fmt::format("Retry chains: {} ({} attempts); {} runs in no chain\n",
                                stats.chains, stats.attempts, stats.lone_runs);
  if (stats.unrecorded_requeues > 0)
    out += fmt::format("{} requeues known only from restart_cnt (sacct without -D): no times\n",
                       stats.unrecorded_requeues);
  out += fmt::format("\n{:<7} {:>6} {:>8} {:>9} {:>12}  {}\n", "kind", "chains", "attempts",
                     "succeeded", "success rate", "retry interval, min: median (p25-p75)");
  auto row = [&](const char* kind, const KindStats& k, const IntervalStats& i) {
    out += fmt::format("{:<7} {:>6} {:>8} {:>9} {:>12}  {}\n", kind, k.chains, k.attempts,
                       k.succeeded, percent(k.success_rate), interval_text(i));
  };
  row("auto", stats.automatic, stats.auto_intervals);
  row("manual", stats.manual, stats.manual_intervals);
  KindStats all{stats.chains, stats.attempts, stats.automatic.succeeded + stats.manual.succeeded,
                std::nullopt};
  if (all.chains > 0) all.success_rate = static_cast<double>(all.succeeded) / all.chains;
  row("all", all, stats.intervals);
  if (stats.automatic.success_rate && stats.manual.success_rate && *stats.manual.success_rate > 0)
    out += fmt::format("auto chains succeed {:.1f}x as often as manual ones\n",
                       *stats.automatic.success_rate / *stats.manual.success_rate);
  std::string per_chain;
  for (const auto& [attempts, chains] : stats.chains_by_attempts)
    per_chain += fmt::format("{}{} attempts: {}", per_chain.empty() ? "" : ", ", attempts, chains);
  if (!per_chain.empty()) out += "Chains by attempts: " + per_chain + "\n";
  if (stats.chain_list.empty()) return out;
  size_t width = 5;
  for (size_t i = 0; i < stats.chain_list.size() && static_cast<int>(i) < chains_shown; ++i)
    width = std::max(width, stats.chain_list[i].id.size());
  out += fmt::format("\n{:<{}} {:<6} {:>8} {:<10}  {}\n", "chain", width, "kind", "attempts",
                     "outcome", "intervals (min)");
  int shown = 0;
  for (const auto& c : stats.chain_list) {
    if (shown++ == chains_shown) {
      out += fmt::format("... {} more chains (--json lists them all)\n",
                         stats.chain_list.size() - chains_shown);
      break;
    }
    out += fmt::format(
        "{:<{}} {:<6} {:>8} {:<10}  {}\n", c.id, width, trigger_name(c.kind), c.attempts.size(),
        c.succeeded ? "success" : outcome_name(c.attempts.back().outcome), intervals_text(c));
  }
  return out;
}

std::string retries_html(const RetryStats& stats, const std::string& inputs) {
  namespace h = ckpt::fleet::html;
  h::Page page;
  page.title = "Retry chains";
  page.subtitle = inputs;
  page.sections.push_back(
      h::figures({{"chains", std::to_string(stats.chains)},
                  {"attempts", std::to_string(stats.attempts)},
                  {"auto success", percent(stats.automatic.success_rate)},
                  {"manual success", percent(stats.manual.success_rate)},
                  {"median retry interval, min", number(stats.intervals.median)},
                  {"IQR, min", fmt::format("{}-{}", number(stats.intervals.p25),
                                           number(stats.intervals.p75))}}));
  h::BarChartOptions rate;
  rate.title = "Chains whose last attempt succeeded";
  rate.value_label = "success rate";
  rate.values_are_fractions = true;
  page.sections.push_back(h::section(
      "Automatic versus manual retries",
      "A chain is automatic when the scheduler or launcher started its retries, manual when a "
      "person did; it succeeds when its last attempt does.",
      h::bar_chart({{fmt::format("auto ({} chains)", stats.automatic.chains),
                     stats.automatic.success_rate.value_or(0)},
                    {fmt::format("manual ({} chains)", stats.manual.chains),
                     stats.manual.success_rate.value_or(0)}},
                   rate)));
  std::vector<std::pair<std::string, double>> per_chain;
  for (const auto& [attempts, chains] : stats.chains_by_attempts)
    per_chain.emplace_back(fmt::format("{} attempts", attempts), chains);
  h::BarChartOptions attempts_bar;
  attempts_bar.title = "Attempts per chain";
  attempts_bar.value_label = "chains";
  page.sections.push_back(
      h::section("Attempts per chain", "", h::bar_chart(per_chain, attempts_bar)));
  // Interval distribution: chains' retry intervals by whole minute.
  std::map<long, int> by_minute;
  for (double m : stats.intervals.sorted_minutes) ++by_minute[std::lround(std::floor(m))];
  std::vector<std::pair<std::string, double>> interval_bars;
  interval_bars.reserve(by_minute.size());
  for (const auto& [minute, count] : by_minute)
    interval_bars.emplace_back(fmt::format("{}-{} min", minute, minute + 1), count);
  h::BarChartOptions interval_bar;
  interval_bar.title = "Retry intervals";
  interval_bar.value_label = "retries";
  page.sections.push_back(h::section(
      "Retry intervals",
      fmt::format("From one attempt's end to the next one's start; median {} min, IQR {}-{} min "
                  "(linear interpolation, numpy's default).",
                  number(stats.intervals.median), number(stats.intervals.p25),
                  number(stats.intervals.p75)),
      h::bar_chart(interval_bars, interval_bar)));
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : stats.chain_list)
    rows.push_back({c.id, trigger_name(c.kind), std::to_string(c.attempts.size()),
                    c.succeeded ? "success" : outcome_name(c.attempts.back().outcome),
                    chain_outcomes(c), intervals_text(c)});
  page.sections.push_back(h::section(
      "Chains", "",
      h::table({"chain", "kind", "attempts", "outcome", "states", "intervals (min)"}, rows)));
  return h::render_page(page);
}

}  // namespace ckpt::fleet::records
