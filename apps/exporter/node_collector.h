// The continuous node exporter's collector: the probes trace every process
// on the node (but the exporter), each process is routed to its workload by
// its cgroup (exporter/workload_identity.h), and each workload has a
// stitcher of its own, so two jobs checkpointing at once are two checkpoints.
// Closed checkpoints, failures, NFS RPCs and TCP samples become metrics
// (exporters/prometheus); nothing is retained: no trace is written, and the
// stitchers' per-call output is dropped as soon as it is made.
//
// NFS and TCP events belong to the node, not to a process (writeback and
// rpciod threads send a job's pages; one connection carries every job's
// RPCs): they go to every workload's stitcher, which keeps what its
// checkpoints' files claim, and straight into the node-wide RPC and TCP
// metrics once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "apps/exporter/registration_server.h"
#include "apps/exporter/rpc_backlog.h"
#include "apps/exporter/verdict_gate.h"
#include "apps/exporter/workload_identity.h"
#include "calibrate/calibrated_maxima.h"
#include "common/expected.h"
#include "config/config.h"
#include "exporters/prometheus/checkpoint_metrics.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "sources/path_resolver.h"
#include "sources/source.h"
#include "stitch/stitcher.h"

namespace ckpt {

struct NodeCollectorOptions {
  ProbeOptions probes;  // filter All; the exporter is never traced
  WorkloadNamerOptions namer;
  // The host's NFS mounts: PID 1's mount namespace (the exporter may run in
  // a container of its own); /proc/self/mountstats when that is unreadable.
  std::string mountstats_path = "/proc/1/mountstats";
  // Where /proc is (`--path.procfs`): the fallback mountstats is read there.
  std::string procfs = "/proc";
  // A workload with no live process and no event this long is closed (its
  // open checkpoint exported) and forgotten.
  uint64_t workload_idle_ns = 60'000'000'000;
  uint64_t mountstats_every_ns = 1'000'000'000;
  // `run` and `attach` register here (exporter/registration_server.h); "" = off.
  RegistrationOptions registration;
  bool registration_enabled = true;
};

class NodeCollector : public EventSink {
 public:
  // Loads the probes; an error says why (not root, no BTF, a verifier message).
  static Expected<std::unique_ptr<NodeCollector>> start(const Config& config,
                                                        NodeCollectorOptions options,
                                                        const KernelFeatures& features,
                                                        CheckpointMetrics& metrics);
  ~NodeCollector() override;

  // Without probes: events come through on_event() (an EventSink) and time
  // through step(). What the unit tests drive, with known answers.
  static std::unique_ptr<NodeCollector> without_probes(const Config& config,
                                                       NodeCollectorOptions options,
                                                       CheckpointMetrics& metrics);

  // Polls for up to timeout_ms, routes, stitches and updates the metrics.
  void pump(int timeout_ms);
  // Sets the clock events are routed at; then stitches, exports what
  // closed, retires idle workloads and publishes the drop counters.
  void step(uint64_t now_ns);
  void on_event(Event&& event) override;
  // Reads mountstats when it is due (every mountstats_every_ns): the RPC
  // backlog gauges, NFS mounts that appeared; a sample that cannot be read
  // or parsed is counted and logged (pump() calls it; tests do directly).
  void watch_mounts(uint64_t now_ns);
  // Shutdown: every open checkpoint is closed and counted.
  void finish();

  [[nodiscard]] size_t workloads() const { return workloads_.size(); }
  [[nodiscard]] size_t registered_clients() const {
    return registration_ ? registration_->clients() : 0;
  }
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }
  // How the node's file I/O is traced ("syscall", "file_layer"; "" without
  // probes) and why.
  [[nodiscard]] std::string probe_mode() const { return probes_ ? probes_->probe_mode() : ""; }
  [[nodiscard]] std::string probe_mode_reason() const {
    return probes_ ? probes_->probe_mode_reason() : "";
  }

  // A workload stitcher's decision on a file: written to the kernel's
  // verdict map unless a registered client's process touched the file and
  // the verdict is OTHER (verdict_gate.h).
  void on_verdict(const FileId& file, bool is_checkpoint);
  [[nodiscard]] uint64_t verdicts_withheld() const { return verdict_gate_.withheld(); }
  // Seams for tests without probes or a registration server: where verdicts
  // go (default: the probes' map) and which processes a client traces
  // (default: the registration server's clients).
  void set_verdict_sink(std::function<void(const FileId&, bool)> sink) {
    verdict_sink_ = std::move(sink);
  }
  void set_client_tracing(std::function<bool(uint32_t tgid)> traced) {
    client_traces_ = std::move(traced);
  }

 private:
  struct Workload {
    std::unique_ptr<Stitcher> stitcher;
    std::set<uint32_t> tgids;  // live processes routed here
    uint64_t last_event_ns = 0;
  };
  // Time spent in one source's handlers during a pump.
  struct SourceTiming {
    std::chrono::steady_clock::duration spent{};
    uint64_t records = 0;
  };

  NodeCollector(const Config& config, NodeCollectorOptions options, CheckpointMetrics& metrics);
  Workload& workload_of(uint32_t tgid, uint64_t now_ns);
  Workload& workload_named(const std::string& label, uint64_t now_ns);
  void route_to_node(Event&& event);
  void export_outputs(const std::string& label, Workload& w);
  void count_failure(const std::string& label, const FailureRecord& f);
  void retire_idle(uint64_t now_ns);
  void publish_drops();
  // A mountstats sample that could not be read or parsed: counted as a drop
  // (source "mountstats", cause "unreadable" or "malformed") and logged once
  // per cause.
  void reject_mountstats(const Error& error);

  Config config_;
  NodeCollectorOptions options_;
  CheckpointMetrics& metrics_;
  WorkloadNamer namer_;
  PathResolver resolver_;
  SourceRegistry sources_;
  std::unique_ptr<ProbeManager> probes_;
  std::unique_ptr<RegistrationServer> registration_;
  std::map<std::string, Workload> workloads_;
  std::unordered_map<uint32_t, std::string> home_;  // tgid -> the workload it was routed to
  // Node-level failures that every workload's stitcher reports alike (a
  // server not responding between checkpoints): counted once, under "node".
  std::map<std::tuple<std::string, uint64_t, std::string>, uint64_t> node_failures_seen_;
  std::map<std::pair<std::string, std::string>, uint64_t> retired_drops_;
  RpcBacklogDepth backlog_;
  std::set<std::string> backlog_servers_;
  uint64_t last_mount_check_ns_ = 0;
  std::map<std::string, uint64_t> mountstats_rejected_;  // by cause
  std::set<std::string> mountstats_said_;                // the causes logged
  uint64_t now_ns_ = 0;  // the time events are routed at (the last pump or step)
  std::map<std::string, SourceTiming> timing_;
  std::vector<std::string> notes_;
  // Shared by every workload's maxima: one read of the maxima file, one warning.
  std::shared_ptr<CalibratedMaxima> calibrated_;
  VerdictGate verdict_gate_;
  std::function<void(const FileId&, bool)> verdict_sink_;
  std::function<bool(uint32_t)> client_traces_;
  // Whether a registered client takes this process's records.
  [[nodiscard]] bool traced_by_client(uint32_t tgid) const;
  void note_client_file(uint32_t tgid, const FileId& file);
};

// The workload label of failures that belong to the node's storage path
// rather than to one workload's checkpoint.
inline constexpr std::string_view kNodeWorkload = "node";

}  // namespace ckpt
