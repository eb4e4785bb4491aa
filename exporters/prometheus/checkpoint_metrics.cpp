#include "exporters/prometheus/checkpoint_metrics.h"

#include <prometheus/text_serializer.h>

#include <sstream>

namespace ckpt {
namespace {

// Records say "" for a server the probes could not name; a label needs a value.
std::string server_label(const std::string& server) { return server.empty() ? "unknown" : server; }

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// Checkpoints and stages: 10 ms to an hour (a multi-terabyte save on a slow
// day), about three buckets a decade.
const Histogram::BucketBoundaries kCheckpointSeconds = {
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 120, 300, 600, 1800, 3600};
// RPCs: 100 us (a loopback GETATTR) to a minute (a server that stopped).
const Histogram::BucketBoundaries kRpcSeconds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                 0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                                 1,      2.5,     5,      10,    30,     60};
const Histogram::BucketBoundaries kFractions = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5,
                                                0.6,  0.7, 0.8, 0.9, 1.0};

constexpr int kTcpClose = 7;  // TCP_CLOSE, include/net/tcp_states.h

double seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

CheckpointMetrics::CheckpointMetrics(const MetricsOptions& o)
    : registry_(std::make_shared<prometheus::Registry>()),
      max_jobs_(o.max_jobs),
      build_info_(BuildGauge()
                      .Name("ckptscope_build_info")
                      .Help("ckptscope's version and the kernel it runs on; always 1")
                      .Register(*registry_)),
      probe_info_(BuildGauge()
                      .Name("ckptscope_probe_info")
                      .Help("How the node's file I/O is traced (mode: syscall or file_layer); "
                            "always 1")
                      .Register(*registry_)),
      checkpoints_(BuildCounter()
                       .Name("ckptscope_checkpoints_total")
                       .Help("Checkpoints closed, by workload, direction and outcome (failed: it "
                             "had failures)")
                       .Register(*registry_)),
      checkpoint_bytes_(
          BuildCounter()
              .Name("ckptscope_checkpoint_bytes_total")
              .Help("Bytes each stage moved for checkpoints, by workload, direction and stage")
              .Register(*registry_)),
      checkpoint_duration_(BuildHistogram()
                               .Name("ckptscope_checkpoint_duration_seconds")
                               .Help("Checkpoint wall time, first call to last, by direction")
                               .Register(*registry_)),
      stage_busy_(BuildHistogram()
                      .Name("ckptscope_stage_busy_seconds")
                      .Help("Time a stage was busy in a checkpoint (union of its intervals)")
                      .Register(*registry_)),
      stage_max_fraction_(
          BuildHistogram()
              .Name("ckptscope_stage_max_fraction")
              .Help("A stage's bandwidth in a checkpoint as a fraction of its maximum")
              .Register(*registry_)),
      stage_last_max_fraction_(
          BuildGauge()
              .Name("ckptscope_stage_last_max_fraction")
              .Help("The last checkpoint's bandwidth per stage as a fraction of its maximum")
              .Register(*registry_)),
      storage_max_(
          BuildGauge()
              .Name("ckptscope_storage_max_bytes_per_second")
              .Help("The storage's aggregate maximum bandwidth by direction, from the config")
              .Register(*registry_)),
      rpc_queue_(
          BuildHistogram()
              .Name("ckptscope_rpc_queue_seconds")
              .Help(
                  "NFS RPC time from start to transmission (waiting for a slot and the transport)")
              .Register(*registry_)),
      rpc_rtt_(BuildHistogram()
                   .Name("ckptscope_rpc_rtt_seconds")
                   .Help("NFS RPC time from transmission to reply (wire and server)")
                   .Register(*registry_)),
      rpc_execute_(BuildHistogram()
                       .Name("ckptscope_rpc_execute_seconds")
                       .Help("NFS RPC time from start to done")
                       .Register(*registry_)),
      rpc_backlog_depth_(BuildGauge()
                             .Name("ckptscope_rpc_backlog_depth")
                             .Help("NFS RPCs waiting for a request slot or to be sent, by server")
                             .Register(*registry_)),
      rpc_major_timeouts_(BuildCounter()
                              .Name("ckptscope_rpc_major_timeouts_total")
                              .Help("NFS RPC major timeouts (server not responding), by server")
                              .Register(*registry_)),
      tcp_in_flight_(BuildGauge()
                         .Name("ckptscope_tcp_bytes_in_flight")
                         .Help("Bytes sent to the storage server and not yet acknowledged")
                         .Register(*registry_)),
      tcp_backlog_(BuildGauge()
                       .Name("ckptscope_tcp_backlog_bytes")
                       .Help("Bytes handed to TCP for the storage server and not yet acknowledged")
                       .Register(*registry_)),
      tcp_retransmits_(BuildCounter()
                           .Name("ckptscope_tcp_retransmits_total")
                           .Help("TCP segments retransmitted toward the storage server")
                           .Register(*registry_)),
      tcp_zero_window_(BuildCounter()
                           .Name("ckptscope_tcp_zero_window_seconds_total")
                           .Help("Time the storage server advertised a zero receive window")
                           .Register(*registry_)),
      failures_(BuildCounter()
                    .Name("ckptscope_failures_total")
                    .Help("Failures by workload and kind (docs/failures.md)")
                    .Register(*registry_)),
      dropped_(BuildCounter()
                   .Name("ckptscope_dropped_events_total")
                   .Help("Events the probes or the collector could not keep, by source and cause")
                   .Register(*registry_)),
      kernel_records_(BuildCounter()
                          .Name("ckptscope_kernel_records_total")
                          .Help("Records received from the kernel probes, by probe family")
                          .Register(*registry_)),
      registration_rejected_(BuildCounter()
                                 .Name("ckptscope_registration_rejected_total")
                                 .Help("Requests and clients the registration socket refused, "
                                       "by reason")
                                 .Register(*registry_)),
      registration_processes_left_(
          BuildCounter()
              .Name("ckptscope_registration_processes_left_total")
              .Help("Processes taken out of an unprivileged client's trace, by reason "
                    "(credentials_changed: exec of a setuid, setgid or capability program)")
              .Register(*registry_)),
      log_anomalies_held_back_(BuildCounter()
                                   .Name("ckptscope_log_anomalies_held_back_total")
                                   .Help("Anomalous node-log lines ckptscope logwatch held back "
                                         "under its alert budget (counted, not shown as alarms)")
                                   .Register(*registry_)),
      collector_duration_(BuildGauge()
                              .Name("ckptscope_scrape_collector_duration_seconds")
                              .Help("How long a source's last collection took")
                              .Register(*registry_)),
      collector_success_(BuildGauge()
                             .Name("ckptscope_scrape_collector_success")
                             .Help("Whether a source's last collection succeeded")
                             .Register(*registry_)) {
  build_info_.Add({{"version", o.version}, {"kernel", o.kernel}}).Set(1);
  if (o.storage_read_Bps) storage_max_.Add({{"direction", "load"}}).Set(*o.storage_read_Bps);
  if (o.storage_write_Bps) storage_max_.Add({{"direction", "save"}}).Set(*o.storage_write_Bps);
}

