#include "apps/collector/collector.h"

#include <unistd.h>

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "common/clock.h"
#include "probes/exporter_feed.h"
#include "sources/call_return.h"
#include "sources/jobio_source.h"
#include "sources/nfs_mounts.h"
#include "sources/nfs_source.h"
#include "sources/tcp_source.h"
#include "sources/thread_io.h"

namespace ckpt {
namespace {

constexpr uint64_t kCommitEveryNs = 1'000'000'000;
// How long a finished job's storage connections are followed for bytes
// still in flight.
constexpr uint64_t kAckWaitNs = 2'000'000'000;
// How often NFS mounts are looked for (new servers, the NFS modules loading).
constexpr uint64_t kNfsCheckEveryNs = 2'000'000'000;

// The stitcher's decisions on files, as they are made, to the feed (the
// kernel then records a file that is no checkpoint's no more).
void listen_for_verdicts(Stitcher& stitcher, ProbeFeed& feed) {
  stitcher.set_verdict_listener([&feed](const FileId& file, bool is_checkpoint) {
    feed.set_file_verdict(file, is_checkpoint);
  });
}

}  // namespace

Expected<std::unique_ptr<Collector>> Collector::create(const Config& config,
                                                       const std::string& trace_path,
                                                       JobRecord job) {
  auto writer = TraceWriter::open(trace_path);
  if (!writer) return make_error(fmt::format("trace {}: {}", trace_path, writer.error().message));
  std::unique_ptr<Collector> c(new Collector(config, std::move(*writer), std::move(job)));
  if (auto ok = c->writer_.write_job(c->trace_.job); !ok) return ok.error();
  if (auto ok = c->writer_.commit(); !ok) return ok.error();
  return c;
}

Collector::Collector(const Config& config, TraceWriter writer, JobRecord job)
    : config_(config), writer_(std::move(writer)) {
  trace_.job = std::move(job);
}

Collector::~Collector() = default;

Expected<void> Collector::start(const ProbeOptions& requested, const KernelFeatures& features) {
  ProbeOptions options = requested;
  // The NFS mounts' counters now, to diff at the end (works without eBPF);
  // their servers join the storage endpoints the transport probes follow.
  if (auto mounts = read_mountstats()) {
    mounts_before_ = std::move(*mounts);
  } else {
    notes_.push_back("NFS mount counters unavailable: " + mounts.error().message);
  }
  endpoints_ = options.endpoints;
  if (options.tcp)
    for (const auto& ep : nfs_mount_endpoints(mounts_before_)) follow_endpoint(ep);
  options.endpoints = endpoints_;

  auto jobio = std::make_unique<JobIoSource>(*this, resolver_);
  auto tcp = std::make_unique<TcpSource>(*this);
  auto nfs = std::make_unique<NfsSource>(*this);
  RecordSource* jobio_raw = jobio.get();
  RecordSource* tcp_raw = tcp.get();
  RecordSource* nfs_raw = nfs.get();
  RecordHandler on_jobio = [jobio_raw](const void* d, size_t n) { jobio_raw->on_record(d, n); };
  RecordHandler on_tcp = [tcp_raw](const void* d, size_t n) { tcp_raw->on_record(d, n); };
  RecordHandler on_nfs = [nfs_raw](const void* d, size_t n) { nfs_raw->on_record(d, n); };
  Expected<std::unique_ptr<ProbeFeed>> probes = make_error("not started");
  if (!options.exporter_socket.empty()) {
    // The node exporter already traces the node: take the job's records
    // from it, else (none there, or it refused) load our own.
    auto remote = ExporterFeed::connect(options.exporter_socket, {}, options.client_name, on_jobio,
                                        on_tcp, on_nfs);
    const std::string asked(requested_probe_mode_name(options.probe_mode));
    if (remote && options.probe_mode != RequestedProbeMode::Auto &&
        (*remote)->probe_mode() != asked)
      notes_.push_back(fmt::format(
          "the node exporter at {} traces in {} mode, --probe-mode {} was asked for; loading "
          "probes of our own",
          options.exporter_socket,
          (*remote)->probe_mode().empty() ? "an unknown" : (*remote)->probe_mode(), asked));
    else if (remote)
      probes = std::unique_ptr<ProbeFeed>(std::move(*remote));
    else
      notes_.push_back(remote.error().message + "; loading probes of our own");
  }
  if (!probes) {
    auto local = ProbeManager::start(options, features, on_jobio, on_tcp, on_nfs);
    if (local)
      probes = std::unique_ptr<ProbeFeed>(std::move(*local));
    else
      probes = local.error();
  }
  StageAvailability available;
  // The node's calibrated storage maxima; a maxima file that cannot be used
  // is said with the start's notes, or later in the trace's warning.
  auto calibrated = CalibratedMaxima::for_this_process([this](const std::string& m) {
    if (notes_in_job_)
      warn_in_trace(m);
    else
      notes_.push_back(m);
  });
  auto maxima = std::make_shared<SystemMaxima>(config_.maxima, "/sys", calibrated);
  if (!probes) {
    stitcher_ = std::make_unique<Stitcher>(config_, maxima, available);
    notes_in_job_ = true;
    trace_.job.traced = false;
    trace_.job.trace_warning = probes.error().message;
    (void)writer_.write_job(trace_.job);
    (void)writer_.commit();
    return probes.error();
  }
  probes_ = std::move(*probes);
  ProbeFeed* pm = probes_.get();
  tcp->set_latest_reader([pm] { return pm->tcp_latest(); });
  for (const auto& n : probes_->notes()) notes_.push_back(n);
  notes_at_start_ = probes_->notes().size();
  available.job_io = true;
  available.transport = probes_->tcp_enabled();
  available.nfs = probes_->nfs_enabled();
  available.gpu = gpu_ok_;
  stitcher_ = std::make_unique<Stitcher>(config_, maxima, available);
  listen_for_verdicts(*stitcher_, *probes_);
  trace_.job.probe_mode = probes_->probe_mode();
  stitcher_->set_call_returned_query(call_returned_query(trace_.job.probe_mode));
  sources_.add(std::move(jobio));
  sources_.add(std::move(tcp));
  sources_.add(std::move(nfs));
  trace_.job.traced = true;
  for (const auto& n : notes_)
    trace_.job.trace_warning += (trace_.job.trace_warning.empty() ? "" : "; ") + n;
  notes_in_job_ = true;
  (void)writer_.write_job(trace_.job);
  (void)writer_.commit();
  return {};
}

Expected<std::string> Collector::listen_for_gpu_copies(const std::string& parent_dir) {
  auto source = GpuCopySource::listen(*this, parent_dir);
  if (!source) return source.error();
  gpu_ = std::move(*source);
  gpu_->on_status([this](const GpuCopySource::ProcessStatus& st) {
    if (st.ok) {
      gpu_ok_ = true;
      if (stitcher_) stitcher_->set_gpu_available(true);
    } else {
      warn_in_trace(fmt::format("gpu_copy not traced in process {}: {}", st.pid, st.message));
    }
  });
  return gpu_->socket_path();
}

void Collector::warn_in_trace(const std::string& message) {
  notes_.push_back(message);
  trace_.job.trace_warning += (trace_.job.trace_warning.empty() ? "" : "; ") + message;
}

Expected<void> Collector::trace_tgid(uint32_t tgid) {
  live_tgids_.insert(tgid);
  if (!probes_) return {};
  // What its threads had moved before: only what they move from now on is
  // the job's under the trace (attach; for run, the child before its exec).
  for (const auto& t : read_threads_io(tgid)) accounting_.baseline(t.tid, t.io);
  return probes_->trace_tgid(tgid);
}

void Collector::on_event(Event&& event) {
  if (const auto* p = std::get_if<ProcEvent>(&event)) {
    if (p->kind == ProcEvent::Kind::Fork) {
      live_tgids_.insert(p->child_tgid);
    } else if (p->kind == ProcEvent::Kind::Exit) {
      live_tgids_.erase(p->tgid);
      resolver_.exited(p->tgid);
    }
    accounting_.on_exit(*p);
  }
  stitcher_->on_event(std::move(event));
}

void Collector::pump(int timeout_ms) {
  if (!probes_) return;
  if (auto n = probes_->poll(timeout_ms); !n) notes_.push_back(n.error().message);
  uint64_t now = monotonic_ns();
  watch_nfs(now);
  if (gpu_) gpu_->poll(now);
  sources_.poll_all(now);
  stitcher_->advance(now);
  if (now - last_commit_ns_ >= kCommitEveryNs) {
    flush_outputs();
    last_commit_ns_ = now;
  }
}

void Collector::watch_nfs(uint64_t now_ns) {
  if (now_ns - last_nfs_check_ns_ < kNfsCheckEveryNs) return;
  last_nfs_check_ns_ = now_ns;
  if (!probes_->nfs_enabled()) {
    // The nfs and sunrpc modules load with the first NFS mount.
    if (probes_->start_nfs_if_available()) {
      stitcher_->set_nfs_available(true);
      notes_.push_back("NFS stages on: the NFS client appeared during the trace");
    }
  }
  if (!probes_->tcp_enabled()) return;
  auto mounts = read_mountstats();
  if (!mounts) return;
  for (const auto& ep : nfs_mount_endpoints(*mounts)) {
    if (!follow_endpoint(ep)) continue;
    if (auto ok = probes_->add_storage_endpoint(ep); !ok) notes_.push_back(ok.error().message);
  }
}

bool Collector::follow_endpoint(const StorageEndpoint& ep) {
  const bool covered = endpoint_covered(endpoints_, ep);
  if (!covered) endpoints_.push_back(ep);
  return !covered;
}

std::vector<DropRecord> Collector::current_drops() const {
  std::vector<DropRecord> drops = probes_ ? probes_->drops() : std::vector<DropRecord>{};
  for (auto& d : sources_.drops()) drops.push_back(std::move(d));
  if (gpu_)
    for (auto& d : gpu_->drops()) drops.push_back(std::move(d));
  if (stitcher_)
    for (auto& d : stitcher_->drops()) drops.push_back(std::move(d));
  drops.push_back(DropRecord{"collector", "trace_write_error", write_errors_});
  return drops;
}

void Collector::add_failure(FailureRecord failure) {
  if (!writer_.append_failure(failure)) ++write_errors_;
  trace_.failures.push_back(std::move(failure));
}

void Collector::flush_outputs() {
  if (!stitcher_) return;
  auto count = [this](const Expected<void>& r) {
    if (!r) ++write_errors_;
  };
  for (auto& c : stitcher_->take_checkpoints()) {
    count(writer_.append_checkpoint(c));
    trace_.checkpoints.push_back(std::move(c));
  }
  for (auto& f : stitcher_->take_failures()) {
    count(writer_.append_failure(f));
    trace_.failures.push_back(std::move(f));
  }
  auto calls = stitcher_->take_io_calls();
  if (!calls.empty()) count(writer_.append_io_calls(calls));
  std::move(calls.begin(), calls.end(), std::back_inserter(trace_.io_calls));
  auto rpc_calls = stitcher_->take_rpc_calls();
  if (!rpc_calls.empty()) count(writer_.append_rpc_calls(rpc_calls));
  std::move(rpc_calls.begin(), rpc_calls.end(), std::back_inserter(trace_.rpc_calls));
  auto samples = stitcher_->take_tcp_samples();
  if (!samples.empty()) count(writer_.append_tcp_samples(samples));
  std::move(samples.begin(), samples.end(), std::back_inserter(trace_.tcp_samples));
  for (const auto& conn : stitcher_->connections()) count(writer_.upsert_connection(conn));
  // Only a traced job has these figures (untraced: not counted, not zero);
  // rewritten when they changed, so a killed profiler keeps the latest.
  if (probes_) {
    UnrecognisedIoRecord io = stitcher_->unrecognised_io();
    if (trace_.unrecognised_io != io) {
      count(writer_.set_unrecognised_io(io));
      trace_.unrecognised_io = std::move(io);
    }
  }
  count(writer_.set_drops(current_drops()));
  count(writer_.commit());
}

void Collector::await_storage_acks() {
  // A job can exit with checkpoint bytes still in its sockets' send queues:
  // the kernel goes on delivering them. Follow storage connections that
  // still have unacknowledged data for a bounded while, so the transport
  // stage counts what the job sent. (NFS needs none of this: close()
  // flushes before it returns.)
  const uint64_t deadline = monotonic_ns() + kAckWaitNs;
  while (monotonic_ns() < deadline) {
    const uint64_t now = monotonic_ns();
    bool waiting = false;
    for (const auto& l : probes_->tcp_latest())
      waiting = waiting || (l.in_flight > 0 && now - std::min(now, l.time_ns) < kAckWaitNs);
    if (!waiting) return;
    pump(20);
  }
}

void Collector::write_io_accounting() {
  // Nothing to compare without the probes, or on a kernel whose exit
  // records carry no counters.
  if (!probes_ || !stitcher_) return;
  const IoAccounting::OutsideCheckpoints outside{stitcher_->written_outside_checkpoints(),
                                                 stitcher_->files_written_outside_checkpoints(),
                                                 stitcher_->unrecognised_io().notice_bytes};
  IoAccountingRecord io = accounting_.record(trace_.checkpoints, outside, live_tgids_.size(),
                                             static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  if (io.threads == 0 && accounting_.threads_without_counters() > 0) return;
  if (auto ok = writer_.set_io_accounting(io); !ok) ++write_errors_;
  trace_.io_accounting = io;
}

Expected<Trace> Collector::finish(const JobRecord& job) {
  if (probes_ && probes_->tcp_enabled()) await_storage_acks();
  if (probes_) {
    // Whatever the kernel already recorded belongs to the job.
    probes_->sync(2000);
    // The CUPTI libraries flush at the job's exit: what they sent is here.
    if (gpu_) gpu_->poll(monotonic_ns());
    // What the feed had to say since the start (an exporter that went away).
    const auto& notes = probes_->notes();
    for (size_t i = notes_at_start_; i < notes.size(); ++i) {
      notes_.push_back(notes[i]);
      trace_.job.trace_warning += (trace_.job.trace_warning.empty() ? "" : "; ") + notes[i];
    }
  }
  if (stitcher_) stitcher_->finish();
  flush_outputs();
  // The NFS mounts over the trace, from the kernel's own counters, next to
  // what eBPF saw (when it ran) for the cross-check.
  if (auto after = read_mountstats()) {
    std::optional<std::vector<RpcTotals>> ebpf;
    if (probes_ && probes_->nfs_enabled() && stitcher_) ebpf = stitcher_->rpc_totals();
    trace_.nfs_mounts = nfs_mount_records(mounts_before_, *after, ebpf);
    if (auto ok = writer_.set_nfs_mounts(trace_.nfs_mounts); !ok) ++write_errors_;
  }
  trace_.connections = stitcher_ ? stitcher_->connections() : std::vector<ConnectionRecord>{};
  trace_.drops = current_drops();
  write_io_accounting();
  bool traced = trace_.job.traced;
  std::string warning = trace_.job.trace_warning;
  std::string probe_mode = trace_.job.probe_mode;
  trace_.job = job;
  trace_.job.traced = traced;
  trace_.job.trace_warning = warning;
  trace_.job.probe_mode = probe_mode;
  if (auto ok = writer_.write_job(trace_.job); !ok) return ok.error();
  if (auto ok = writer_.commit(); !ok) return ok.error();
  if (write_errors_ > 0)
    return make_error(
        fmt::format("{} writes to the trace failed; it may be incomplete", write_errors_));
  return trace_;
}

}  // namespace ckpt
