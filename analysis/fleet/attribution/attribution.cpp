#include "analysis/fleet/attribution/attribution.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include <fmt/format.h>
#include <re2/re2.h>

#include "analysis/fleet/attribution/counter_rate.h"
#include "common/fnv1a.h"

namespace ckpt::fleet::attribution {

MetricSource prometheus_source(const PrometheusClient& client) {
  MetricSource source;
  source.query_range = [&client](const std::string& promql, const TimeRange& range, double step_s,
                                 const ChunkCallback& on_chunk) {
    return client.query_range(promql, range, step_s, on_chunk);
  };
  source.metric_types = [&client]() { return client.metric_types(); };
  return source;
}

namespace {

// A uniform double in [0, 1) from the generator's top 53 bits: unlike
// std::uniform_real_distribution, the same sequence on every standard library.
double unit_uniform(std::mt19937_64& generator) {
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

std::string promql_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string name_of(const Labels& labels) {
  auto it = labels.find("__name__");
  return it == labels.end() ? std::string() : it->second;
}

}  // namespace

std::vector<double> calibration_anchors(const std::string& node,
                                        const std::vector<double>& node_failures_s,
                                        const TimeRange& range, const WindowSpec& windows,
                                        double rate_window_s, std::size_t count,
                                        std::uint64_t seed) {
  std::vector<double> anchors;
  const double low = range.from_s + windows.span_before_s() + rate_window_s;
  const double high = range.to_s - windows.after_s;
  if (high <= low || count == 0) return anchors;
  const double margin = windows.before_s + windows.after_s;
  std::mt19937_64 generator(seed ^ fnv1a64(node));
  for (std::size_t draw = 0; draw < count * 100 && anchors.size() < count; ++draw) {
    const double anchor = low + (high - low) * unit_uniform(generator);
    const double start = anchor - windows.span_before_s() - margin;
    const double end = anchor + windows.after_s + margin;
    const bool near_failure = std::any_of(node_failures_s.begin(), node_failures_s.end(),
                                          [&](double f) { return f >= start && f <= end; });
    if (!near_failure) anchors.push_back(anchor);
  }
  std::sort(anchors.begin(), anchors.end());
  return anchors;
}

void collect(NodeWindow& window, const SeriesChunk& chunk, const std::string& node_label) {
  Labels labels = chunk.labels;
  labels.erase(node_label);
  auto& series = window[format_labels(labels)];
  if (series.labels.empty()) series.labels = std::move(labels);
  series.samples.insert(series.samples.end(), chunk.samples.begin(), chunk.samples.end());
}

std::map<std::string, RobustScore> score_window(
    const NodeWindow& window, double anchor_s, const WindowSpec& windows, double rate_window_s,
    const std::map<std::string, std::string>& metric_types) {
  std::map<std::string, RobustScore> scores;
  for (const auto& [key, series] : window) {
    std::optional<RobustScore> score;
    if (is_counter(name_of(series.labels), metric_types))
      score = robust_score(counter_rate(series.samples, rate_window_s), anchor_s, windows);
    else
      score = robust_score(series.samples, anchor_s, windows);
    if (score) scores.emplace(key, *score);
  }
  return scores;
}

namespace {

// Better first: calibrated before uncalibrated, then calibrated score, raw
// score, name.
bool ranks_before(const MetricScore& a, const MetricScore& b) {
  if (a.calibrated() != b.calibrated()) return a.calibrated();
  if (a.calibrated() && a.calibration.calibrated != b.calibration.calibrated)
    return a.calibration.calibrated > b.calibration.calibrated;
  if (a.raw.score != b.raw.score) return a.raw.score > b.raw.score;
  if (a.metric != b.metric) return a.metric < b.metric;
  return format_labels(a.labels) < format_labels(b.labels);
}

}  // namespace

std::vector<MetricScore> rank_metrics(const NodeWindow& window,
                                      const std::map<std::string, RobustScore>& scores,
                                      const std::map<std::string, std::vector<double>>& null_scores,
                                      const std::map<std::string, std::string>& metric_types) {
  static const std::vector<double> kNoNulls;
  std::map<std::string, MetricScore> best;  // by metric name
  for (const auto& [key, raw] : scores) {
    const auto& series = window.at(key);
    MetricScore m;
    m.metric = name_of(series.labels);
    m.labels = series.labels;
    m.labels.erase("__name__");
    m.through_rate = is_counter(m.metric, metric_types);
    m.raw = raw;
    auto nulls = null_scores.find(key);
    m.calibration = calibrate(raw.score, nulls == null_scores.end() ? kNoNulls : nulls->second);
    auto it = best.find(m.metric);
    if (it == best.end())
      best.emplace(m.metric, std::move(m));
    else if (ranks_before(m, it->second))
      it->second = std::move(m);
  }
  std::vector<MetricScore> ranked;
  ranked.reserve(best.size());
  for (auto& [name, m] : best) ranked.push_back(std::move(m));
  std::sort(ranked.begin(), ranked.end(), ranks_before);
  return ranked;
}

std::string node_selector(const std::string& node, const std::string& node_label) {
  return fmt::format(
      "{{{}=~{},__name__!~{}}}", node_label, promql_string(RE2::QuoteMeta(node) + "(:[0-9]+)?"),
      promql_string(fmt::format(".+_bucket|{}|{}", kXidMetric, kCkptscopeFailureMetric)));
}

namespace {

Expected<NodeWindow> fetch_window(const MetricSource& source, const std::string& selector,
                                  double anchor_s, const AttributionOptions& o) {
  NodeWindow window;
  const TimeRange range{.from_s = anchor_s - o.windows.span_before_s() - o.rate_window_s - o.step_s,
                        .to_s = anchor_s + o.windows.after_s};
  auto done = source.query_range(selector, range, o.step_s, [&](const SeriesChunk& chunk) {
    collect(window, chunk, o.node_label);
    return Expected<void>();
  });
  if (!done) return done.error();
  return window;
}

Expected<std::vector<FailureEvent>> query_events(const MetricSource& source,
                                                 const AttributionOptions& o,
                                                 EventDetector::Kind kind) {
  // The change window covers scrape intervals up to Prometheus's 5-minute
  // lookback; a run of samples longer than it is one change.
  const double change_window_s = o.event_step_s + 300;
  EventDetector detector(kind, o.node_label, change_window_s + o.event_step_s);
  const std::string promql = kind == EventDetector::Kind::kXidChange
                                 ? xid_change_query(change_window_s)
                                 : ckptscope_failure_query(change_window_s);
  auto done = source.query_range(promql, o.range, o.event_step_s, [&](const SeriesChunk& chunk) {
    detector.add(chunk);
    return Expected<void>();
  });
  if (!done) return done.error();
  return detector.events();
}

struct FoundEvents {
  std::string source;
  std::vector<FailureEvent> events;
  std::string searched;  // for the warning when there are none
};

Expected<FoundEvents> find_events(const MetricSource& source, const AttributionOptions& o,
                                  const std::vector<FailureEvent>* file_events) {
  FoundEvents found;
  const std::string how =
      o.event_source == "auto" && file_events != nullptr ? "file" : o.event_source;
  if (how == "file") {
    if (file_events == nullptr) return make_error("--event-source file needs --events FILE");
    found = {"file", *file_events, "the events of --events " + o.events_file};
    return found;
  }
  if (how == "xid" || how == "auto") {
    auto events = query_events(source, o, EventDetector::Kind::kXidChange);
    if (!events) return events.error();
    found = {"xid", std::move(*events),
             fmt::format("changes of {} to a non-zero value", kXidMetric)};
    if (how == "xid" || !found.events.empty()) return found;
  }
  auto events = query_events(source, o, EventDetector::Kind::kCounterIncrease);
  if (!events) return events.error();
  const std::string searched = fmt::format("increases of {}", kCkptscopeFailureMetric);
  found = {"ckptscope", std::move(*events),
           how == "auto" ? found.searched + " or " + searched : searched};
  return found;
}

}  // namespace

Expected<Attribution> attribute(const MetricSource& source, const AttributionOptions& options,
                                const std::vector<FailureEvent>* file_events) {
  auto found = find_events(source, options, file_events);
  if (!found) return found.error();
  std::vector<FailureEvent> events;
  std::vector<std::string> warnings;
  for (auto& e : found->events) {
    if (!options.event_types.empty() &&
        std::find(options.event_types.begin(), options.event_types.end(), e.type) ==
            options.event_types.end())
      continue;
    if (e.node.empty()) {
      warnings.push_back(
          fmt::format("{}: no {} or Hostname label, skipped", e.where, options.node_label));
      continue;
    }
    events.push_back(std::move(e));
  }
  // Several GPUs of a node failing together, or one XID repeating, are one
  // failure: merge within the anomaly window.
  events =
      merge_close_events(std::move(events), options.windows.before_s + options.windows.after_s);
  auto result = attribute_events(source, options, std::move(events));
  if (!result) return result.error();
  result->event_source = found->source;
  result->warnings.insert(result->warnings.begin(), warnings.begin(), warnings.end());
  if (result->events.empty())
    result->warnings.push_back(
        fmt::format("no failures between {:.0f} and {:.0f} (Unix s): looked for {}{}",
                    options.range.from_s, options.range.to_s, found->searched,
                    options.event_types.empty()
                        ? ""
                        : fmt::format(" of type {}", fmt::join(options.event_types, ", "))));
  return result;
}

Expected<Attribution> attribute_events(const MetricSource& source,
                                       const AttributionOptions& options,
                                       std::vector<FailureEvent> events) {
  Attribution result;
  result.event_source = events.empty() ? "" : events.front().source;
  if (events.empty()) return result;
  auto metric_types = source.metric_types();
  if (!metric_types) return metric_types.error();

  std::vector<std::string> nodes;  // in order of their first failure
  std::map<std::string, std::vector<double>> failures_of;
  for (const auto& e : events) {
    if (failures_of.find(e.node) == failures_of.end()) nodes.push_back(e.node);
    failures_of[e.node].push_back(e.time_unix_s);
  }
  for (const auto& node : nodes) {
    const std::string selector = node_selector(node, options.node_label);
    const auto anchors =
        calibration_anchors(node, failures_of[node], options.range, options.windows,
                            options.rate_window_s, options.calibration_windows, options.seed);
    if (anchors.size() < options.calibration_windows)
      result.warnings.push_back(
          fmt::format("node {}: {} of {} calibration windows fit between failures in the range",
                      node, anchors.size(), options.calibration_windows));
    std::map<std::string, std::vector<double>> null_scores;
    for (double anchor : anchors) {
      auto window = fetch_window(source, selector, anchor, options);
      if (!window) return window.error();
      for (const auto& [key, score] :
           score_window(*window, anchor, options.windows, options.rate_window_s, *metric_types))
        null_scores[key].push_back(score.score);
    }
    for (const auto& e : events) {
      if (e.node != node) continue;
      auto window = fetch_window(source, selector, e.time_unix_s, options);
      if (!window) return window.error();
      const auto scores = score_window(*window, e.time_unix_s, options.windows,
                                       options.rate_window_s, *metric_types);
      EventAttribution a;
      a.event = e;
      a.series_seen = window->size();
      a.series_scored = scores.size();
      a.calibration_windows = anchors.size();
      a.ranked = rank_metrics(*window, scores, null_scores, *metric_types);
      if (a.ranked.empty())
        result.warnings.push_back(fmt::format(
            "failure on {} at {:.0f}: no series of {} had {} baseline samples and one in the "
            "window",
            node, e.time_unix_s, selector, options.windows.min_baseline_samples));
      result.events.push_back(std::move(a));
    }
  }
  std::stable_sort(result.events.begin(), result.events.end(),
                   [](const EventAttribution& a, const EventAttribution& b) {
                     return a.event.time_unix_s < b.event.time_unix_s;
                   });

  std::vector<EventRanking> rankings;
  for (const auto& a : result.events) {
    if (a.ranked.empty()) continue;
    EventRanking r{.type = a.event.type, .metrics = {}, .values = {}};
    for (const auto& m : a.ranked) {
      r.metrics.push_back(m.metric);
      r.values.push_back(m.calibrated() ? m.calibration.calibrated
                                        : std::numeric_limits<double>::lowest());
    }
    rankings.push_back(std::move(r));
  }
  result.standings = metric_standings(rankings, options.top_k);
  result.dominance = dominance(rankings, options.top_k);
  return result;
}

std::optional<std::string> nothing_scored(const Attribution& result,
                                          const std::string& node_label) {
  if (result.events.empty()) return std::nullopt;
  std::set<std::string> nodes;
  for (const auto& e : result.events) {
    if (!e.ranked.empty()) return std::nullopt;
    nodes.insert(e.event.node);
  }
  constexpr size_t kNodesNamed = 10;
  std::vector<std::string> named(nodes.begin(), nodes.end());
  const size_t more = named.size() > kNodesNamed ? named.size() - kNodesNamed : 0;
  named.resize(std::min(named.size(), kNodesNamed));
  return fmt::format(
      "none of the {} failures could be scored: no series with {}=\"<node>\" had enough samples "
      "around them (nodes {}{}); check --node-label (the label your node series carry) and that "
      "Prometheus scrapes those nodes",
      result.events.size(), node_label, fmt::join(named, ", "),
      more > 0 ? fmt::format(" and {} more", more) : "");
}

}  // namespace ckpt::fleet::attribution