std::string CheckpointMetrics::job_label(const std::string& job) {
  if (jobs_.count(job)) return job;
  // Past the bound every workload is "other" (the exporter asks per event:
  // once "other" has its series, nothing more to do).
  if (jobs_.size() >= max_jobs_) {
    if (!overflow_seen_) add_checkpoint_series("other");
    overflow_seen_ = true;
    return "other";
  }
  jobs_.insert(job);
  add_checkpoint_series(job);
  return job;
}

void CheckpointMetrics::add_checkpoint_series(const std::string& label) {
  // A workload's checkpoint counts exist from its first sight, at 0: a
  // counter that first appears at 1 is invisible to increase() and rate().
  for (const char* dir : {"save", "load"})
    for (const char* outcome : {"ok", "failed"})
      checkpoints_.Add({{"workload", label}, {"direction", dir}, {"outcome", outcome}});
}

void CheckpointMetrics::observe_checkpoint(const std::string& job, const CheckpointRecord& c) {
  const std::string j = job_label(job);
  const std::string dir(to_string(c.direction));
  checkpoints_
      .Add({{"workload", j}, {"direction", dir}, {"outcome", c.failures.empty() ? "ok" : "failed"}})
      .Increment();
  checkpoint_duration_.Add({{"direction", dir}}, kCheckpointSeconds)
      .Observe(seconds(c.end_ns >= c.start_ns ? c.end_ns - c.start_ns : 0));
  for (const StageRecord& s : c.stages) {
    checkpoint_bytes_.Add({{"workload", j}, {"direction", dir}, {"stage", s.name}})
        .Increment(static_cast<double>(s.bytes));
    stage_busy_.Add({{"direction", dir}, {"stage", s.name}}, kCheckpointSeconds)
        .Observe(seconds(s.busy_ns));
    if (auto f = s.fraction_of_max()) {
      stage_max_fraction_.Add({{"direction", dir}, {"stage", s.name}}, kFractions).Observe(*f);
      stage_last_max_fraction_.Add({{"workload", j}, {"direction", dir}, {"stage", s.name}})
          .Set(*f);
    }
  }
  for (const FailureRecord& f : c.failures)
    failures_.Add({{"workload", j}, {"kind", f.kind}}).Increment();
}

void CheckpointMetrics::observe_failure(const std::string& job, const FailureRecord& f) {
  failures_.Add({{"workload", job_label(job)}, {"kind", f.kind}}).Increment();
}

void CheckpointMetrics::observe_node_failure(const FailureRecord& f) {
  failures_.Add({{"workload", "node"}, {"kind", f.kind}}).Increment();
}

