// The post-run bottleneck report: one or more traces of a job (one per node)
// turned into what a person needs after the run (docs/report.md): the job,
// its checkpoints across nodes with their stages, a timeline of checkpoint
// bandwidth beside RPC queue time and TCP backlog, failures, the checkpoint
// cost to training, the verdict and recommendations from a documented rule
// base. Built once (build_report), rendered as JSON, Markdown or HTML; the
// renderings show the same numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "model/records.h"

namespace ckpt::report {

// Checkpoints of different nodes are one checkpoint of the job when their
// windows overlap, give or take this much (clock skew between nodes, ranks
// reaching the save a little apart).
inline constexpr uint64_t kGroupSlackNs = 2'000'000'000;

// A number from a trace's recorded configuration (JobRecord::config_json):
// `section`.`key`; nullopt when the trace has none there (or no config).
std::optional<double> trace_config_number(const std::string& config_json, std::string_view section,
                                          std::string_view key);

// One node's trace, as read from `path`.
struct NodeTrace {
  std::string path;
  Trace trace;
};

struct ReportOptions {
  // The storage's aggregate maxima (the whole cluster's, e.g. 700 GB/s read);
  // when absent, the traces' config (storage.read_bandwidth /
  // storage.write_bandwidth) gives them, else they are unknown.
  std::optional<double> storage_read_max_Bps;
  std::optional<double> storage_write_max_Bps;
  size_t timeline_bins = 120;  // per checkpoint
  // Keep every checkpoint's timeline in the report (CheckpointReport::
  // timeline). Off, none is kept: the renderings build each as they reach
  // its checkpoint, so a report of 40,000 checkpoints does not hold 40,000
  // timelines (issue 36); `project` never draws one.
  bool keep_timelines = true;
};

struct NodeInfo {
  std::string node;  // the name the trace records (job.node), unique in a report
  std::string trace_path;
  std::string kernel;
  std::string ckptscope_version;
  uint64_t start_wall_ns = 0;
  uint64_t end_wall_ns = 0;
  // CLOCK_REALTIME - CLOCK_MONOTONIC at the trace's start: what aligns this
  // node's monotonic times with the others'.
  int64_t wall_offset_ns = 0;
  std::optional<int> exit_code;
  std::optional<int> exit_signal;
  bool traced = false;
  std::string trace_warning;
  std::string probe_mode;  // "file_layer", "syscall", or "" when not known
  std::optional<JobFailure> failure;
  uint64_t drops = 0;  // events the probes or the collector could not keep
  std::vector<DropRecord> drop_counts;
  // Its data through files no checkpoint pattern recognised (the notice when
  // above its threshold); absent when the trace does not say.
  std::optional<UnrecognisedIoRecord> unrecognised_io;
};

// One node's part of a checkpoint.
struct NodeCheckpoint {
  size_t node = 0;  // index into Report::nodes
  const CheckpointRecord* record = nullptr;
  uint64_t start_wall_ns = 0;
  uint64_t end_wall_ns = 0;
  uint32_t writer_threads = 0;  // distinct threads that moved its data
  // Whether the job waited for it: some data call came from a process's
  // main thread (or no calls were kept to tell). See docs/report.md.
  bool synchronous = true;
  std::string mode_basis;
  uint64_t blocked_ns = 0;  // what the training loop lost to it
  [[nodiscard]] uint64_t duration_ns() const { return end_wall_ns - start_wall_ns; }
};

// A series over one checkpoint's window, bin i covering
// [start_wall_ns + i*bin_ns, start_wall_ns + (i+1)*bin_ns).
struct Timeline {
  uint64_t start_wall_ns = 0;
  uint64_t bin_ns = 0;
  std::vector<double> bandwidth_Bps;  // checkpoint data through read/write calls, all nodes summed
  // Checkpoint data on the wire: READ/WRITE RPC payload, each RPC's bytes
  // spread from its transmission to its reply (empty when no RPC was kept).
  std::vector<double> nfs_bandwidth_Bps;
  std::vector<std::optional<double>> rpc_queue_ms;       // mean queue time of RPCs sent in the bin
  std::vector<std::optional<double>> tcp_backlog_bytes;  // unacked + queued, all connections summed
  bool has_rpc = false;
  bool has_tcp = false;
};

struct CheckpointReport {
  uint64_t index = 0;  // 1, 2, ... in start order across the job
  Direction direction = Direction::Save;
  uint64_t start_wall_ns = 0;
  uint64_t end_wall_ns = 0;
  uint64_t bytes = 0;  // all nodes
  uint64_t files = 0;  // all nodes
  // Which interfaces moved the bytes, all nodes summed, in IoVia order
  // (CheckpointRecord::bytes_by_via); non-zero only.
  std::vector<std::pair<std::string, uint64_t>> bytes_by_via;
  std::vector<NodeCheckpoint> nodes;
  double aggregate_Bps = 0;  // bytes / (last end - first start)
  // The bytes that reached the storage (every node's storage stage summed),
  // and their bandwidth over the checkpoint: what the storage maximum is
  // for. Unknown where a node's trace has no storage stage (a file system
  // with none, or a trace from before it): the fraction then uses `bytes`.
  std::optional<uint64_t> storage_bytes;
  std::optional<double> storage_Bps;
  std::optional<double> storage_max_Bps;
  std::string storage_max_source;
  std::optional<double> fraction_of_storage_max;
  // The slowest node sets the job's stall: its stages and bottleneck are
  // the checkpoint's.
  size_t slowest = 0;  // index into nodes
  uint64_t median_node_ns = 0;
  double straggler_ratio = 1.0;  // slowest / median node duration
  Timeline timeline;

