// `ckptscope fleet checkpoints` (docs/fleet/checkpoints.md): checkpoint
// bandwidth across a fleet as a fraction of the storage maximum over time,
// read from Prometheus: ckptscope's exporter metrics (deploy/metrics.md) or,
// where only node_exporter runs, its mountstats collector's metrics. Per
// checkpoint: the fleet-aggregate bandwidth's percentiles against the
// maximum, with the RPC queue time and transport backlog during it and outside.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/fleet/prometheus/prometheus_client.h"
#include "common/expected.h"

namespace ckpt::fleet::checkpoints {

enum class Source { kAuto, kCkptscope, kMountstats };

struct Options {
  TimeRange range;
  double step_s = 60;
  Source source = Source::kAuto;
  std::optional<double> read_max_bytes_per_second;   // --storage-read-max (loads)
  std::optional<double> write_max_bytes_per_second;  // --storage-write-max (saves)
  // mountstats: a burst is a step above this fraction of the maximum (of the
  // range's peak when the maximum is unknown).
  double burst_fraction = 0.05;
  // Checkpoints (spans of one workload, or bursts) this close are one.
  double merge_gap_s = 120;
};

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// A figure during checkpoints and outside them (NaN when no data).
struct DuringOutside {
  double during = 0;
  double outside = 0;
};

struct Checkpoint {
  std::string direction;  // "load" (reads) or "save" (writes)
  std::string workload;   // ckptscope source only
  int nodes = 0;          // ckptscope source only: nodes that took part
  double start_unix_s = 0;
  double end_unix_s = 0;
  double bytes = 0;
  Percentiles bytes_per_second;                // of the fleet aggregate, per step
  std::optional<Percentiles> fraction_of_max;  // unset when the maximum is unknown
  DuringOutside rpc_queue_seconds_per_rpc;
  DuringOutside rpc_backlog;
  std::optional<DuringOutside> tcp_backlog_bytes;  // ckptscope source only
};

struct DirectionMax {
  std::optional<double> bytes_per_second;
  std::string source;  // "flag", "ckptscope_storage_max_bytes_per_second", "unknown"
};

// Per evaluation time (index 0 has no bandwidth: it only starts the counters).
struct Timeline {
  std::vector<double> time_unix_s;
  std::vector<double> load_bytes_per_second, save_bytes_per_second;
  std::vector<double> rpc_queue_seconds_per_rpc;  // NaN where no RPC completed
  std::vector<double> rpc_backlog;                // NaN where unknown
  std::vector<double> tcp_backlog_bytes;          // NaN where unknown / mountstats
};

struct Report {
  std::string prometheus_url;
  std::string source;  // "ckptscope" or "mountstats"
  TimeRange range;
  double step_s = 0;
  DirectionMax load_max, save_max;
  std::vector<Checkpoint> checkpoints;  // by start time
  Timeline timeline;
  std::vector<std::string> notes;  // what could not be computed, and why
};

// Reads the metrics (query_range in chunks; per-step aggregates only) and
// builds the report. Errors: the server's, no metrics of either source in the
// range, bad options.
Expected<Report> analyse(const PrometheusClient& client, const Options& options);

nlohmann::json to_json(const Report& report);
std::string to_html(const Report& report);
// A table for the terminal: one line per checkpoint, then the notes.
std::string to_text(const Report& report);

}  // namespace ckpt::fleet::checkpoints
