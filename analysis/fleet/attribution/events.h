// Failure events: where the attribution looks. Three sources
// (docs/fleet/attribute.md):
//  - xid: DCGM exporter's DCGM_FI_DEV_XID_ERRORS, a gauge holding the last
//    XID a GPU reported (dcgm-exporter's default counters). An event is a
//    change of the value to a non-zero value; its type is the new value.
//  - ckptscope: an increase of ckptscope_failures_total (deploy/metrics.md);
//    its type is the `kind` label (gpu_xid, oom_kill, ...).
//  - file: a CSV of node,time,type.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/fleet/prometheus/prometheus_client.h"
#include "common/expected.h"

namespace ckpt::fleet::attribution {

inline constexpr const char* kXidMetric = "DCGM_FI_DEV_XID_ERRORS";
inline constexpr const char* kCkptscopeFailureMetric = "ckptscope_failures_total";

struct FailureEvent {
  std::string node;
  double time_unix_s = 0;
  std::string type;    // the XID ("79"), the failure kind, or the file's type
  std::string source;  // "xid", "ckptscope", "file"
  std::string where;   // the series that changed, or FILE:LINE
};

// "host:9100" -> "host", "[fd00::1]:9100" -> "[fd00::1]"; anything else as is.
std::string strip_port(const std::string& address);

// The node a series belongs to: node_label's value, port stripped; a DCGM
// series without it falls back to dcgm-exporter's `Hostname` label. Empty when
// neither is there.
std::string node_of(const Labels& labels, const std::string& node_label);

// {a="b", c="d"} without __name__, for naming a series in messages and output.
std::string format_labels(const Labels& labels, bool with_name = true);

// The PromQL whose samples mark changes (docs/fleet/attribute.md): Prometheus
// finds them, so a 55-day range comes back as a few samples per failure, not
// every sample of every GPU. A sample at t means "changed within the
// change_window_s before t"; change_window_s must cover the scrape interval.
std::string xid_change_query(double change_window_s);
std::string ckptscope_failure_query(double change_window_s);

// Turns the samples of those queries (chunks in time order, series
// interleaved) into events: one at the first sample of each run, a run ending
// when a series has no sample for longer than run_gap_s. One state per series:
// memory grows with the number of series, never with the range.
class EventDetector {
 public:
  enum class Kind { kXidChange, kCounterIncrease };
  EventDetector(Kind kind, std::string node_label, double run_gap_s)
      : kind_(kind), node_label_(std::move(node_label)), run_gap_s_(run_gap_s) {}
  void add(const SeriesChunk& chunk);
  // Events in time order (ties by node).
  [[nodiscard]] std::vector<FailureEvent> events() const;

 private:
  Kind kind_;
  std::string node_label_;
  double run_gap_s_;
  std::map<std::string, double> last_sample_s_;  // by format_labels
  std::vector<FailureEvent> events_;
};

// Events closer than merge_s to an earlier event of the same node (several
// GPUs of a node failing together, a flapping XID) are one failure: the
// earliest is kept. Input in any order; output in time order.
std::vector<FailureEvent> merge_close_events(std::vector<FailureEvent> events, double merge_s);

// The --events file: CSV (RFC 4180 quoting, a UTF-8 byte order mark
// skipped), one event a line, `node,time,type`; an optional header line
// `node,time,type`; blank lines and lines starting with `#` are skipped.
// time: Unix seconds (1769860800, 1.7698608e9) or ISO 8601 / RFC 3339
// (2026-01-31T12:00:00Z, fractions, offsets, a space for the T; no zone is
// UTC), by the fleet-wide parsers of analysis/fleet/common/wall_time.h. Every
// event must lie in [from_s, to_s]. Errors name FILE:LINE and the field.
Expected<std::vector<FailureEvent>> parse_events_csv(const std::string& text,
                                                     const std::string& file_name, double from_s,
                                                     double to_s);
Expected<std::vector<FailureEvent>> load_events_file(const std::string& path, double from_s,
                                                     double to_s);

}  // namespace ckpt::fleet::attribution
