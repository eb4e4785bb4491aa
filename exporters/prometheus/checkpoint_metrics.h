// Stitched records as Prometheus metrics (prometheus-cpp): the continuous
// node exporter's metric families, the contract in deploy/metrics.md. Like
// every exporter it sees only stitched records (model/records.h), never BPF
// maps. All in base units: bytes, seconds, ratios.
//
// Cardinality is bounded: no pid, file or path label; `job` (the workload's
// identity from its cgroup) is kept for the first max_jobs distinct values,
// every later one is "other" (the label is `workload`: Prometheus's own
// `job` names the scrape job); `server` is the storage server, `op` the NFS
// procedure, both few per node.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "model/records.h"

namespace ckpt {

struct MetricsOptions {
  std::string version;  // ckptscope_build_info
  std::string kernel;
  size_t max_jobs = 100;
  // The storage's aggregate maxima (config storage.*_bandwidth), exported
  // so that rules can divide cluster-wide bandwidth by them.
  std::optional<double> storage_read_Bps;
  std::optional<double> storage_write_Bps;
};

class CheckpointMetrics {
 public:
  explicit CheckpointMetrics(const MetricsOptions& options);

  // A closed checkpoint of `job`: its count by outcome (failed when it has
  // failures), bytes and busy time by stage, duration, fraction of max by
  // stage, and its failures by kind.
  void observe_checkpoint(const std::string& job, const CheckpointRecord& checkpoint);
  // A failure outside any checkpoint (a GPU Xid, an OOM kill, a server not
  // responding between checkpoints).
  void observe_failure(const std::string& job, const FailureRecord& failure);
  // A failure of the node's storage path outside any workload's checkpoint
  // (a server not responding between checkpoints): workload "node".
  void observe_node_failure(const FailureRecord& failure);
  // How the node's file I/O is traced: ckptscope_probe_info{mode=...} 1
  // ("syscall" or "file_layer"), the one series.
  void set_probe_mode(const std::string& mode);
  // Records the probes handed over (the exporter's input rate, what the
  // kernel-side aggregation keeps down).
  void add_kernel_records(const std::string& source, uint64_t records);
  // A finished RPC: queue, round trip and execute time by op and server.
  void observe_rpc(const RpcCallRecord& rpc);
  // One RPC major timeout ("server not responding") toward `server` ("" when
  // the probes could not name it), as it fires.
  void observe_rpc_timeout(const std::string& server);
  // A TCP sample of the connection to `server`: bytes in flight and the
  // backlog now; retransmits and zero-window time as they grew.
  void observe_tcp(const std::string& server, const TcpSampleRecord& sample);
  // RPCs waiting for a transport slot or to be sent, now.
  void set_rpc_backlog_depth(const std::string& server, double depth);
  // The probes' and collector's cumulative drop counters: the counters
  // follow them (a counter never goes down; a source that restarted from 0
  // starts counting again from there).
  void set_drops(const std::vector<DropRecord>& drops);
  // A request or a client the registration socket refused, by reason
  // (apps/exporter/registration_server.h kRejectReasons). Each reason of
  // `reasons` exists at 0 from the start, so rate() and alerts see it.
  void register_rejection_reasons(const std::vector<std::string>& reasons);
  void count_registration_rejected(const std::string& reason);
  // A process that left an unprivileged client's trace, by reason
  // (probes/drop_causes.h: credentials_changed); exists at 0 from the start
  // while the socket is on.
  void register_process_left_reasons(const std::vector<std::string>& reasons);
  void count_registration_process_left(const std::string& reason);
  // Anomalous node-log lines `logwatch` beside the exporter held back under
  // its alert budget (counted, never shown as alarms): workload="node".
  void count_log_anomalies_held_back(uint64_t lines);
  // One source's last collection (node_exporter's per-collector metrics).
  void observe_collection(const std::string& collector, double seconds, bool success);

  // The text exposition format (version 0.0.4) of everything.
  [[nodiscard]] std::string exposition() const;
  [[nodiscard]] std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // The `workload` label a job gets: itself, or "other" past max_jobs
  // distinct jobs. Its checkpoint counters are created at 0 then.
  std::string job_label(const std::string& job);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  size_t max_jobs_;
  std::set<std::string> jobs_;
  bool overflow_seen_ = false;  // "other" has its series as the overflow label
  void add_checkpoint_series(const std::string& label);

  prometheus::Family<prometheus::Gauge>& build_info_;
  prometheus::Family<prometheus::Gauge>& probe_info_;
  prometheus::Gauge* probe_mode_gauge_ = nullptr;
  prometheus::Family<prometheus::Counter>& checkpoints_;
  prometheus::Family<prometheus::Counter>& checkpoint_bytes_;
  prometheus::Family<prometheus::Histogram>& checkpoint_duration_;
  prometheus::Family<prometheus::Histogram>& stage_busy_;
  prometheus::Family<prometheus::Histogram>& stage_max_fraction_;
  prometheus::Family<prometheus::Gauge>& stage_last_max_fraction_;
  prometheus::Family<prometheus::Gauge>& storage_max_;
  prometheus::Family<prometheus::Histogram>& rpc_queue_;
  prometheus::Family<prometheus::Histogram>& rpc_rtt_;
  prometheus::Family<prometheus::Histogram>& rpc_execute_;
  prometheus::Family<prometheus::Gauge>& rpc_backlog_depth_;
  prometheus::Family<prometheus::Counter>& rpc_major_timeouts_;
  prometheus::Family<prometheus::Gauge>& tcp_in_flight_;
  prometheus::Family<prometheus::Gauge>& tcp_backlog_;
  prometheus::Family<prometheus::Counter>& tcp_retransmits_;
  prometheus::Family<prometheus::Counter>& tcp_zero_window_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Family<prometheus::Counter>& dropped_;
  prometheus::Family<prometheus::Counter>& kernel_records_;
  prometheus::Family<prometheus::Counter>& registration_rejected_;
  prometheus::Family<prometheus::Counter>& registration_processes_left_;
  prometheus::Family<prometheus::Counter>& log_anomalies_held_back_;
  prometheus::Family<prometheus::Gauge>& collector_duration_;
  prometheus::Family<prometheus::Gauge>& collector_success_;

  // Per TCP connection sample stream (by server): the last cumulative
  // counters seen, to turn them into counter increments.
  struct TcpLast {
    uint32_t total_retrans = 0;
    uint64_t zero_window_ns = 0;
    uint32_t in_flight = 0;
    uint32_t backlog = 0;
  };
  std::map<std::pair<std::string, uint64_t>, TcpLast> tcp_last_;
  std::map<std::string, uint64_t> drops_last_;
};

}  // namespace ckpt