  [[nodiscard]] uint64_t duration_ns() const { return end_wall_ns - start_wall_ns; }
  [[nodiscard]] const CheckpointRecord& slowest_record() const { return *nodes[slowest].record; }
};

struct NodeFailure {
  size_t node = 0;
  FailureRecord failure;
  uint64_t wall_ns = 0;
  std::optional<uint64_t> checkpoint;  // CheckpointReport::index
};

struct CheckpointCost {
  uint64_t job_wall_ns = 0;  // per node, averaged
  uint64_t blocked_ns = 0;   // per node, averaged
  uint64_t save_blocked_ns = 0;
  uint64_t load_blocked_ns = 0;
  std::optional<double> share;  // blocked / job wall; unknown when the job's length is
  std::optional<double> worst_node_share;
  std::string worst_node;
};

struct Verdict {
  std::string bottleneck;             // a stage, "" when no checkpoint was measured
  std::vector<uint64_t> checkpoints;  // those it held back
  uint64_t held_ns = 0;               // their summed duration
  uint64_t total_ns = 0;              // all checkpoints' summed duration
  std::optional<uint64_t> worst;      // the longest of them
  std::string text;
};

struct EvidenceItem {
  std::optional<uint64_t> checkpoint;
  std::string node;  // "" when not about one node
  std::string text;
};

struct Recommendation {
  std::string id;
  std::string title;
  std::string advice;
  std::vector<EvidenceItem> evidence;
};

// One trace's records by checkpoint, built once so that each checkpoint's
// figures cost its own records, not the whole trace's (a day-long job has
// hundreds of checkpoints and millions of calls).
struct TraceIndex {
  // Calls that moved a checkpoint's data (read/write with bytes), by checkpoint id.
  std::unordered_map<uint64_t, std::vector<const IoCallRecord*>> data_calls;
  std::unordered_map<uint64_t, std::vector<const RpcCallRecord*>> checkpoint_io_rpcs;
  std::vector<std::vector<const TcpSampleRecord*>> connections;  // samples per connection, by time
};

// A section another analysis adds to the report (the scale projection's,
// `report --project`), rendered after the recommendations as its author
// wrote it (escaped already): the report does not depend on what is in it.
struct ExtraSection {
  std::string id;  // the HTML section's id
  std::string title;
  std::string html;      // the section's body
  std::string markdown;  // likewise, under a "## title" heading
};

struct Report {
  std::string job_name;
  std::vector<std::string> command;
  std::vector<NodeInfo> nodes;
  uint64_t start_wall_ns = 0;
  uint64_t end_wall_ns = 0;
  std::vector<CheckpointReport> checkpoints;
  std::vector<NodeFailure> failures;
  CheckpointCost cost;
  Verdict verdict;
  std::vector<Recommendation> recommendations;
  std::vector<std::string> warnings;  // what makes the figures less than whole (drops, no tracing)
  std::vector<ExtraSection> extra_sections;
  std::vector<NodeTrace> traces;  // owned: checkpoints point into them
  std::vector<TraceIndex> index;  // per trace, into `traces`
  size_t timeline_bins = 120;     // ReportOptions::timeline_bins
  bool timelines_kept = true;     // ReportOptions::keep_timelines

  Report() = default;
  Report(Report&&) = default;
  Report& operator=(Report&&) = default;
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
};

// Errors: no traces, two traces of one node (same node name: re-record one
// with --node-name), traces of different jobs (different commands).
Expected<Report> build_report(std::vector<NodeTrace> traces, const ReportOptions& options);

// Renderings. JSON is the contract (docs/report.md); Markdown for tickets;
// HTML one self-contained page (inline CSS and SVG, no script, no request).
nlohmann::json report_json(const Report& report);
std::string report_markdown(const Report& report);
std::string report_html(const Report& report);

// The same renderings piece by piece, each piece handed to `sink` as it is
// made, so that the whole text is never held at once: what `report` writes
// a large report with. The pieces joined are byte for byte report_html()
// and dump_json(report_json() + `extra`, 2) + "\n" (`extra`: more top-level
// keys, such as "projection").
using TextSink = std::function<void(std::string_view)>;
void write_report_html(const Report& report, const TextSink& sink);
void write_report_json(const Report& report, const nlohmann::json& extra, const TextSink& sink);

}  // namespace ckpt::report