void CheckpointMetrics::set_probe_mode(const std::string& mode) {
  // One series: a mode set again replaces the one before.
  if (probe_mode_gauge_) probe_info_.Remove(probe_mode_gauge_);
  probe_mode_gauge_ = &probe_info_.Add({{"mode", mode}});
  probe_mode_gauge_->Set(1);
}

void CheckpointMetrics::add_kernel_records(const std::string& source, uint64_t records) {
  kernel_records_.Add({{"source", source}}).Increment(static_cast<double>(records));
}

void CheckpointMetrics::observe_rpc(const RpcCallRecord& rpc) {
  const std::string server = server_label(rpc.server);
  const prometheus::Labels labels = {{"op", rpc.op}, {"server", server}};
  rpc_queue_.Add(labels, kRpcSeconds).Observe(seconds(rpc.queue_ns));
  rpc_rtt_.Add(labels, kRpcSeconds).Observe(seconds(rpc.rtt_ns));
  rpc_execute_.Add(labels, kRpcSeconds).Observe(seconds(rpc.execute_ns));
  if (rpc.major_timeouts > 0)
    rpc_major_timeouts_.Add({{"server", server}})
        .Increment(static_cast<double>(rpc.major_timeouts));
}

void CheckpointMetrics::observe_rpc_timeout(const std::string& server) {
  rpc_major_timeouts_.Add({{"server", server_label(server)}}).Increment();
}

void CheckpointMetrics::observe_tcp(const std::string& server, const TcpSampleRecord& s) {
  auto key = std::make_pair(server, s.cookie);
  auto it = tcp_last_.find(key);
  if (it == tcp_last_.end()) {
    // The first sample of a connection is its baseline: what it counted
    // before we saw it is not ours to add.
    it = tcp_last_.emplace(key, TcpLast{s.total_retrans, s.zero_window_ns, 0, 0}).first;
  } else {
    if (s.total_retrans > it->second.total_retrans)
      tcp_retransmits_.Add({{"server", server}})
          .Increment(static_cast<double>(s.total_retrans - it->second.total_retrans));
    if (s.zero_window_ns > it->second.zero_window_ns)
      tcp_zero_window_.Add({{"server", server}})
          .Increment(seconds(s.zero_window_ns - it->second.zero_window_ns));
    it->second.total_retrans = s.total_retrans;
    it->second.zero_window_ns = s.zero_window_ns;
  }
  it->second.in_flight = s.in_flight;
  it->second.backlog = s.backlog;
  // A closed connection no longer holds anything, and is forgotten (the
  // exporter runs for weeks; sockets come and go).
  const bool closed = s.event == "state" && s.new_state == kTcpClose;
  if (closed) tcp_last_.erase(it);
  // The server's gauges: the sum over its open connections (nconnect).
  double in_flight = 0, backlog = 0;
  for (const auto& [k, last] : tcp_last_)
    if (k.first == server) {
      in_flight += last.in_flight;
      backlog += last.backlog;
    }
  tcp_in_flight_.Add({{"server", server}}).Set(in_flight);
  tcp_backlog_.Add({{"server", server}}).Set(backlog);
}

void CheckpointMetrics::set_rpc_backlog_depth(const std::string& server, double depth) {
  rpc_backlog_depth_.Add({{"server", server}}).Set(depth);
}

void CheckpointMetrics::set_drops(const std::vector<DropRecord>& drops) {
  for (const DropRecord& d : drops) {
    const std::string key = d.source + "." + d.cause;
    auto& counter = dropped_.Add({{"source", d.source}, {"cause", d.cause}});
    uint64_t& last = drops_last_[key];
    if (d.count >= last)
      counter.Increment(static_cast<double>(d.count - last));
    else
      counter.Increment(static_cast<double>(d.count));  // the source restarted from 0
    last = d.count;
  }
}

void CheckpointMetrics::register_rejection_reasons(const std::vector<std::string>& reasons) {
  for (const auto& reason : reasons) registration_rejected_.Add({{"reason", reason}});
}

void CheckpointMetrics::count_registration_rejected(const std::string& reason) {
  registration_rejected_.Add({{"reason", reason}}).Increment();
}

void CheckpointMetrics::register_process_left_reasons(const std::vector<std::string>& reasons) {
  for (const auto& reason : reasons) registration_processes_left_.Add({{"reason", reason}});
}

void CheckpointMetrics::count_registration_process_left(const std::string& reason) {
  registration_processes_left_.Add({{"reason", reason}}).Increment();
}

void CheckpointMetrics::count_log_anomalies_held_back(uint64_t lines) {
  log_anomalies_held_back_.Add({{"workload", "node"}}).Increment(static_cast<double>(lines));
}

void CheckpointMetrics::observe_collection(const std::string& collector, double secs,
                                           bool success) {
  collector_duration_.Add({{"collector", collector}}).Set(secs);
  collector_success_.Add({{"collector", collector}}).Set(success ? 1 : 0);
}

std::string CheckpointMetrics::exposition() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace ckpt
