// report_json: the report as the JSON contract of docs/report.md. Unknowns
// are null, never 0; times are offsets from the job's start (the earliest
// node's) in nanoseconds, with the one wall-clock anchor in job.start_wall_ns.
#include <fmt/format.h>

#include "analysis/format.h"
#include "analysis/json_values.h"
#include "analysis/report/report_internal.h"
#include "analysis/unrecognised_notice.h"

namespace ckpt::report {
namespace {

using nlohmann::json;

json text(std::string_view s) { return json_text(s); }

int64_t offset(const Report& r, uint64_t wall_ns) {
  return static_cast<int64_t>(wall_ns) - static_cast<int64_t>(r.start_wall_ns);
}

json failure_json(const std::optional<JobFailure>& f) {
  if (!f) return nullptr;
  json evidence = json::array();
  for (const auto& e : f->evidence)
    evidence.push_back({{"line", e.line}, {"text", text(e.text)}, {"source", text(e.source)}});
  json symptoms = json::array();
  for (const auto& s : f->symptoms) symptoms.push_back(text(s));
  return {{"class", text(f->cls)},
          {"rule", text(f->rule)},
          {"evidence", evidence},
          {"symptoms", symptoms}};
}

json stage_json(const StageRecord& s) {
  return {{"name", text(s.name)},
          {"bytes", s.bytes},
          {"busy_ns", s.busy_ns},
          {"exclusive_ns", or_null(s.exclusive_ns)},
          {"bandwidth_Bps", s.bandwidth_Bps()},
          {"max_Bps", or_null(s.max_Bps)},
          {"max_source", text(s.max_source)},
          {"fraction_of_max", or_null(s.fraction_of_max())}};
}

json stages_json(const CheckpointRecord& c) {
  json out = json::array();
  for (const auto& s : c.stages) out.push_back(stage_json(s));
  return out;
}

json absent_stages(const CheckpointRecord& c) {
  json out = json::array();
  for (auto name : kAllStages)
    if (!find_stage(c, name)) out.push_back(std::string(name));
  return out;
}

json durations(const DurationStats& d) {
  return {{"count", d.count},
          {"p50_ns", d.p50_ns},
          {"p90_ns", d.p90_ns},
          {"p99_ns", d.p99_ns},
          {"max_ns", d.max_ns}};
}

json nfs_json(const std::optional<NfsCheckpointRecord>& nfs) {
  if (!nfs) return nullptr;
  json waits = json::object();
  for (const auto& [q, ns] : nfs->wait_by_queue_ns) waits[q] = waits.value(q, uint64_t{0}) + ns;
  return {{"io_rpcs", nfs->io_rpcs},
          {"queue_wait", durations(nfs->queue_wait)},
          {"rtt", durations(nfs->rtt)},
          {"wait_by_queue_ns", waits},
          {"tcp_backlog_mean", or_null(nfs->tcp_backlog_mean)},
          {"tcp_backlog_max", or_null(nfs->tcp_backlog_max)},
          {"tcp_retransmits", or_null(nfs->tcp_retransmits)}};
}

json timeline_json(const Timeline& t) {
  json bw = json::array(), queue = json::array(), backlog = json::array();
  for (double v : t.bandwidth_Bps) bw.push_back(v);
  for (const auto& v : t.rpc_queue_ms) queue.push_back(or_null(v));
  for (const auto& v : t.tcp_backlog_bytes) backlog.push_back(or_null(v));
  json nfs = nullptr;
  if (!t.nfs_bandwidth_Bps.empty()) {
    nfs = json::array();
    for (double v : t.nfs_bandwidth_Bps) nfs.push_back(v);
  }
  return {{"bin_ns", t.bin_ns},
          {"bandwidth_Bps", bw},
          {"nfs_bandwidth_Bps", nfs},
          {"rpc_queue_ms", t.has_rpc ? queue : json(nullptr)},
          {"tcp_backlog_bytes", t.has_tcp ? backlog : json(nullptr)}};
}

// {"syscall": N, "mmap": M, ..}: which interfaces moved the bytes.
json bytes_by_via_json(const std::vector<std::pair<std::string, uint64_t>>& by_via) {
  json out = json::object();
  for (const auto& [via, bytes] : by_via) {
    const std::string key = valid_utf8(via);
    out[key] = out.value(key, uint64_t{0}) + bytes;
  }
  return out;
}

// `failures`: the positions in r.failures of this checkpoint's, in order.
const std::vector<size_t> kNoFailures;

json checkpoint_json(const Report& r, const CheckpointReport& cp,
                     const std::vector<size_t>& failures) {
  const NodeCheckpoint& slow = cp.nodes[cp.slowest];
  json per_node = json::array();
  for (const auto& nc : cp.nodes) {
    const CheckpointRecord& c = *nc.record;
    per_node.push_back({{"node", text(r.nodes[nc.node].node)},
                        {"checkpoint_id", c.id},
                        {"start_offset_ns", offset(r, nc.start_wall_ns)},
                        {"duration_ns", nc.duration_ns()},
                        {"bytes", c.bytes},
                        {"bytes_by_via", bytes_by_via_json(c.bytes_by_via)},
                        {"files", c.files},
                        {"bottleneck", c.bottleneck.empty() ? json(nullptr) : text(c.bottleneck)},
                        {"mode", nc.synchronous ? "synchronous" : "asynchronous"},
                        {"mode_basis", nc.mode_basis},
                        {"writer_threads", nc.writer_threads},
                        {"blocked_ns", nc.blocked_ns},
                        {"stages", stages_json(c)},
                        {"nfs", nfs_json(c.nfs)}});
  }
  json kinds = json::array();
  for (size_t f : failures) kinds.push_back(text(r.failures[f].failure.kind));
  Timeline scratch;
  const CheckpointRecord& rec = *slow.record;
  return {{"index", cp.index},
          {"direction", std::string(to_string(cp.direction))},
          {"start_offset_ns", offset(r, cp.start_wall_ns)},
          {"duration_ns", cp.duration_ns()},
          {"bytes", cp.bytes},
          {"bytes_by_via", bytes_by_via_json(cp.bytes_by_via)},
          {"files", cp.files},
          {"nodes", cp.nodes.size()},
          {"aggregate_bandwidth_Bps", cp.aggregate_Bps},
          {"storage_bytes", or_null(cp.storage_bytes)},
          {"storage_bandwidth_Bps", or_null(cp.storage_Bps)},
          {"storage_max_Bps", or_null(cp.storage_max_Bps)},
          {"storage_max_source", cp.storage_max_source},
          {"fraction_of_storage_max", or_null(cp.fraction_of_storage_max)},
          {"bottleneck", rec.bottleneck.empty() ? json(nullptr) : text(rec.bottleneck)},
          {"slowest_node", text(r.nodes[slow.node].node)},
          {"slowest_node_duration_ns", slow.duration_ns()},
          {"median_node_duration_ns", cp.median_node_ns},
          {"straggler_ratio", cp.straggler_ratio},
          {"stages", stages_json(rec)},
          {"absent_stages", absent_stages(rec)},
          {"nfs", nfs_json(rec.nfs)},
          {"failures", kinds},
          {"per_node", per_node},
          {"timeline", timeline_json(timeline_of(r, cp, scratch))}};
}

json node_json(const Report& r, const NodeInfo& n) {
  json drops = json::object();
  for (const auto& d : n.drop_counts) drops[d.source + "." + d.cause] = d.count;
  return {{"node", text(n.node)},
          {"trace", text(n.trace_path)},
          {"kernel", text(n.kernel)},
          {"ckptscope_version", text(n.ckptscope_version)},
          {"start_offset_ns", offset(r, n.start_wall_ns)},
          {"start_wall_ns", n.start_wall_ns},
          {"wall_offset_ns", n.wall_offset_ns},
          {"duration_ns", n.end_wall_ns - n.start_wall_ns},
          {"exit_code", or_null(n.exit_code)},
          {"exit_signal", or_null(n.exit_signal)},
          {"traced", n.traced},
          {"trace_warning", text(n.trace_warning)},
          {"probe_mode", text(n.probe_mode)},
          {"drops", n.drops},
          {"drop_counts", drops},
          {"failure", failure_json(n.failure)},
          {"unrecognised_io", unrecognised_io_json(n.unrecognised_io)}};
}

// The job failed when any node did; its cause is the first failing node's.
json job_json(const Report& r) {
  json nodes = json::array();
  const NodeInfo* failed = nullptr;
  for (const auto& n : r.nodes) {
    nodes.push_back(node_json(r, n));
    bool bad = n.exit_signal || (n.exit_code && *n.exit_code != 0);
    if (bad && !failed) failed = &n;
  }
  const NodeInfo& shown = failed ? *failed : r.nodes.front();
  json command = json::array();
  for (const auto& a : r.command) command.push_back(text(a));
  json failure = nullptr;
  if (failed && failed->failure) {
    failure = failure_json(failed->failure);
    failure["node"] = text(failed->node);
  }
  return {{"name", text(r.job_name)},
          {"command", command},
          {"start_wall_ns", r.start_wall_ns},
          {"start_utc", format_wall_time_utc(r.start_wall_ns)},
          {"duration_ns", r.end_wall_ns - r.start_wall_ns},
          {"exit_code", or_null(shown.exit_code)},
          {"exit_signal", or_null(shown.exit_signal)},
          {"failed", failed != nullptr},
          {"failure", failure},
          {"nodes", nodes}};
}

// Each checkpoint's failures (positions in r.failures), by its index: one
// pass over them, not one per checkpoint.
std::vector<std::vector<size_t>> failures_by_checkpoint(const Report& r) {
  std::vector<std::vector<size_t>> out(r.checkpoints.size() + 1);
  for (size_t i = 0; i < r.failures.size(); ++i)
    if (const auto& c = r.failures[i].checkpoint; c && *c < out.size()) out[*c].push_back(i);
  return out;
}

// Everything but the checkpoints, whose list is left empty.
json report_json_head(const Report& r) {
  json checkpoints = json::array();
  json failures = json::array();
  for (const auto& f : r.failures)
    failures.push_back({{"node", text(r.nodes[f.node].node)},
                        {"kind", text(f.failure.kind)},
                        {"offset_ns", offset(r, f.wall_ns)},
                        {"evidence", text(f.failure.evidence)},
                        {"checkpoint", or_null(f.checkpoint)}});
  const Verdict& v = r.verdict;
  json verdict = {{"bottleneck", v.bottleneck.empty() ? json(nullptr) : json(v.bottleneck)},
                  {"checkpoints", v.checkpoints},
                  {"held_ns", v.held_ns},
                  {"total_checkpoint_ns", v.total_ns},
                  {"worst_checkpoint", or_null(v.worst)},
                  {"text", text(v.text)}};
  json recs = json::array();
  for (const auto& rec : r.recommendations) {
    json ev = json::array();
    for (const auto& e : rec.evidence)
      ev.push_back({{"checkpoint", or_null(e.checkpoint)},
                    {"node", e.node.empty() ? json(nullptr) : text(e.node)},
                    {"text", text(e.text)}});
    recs.push_back(
        {{"id", rec.id}, {"title", rec.title}, {"advice", rec.advice}, {"evidence", ev}});
  }
  const CheckpointCost& c = r.cost;
  json cost = {{"job_wall_ns", c.job_wall_ns},
               {"blocked_ns", c.blocked_ns},
               {"save_blocked_ns", c.save_blocked_ns},
               {"load_blocked_ns", c.load_blocked_ns},
               {"share", or_null(c.share)},
               {"worst_node", c.worst_node.empty() ? json(nullptr) : text(c.worst_node)},
               {"worst_node_share", or_null(c.worst_node_share)}};
  json warnings = json::array();
  for (const auto& w : r.warnings) warnings.push_back(text(w));
  return {{"report_version", 1},     {"job", job_json(r)},  {"checkpoints", checkpoints},
          {"failures", failures},    {"cost", cost},        {"verdict", verdict},
          {"recommendations", recs}, {"warnings", warnings}};
}

}  // namespace

json report_json(const Report& r) {
  json out = report_json_head(r);
  const auto failures = failures_by_checkpoint(r);
  json& checkpoints = out["checkpoints"];
  for (const auto& cp : r.checkpoints)
    checkpoints.push_back(
        checkpoint_json(r, cp, cp.index < failures.size() ? failures[cp.index] : kNoFailures));
  return out;
}

void write_report_json(const Report& r, const json& extra, const TextSink& sink) {
  json head = report_json_head(r);
  if (extra.is_object())
    for (const auto& [key, value] : extra.items()) head[key] = value;
  const std::string text = dump_json(head, 2);
  // Keys are in order, "checkpoints" the first: its line, at the top
  // level's indent (a nested key's has more), is the first of its kind.
  const std::string_view empty = "\n  \"checkpoints\": []";
  const size_t at = text.find(empty);
  if (at == std::string::npos || r.checkpoints.empty()) {
    sink(text);
    sink("\n");
    return;
  }
  sink(std::string_view(text).substr(0, at + empty.size() - 2));
  sink("[\n");
  // Each checkpoint as dump_json writes an element of that list: its lines
  // four spaces in (no string in it holds a raw newline: JSON escapes them).
  const auto failures = failures_by_checkpoint(r);
  std::string piece;
  for (size_t i = 0; i < r.checkpoints.size(); ++i) {
    const CheckpointReport& cp = r.checkpoints[i];
    const std::string one = dump_json(
        checkpoint_json(r, cp, cp.index < failures.size() ? failures[cp.index] : kNoFailures), 2);
    piece.assign(i == 0 ? "    " : ",\n    ");
    for (char c : one) {
      piece += c;
      if (c == '\n') piece += "    ";
    }
    sink(piece);
  }
  sink("\n  ]");
  sink(std::string_view(text).substr(at + empty.size()));
  sink("\n");
}

}  // namespace ckpt::report
