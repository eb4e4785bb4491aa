// summary_json: the records as the JSON contract documented in summary.h.
// Unknowns are JSON null, never 0, so consumers can tell "not measured" from
// "measured nothing".
#include "analysis/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/above_max_note.h"
#include "analysis/io_accounting_notice.h"
#include "analysis/json_values.h"
#include "analysis/nfs_crosscheck.h"
#include "analysis/storage_copy_note.h"
#include "analysis/unrecognised_notice.h"
#include "model/vocabulary.h"

namespace ckpt {
namespace {

using nlohmann::json;

json text(std::string_view s) { return json_text(s); }

// end - start, or null when the interval is not complete (end before start).
json duration_or_null(uint64_t start, uint64_t end) {
  return end >= start ? json(end - start) : json(nullptr);
}

json strings_json(const std::vector<std::string>& values) {
  json out = json::array();
  for (const std::string& v : values) out.push_back(text(v));
  return out;
}

json job_failure_json(const std::optional<JobFailure>& failure) {
  if (!failure) return nullptr;
  json evidence = json::array();
  for (const JobEvidence& e : failure->evidence) {
    evidence.push_back({{"line", e.line}, {"text", text(e.text)}, {"source", text(e.source)}});
  }
  return {
      {"class", text(failure->cls)},
      {"rule", text(failure->rule)},
      {"evidence", std::move(evidence)},
      {"symptoms", strings_json(failure->symptoms)},
  };
}

json job_json(const JobRecord& job, const FailureRecord* log_incomplete) {
  return {
      {"command", strings_json(job.command)},
      {"name", text(job.name)},
      {"mode", text(job.mode)},
      {"node", text(job.node)},
      {"kernel", text(job.kernel)},
      {"ckptscope_version", text(job.ckptscope_version)},
      {"exit_code", or_null(job.exit_code)},
      {"exit_signal", or_null(job.exit_signal)},
      {"traced", job.traced},
      {"trace_warning", text(job.trace_warning)},
      {"start_wall_ns", job.start_wall_ns},
      {"duration_ns", duration_or_null(job.start_mono_ns, job.end_mono_ns)},
      {"root_pids", job.root_pids},
      {"log", job.log_path.empty() ? json(nullptr) : text(job.log_path)},
      {"log_incomplete", log_incomplete ? text(log_incomplete->evidence) : json(nullptr)},
      {"failure", job_failure_json(job.failure)},
  };
}

json stage_json(const StageRecord& s) {
  return {
      {"name", text(s.name)},
      {"bytes", s.bytes},
      {"busy_ns", s.busy_ns},
      {"exclusive_ns", or_null(s.exclusive_ns)},
      {"bandwidth_Bps", s.bandwidth_Bps()},
      {"max_Bps", or_null(s.max_Bps)},
      {"max_source", text(s.max_source)},
      {"fraction_of_max", or_null(s.fraction_of_max())},
      // Above 105% of its maximum: the maximum is wrong (analysis/above_max_note.h).
      {"calibration_warning", calibration_fault(s)},
  };
}

json failure_json(const FailureRecord& f) {
  return {{"kind", text(f.kind)}, {"time_ns", f.time_ns}, {"evidence", text(f.evidence)}};
}

json rpc_op_json(const RpcOpStats& op) {
  return {
      {"op", text(op.op)},
      {"count", op.count},
      {"errors", op.errors},
      {"major_timeouts", op.major_timeouts},
      {"transmissions", op.transmissions},
      {"bytes_sent", op.bytes_sent},
      {"bytes_received", op.bytes_received},
      {"queue_ns", op.queue_ns},
      {"rtt_ns", op.rtt_ns},
      {"execute_ns", op.execute_ns},
  };
}

json rpc_ops_json(const std::vector<RpcOpStats>& ops) {
  json out = json::array();
  for (const RpcOpStats& op : ops) out.push_back(rpc_op_json(op));
  return out;
}

json durations_json(const DurationStats& d) {
  return {
      {"count", d.count},   {"mean_ns", d.mean_ns}, {"p50_ns", d.p50_ns},
      {"p90_ns", d.p90_ns}, {"p99_ns", d.p99_ns},   {"max_ns", d.max_ns},
  };
}

json checkpoint_nfs_json(const NfsCheckpointRecord& n) {
  json servers = json::array();
  for (const std::string& server : n.servers) servers.push_back(text(server));
  // Keyed by queue name, summed if a name repeats.
  json wait_by_queue = json::object();
  for (const auto& [queue, ns] : n.wait_by_queue_ns) {
    const std::string key = valid_utf8(queue);
    wait_by_queue[key] = wait_by_queue.value(key, uint64_t{0}) + ns;
  }
  return {
      {"servers", std::move(servers)},
      {"io_rpcs", n.io_rpcs},
      {"io_bytes", n.io_bytes},
      {"rpc_ops", rpc_ops_json(n.rpc_ops)},
      {"queue_wait", durations_json(n.queue_wait)},
      {"rtt", durations_json(n.rtt)},
      {"wait_by_queue_ns", std::move(wait_by_queue)},
      {"tcp_in_flight_max", or_null(n.tcp_in_flight_max)},
      {"tcp_in_flight_mean", or_null(n.tcp_in_flight_mean)},
      {"tcp_backlog_max", or_null(n.tcp_backlog_max)},
      {"tcp_backlog_mean", or_null(n.tcp_backlog_mean)},
      {"tcp_retransmits", or_null(n.tcp_retransmits)},
  };
}

json checkpoint_gpu_json(const CheckpointGpuRecord& g) {
  json devices = json::array();
  for (const auto& d : g.devices) devices.push_back(text(d));
  return {
      {"copies", g.copies},
      {"copy_count", g.copy_count},
      {"pageable_bytes", g.pageable_bytes},
      {"pinned_bytes", g.pinned_bytes},
      {"other_bytes", g.other_bytes},
      {"async_copies", g.async_copies},
      {"first_ns", g.first_ns},
      {"last_ns", g.last_ns},
      {"devices", std::move(devices)},
  };
}

// Which interfaces moved the checkpoint's bytes: {"syscall": N, "mmap": M, ..},
// the non-zero ones (a repeated name summed); {} for a trace without them.
json bytes_by_via_json(const std::vector<std::pair<std::string, uint64_t>>& by_via) {
  json out = json::object();
  for (const auto& [via, bytes] : by_via) {
    const std::string key = valid_utf8(via);
    out[key] = out.value(key, uint64_t{0}) + bytes;
  }
  return out;
}

json checkpoint_json(const CheckpointRecord& c, const JobRecord& job) {
  json stages = json::array();
  for (const StageRecord& s : c.stages) {
    json j = stage_json(s);
    // The gpu_copy stage says how its bytes were staged, right where a
    // reader looks for its bandwidth.
    if (s.name == kStageGpuCopy && c.gpu) {
      j["pageable_bytes"] = c.gpu->pageable_bytes;
      j["pinned_bytes"] = c.gpu->pinned_bytes;
      j["copies"] = c.gpu->copy_count;
    }
    stages.push_back(std::move(j));
  }
  json absent = json::array();
  for (std::string_view name : kAllStages) {
    bool present = std::any_of(c.stages.begin(), c.stages.end(),
                               [&](const StageRecord& s) { return s.name == name; });
    if (!present) absent.push_back(name);
  }
  json failures = json::array();
  for (const FailureRecord& f : c.failures) failures.push_back(failure_json(f));
  json notes = json::array();
  for (const std::string& n : above_max_notes(c)) notes.push_back(text(n));
  if (auto n = storage_copy_note(c)) notes.push_back(text(*n));
  return {
      {"id", c.id},
      {"direction", to_string(c.direction)},
      {"start_ns", c.start_ns},
      {"end_ns", c.end_ns},
      // Unsigned subtraction then a signed view: correct for either order.
      {"start_offset_ns", static_cast<int64_t>(c.start_ns - job.start_mono_ns)},
      {"duration_ns", duration_or_null(c.start_ns, c.end_ns)},
      {"bytes", c.bytes},
      {"bytes_by_via", bytes_by_via_json(c.bytes_by_via)},
      {"dirty_at_end_bytes", or_null(c.dirty_at_end_bytes)},
      {"files", c.files},
      {"bottleneck", c.bottleneck.empty() ? json(nullptr) : text(c.bottleneck)},
      {"stages", std::move(stages)},
      {"absent_stages", std::move(absent)},
      {"notes", std::move(notes)},
      {"failures", std::move(failures)},
      {"nfs", c.nfs ? checkpoint_nfs_json(*c.nfs) : json(nullptr)},
      {"gpu", c.gpu ? checkpoint_gpu_json(*c.gpu) : json(nullptr)},
  };
}

json nfs_mount_op_json(const NfsMountOpRecord& op) {
  return {
      {"op", text(op.op)},
      {"ops", op.ops},
      {"transmissions", op.transmissions},
      {"major_timeouts", op.major_timeouts},
      {"bytes_sent", op.bytes_sent},
      {"bytes_received", op.bytes_received},
      {"queue_ms", op.queue_ms},
      {"rtt_ms", op.rtt_ms},
      {"execute_ms", op.execute_ms},
      {"errors", or_null(op.errors)},
  };
}

json crosscheck_json(const std::optional<std::vector<NfsOpCrosscheck>>& rows) {
  if (!rows) return nullptr;
  json out = json::array();
  for (const NfsOpCrosscheck& r : *rows) {
    out.push_back({
        {"op", text(r.op)},
        {"mountstats_ops", r.mountstats_ops},
        {"ebpf_ops", r.ebpf_ops},
        {"ops_diff_fraction", r.ops_diff_fraction},
        {"mountstats_bytes", r.mountstats_bytes},
        {"ebpf_bytes", r.ebpf_bytes},
        {"bytes_diff_fraction", r.bytes_diff_fraction},
        {"agree", r.agree},
    });
  }
  return out;
}

json nfs_mount_json(const NfsMountRecord& m) {
  json ops = json::array();
  for (const NfsMountOpRecord& op : m.ops) ops.push_back(nfs_mount_op_json(op));
  return {
      {"device", text(m.device)},
      {"mount_point", text(m.mount_point)},
      {"fstype", text(m.fstype)},
      {"version", text(m.version)},
      {"server", text(m.server)},
      {"interval_s", m.interval_s},
      {"since_mount", m.since_mount},
      {"bytes",
       {
           {"normal_read", m.normal_read_bytes},
           {"normal_write", m.normal_write_bytes},
           {"direct_read", m.direct_read_bytes},
           {"direct_write", m.direct_write_bytes},
           {"server_read", m.server_read_bytes},
           {"server_write", m.server_write_bytes},
       }},
      {"xprt",
       {
           {"sends", m.xprt_sends},
           {"receives", m.xprt_receives},
           {"avg_backlog_queue", m.avg_backlog_queue},
           {"avg_sending_queue", m.avg_sending_queue},
           {"avg_pending_queue", m.avg_pending_queue},
       }},
      {"ops", std::move(ops)},
      {"ebpf_ops", m.ebpf_ops ? rpc_ops_json(*m.ebpf_ops) : json(nullptr)},
      {"crosscheck", crosscheck_json(nfs_crosscheck(m))},
  };
}

json connection_json(const ConnectionRecord& c) {
  return {
      {"cookie", c.cookie},
      {"remote", text(c.remote)},
      {"local", text(c.local)},
      {"first_ns", c.first_ns},
      {"last_ns", c.last_ns},
      {"bytes_sent", c.bytes_sent},
      {"bytes_received", c.bytes_received},
      {"retransmits", c.retransmits},
      {"zero_window_ns", c.zero_window_ns},
      {"resets", c.resets},
      {"link_max_Bps", or_null(c.link_max_Bps)},
      {"link_max_source", text(c.link_max_source)},
  };
}

// Counters keyed "source.cause", summed if a pair repeats, plus "total".
json drops_json(const std::vector<DropRecord>& drops) {
  json out = json::object();
  uint64_t total = 0;
  for (const DropRecord& d : drops) {
    const std::string key = valid_utf8(fmt::format("{}.{}", d.source, d.cause));
    out[key] = out.value(key, uint64_t{0}) + d.count;
    total += d.count;
  }
  out["total"] = total;
  return out;
}

}  // namespace

const FailureRecord* job_log_incomplete(const Trace& trace) {
  for (const FailureRecord& f : trace.failures)
    if (f.kind == kFailureJobLogIncomplete) return &f;
  return nullptr;
}

nlohmann::json summary_json(const Trace& trace) {
  json checkpoints = json::array();
  for (const CheckpointRecord& c : trace.checkpoints) {
    checkpoints.push_back(checkpoint_json(c, trace.job));
  }
  json failures = json::array();
  for (const FailureRecord& f : trace.failures) {
    json j = failure_json(f);
    j["checkpoint_id"] = or_null(f.checkpoint_id);
    failures.push_back(std::move(j));
  }
  json connections = json::array();
  for (const ConnectionRecord& c : trace.connections) connections.push_back(connection_json(c));
  json nfs_mounts = json::array();
  for (const NfsMountRecord& m : trace.nfs_mounts) nfs_mounts.push_back(nfs_mount_json(m));
  return {
      {"job", job_json(trace.job, job_log_incomplete(trace))},
      // How the job's file I/O was traced: "file_layer", "syscall", or ""
      // (not traced, or a trace from before the file layer).
      {"probe_mode", text(trace.job.probe_mode)},
      {"checkpoints", std::move(checkpoints)},
      {"failures", std::move(failures)},
      {"connections", std::move(connections)},
      {"drops", drops_json(trace.drops)},
      {"nfs_mounts", std::move(nfs_mounts)},
      {"unrecognised_io", unrecognised_io_json(trace.unrecognised_io)},
      {"io_accounting", io_accounting_json(trace.io_accounting)},
  };
}

}  // namespace ckpt
