#include "apps/exporter/node_collector.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>

#include "common/clock.h"
#include "model/rpc_call_record.h"
#include "model/vocabulary.h"
#include "probes/drop_causes.h"
#include "sources/call_return.h"
#include "sources/jobio_source.h"
#include "sources/mountstats.h"
#include "sources/nfs_mounts.h"
#include "sources/nfs_source.h"
#include "sources/tcp_source.h"

namespace ckpt {
namespace {

// Failures every workload's stitcher derives alike from the node's NFS and
// TCP events when no checkpoint of its own is open (docs/failures.md).
constexpr std::array<std::string_view, 5> kNodeLevelKinds = {
    kFailureNfsServerNotResponding, kFailureTcpReset, kFailureTcpRetransmitStorm,
    kFailureTcpZeroWindow, kFailureRpcError};
constexpr uint64_t kNodeFailureMemoryNs = 600'000'000'000;

bool is_cgroup_move(const IoEvent& io) {
  return io.op == IoOp::Write && io.ret > 0 &&
         (io.path.ends_with("/cgroup.procs") || io.path.ends_with("/cgroup.threads") ||
          io.path.ends_with("/tasks"));
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

NodeCollector::NodeCollector(const Config& config, NodeCollectorOptions options,
                             CheckpointMetrics& metrics)
    : config_(config),
      options_(std::move(options)),
      metrics_(metrics),
      namer_(options_.namer),
      resolver_(options_.namer.proc_root) {}

NodeCollector::~NodeCollector() = default;

Expected<std::unique_ptr<NodeCollector>> NodeCollector::start(const Config& config,
                                                              NodeCollectorOptions options,
                                                              const KernelFeatures& features,
                                                              CheckpointMetrics& metrics) {
  std::unique_ptr<NodeCollector> c(new NodeCollector(config, std::move(options), metrics));
  ProbeOptions probe_options = c->options_.probes;
  probe_options.filter = ProbeOptions::Filter::All;
  // The servers of the node's NFS mounts join the configured endpoints.
  if (auto mounts = read_mountstats(c->options_.mountstats_path)) {
    for (const auto& ep : nfs_mount_endpoints(*mounts))
      if (!endpoint_covered(probe_options.endpoints, ep)) probe_options.endpoints.push_back(ep);
  } else if (const std::string self = c->options_.procfs + "/self/mountstats";
             c->options_.mountstats_path != self) {
    c->notes_.push_back(mounts.error().message + "; reading " + self + " instead");
    c->options_.mountstats_path = self;
  }
  c->options_.probes = probe_options;
  // The node's calibrated storage maxima, matched against the mount table of
  // the processes whose mountstats are read (the host's, under a container).
  NodeCollector* raw = c.get();
  c->calibrated_ = CalibratedMaxima::for_this_process(
      [raw](const std::string& m) { raw->notes_.push_back(m); },
      (std::filesystem::path(c->options_.mountstats_path).parent_path() / "mountinfo").string());

  auto jobio = std::make_unique<JobIoSource>(*c, c->resolver_);
  auto tcp = std::make_unique<TcpSource>(*c);
  auto nfs = std::make_unique<NfsSource>(*c);
  // Each record goes to the registered collectors it concerns (as the
  // kernel laid it out), then to our own decoder, timed per source.
  auto timed = [raw = c.get()](RecordSource* source, const char* name, ForwardRing ring) {
    auto* timing = &raw->timing_[name];
    return [raw, source, timing, ring](const void* d, size_t n) {
      const auto t0 = std::chrono::steady_clock::now();
      ++timing->records;
      if (raw->registration_) raw->registration_->offer(ring, d, n);
      source->on_record(d, n);
      timing->spent += std::chrono::steady_clock::now() - t0;
    };
  };
  auto probes = ProbeManager::start(
      probe_options, features, timed(jobio.get(), "jobio", ForwardRing::Jobio),
      timed(tcp.get(), "tcp", ForwardRing::Tcp), timed(nfs.get(), "nfs", ForwardRing::Nfs));
  if (!probes) return probes.error();
  c->probes_ = std::move(*probes);
  ProbeManager* pm = c->probes_.get();
  // Only a client's unrecognised-I/O notice wants the kernel's sums of calls
  // on files ruled out: paused until one traces (step(), tracing_started).
  pm->pause_other_io(true);
  c->verdict_sink_ = [pm](const FileId& file, bool is_checkpoint) {
    pm->set_file_verdict(file, is_checkpoint);
  };
  c->metrics_.set_probe_mode(pm->probe_mode());
  tcp->set_latest_reader([pm] { return pm->tcp_latest(); });
  for (const auto& n : c->probes_->notes()) c->notes_.push_back(n);
  c->sources_.add(std::move(jobio));
  c->sources_.add(std::move(tcp));
  c->sources_.add(std::move(nfs));
  if (c->options_.registration_enabled) {
    RegistrationServer::Hooks hooks;
    hooks.tcp_enabled = [pm] { return pm->tcp_enabled(); };
    hooks.nfs_enabled = [pm] { return pm->nfs_enabled(); };
    hooks.drops = [pm] { return pm->drops(); };
    hooks.drain = [pm] { pm->sync(0); };
    NodeCollector* self = c.get();
    hooks.report_failure = [self](const FailureRecord& f) {
      self->metrics_.observe_node_failure(f);
    };
    hooks.report_held_back = [self](uint64_t lines) {
      self->metrics_.count_log_anomalies_held_back(lines);
    };
    hooks.rejected = [self](std::string_view reason) {
      self->metrics_.count_registration_rejected(std::string(reason));
    };
    hooks.process_left = [self](std::string_view reason) {
      self->metrics_.count_registration_process_left(std::string(reason));
    };
    hooks.note = [self](const std::string& note) { self->notes_.push_back(note); };
    hooks.probe_mode = [pm] { return pm->probe_mode(); };
    // OTHER verdicts were made without the new client's globs: the kernel
    // must record its processes' files until they are decided again.
    // The kernel sums calls on files ruled out again, for the client's notice.
    hooks.tracing_started = [pm] {
      pm->pause_other_io(false);
      pm->forget_other_verdicts();
    };
    c->metrics_.register_rejection_reasons(
        std::vector<std::string>(std::begin(kRejectReasons), std::end(kRejectReasons)));
    c->metrics_.register_process_left_reasons({std::string(kExporterCredentialsChanged)});
    auto server = RegistrationServer::listen(c->options_.registration, std::move(hooks));
    if (!server) return server.error();
    c->registration_ = std::move(*server);
  }
  return c;
}

NodeCollector::Workload& NodeCollector::workload_named(const std::string& name, uint64_t now_ns) {
  const std::string label = metrics_.job_label(name);  // bounded: "other" past the limit
  auto [it, fresh] = workloads_.try_emplace(label);
  if (fresh) {
    StageAvailability available;
    available.job_io = true;
    available.transport = !probes_ || probes_->tcp_enabled();
    available.nfs = !probes_ || probes_->nfs_enabled();
    it->second.stitcher = std::make_unique<Stitcher>(
        config_, std::make_shared<SystemMaxima>(config_.maxima, "/sys", calibrated_), available);
    // The exporter has no metric for the unrecognised-I/O notice: the
    // per-file accounting would be memory spent on nothing.
    it->second.stitcher->count_unrecognised_io(false);
    it->second.stitcher->set_verdict_listener(
        [this](const FileId& file, bool is_checkpoint) { on_verdict(file, is_checkpoint); });
    it->second.stitcher->set_call_returned_query(call_returned_query(probe_mode()));
  }
  it->second.last_event_ns = now_ns;
  return it->second;
}

NodeCollector::Workload& NodeCollector::workload_of(uint32_t tgid, uint64_t now_ns) {
  const std::string label = namer_.label_of(tgid, now_ns);
  auto home = home_.find(tgid);
  if (home != home_.end() && home->second != label) {
    // Moved to another cgroup: its events go to the new workload from now on.
    if (auto old = workloads_.find(home->second); old != workloads_.end())
      old->second.tgids.erase(tgid);
    home->second = label;
  } else if (home == home_.end()) {
    home_.emplace(tgid, label);
  }
  Workload& w = workload_named(label, now_ns);
  w.tgids.insert(tgid);
  return w;
}

std::unique_ptr<NodeCollector> NodeCollector::without_probes(const Config& config,
                                                             NodeCollectorOptions options,
                                                             CheckpointMetrics& metrics) {
  return std::unique_ptr<NodeCollector>(new NodeCollector(config, std::move(options), metrics));
}

bool NodeCollector::traced_by_client(uint32_t tgid) const {
  if (client_traces_) return client_traces_(tgid);
  return registration_ && registration_->traces(tgid);
}

void NodeCollector::note_client_file(uint32_t tgid, const FileId& file) {
  if (file.known() && traced_by_client(tgid)) verdict_gate_.client_touched(file);
}

void NodeCollector::on_verdict(const FileId& file, bool is_checkpoint) {
  if (!verdict_gate_.allows(file, is_checkpoint)) return;
  if (verdict_sink_) verdict_sink_(file, is_checkpoint);
}

void NodeCollector::on_event(Event&& event) {
  const uint64_t now = now_ns_;
  if (auto* io = std::get_if<IoEvent>(&event)) {
    if (is_cgroup_move(*io)) namer_.cgroups_changed();
    // Before the stitcher sees it: its verdict on the file may come now.
    note_client_file(io->tgid, io->file);
    workload_of(io->tgid, now).stitcher->on_event(std::move(event));
  } else if (auto* start = std::get_if<CallStartEvent>(&event)) {
    note_client_file(start->tgid, start->file);
    if (start->copy_source) note_client_file(start->tgid, *start->copy_source);
    workload_of(start->tgid, now).stitcher->on_event(std::move(event));
  } else if (auto* end = std::get_if<CallEndEvent>(&event)) {
    workload_of(end->tgid, now).stitcher->on_event(std::move(event));
  } else if (auto* busy = std::get_if<StorageBusyEvent>(&event)) {
    // The device's time goes to the job whose bio opened the interval.
    workload_of(busy->tgid, now).stitcher->on_event(std::move(event));
  } else if (auto* cpu = std::get_if<CpuEvent>(&event)) {
    workload_of(cpu->tgid, now).stitcher->on_event(std::move(event));
  } else if (auto* gpu = std::get_if<GpuCopyEvent>(&event)) {
    workload_of(gpu->tgid, now).stitcher->on_event(std::move(event));
  } else if (auto* other = std::get_if<OtherIoEvent>(&event)) {
    // The sums of calls on files ruled out feed only the unrecognised-I/O
    // notice, which the exporter does not report (its clients, sent the
    // raw records, count them themselves). Not the node's: never broadcast.
    note_client_file(other->tgid, other->file);
    return;
  } else if (auto* proc = std::get_if<ProcEvent>(&event)) {
    const uint32_t tgid = proc->tgid;
    if (proc->kind == ProcEvent::Kind::Fork) {
      namer_.forked(tgid, proc->child_tgid, now);
      if (home_.contains(tgid)) workload_of(tgid, now).stitcher->on_event(std::move(event));
      return;
    }
    auto home = home_.find(tgid);
    if (home != home_.end()) {
      auto w = workloads_.find(home->second);
      if (w != workloads_.end()) {
        w->second.last_event_ns = now;
        if (proc->kind == ProcEvent::Kind::Exit) w->second.tgids.erase(tgid);
        w->second.stitcher->on_event(std::move(event));
      }
    }
    if (proc->kind == ProcEvent::Kind::Exit) {
      if (home != home_.end()) home_.erase(home);
      namer_.exited(tgid);
      resolver_.exited(tgid);
    }
  } else {
    route_to_node(std::move(event));
  }
}

void NodeCollector::route_to_node(Event&& event) {
  if (const auto* tcp = std::get_if<TcpEvent>(&event)) {
    metrics_.observe_tcp(tcp->remote, tcp_sample_record(*tcp));
  } else if (const auto* rpc = std::get_if<RpcEvent>(&event)) {
    if (rpc->kind == RpcEvent::Kind::Timeout)
      metrics_.observe_rpc_timeout(rpc->server);
    else  // its major timeouts were counted as they fired, above
      metrics_.observe_rpc(rpc_call_record(*rpc));
  }
  // Every workload's stitcher sees the node's NFS and TCP events; each keeps
  // what its own checkpoints' files and windows claim.
  if (workloads_.empty()) return;
  auto last = std::prev(workloads_.end());
  for (auto it = workloads_.begin(); it != last; ++it) {
    Event copy = event;
    it->second.stitcher->on_event(std::move(copy));
  }
  last->second.stitcher->on_event(std::move(event));  // the last one takes it
}

void NodeCollector::count_failure(const std::string& label, const FailureRecord& f) {
  const bool node_level =
      !f.checkpoint_id &&
      std::find(kNodeLevelKinds.begin(), kNodeLevelKinds.end(), f.kind) != kNodeLevelKinds.end();
  if (!node_level) {
    metrics_.observe_failure(label, f);
    return;
  }
  auto [it, fresh] = node_failures_seen_.try_emplace({f.kind, f.time_ns, f.evidence}, f.time_ns);
  if (fresh) metrics_.observe_node_failure(f);
  // Remembered only as long as another stitcher could still report the same.
  std::erase_if(node_failures_seen_,
                [&](const auto& kv) { return kv.second + kNodeFailureMemoryNs < f.time_ns; });
}

void NodeCollector::export_outputs(const std::string& label, Workload& w) {
  for (const auto& c : w.stitcher->take_checkpoints()) metrics_.observe_checkpoint(label, c);
  for (const auto& f : w.stitcher->take_failures()) count_failure(label, f);
  // Per-call output is for traces; the exporter keeps none of it.
  (void)w.stitcher->take_io_calls();
  (void)w.stitcher->take_rpc_calls();
  (void)w.stitcher->take_tcp_samples();
}

void NodeCollector::retire_idle(uint64_t now_ns) {
  for (auto it = workloads_.begin(); it != workloads_.end();) {
    Workload& w = it->second;
    if (!w.tgids.empty() ||
        now_ns - std::min(now_ns, w.last_event_ns) < options_.workload_idle_ns) {
      ++it;
      continue;
    }
    w.stitcher->finish();
    export_outputs(it->first, w);
    for (const auto& d : w.stitcher->drops()) retired_drops_[{d.source, d.cause}] += d.count;
    it = workloads_.erase(it);
  }
}

void NodeCollector::watch_mounts(uint64_t now_ns) {
  if (now_ns - last_mount_check_ns_ < options_.mountstats_every_ns) return;
  last_mount_check_ns_ = now_ns;
  const auto t0 = std::chrono::steady_clock::now();
  auto mounts = read_mountstats(options_.mountstats_path);
  if (mounts) {
    for (const auto& [server, depth] : backlog_.update(*mounts))
      metrics_.set_rpc_backlog_depth(server, depth);
    if (probes_ && !probes_->nfs_enabled() && probes_->start_nfs_if_available()) {
      for (auto& [label, w] : workloads_) w.stitcher->set_nfs_available(true);
      notes_.push_back("NFS stages on: the NFS client appeared");
    }
    if (probes_ && probes_->tcp_enabled()) {
      for (const auto& ep : nfs_mount_endpoints(*mounts)) {
        if (endpoint_covered(options_.probes.endpoints, ep)) continue;
        options_.probes.endpoints.push_back(ep);
        if (auto ok = probes_->add_storage_endpoint(ep); !ok) notes_.push_back(ok.error().message);
      }
    }
  }
  if (!mounts) reject_mountstats(mounts.error());
  metrics_.observe_collection("mountstats", seconds(std::chrono::steady_clock::now() - t0),
                              mounts.has_value());
}

void NodeCollector::reject_mountstats(const Error& error) {
  // Not read whole (files/input_file.h: "PATH: cannot read it: ...", "PATH:
  // larger than ..."), or read and not mountstats.
  const bool unreadable = error.message.starts_with("cannot ") ||
                          error.message.find(": cannot read it: ") != std::string::npos ||
                          error.message.find(": larger than ") != std::string::npos;
  const std::string cause = unreadable ? "unreadable" : "malformed";
  ++mountstats_rejected_[cause];
  // Once per cause: the line number and the values vary from sample to
  // sample, the kind of defect does not; bounded, so a changing file cannot
  // grow the set.
  constexpr size_t kMaxCausesSaid = 16;
  std::string key = cause;
  if (const auto what = error.message.find(": ", error.message.find("line "));
      cause == "malformed" && what != std::string::npos) {
    key += error.message.substr(what, 40);
  }
  if (mountstats_said_.size() >= kMaxCausesSaid || !mountstats_said_.insert(key).second) return;
  notes_.push_back(
      fmt::format("mountstats sample rejected ({}): {} (counted as ckptscope_dropped_events_total"
                  "{{source=\"mountstats\",cause=\"{}\"}}; said once per cause)",
                  cause, error.message, cause));
}

void NodeCollector::publish_drops() {
  std::map<std::pair<std::string, std::string>, uint64_t> sum = retired_drops_;
  auto add = [&sum](const std::vector<DropRecord>& drops) {
    for (const auto& d : drops) sum[{d.source, d.cause}] += d.count;
  };
  if (probes_) add(probes_->drops());
  for (const auto& [cause, count] : mountstats_rejected_) sum[{"mountstats", cause}] += count;
  add(sources_.drops());
  for (const auto& [label, w] : workloads_) add(w.stitcher->drops());
  std::vector<DropRecord> out;
  out.reserve(sum.size());
  for (const auto& [key, count] : sum) out.push_back(DropRecord{key.first, key.second, count});
  metrics_.set_drops(out);
}

void NodeCollector::pump(int timeout_ms) {
  for (auto& [name, t] : timing_) t = {};
  if (registration_) {
    // Wake for records or for a registered collector, whichever comes first.
    std::vector<pollfd> fds;
    fds.push_back(pollfd{probes_->wait_fd(), POLLIN, 0});
    for (int fd : registration_->wait_fds()) fds.push_back(pollfd{fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), timeout_ms);
    timeout_ms = 0;
  }
  now_ns_ = monotonic_ns();
  auto polled = probes_->poll(timeout_ms);
  if (!polled) notes_.push_back(polled.error().message);
  if (registration_) registration_->serve();
  for (const auto& [name, t] : timing_) {
    if (name == "nfs" && !probes_->nfs_enabled()) continue;  // not running: no series
    if (name == "tcp" && !probes_->tcp_enabled()) continue;
    metrics_.observe_collection(name, seconds(t.spent), polled.has_value());
    if (t.records > 0) metrics_.add_kernel_records(name, t.records);
  }
  step(monotonic_ns());
  watch_mounts(now_ns_);
}

void NodeCollector::step(uint64_t now_ns) {
  now_ns_ = now_ns;
  const auto t0 = std::chrono::steady_clock::now();
  sources_.poll_all(now_ns);
  for (auto& [label, w] : workloads_) {
    w.stitcher->advance(now_ns);
    export_outputs(label, w);
  }
  retire_idle(now_ns);
  const bool clients_trace = registration_ && registration_->traces_any();
  if (!client_traces_ && !clients_trace) verdict_gate_.clients_gone();
  if (probes_) probes_->pause_other_io(!clients_trace);
  publish_drops();
  metrics_.observe_collection("stitch", seconds(std::chrono::steady_clock::now() - t0), true);
}

void NodeCollector::finish() {
  if (probes_) probes_->sync(0);
  for (auto& [label, w] : workloads_) {
    w.stitcher->finish();
    export_outputs(label, w);
  }
  publish_drops();
}

}  // namespace ckpt
