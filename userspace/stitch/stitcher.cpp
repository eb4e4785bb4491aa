#include "stitch/stitcher.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <tuple>

#include "stitch/copy_sides.h"
#include "stitch/exclusive.h"

namespace ckpt {
namespace {

// Events reach us through a ring buffer shared by all CPUs: allow this much
// reordering before a quiet gap is declared.
constexpr uint64_t kReorderSlackNs = 100'000'000;
// libckptscope_cupti.so flushes CUPTI's activity buffers every 500 ms: a
// checkpoint waits this much longer for its last copies when it runs.
constexpr uint64_t kGpuSlackNs = 1'000'000'000;
constexpr double kContenderShare = 0.9;

int pipeline_rank(std::string_view stage) {
  for (size_t i = 0; i < std::size(kAllStages); ++i)
    if (kAllStages[i] == stage) return static_cast<int>(i);
  return -1;
}

// The checkpoint's files with data calls, by path: the calls on each.
std::vector<FileIoRecord> file_io_records(const OpenCheckpoint& c) {
  std::unordered_map<FileId, FileIoRecord, FileIdHash> files;
  for (const auto& ev : c.calls) {
    if (ev.is_directory) continue;
    FileIoRecord& f = files[call_key(ev)];
    if (!ev.path.empty() && (f.path.empty() || ev.op == IoOp::Rename))
      f.path = ev.op == IoOp::Rename && ev.ret == 0 ? ev.path2 : ev.path;
    f.dev = ev.file.dev;
    f.ino = ev.file.ino;
    if (f.first_ns == 0 || ev.start_ns < f.first_ns) f.first_ns = ev.start_ns;
    f.last_ns = std::max(f.last_ns, ev.end_ns);
    f.busy_ns += ev.call_time_ns();
    if (ev.ret < 0) ++f.errors;
    if (ev.op == IoOp::Write) {
      f.write_calls += ev.calls;
      f.bytes_written += ev.bytes_moved();
    } else if (is_read_direction(ev.op)) {
      f.read_calls += ev.calls;
      f.bytes_read += ev.bytes_moved();
      if (ev.op == IoOp::Mmap) {
        f.mmap_bytes += ev.bytes_moved();
        f.storage_bytes += ev.storage_bytes;
      }
    } else {
      ++f.other_calls;
    }
  }
  std::vector<FileIoRecord> out;
  for (auto& [key, f] : files)
    if (f.write_calls + f.read_calls > 0) out.push_back(std::move(f));
  std::sort(out.begin(), out.end(),
            [](const FileIoRecord& a, const FileIoRecord& b) { return a.path < b.path; });
  return out;
}

// Which interfaces moved the checkpoint's bytes, in IoVia order, non-zero only.
std::vector<std::pair<std::string, uint64_t>> bytes_by_via(const OpenCheckpoint& c) {
  std::array<uint64_t, kIoVias> sums{};
  for (const auto& ev : c.calls) sums[static_cast<size_t>(ev.via)] += ev.bytes_moved();
  std::vector<std::pair<std::string, uint64_t>> out;
  for (size_t i = 0; i < kIoVias; ++i)
    if (sums[i] > 0) out.emplace_back(std::string(to_string(static_cast<IoVia>(i))), sums[i]);
  return out;
}

// The bytes the storage copied itself (server_copy, reflink): no stage of
// this node moved them, the serialize stage's CPU included.
uint64_t storage_copied_bytes(const OpenCheckpoint& c) {
  uint64_t sum = 0;
  for (const auto& ev : c.calls)
    if (storage_copied(ev.via)) sum += ev.bytes_moved();
  return sum;
}

// Puts `stage` among rec's stages in kAllStages order (the NFS stages come
// before the storage stage, which reads them, is built).
void insert_stage(CheckpointRecord& rec, StageRecord&& stage) {
  auto at = std::find_if(rec.stages.begin(), rec.stages.end(), [&](const StageRecord& s) {
    return pipeline_rank(s.name) > pipeline_rank(stage.name);
  });
  rec.stages.insert(at, std::move(stage));
}

}  // namespace

std::string choose_bottleneck(const std::vector<StageRecord>& stages) {
  // A stage's own time: its busy time less what the stages below it explain.
  auto own = [](const StageRecord& s) { return s.exclusive_ns.value_or(s.busy_ns); };
  uint64_t most = 0;
  for (const auto& s : stages) most = std::max(most, own(s));
  if (most == 0) return "";
  // Stages within kContenderShare of the most own time are a near-tie: the
  // one furthest down the pipeline is named, always, so that noise moving
  // two such stages past each other does not flip the verdict between runs.
  // Maxima play no part: the verdict is the same with them or without.
  const StageRecord* best = nullptr;
  for (const auto& s : stages) {
    if (static_cast<double>(own(s)) < kContenderShare * static_cast<double>(most)) continue;
    if (!best || std::make_tuple(pipeline_rank(s.name), own(s)) >
                     std::make_tuple(pipeline_rank(best->name), own(*best)))
      best = &s;
  }
  return best->name;
}

std::string attribute_queue_verdict(const std::string& verdict,
                                    const std::vector<StageRecord>& stages,
                                    const std::vector<std::pair<std::string, uint64_t>>& waits) {
  if (verdict != kStageRpcQueue) return verdict;
  uint64_t sending = 0;
  uint64_t backlog = 0;
  for (const auto& [queue, ns] : waits) {
    if (queue == rpc_queue_name(kRpcQueueSending)) sending = ns;
    if (queue == rpc_queue_name(kRpcQueueBacklog)) backlog = ns;
  }
  auto has = [&](std::string_view name) {
    return std::any_of(stages.begin(), stages.end(),
                       [&](const StageRecord& s) { return s.name == name; });
  };
  if (sending > 0 && sending >= backlog && has(kStageTransport))
    return std::string(kStageTransport);
  if (backlog > sending && has(kStageRpcRtt)) return std::string(kStageRpcRtt);
  return verdict;
}

Stitcher::Stitcher(const Config& config, std::shared_ptr<MaximaProvider> maxima,
                   StageAvailability available)
    : config_(config),
      matcher_(config.checkpoint),
      maxima_(std::move(maxima)),
      available_(available),
      unrecognised_(config.checkpoint),
      host_io_(maxima_),
      storage_(maxima_),
      nfs_(maxima_, config.checkpoint.quiet_gap_ns),
      transport_(maxima_, config.tcp_sample_interval_ns, config.checkpoint.quiet_gap_ns,
                 config.failures),
      gpu_(maxima_, config.checkpoint.quiet_gap_ns),
      detectors_(config.checkpoint.stall_ns, config.checkpoint.quiet_gap_ns,
                 config.checkpoint.in_flight_limit_ns) {}

void Stitcher::on_event(Event&& event) {
  if (auto* io = std::get_if<IoEvent>(&event)) return on_io(std::move(*io));
  if (auto* cpu = std::get_if<CpuEvent>(&event)) return host_io_.on_cpu(*cpu);
  if (auto* proc = std::get_if<ProcEvent>(&event)) return on_proc(*proc);
  if (auto* tcp = std::get_if<TcpEvent>(&event)) return on_tcp(*tcp);
  if (auto* start = std::get_if<CallStartEvent>(&event)) return on_call_start(std::move(*start));
  if (auto* nfs = std::get_if<NfsIoEvent>(&event)) return nfs_.on_nfs_io(*nfs);
  if (auto* rpc = std::get_if<RpcEvent>(&event)) return on_rpc(*rpc);
  if (auto* gpu = std::get_if<GpuCopyEvent>(&event)) return gpu_.on_gpu_copy(std::move(*gpu));
  if (auto* other = std::get_if<OtherIoEvent>(&event)) return on_other_io(*other);
  if (auto* end = std::get_if<CallEndEvent>(&event)) return detectors_.on_call_returned(end->tid);
  if (auto* busy = std::get_if<StorageBusyEvent>(&event)) storage_.on_busy(*busy);
}

void Stitcher::on_rpc(const RpcEvent& ev) {
  if (ev.kind == RpcEvent::Kind::Timeout)
    detectors_.flag_server_timeout(ev, open_checkpoint(), out_failures_);
  nfs_.on_rpc(ev);
}

void Stitcher::on_call_start(CallStartEvent&& ev) {
  // Whose call it is, decided as its record will be (a copy is the
  // checkpoint's when either file is one). The probe has no result yet, so
  // no verdict is made from a path call's names.
  IoEvent probe;
  probe.op = ev.op;
  probe.file = ev.file;
  probe.path = ev.path;
  probe.path2 = ev.path2;
  probe.ret = -1;
  bool checkpoint = is_checkpoint_call(probe);
  if (!checkpoint && ev.copy_source) {
    probe.op = IoOp::Read;
    probe.file = *ev.copy_source;
    probe.path = ev.copy_source_path;
    checkpoint = is_checkpoint_call(probe);
  }
  if (checkpoint) detectors_.on_call_start(std::move(ev));
}

void Stitcher::on_proc(const ProcEvent& ev) {
  if (ev.kind == ProcEvent::Kind::Exit && open_) flag_partial_save(ev, *open_);
  if (ev.kind == ProcEvent::Kind::ThreadExit || ev.kind == ProcEvent::Kind::Exit) {
    // A thread that is gone adds no more windows; keep its old ones only
    // while a checkpoint may still need them.
    if (!open_) host_io_.forget_thread(ev.tid);
    detectors_.on_call_returned(ev.tid);  // its call will never return
  }
}

void Stitcher::set_verdict(const FileId& file, bool is_checkpoint) {
  file_is_checkpoint_[file] = is_checkpoint;
  // What was counted as unrecognised before the file was known to be a
  // checkpoint's no longer counts as such (a rename into a checkpoint's name
  // moved it into the checkpoint first: settle_rename). Said here, where a
  // verdict is made, not at every call: a stat or unlink in a checkpoint
  // directory is the checkpoint's call without making its file a checkpoint
  // file.
  if (is_checkpoint) (void)unrecognised_.take(file);
}

void Stitcher::decide(const FileId& file, bool is_checkpoint, bool tell_always) {
  auto it = file_is_checkpoint_.find(file);
  const bool changed = it == file_is_checkpoint_.end() || it->second != is_checkpoint;
  set_verdict(file, is_checkpoint);
  // A file held under a temporary name is no checkpoint's yet, but the
  // kernel records its calls as a checkpoint's (rare: told every time).
  const bool held = !is_checkpoint && pending_.holds(file);
  if (verdict_listener_ && (changed || tell_always || held))
    verdict_listener_(file, is_checkpoint || held);
}

void Stitcher::hold_if_temporary(const IoEvent& ev, bool is_checkpoint) {
  if (!is_checkpoint && count_unrecognised_ && ev.file.known() && !ev.is_directory &&
      !ev.path.empty() && matcher_.is_temporary(ev.path))
    pending_.track(ev.file, ev.path, ev.end_ns);
}

bool Stitcher::is_checkpoint_call(const IoEvent& ev) {
  // The listener hears only decisions on regular files made from a name:
  // a file whose path is unknown is left to the kernel (a candidate).
  const bool named_file = !ev.is_directory && !ev.path.empty();
  if (ev.op == IoOp::Rename) {
    bool yes = matcher_.is_checkpoint_file(ev.path) || matcher_.is_checkpoint_file(ev.path2);
    if (ev.ret == 0 && ev.file.known()) {
      if (named_file && !ev.path2.empty()) {
        decide(ev.file, yes, false);
      } else {
        set_verdict(ev.file, yes);
      }
    }
    return yes;
  }
  if (is_metadata_op(ev.op)) {
    bool yes = ev.is_directory || ev.op == IoOp::Mkdir ? matcher_.is_checkpoint_dir(ev.path)
                                                       : matcher_.is_checkpoint_file(ev.path);
    if (!yes && (ev.op == IoOp::Unlink || ev.op == IoOp::Stat))
      yes = matcher_.is_checkpoint_dir(ev.path);
    if (ev.op == IoOp::Open && ev.ret >= 0 && ev.file.known()) {
      // The kernel forgets a file's verdict at every open: tell it again.
      if (named_file) {
        hold_if_temporary(ev, yes);
        decide(ev.file, yes, true);
      } else {
        set_verdict(ev.file, yes);
      }
    }
    return yes;
  }
  if (ev.is_directory) return matcher_.is_checkpoint_dir(ev.path);  // fsync of a directory
  if (ev.file.known()) {
    auto it = file_is_checkpoint_.find(ev.file);
    if (it != file_is_checkpoint_.end()) return it->second;
    bool yes = matcher_.is_checkpoint_file(ev.path);
    if (named_file) {
      hold_if_temporary(ev, yes);
      decide(ev.file, yes, false);
    } else {
      set_verdict(ev.file, yes);
    }
    return yes;
  }
  return matcher_.is_checkpoint_file(ev.path);
}

void Stitcher::count_mapped_pages(OpenCheckpoint& c, IoEvent& ev) {
  // Each page of a file counts once per checkpoint, however many faults (or
  // fault-arounds) map it, or however often stores dirty it again after
  // writeback cleaned it: the bytes of the event are the pages it mapped (or
  // dirtied) first, clipped to the file's size.
  const MmapPages& m = *ev.mmap;
  const PageRange within = pages_within_file(m.first_page, m.last_page, m.file_size, m.page_shift);
  auto& seen = ev.op == IoOp::Write ? c.stored_pages : c.mapped_pages;
  uint64_t fresh_bytes = 0;
  if (m.installed_pages != 0) {
    // Counted, not placed: the file's bytes once per checkpoint at most.
    uint64_t& counted = c.counted_mapped_bytes[call_key(ev)];
    fresh_bytes = std::min(mapped_bytes(m), m.file_size - std::min(counted, m.file_size));
    counted += fresh_bytes;
  } else if (!within.empty) {
    for (auto [first, last] : seen[call_key(ev)].add(within.first_page, within.last_page))
      fresh_bytes += page_range_bytes(first, last, m.file_size, m.page_shift);
  }
  ev.ret = static_cast<int64_t>(fresh_bytes);
  // Pages the faults read from storage, never more than the bytes counted.
  const uint64_t storage = m.storage_pages >= (UINT64_MAX >> m.page_shift)
                               ? UINT64_MAX
                               : m.storage_pages << m.page_shift;
  ev.storage_bytes = std::min(storage, fresh_bytes);
}

void Stitcher::on_io(IoEvent&& ev) {
  host_io_.add_cpu_window(ev.tid, ev.cpu_window_start_ns, ev.cpu_window_end(), ev.cpu_ns);
  // A call whose checkpoint ended without it (in flight past the limit)
  // starts no checkpoint of its own: it is a stall of that one.
  if (auto late = detectors_.late_return(ev)) {
    out_failures_.push_back(std::move(*late));
    return;
  }
  if (detectors_.is_late_return(ev)) return;  // a late copy's other half
  // Whatever this thread had in flight has returned; faults (mmap) come
  // inside calls too (a read into a mapped buffer) and end none.
  if (ev.via != IoVia::Mmap) detectors_.on_call_returned(ev.tid);
  if (ev.op == IoOp::Rename && ev.ret == 0) settle_rename(ev);
  if (ev.op == IoOp::Unlink && ev.ret == 0) settle_unlink(ev);
  if (!is_checkpoint_call(ev)) {
    // A call on a file held under a temporary name waits for its rename.
    if (ev.file.known() && ev.op != IoOp::Rename && pending_.holds(ev.file)) {
      if (!pending_.full()) {
        pending_.hold(std::move(ev));
        return;
      }
      release_pending(ev.file);  // past the bound: unrecognised, as below
    }
    note_unrecognised(ev);
    if (auto f = job_failure(ev)) out_failures_.push_back(std::move(*f));
    return;
  }
  admit(std::move(ev));
}

void Stitcher::admit(IoEvent&& ev) {
  if (open_ && ev.start_ns > open_->last_activity_ns + config_.checkpoint.quiet_gap_ns)
    close_open();
  // A save followed at once by a load (or the reverse): data moving the
  // other way on a file this burst never touched, once the burst's calls
  // have ended, starts a new checkpoint. mmap faults read. The destination
  // half of a copy whose source half joined this checkpoint stays with it:
  // one copy is one checkpoint; so does a call that started while the
  // burst's calls were still running the other way (rsync's receiver
  // writes what its sender, another process, is still reading; its writes
  // to a temporary name come in when the rename decides them).
  const bool copy_of_joined_source =
      ev.copy_source && open_ && open_->files_touched.contains(*ev.copy_source);
  const bool while_burst_ran = open_ && ev.start_ns < open_->end_ns;
  if (open_ && moves_bytes(ev.op) && !copy_of_joined_source && !while_burst_ran &&
      !open_->files_touched.contains(call_key(ev))) {
    bool saving = open_->write_calls > 0 && open_->read_calls == 0;
    bool loading = open_->read_calls > 0 && open_->write_calls == 0;
    if ((saving && is_read_direction(ev.op)) || (loading && ev.op == IoOp::Write)) close_open();
  }
  if (!open_) {
    open_ = OpenCheckpoint();
    open_->start_ns = ev.start_ns;
    open_->end_ns = ev.end_ns;
    open_->last_activity_ns = ev.start_ns;
  }
  OpenCheckpoint& c = *open_;
  if (ev.via == IoVia::Mmap && ev.mmap) count_mapped_pages(c, ev);
  c.add(std::move(ev));
}

void Stitcher::on_tcp(const TcpEvent& ev) {
  out_tcp_samples_.push_back(tcp_sample_record(ev));
  transport_.on_tcp(ev);
}

void Stitcher::advance(uint64_t now_ns) {
  nfs_.forget_stale_outstanding(now_ns);
  if (call_returned_) detectors_.forget_returned_unseen(now_ns, call_returned_);
  detectors_.flag_live_stalls(now_ns, open_checkpoint(), nfs_, out_failures_);
  // The CUPTI library hands its copies over when it flushes (every 500 ms):
  // a load's last H2D copies may come that much after its last read.
  const uint64_t gpu_slack = available_.gpu ? kGpuSlackNs : 0;
  if (open_ &&
      now_ns >
          open_->last_activity_ns + config_.checkpoint.quiet_gap_ns + kReorderSlackNs + gpu_slack &&
      !in_flight_within(*open_, now_ns))
    close_open();
  release_unclaimed_resets(now_ns);
  // A temporary file no rename has decided for as long as a call may stay in
  // flight is no checkpoint's.
  if (now_ns > config_.checkpoint.in_flight_limit_ns)
    release_stale_pending(now_ns - config_.checkpoint.in_flight_limit_ns);
  if (!open_) prune(now_ns > 2 * kReorderSlackNs ? now_ns - 2 * kReorderSlackNs : 0);
}

void Stitcher::finish() {
  if (open_) close_open();
  release_stale_pending(UINT64_MAX);
  release_unclaimed_resets(UINT64_MAX);
}

bool Stitcher::in_flight_within(const OpenCheckpoint& c, uint64_t now_ns) const {
  // A call that began inside the checkpoint is part of it, however long it
  // runs (up to the in-flight limit); so is NFS page I/O on its files not
  // yet done.
  return detectors_.call_in_flight_within(c, now_ns) || nfs_.io_outstanding_on(c.files_touched);
}

void Stitcher::release_unclaimed_resets(uint64_t now_ns) {
  // A reset no checkpoint claimed is the job's: never dropped. A server's
  // resets go out together once the newest is past the horizon.
  const uint64_t horizon = config_.checkpoint.quiet_gap_ns + kReorderSlackNs;
  const std::optional<uint64_t> open_start =
      open_ ? std::optional<uint64_t>(open_->start_ns) : std::nullopt;
  for (auto& f :
       group_resets(transport_.take_settled_resets(now_ns, horizon, open_start), std::nullopt))
    out_failures_.push_back(std::move(f));
}

void Stitcher::prune(uint64_t horizon_ns) {
  host_io_.prune(horizon_ns);
  storage_.prune(horizon_ns);
  nfs_.prune(horizon_ns);
  gpu_.prune(horizon_ns);
  transport_.prune(horizon_ns);
}

void Stitcher::close_open() {
  OpenCheckpoint c = std::move(*open_);
  open_.reset();
  // A copy is a load of what it read and a save of what it wrote.
  if (auto sides = split_copy_sides(c)) {
    emit(std::move(sides->first));
    emit(std::move(sides->second));
    return;
  }
  emit(std::move(c));
}

void Stitcher::emit(OpenCheckpoint&& c) {
  std::vector<FailureRecord> failures = detectors_.closing_failures(c, nfs_);
  const uint64_t bytes = c.bytes_written + c.bytes_read;
  if (bytes == 0 && failures.empty()) return;  // metadata probes only: not a checkpoint
  if (file_is_checkpoint_.size() > 500'000) file_is_checkpoint_.clear();  // bounded for long runs

  CheckpointRecord rec;
  rec.id = next_id_++;
  // A copy between two checkpoint files reads as much as it writes: it is a
  // save (of its destination) when nothing else tips the balance.
  const bool copy_tie = c.bytes_written == c.bytes_read && bytes > 0 && c.copy_bytes_written > 0;
  rec.direction =
      c.bytes_written > c.bytes_read || copy_tie || (bytes == 0 && c.write_calls >= c.read_calls)
          ? Direction::Save
          : Direction::Load;
  rec.start_ns = c.start_ns;
  rec.end_ns = c.end_ns;
  rec.bytes = bytes;
  rec.file_io = file_io_records(c);
  rec.bytes_by_via = bytes_by_via(c);
  rec.files = static_cast<uint32_t>(rec.file_io.size());

  // Each family adds its stages, in pipeline order but for transport, and
  // the intervals behind them for the exclusive times.
  // The load side of a copy shares its window, its NFS clients and its
  // connections with the save side, emitted next: what those see wrong
  // (RPC errors, TCP trouble, resets) is told once, by the save; and the
  // GPU copies in the window are no copy's (stitch/copy_sides.h).
  const bool copy_load = c.copy_side == CopySide::Load;
  const size_t own_failures = failures.size();
  StageSpans spans;
  if (available_.gpu && !copy_load)
    if (auto g = gpu_.stage(c, rec)) rec.stages.push_back(std::move(*g));
  if (available_.job_io)
    host_io_.add_stages(c, rec.direction, bytes - storage_copied_bytes(c), rec.stages, spans);
  if (available_.nfs)
    nfs_.add_stages(c, rec, failures, out_rpc_calls_, transport_, available_.transport, spans);
  if (available_.job_io) {
    if (auto s = storage_.stage(c, rec.direction, rec.stages, spans))
      insert_stage(rec, std::move(*s));
    if (rec.direction == Direction::Save) rec.dirty_at_end_bytes = dirty_at_end(c);
  }
  if (available_.transport) {
    if (auto t = transport_.stage(c, rec.direction, failures, rec.id, spans))
      rec.stages.push_back(std::move(*t));
    if (!copy_load)
      for (auto& f : group_resets(transport_.claim_resets(c), rec.id))
        failures.push_back(std::move(f));
  }
  if (copy_load) failures.resize(own_failures);
  set_exclusive_times(rec.stages, spans);
  rec.bottleneck = choose_bottleneck(rec.stages);
  if (rec.nfs)
    rec.bottleneck = attribute_queue_verdict(rec.bottleneck, rec.stages, rec.nfs->wait_by_queue_ns);
  for (auto& f : failures) f.checkpoint_id = rec.id;
  // Calls still in flight belong to the save side of a copy, as its live
  // failures do.
  if (!copy_load) detectors_.checkpoint_closed(c, rec.id);
  std::sort(failures.begin(), failures.end(),
            [](const FailureRecord& a, const FailureRecord& b) { return a.time_ns < b.time_ns; });
  rec.failures = std::move(failures);

  for (auto& ev : c.calls) {
    out_io_calls_.push_back(IoCallRecord{
        ev.start_ns, ev.end_ns, ev.tgid, ev.tid, std::string(to_string(ev.op)), ev.ret,
        ev.bytes_moved(), ev.op == IoOp::Rename ? ev.path + " -> " + ev.path2 : ev.path, rec.id,
        ev.calls, std::string(to_string(ev.via)), ev.call_time_ns(), ev.storage_bytes});
  }
  out_checkpoints_.push_back(std::move(rec));
}

std::vector<RpcTotals> Stitcher::rpc_totals() const { return nfs_.totals(); }

std::vector<DropRecord> Stitcher::drops() const { return {nfs_.drops(), gpu_.drops()}; }

std::vector<CheckpointRecord> Stitcher::take_checkpoints() {
  return std::exchange(out_checkpoints_, {});
}
std::vector<FailureRecord> Stitcher::take_failures() { return std::exchange(out_failures_, {}); }
std::vector<IoCallRecord> Stitcher::take_io_calls() { return std::exchange(out_io_calls_, {}); }
std::vector<RpcCallRecord> Stitcher::take_rpc_calls() { return std::exchange(out_rpc_calls_, {}); }
std::vector<TcpSampleRecord> Stitcher::take_tcp_samples() {
  return std::exchange(out_tcp_samples_, {});
}

std::vector<ConnectionRecord> Stitcher::connections() const { return transport_.connections(); }

}  // namespace ckpt
