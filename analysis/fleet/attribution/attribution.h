// `ckptscope fleet attribute`: for each GPU failure, which of its node's
// metrics moved most, and how consistent that is across failures
// (docs/fleet/attribute.md). Prometheus stays the store and the query engine:
// the node's series are streamed one window at a time (the failure's, and the
// calibration windows') and only what scoring needs is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/fleet/attribution/dominance.h"
#include "analysis/fleet/attribution/events.h"
#include "analysis/fleet/attribution/scorer.h"
#include "analysis/fleet/prometheus/prometheus_client.h"
#include "common/expected.h"

namespace ckpt::fleet::attribution {

struct AttributionOptions {
  TimeRange range;                       // where failures are looked for
  std::string event_source = "auto";     // auto | xid | ckptscope | file
  std::string events_file;               // --events (loaded by the caller)
  std::vector<std::string> event_types;  // keep only these types (empty = all)
  std::string node_label = "instance";
  std::size_t top_k = 10;
  WindowSpec windows;
  double step_s = 15;          // resolution of the windows' query_range
  double event_step_s = 60;    // resolution of the failure search over the whole range
  double rate_window_s = 120;  // counters' rate window
  std::size_t calibration_windows = 20;
  std::uint64_t seed = 1;
};

// What the attribution needs from Prometheus; PrometheusClient provides it
// (prometheus_source), tests give series from memory.
using ChunkCallback = std::function<Expected<void>(const SeriesChunk&)>;
struct MetricSource {
  std::function<Expected<void>(const std::string& promql, const TimeRange& range, double step_s,
                               const ChunkCallback& on_chunk)>
      query_range;
  std::function<Expected<std::map<std::string, std::string>>()> metric_types;
};
MetricSource prometheus_source(const PrometheusClient& client);

struct MetricScore {
  std::string metric;  // __name__
  Labels labels;       // the series that scored best, without __name__ and the node label
  bool through_rate = false;
  RobustScore raw;
  Calibration calibration;
  [[nodiscard]] bool calibrated() const { return calibration.null_windows > 0; }
};

struct EventAttribution {
  FailureEvent event;
  std::vector<MetricScore> ranked;      // one per metric, best first
  std::size_t series_seen = 0;          // the node's series in the window
  std::size_t series_scored = 0;        // of them, with enough baseline and window samples
  std::size_t calibration_windows = 0;  // random windows used for this node
};

struct Attribution {
  std::string event_source;  // the source the events came from
  std::vector<EventAttribution> events;
  std::vector<MetricStanding> standings;
  Dominance dominance;
  std::vector<std::string> warnings;  // printed on stderr, kept in --json
};

// When failures were found but none could be scored (every failure's node
// had no series with enough samples: a --node-label that the node's series
// lack, or nodes Prometheus does not scrape), the error for it, naming how
// many failures, their nodes and the label; nullopt when one was scored or
// there were no failures.
std::optional<std::string> nothing_scored(const Attribution& result, const std::string& node_label);

// Where calibration windows go: count anchor times drawn uniformly (seeded,
// reproducible: the node's name is mixed into the seed) in the range where a
// full window fits, rejecting any whose window, widened by the anomaly
// window on both sides, holds a failure of that node. Fewer when the range is
// too full of failures (at most 100 draws per anchor). Sorted.
std::vector<double> calibration_anchors(const std::string& node,
                                        const std::vector<double>& node_failures_s,
                                        const TimeRange& range, const WindowSpec& windows,
                                        double rate_window_s, std::size_t count,
                                        std::uint64_t seed);

// The series of one node over one window, as query_range chunks arrive
// (a series comes in several chunks when the window spans several).
struct CollectedSeries {
  Labels labels;  // without the node label
  std::vector<Sample> samples;
};
using NodeWindow = std::map<std::string, CollectedSeries>;  // by format_labels(labels)
void collect(NodeWindow& window, const SeriesChunk& chunk, const std::string& node_label);

// Scores every series of a window at anchor_s, counters through their rate.
// By series key.
std::map<std::string, RobustScore> score_window(
    const NodeWindow& window, double anchor_s, const WindowSpec& windows, double rate_window_s,
    const std::map<std::string, std::string>& metric_types);

// One failure's ranking: each series calibrated against its null scores, the
// best series standing for its metric; metrics ordered by calibrated score,
// then raw score, then name. Metrics with no null scores at all (a series
// that exists only near the failure) come after the calibrated ones.
std::vector<MetricScore> rank_metrics(const NodeWindow& window,
                                      const std::map<std::string, RobustScore>& scores,
                                      const std::map<std::string, std::vector<double>>& null_scores,
                                      const std::map<std::string, std::string>& metric_types);

// The selector of a node's series over a window: the node label matching the
// node with any port, histogram buckets and the failure metrics left out.
std::string node_selector(const std::string& node, const std::string& node_label);

// Finds the failures (options.event_source: the given file_events, loaded by
// the caller from options.events_file, for "file" and for "auto" when there
// are some), keeps options.event_types, merges failures of a node closer than
// the anomaly window, then attributes them. Errors: a query that failed. No
// failures is not an error: the result has no events and a warning says what
// was searched.
Expected<Attribution> attribute(const MetricSource& source, const AttributionOptions& options,
                                const std::vector<FailureEvent>* file_events = nullptr);

// Attribution of given failures (already found).
Expected<Attribution> attribute_events(const MetricSource& source,
                                       const AttributionOptions& options,
                                       std::vector<FailureEvent> events);

}  // namespace ckpt::fleet::attribution
