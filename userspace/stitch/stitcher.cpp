#include "stitch/stitcher.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "stitch/intervals.h"

namespace ckpt {
namespace {

// Events reach us through a ring buffer shared by all CPUs: allow this much
// reordering before a quiet gap is declared.
constexpr uint64_t kReorderSlackNs = 100'000'000;
// libckptscope_cupti.so flushes CUPTI's activity buffers every 500 ms: a
// checkpoint waits this much longer for its last copies when it runs.
constexpr uint64_t kGpuSlackNs = 1'000'000'000;
// How long an unclaimed GPU copy is kept, and how many at most.
constexpr uint64_t kGpuKeepNs = 60'000'000'000;
constexpr size_t kMaxGpuCopies = 1'000'000;
constexpr double kContenderShare = 0.9;
constexpr uint64_t kMinStormRetransmits = 10;
// NFS page I/O and RPC events buffered for checkpoints still open: one per
// wsize/rsize of data, so about 4 TiB of checkpoint at 1 MiB per RPC.
constexpr size_t kMaxNfsEvents = 4'000'000;
constexpr uint64_t kJobLevelTimeoutEveryNs = 60'000'000'000ull;
constexpr uint64_t kForgetOutstandingNs = 600'000'000'000ull;
// RPC errors that mean the storage failed the checkpoint; others (ENOENT on
// a LOOKUP, EEXIST, NFS4ERR_DELAY retries) are counted per op, not flagged.
// Adds one finished RPC (an RpcEvent, or one kept as an RpcPoint) to its
// procedure's figures, as mountstats sums them.
template <typename Rpc>
void count_rpc(RpcOpStats& op, const Rpc& r) {
  ++op.count;
  if (r.status < 0) ++op.errors;
  op.major_timeouts += r.timeouts;
  op.transmissions += r.ntrans;
  op.bytes_sent += r.bytes_sent;
  op.bytes_received += r.bytes_recv;
  op.queue_ns += r.queue_ns;
  op.rtt_ns += r.rtt_ns;
  op.execute_ns += r.execute_ns;
}

bool is_storage_rpc_errno(int err) {
  return err == EIO || err == ETIMEDOUT || err == ESTALE || err == ENOSPC || err == EDQUOT ||
         err == EROFS;
}

// A call's file: its identity, or for a call without one (the process was
// gone before its path could be resolved) a stand-in derived from the path.
FileId call_key(const IoEvent& ev) {
  return ev.file.known() ? ev.file : FileId{0, std::hash<std::string>()(ev.path) | 1};
}

bool is_data_op(IoOp op) { return !is_metadata_op(op); }

// open(2) access and creation bits (uapi asm-generic/fcntl.h).
constexpr uint32_t kOpenAccessMode = 03;
constexpr uint32_t kOpenCreate = 0100;
constexpr uint32_t kOpenTruncate = 01000;

// Calls that move data or change the tree: they keep a checkpoint going.
// A stat, a failed lookup or a read-only open (a job polling for a file)
// join a checkpoint but do not extend it.
bool extends_checkpoint(const IoEvent& ev) {
  if (is_data_op(ev.op)) return true;
  if (ev.ret < 0) return false;
  switch (ev.op) {
    case IoOp::Mkdir:
    case IoOp::Rename:
    case IoOp::Unlink:
      return true;
    case IoOp::Open:
      return (ev.flags & kOpenAccessMode) != 0 || (ev.flags & (kOpenCreate | kOpenTruncate)) != 0;
    default:
      return false;
  }
}

int pipeline_rank(std::string_view stage) {
  for (size_t i = 0; i < std::size(kAllStages); ++i)
    if (kAllStages[i] == stage) return static_cast<int>(i);
  return -1;
}

std::string errno_name(int err) {
  switch (err) {
    case ENOSPC:
      return "ENOSPC";
    case EDQUOT:
      return "EDQUOT";
    case ESTALE:
      return "ESTALE";
    case EIO:
      return "EIO";
    case EROFS:
      return "EROFS";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case EBADF:
      return "EBADF";
    case EINVAL:
      return "EINVAL";
    case EFBIG:
      return "EFBIG";
    case EINTR:
      return "EINTR";
    default:
      return fmt::format("errno {}", err);
  }
}

std::string describe_call(const IoEvent& ev) {
  std::string target =
      ev.path.empty() ? fmt::format("dev {} ino {}", ev.file.dev, ev.file.ino) : ev.path;
  if (ev.op == IoOp::Rename) target += " -> " + ev.path2;
  std::string result = ev.ret < 0 ? fmt::format("-{} ({})", errno_name(static_cast<int>(-ev.ret)),
                                                std::strerror(static_cast<int>(-ev.ret)))
                                  : std::to_string(ev.ret);
  return fmt::format("{}({}) = {} in {:.3f} ms, pid {} tid {}", to_string(ev.op), target, result,
                     static_cast<double>(ev.end_ns - ev.start_ns) / 1e6, ev.tgid, ev.tid);
}

// A counter's value at time t, from the samples around it. Samples come
// while a connection is busy (one per sample interval at most), so an
// increase between two samples happened within one interval before the
// later one, not spread over an idle gap.
template <typename Point>
double value_at(const std::deque<Point>& points, uint64_t t, uint64_t Point::*member,
                uint64_t active_ns) {
  if (points.empty()) return 0;
  if (t <= points.front().time_ns) return static_cast<double>(points.front().*member);
  if (t >= points.back().time_ns) return static_cast<double>(points.back().*member);
  auto it = std::lower_bound(points.begin(), points.end(), t,
                             [](const Point& p, uint64_t v) { return p.time_ns < v; });
  const Point& hi = *it;
  const Point& lo = *(it - 1);
  const uint64_t from =
      hi.time_ns > active_ns ? std::max(lo.time_ns, hi.time_ns - active_ns) : lo.time_ns;
  if (t <= from || hi.time_ns == from) return static_cast<double>(lo.*member);
  double frac = static_cast<double>(t - from) / static_cast<double>(hi.time_ns - from);
  return static_cast<double>(lo.*member) +
         frac * (static_cast<double>(hi.*member) - static_cast<double>(lo.*member));
}

}  // namespace

uint64_t Stitcher::acked_data(const Connection& conn, const TcpEvent& ev) {
  // bytes_acked counts sequence space, so the SYN and the FIN add a byte
  // each; bytes_sent counts data but also retransmissions. Data acked is at
  // most either: the smaller is exact without retransmits, and within 2 bytes
  // with them. Kernels before v4.19 have no bytes_sent (it reads 0).
  const uint64_t acked = ev.bytes_acked - std::min(ev.bytes_acked, conn.base_acked);
  if (ev.bytes_sent == 0) return acked;
  return std::min(acked, ev.bytes_sent - std::min(ev.bytes_sent, conn.base_sent));
}

bool is_retry_errno(int err) {
  // ERESTARTSYS..ERESTART_RESTARTBLOCK (include/linux/errno.h) are seen at
  // sys_exit before the kernel restarts the call; EINTR and EAGAIN ask the
  // caller to retry. None of them is a storage failure.
  return (err >= 512 && err <= 516) || err == EINTR || err == EAGAIN;
}

std::string failure_kind_for_errno(int err) {
  switch (err) {
    case ENOSPC:
      return "enospc";
    case EDQUOT:
      return "edquot";
    case ESTALE:
      return "estale";
    case EIO:
      return "eio";
    case EROFS:
      return "erofs";
    case ETIMEDOUT:
      return "etimedout";
    default:
      return "";
  }
}

std::string choose_bottleneck(const std::vector<StageRecord>& stages) {
  uint64_t longest = 0;
  for (const auto& s : stages) longest = std::max(longest, s.busy_ns);
  if (longest == 0) return "";
  // Stages within kContenderShare of the longest busy time all bound the
  // checkpoint about equally (a pipeline whose stages overlap); among them
  // the one running closest to its maximum is the limit, then the longest,
  // then the one further down the pipeline.
  const StageRecord* best = nullptr;
  auto key = [](const StageRecord& s) {
    return std::make_tuple(s.fraction_of_max().value_or(-1.0), s.busy_ns, pipeline_rank(s.name));
  };
  for (const auto& s : stages) {
    if (static_cast<double>(s.busy_ns) < kContenderShare * static_cast<double>(longest)) continue;
    if (!best || key(s) > key(*best)) best = &s;
  }
  return best->name;
}

Stitcher::Stitcher(const Config& config, std::shared_ptr<MaximaProvider> maxima,
                   StageAvailability available)
    : config_(config),
      matcher_(config.checkpoint),
      maxima_(std::move(maxima)),
      available_(available) {}

void Stitcher::on_event(Event&& event) {
  if (auto* io = std::get_if<IoEvent>(&event)) return on_io(std::move(*io));
  if (auto* cpu = std::get_if<CpuEvent>(&event)) return on_cpu(*cpu);
  if (auto* proc = std::get_if<ProcEvent>(&event)) return on_proc(*proc);
  if (auto* tcp = std::get_if<TcpEvent>(&event)) return on_tcp(*tcp);
  if (auto* start = std::get_if<CallStartEvent>(&event)) return on_call_start(std::move(*start));
  if (auto* nfs = std::get_if<NfsIoEvent>(&event)) return on_nfs_io(*nfs);
  if (auto* rpc = std::get_if<RpcEvent>(&event)) return on_rpc(*rpc);
  if (auto* gpu = std::get_if<GpuCopyEvent>(&event)) return on_gpu_copy(std::move(*gpu));
}

uint32_t Stitcher::intern(const std::string& name) {
  auto [it, inserted] = name_ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

void Stitcher::on_nfs_io(const NfsIoEvent& ev) {
  if (ev.started) {
    nfs_outstanding_[ev.id] = NfsOutstanding{ev.file, ev.start_ns, ev.kind};
    return;
  }
  nfs_outstanding_.erase(ev.id);
  if (nfs_io_.size() >= kMaxNfsEvents) {
    ++nfs_buffer_full_;
    return;
  }
  nfs_io_.push_back(ev);
}

void Stitcher::on_rpc(const RpcEvent& ev) {
  if (ev.kind != RpcEvent::Kind::Timeout) {
    RpcOpStats& op = rpc_totals_[{ev.server, ev.vers}][ev.op];
    op.op = ev.op;
    count_rpc(op, ev);
  } else {
    flag_server_timeout(ev);
  }
  if (rpcs_.size() >= kMaxNfsEvents) {
    ++nfs_buffer_full_;
    return;
  }
  rpcs_.push_back(RpcPoint{ev.start_ns,
                           ev.time_ns,
                           ev.queue_ns,
                           ev.rtt_ns,
                           ev.execute_ns,
                           ev.bytes_sent,
                           ev.bytes_recv,
                           ev.wait_ns,
                           ev.file,
                           ev.io_offset,
                           ev.io_count,
                           intern(ev.op),
                           intern(ev.server),
                           ev.client_id,
                           ev.xid,
                           ev.ntrans,
                           ev.timeouts,
                           ev.status,
                           ev.vers,
                           ev.kind,
                           ev.io.has_value(),
                           ev.io.value_or(NfsIoKind::Read)});
}

void Stitcher::flag_server_timeout(const RpcEvent& ev) {
  const std::string server = ev.server.empty() ? "(unknown server)" : ev.server;
  std::string evidence = fmt::format(
      "server {} not responding: {} (RPC task {}, xid 0x{:08x}) reached major timeout #{} "
      "{:.1f} s after it started",
      server, ev.op, ev.task_pid, ev.xid, ev.timeouts, static_cast<double>(ev.execute_ns) / 1e9);
  if (open_) {
    auto [it, fresh] = open_->server_trouble.try_emplace(server);
    if (fresh) {
      it->second = ServerTrouble{open_->live_failures.size(), 1, ev.time_ns, ev.time_ns};
      open_->live_failures.push_back(FailureRecord{"nfs_server_not_responding", ev.time_ns,
                                                   std::move(evidence), std::nullopt});
    } else {
      ++it->second.timeouts;
      it->second.last_ns = std::max(it->second.last_ns, ev.time_ns);
    }
    return;
  }
  // Outside checkpoints: once a minute per server, never silently.
  auto [it, fresh] = job_level_timeout_ns_.try_emplace(server, ev.time_ns);
  if (!fresh && ev.time_ns < it->second + kJobLevelTimeoutEveryNs) return;
  it->second = ev.time_ns;
  out_failures_.push_back(
      FailureRecord{"nfs_server_not_responding", ev.time_ns, std::move(evidence), std::nullopt});
}

void Stitcher::on_call_start(CallStartEvent&& ev) {
  IoEvent probe;
  probe.op = ev.op;
  probe.file = ev.file;
  probe.path = ev.path;
  if (!is_checkpoint_call(probe)) return;
  const uint32_t tid = ev.tid;  // the assignment's right side is evaluated first
  in_flight_[tid] = InFlightCall{std::move(ev), false};
}

void Stitcher::add_cpu_window(uint32_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t cpu_ns) {
  if (cpu_ns == 0 || end_ns <= start_ns) return;
  cpu_windows_[tid].push_back(CpuWindow{start_ns, end_ns, std::min(cpu_ns, end_ns - start_ns)});
}

void Stitcher::on_cpu(const CpuEvent& ev) {
  add_cpu_window(ev.tid, ev.window_start_ns, ev.end_ns, ev.cpu_ns);
}

void Stitcher::on_proc(const ProcEvent& ev) {
  if (ev.kind == ProcEvent::Kind::Exit && open_) flag_partial_save(ev);
  if (ev.kind == ProcEvent::Kind::ThreadExit || ev.kind == ProcEvent::Kind::Exit) {
    // A thread that is gone adds no more windows; keep its old ones only
    // while a checkpoint may still need them.
    if (!open_) cpu_windows_.erase(ev.tid);
    in_flight_.erase(ev.tid);  // its call will never return
  }
}

void Stitcher::flag_partial_save(const ProcEvent& ev) {
  // task->exit_code: the signal that killed the process in its low 7 bits.
  const int signal = ev.exit_code & 0x7f;
  if (signal == 0) return;
  // Files this process wrote in the open checkpoint with no successful
  // fsync, close or rename after its last write: whatever reached the
  // storage is a partial shard.
  struct Written {
    uint64_t last_write_ns = 0;
    bool unflushed = false;
    std::string path;
  };
  std::unordered_map<FileId, Written, FileIdHash> files;
  for (const auto& call : open_->calls) {
    if (call.tgid != ev.tgid || call.is_directory) continue;
    const FileId key = call_key(call);
    if (call.op == IoOp::Write && call.ret > 0) {
      files[key] = Written{call.end_ns, true, call.path};
    } else if ((call.op == IoOp::Fsync || call.op == IoOp::Close || call.op == IoOp::Rename) &&
               call.ret == 0) {
      auto it = files.find(key);
      if (it != files.end() && call.start_ns >= it->second.last_write_ns)
        it->second.unflushed = false;
    }
  }
  // The kernel's list of what the process still had open for writing is
  // the truth (a file closed by dup2 or exec was not: close(2) alone does
  // not say); without it, a file is partial when no close or fsync followed
  // its last write.
  std::vector<std::string> partial;
  for (const auto& [key, w] : files) {
    const bool still_open = ev.open_for_write
                                ? std::find(ev.open_for_write->begin(), ev.open_for_write->end(),
                                            key) != ev.open_for_write->end()
                                : w.unflushed;
    if (still_open) partial.push_back(w.path);
  }
  if (partial.empty()) return;
  std::sort(partial.begin(), partial.end());
  std::string list;
  for (size_t i = 0; i < partial.size() && i < 8; ++i) list += (i ? ", " : "") + partial[i];
  if (partial.size() > 8) list += fmt::format(" and {} more", partial.size() - 8);
  open_->live_failures.push_back(FailureRecord{
      "partial_save", ev.time_ns,
      fmt::format("pid {} ({}) died by signal {} ({}) with {} checkpoint file(s) written and still "
                  "open for writing: {}",
                  ev.tgid, ev.comm, signal, strsignal(signal), partial.size(), list),
      std::nullopt});
}

bool Stitcher::is_checkpoint_call(const IoEvent& ev) {
  if (ev.op == IoOp::Rename) {
    bool yes = matcher_.is_checkpoint_file(ev.path) || matcher_.is_checkpoint_file(ev.path2);
    if (ev.ret == 0 && ev.file.known()) file_is_checkpoint_[ev.file] = yes;
    return yes;
  }
  if (is_metadata_op(ev.op)) {
    bool yes = ev.is_directory || ev.op == IoOp::Mkdir ? matcher_.is_checkpoint_dir(ev.path)
                                                       : matcher_.is_checkpoint_file(ev.path);
    if (!yes && (ev.op == IoOp::Unlink || ev.op == IoOp::Stat))
      yes = matcher_.is_checkpoint_dir(ev.path);
    if (ev.op == IoOp::Open && ev.ret >= 0 && ev.file.known()) file_is_checkpoint_[ev.file] = yes;
    return yes;
  }
  if (ev.is_directory) return matcher_.is_checkpoint_dir(ev.path);  // fsync of a directory
  if (ev.file.known()) {
    auto it = file_is_checkpoint_.find(ev.file);
    if (it != file_is_checkpoint_.end()) return it->second;
    bool yes = matcher_.is_checkpoint_file(ev.path);
    file_is_checkpoint_.emplace(ev.file, yes);
    return yes;
  }
  return matcher_.is_checkpoint_file(ev.path);
}

void Stitcher::note_job_failure(const IoEvent& ev) {
  if (ev.ret >= 0 || is_retry_errno(static_cast<int>(-ev.ret))) return;
  std::string kind = failure_kind_for_errno(static_cast<int>(-ev.ret));
  if (kind.empty()) return;
  out_failures_.push_back(FailureRecord{kind, ev.end_ns, describe_call(ev), std::nullopt});
}

void Stitcher::on_io(IoEvent&& ev) {
  add_cpu_window(ev.tid, ev.cpu_window_start_ns, ev.start_ns, ev.cpu_ns);
  in_flight_.erase(ev.tid);  // whatever this thread had in flight has returned
  if (!is_checkpoint_call(ev)) {
    note_job_failure(ev);
    return;
  }
  if (open_ && ev.start_ns > open_->last_activity_ns + config_.checkpoint.quiet_gap_ns)
    close_open();
  // A save followed at once by a load (or the reverse): data moving the
  // other way on a file this burst never touched starts a new checkpoint.
  if (open_ && (ev.op == IoOp::Read || ev.op == IoOp::Write) &&
      !open_->files_touched.contains(call_key(ev))) {
    bool saving = open_->write_calls > 0 && open_->read_calls == 0;
    bool loading = open_->read_calls > 0 && open_->write_calls == 0;
    if ((saving && ev.op == IoOp::Read) || (loading && ev.op == IoOp::Write)) close_open();
  }
  if (!open_) {
    open_ = OpenCheckpoint();
    open_->start_ns = ev.start_ns;
    open_->end_ns = ev.end_ns;
    open_->last_activity_ns = ev.start_ns;
  }
  OpenCheckpoint& c = *open_;
  c.start_ns = std::min(c.start_ns, ev.start_ns);
  // Only calls that move data or change the tree keep a checkpoint going and
  // stretch its window: a job polling for a file (stat, a read-only open)
  // joins it but neither holds it open nor lengthens it.
  if (extends_checkpoint(ev)) {
    c.end_ns = std::max(c.end_ns, ev.end_ns);
    c.last_activity_ns = std::max(c.last_activity_ns, ev.end_ns);
  }
  if (ev.op == IoOp::Write) {
    ++c.write_calls;
    c.bytes_written += ev.bytes_moved();
  } else if (ev.op == IoOp::Read) {
    ++c.read_calls;
    c.bytes_read += ev.bytes_moved();
  }
  if (is_data_op(ev.op) && !ev.is_directory) c.files_touched.insert(call_key(ev));
  c.calls.push_back(std::move(ev));
}

void Stitcher::on_tcp(const TcpEvent& ev) {
  out_tcp_samples_.push_back(tcp_sample_record(ev));
  auto [it, inserted] = connections_.try_emplace(ev.cookie);
  Connection& conn = it->second;
  if (inserted) {
    conn.record.cookie = ev.cookie;
    conn.record.local = ev.local;
    conn.record.remote = ev.remote;
    conn.record.first_ns = ev.time_ns;
    conn.base_acked = ev.bytes_acked;
    conn.base_sent = ev.bytes_sent;
    conn.base_received = ev.bytes_received;
    conn.base_retrans = ev.total_retrans;
    auto m = maxima_->transport(ev.local);
    conn.record.link_max_Bps = m.Bps;
    conn.record.link_max_source = m.source;
  }
  ConnectionRecord& r = conn.record;
  // A socket has no local port while connecting nor once closed: keep one that has.
  if (r.local.ends_with(":0") && !ev.local.ends_with(":0")) r.local = ev.local;
  r.last_ns = std::max(r.last_ns, ev.time_ns);
  // Counters only grow; take the largest seen (records can arrive out of order).
  const uint64_t data_acked = acked_data(conn, ev);
  r.bytes_sent = std::max(r.bytes_sent, data_acked);
  r.bytes_received = std::max(r.bytes_received,
                              ev.bytes_received - std::min(ev.bytes_received, conn.base_received));
  r.retransmits = std::max<uint64_t>(
      r.retransmits, ev.total_retrans - std::min<uint64_t>(ev.total_retrans, conn.base_retrans));
  r.zero_window_ns = std::max(r.zero_window_ns, ev.zero_window_ns);
  if (ev.kind == TcpEvent::Kind::ResetSent || ev.kind == TcpEvent::Kind::ResetReceived) {
    ++r.resets;
    // A checkpoint that closes around it claims it; otherwise the job does.
    pending_resets_.push_back(
        PendingReset{ev.time_ns, r.local, ev.remote, ev.kind == TcpEvent::Kind::ResetSent});
  }
  TcpPoint p{ev.time_ns,        data_acked,   ev.bytes_received, ev.total_retrans,
             ev.zero_window_ns, ev.in_flight, ev.backlog};
  if (!conn.points.empty() && conn.points.back().time_ns > p.time_ns) {
    auto pos = std::upper_bound(conn.points.begin(), conn.points.end(), p.time_ns,
                                [](uint64_t t, const TcpPoint& q) { return t < q.time_ns; });
    conn.points.insert(pos, p);
  } else {
    conn.points.push_back(p);
  }
}

void Stitcher::advance(uint64_t now_ns) {
  // NFS I/O whose completion never came (its task killed): the source
  // forgets it after ten minutes, and so does this, or it would hold a
  // checkpoint open for ever.
  for (auto it = nfs_outstanding_.begin(); it != nfs_outstanding_.end();)
    it = it->second.start_ns + kForgetOutstandingNs < now_ns ? nfs_outstanding_.erase(it)
                                                             : std::next(it);
  flag_live_stalls(now_ns);
  // The CUPTI library hands its copies over when it flushes (every 500 ms):
  // a load's last H2D copies may come that much after its last read.
  const uint64_t gpu_slack = available_.gpu ? kGpuSlackNs : 0;
  if (open_ &&
      now_ns >
          open_->last_activity_ns + config_.checkpoint.quiet_gap_ns + kReorderSlackNs + gpu_slack &&
      !call_in_flight_within(*open_))
    close_open();
  release_unclaimed_resets(now_ns);
  if (!open_) prune(now_ns > 2 * kReorderSlackNs ? now_ns - 2 * kReorderSlackNs : 0);
}

void Stitcher::finish() {
  if (open_) close_open();
  release_unclaimed_resets(UINT64_MAX);
}

bool Stitcher::call_in_flight_within(const OpenCheckpoint& c) const {
  // A flush (an NFS close) that began inside the checkpoint is part of it,
  // however long it runs; so is NFS page I/O on its files not yet done.
  for (const auto& [tid, call] : in_flight_)
    if (call.start.start_ns <= c.last_activity_ns + config_.checkpoint.quiet_gap_ns) return true;
  for (const auto& [id, io] : nfs_outstanding_)
    if (c.files_touched.count(io.file)) return true;
  return false;
}

void Stitcher::flag_nfs_stall(uint64_t now_ns) {
  if (!open_ || open_->nfs_stall_flagged) return;
  // A hung flush already said it: one stall, not two, for one hang.
  if (std::any_of(open_->live_failures.begin(), open_->live_failures.end(),
                  [](const FailureRecord& f) { return f.kind == "stall"; })) {
    open_->nfs_stall_flagged = true;
    return;
  }
  // The oldest NFS page I/O on the checkpoint's files that has not completed.
  const NfsOutstanding* oldest = nullptr;
  size_t count = 0;
  for (const auto& [id, io] : nfs_outstanding_) {
    if (!open_->files_touched.count(io.file)) continue;
    ++count;
    if (!oldest || io.start_ns < oldest->start_ns) oldest = &io;
  }
  if (!oldest || now_ns < oldest->start_ns + config_.checkpoint.stall_ns) return;
  open_->nfs_stall_flagged = true;
  std::string path = fmt::format("dev {} ino {}", oldest->file.dev, oldest->file.ino);
  for (const auto& call : open_->calls)
    if (call.file == oldest->file && !call.path.empty()) {
      path = call.path;
      break;
    }
  open_->live_failures.push_back(FailureRecord{
      "stall", now_ns,
      fmt::format("no progress: NFS {} of {} initiated {:.1f} s ago has not completed ({} NFS "
                  "I/O RPCs of this checkpoint outstanding)",
                  to_string(oldest->kind), path,
                  static_cast<double>(now_ns - oldest->start_ns) / 1e9, count),
      std::nullopt});
}

void Stitcher::flag_live_stalls(uint64_t now_ns) {
  if (!config_.checkpoint.stall_ns) return;
  for (auto& [tid, call] : in_flight_) {
    if (call.stall_flagged || now_ns < call.start.start_ns + config_.checkpoint.stall_ns) continue;
    call.stall_flagged = true;
    FailureRecord f{
        "stall", now_ns,
        fmt::format("no progress: {}({}) has not returned after {:.1f} s, pid {} tid {}",
                    to_string(call.start.op), call.start.path,
                    static_cast<double>(now_ns - call.start.start_ns) / 1e9, call.start.tgid, tid),
        std::nullopt};
    stalls_flagged_.insert({tid, call.start.start_ns});
    if (open_) {
      open_->live_failures.push_back(std::move(f));
    } else {
      out_failures_.push_back(std::move(f));
    }
  }
  flag_nfs_stall(now_ns);
}

std::vector<FailureRecord> Stitcher::group_resets(std::vector<PendingReset> resets,
                                                  std::optional<uint64_t> checkpoint_id) {
  // A server that refuses every reconnect resets hundreds of connections in
  // a few seconds: one failure per server, with the count and the span.
  std::map<std::string, std::vector<PendingReset>> by_remote;
  for (auto& r : resets) by_remote[r.remote].push_back(std::move(r));
  std::vector<FailureRecord> out;
  for (auto& [remote, group] : by_remote) {
    std::sort(group.begin(), group.end(),
              [](const PendingReset& a, const PendingReset& b) { return a.time_ns < b.time_ns; });
    const PendingReset& first = group.front();
    std::string evidence = fmt::format("connection {} -> {} reset ({})", first.local, remote,
                                       first.sent ? "sent" : "received");
    if (group.size() > 1) {
      const auto sent =
          std::count_if(group.begin(), group.end(), [](const PendingReset& r) { return r.sent; });
      evidence +=
          fmt::format("; {} resets with {} over {:.1f} s ({} sent, {} received)", group.size(),
                      remote, static_cast<double>(group.back().time_ns - first.time_ns) / 1e9, sent,
                      static_cast<long>(group.size()) - sent);
    }
    out.push_back(FailureRecord{"tcp_reset", first.time_ns, std::move(evidence), checkpoint_id});
  }
  return out;
}

void Stitcher::release_unclaimed_resets(uint64_t now_ns) {
  // A reset no checkpoint claimed is the job's: never dropped. A server's
  // resets go out together once the newest is past the horizon.
  const uint64_t horizon = config_.checkpoint.quiet_gap_ns + kReorderSlackNs;
  std::map<std::string, uint64_t> newest;
  for (const auto& r : pending_resets_) newest[r.remote] = std::max(newest[r.remote], r.time_ns);
  std::vector<PendingReset> ready;
  for (auto it = pending_resets_.begin(); it != pending_resets_.end();) {
    const bool claimable = open_ && it->time_ns + horizon >= open_->start_ns;
    const bool settled = now_ns == UINT64_MAX || newest[it->remote] + horizon <= now_ns;
    if (claimable || !settled) {
      ++it;
      continue;
    }
    ready.push_back(std::move(*it));
    it = pending_resets_.erase(it);
  }
  for (auto& f : group_resets(std::move(ready), std::nullopt))
    out_failures_.push_back(std::move(f));
}

void Stitcher::prune(uint64_t horizon_ns) {
  for (auto it = cpu_windows_.begin(); it != cpu_windows_.end();) {
    auto& q = it->second;
    while (!q.empty() && q.front().end_ns < horizon_ns) q.pop_front();
    it = q.empty() ? cpu_windows_.erase(it) : std::next(it);
  }
  while (!nfs_io_.empty() && nfs_io_.front().end_ns < horizon_ns) nfs_io_.pop_front();
  while (!rpcs_.empty() && rpcs_.front().time_ns < horizon_ns) rpcs_.pop_front();
  // A save's GPU copies come before its first write, by as much as the
  // copies take (DCP stages every tensor first): kept longer.
  const uint64_t gpu_horizon = horizon_ns > kGpuKeepNs ? horizon_ns - kGpuKeepNs : 0;
  // They arrive roughly in time order (each process flushes its own): from
  // the front, as the NFS buffers are pruned, not a scan every tick.
  while (!gpu_copies_.empty() && gpu_copies_.front().end_ns < gpu_horizon) gpu_copies_.pop_front();
  for (auto& [cookie, conn] : connections_) {
    // Keep the last point before the horizon: it anchors interpolation.
    while (conn.points.size() > 1 && conn.points[1].time_ns < horizon_ns) conn.points.pop_front();
  }
}

StageRecord Stitcher::host_io_stage(const OpenCheckpoint& c, Direction d) {
  StageRecord s;
  s.name = std::string(kStageHostIo);
  std::vector<Interval> iv;
  std::vector<FileId> files;
  for (const auto& ev : c.calls) {
    if (!is_data_op(ev.op)) continue;
    iv.emplace_back(ev.start_ns, ev.end_ns);
    s.bytes += ev.bytes_moved();
    if (ev.file.known() && files.size() < 16) files.push_back(ev.file);
  }
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns);
  auto m = maxima_->host_io(d, files);
  s.max_Bps = m.Bps;
  s.max_source = m.source;
  return s;
}

StageRecord Stitcher::metadata_stage(const OpenCheckpoint& c) {
  StageRecord s;
  s.name = std::string(kStageMetadata);
  std::vector<Interval> iv;
  for (const auto& ev : c.calls)
    if (is_metadata_op(ev.op)) iv.emplace_back(ev.start_ns, ev.end_ns);
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns);
  s.max_source = "n/a (moves no bytes)";
  return s;
}

StageRecord Stitcher::serialize_stage(const OpenCheckpoint& c, Direction d, uint64_t bytes) {
  StageRecord s;
  s.name = std::string(kStageSerialize);
  s.bytes = bytes;
  // The threads that did this checkpoint's I/O: their on-CPU time outside I/O
  // inside the window is the (de)serialization that feeds or drains the I/O.
  std::set<uint32_t> threads;
  for (const auto& ev : c.calls) threads.insert(ev.tid);
  std::vector<Interval> iv;
  for (uint32_t tid : threads) {
    auto it = cpu_windows_.find(tid);
    if (it == cpu_windows_.end()) continue;
    for (const auto& w : it->second) {
      // Only the amount of CPU in a window is known, not where: place it at
      // the window's end, next to the I/O call that closed it.
      iv.emplace_back(w.end_ns - w.cpu_ns, w.end_ns);
    }
  }
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns);
  auto m = maxima_->serialize();
  s.max_Bps = m.Bps;
  s.max_source = m.source;
  (void)d;
  return s;
}

std::optional<StageRecord> Stitcher::transport_stage(const OpenCheckpoint& c, Direction d,
                                                     std::vector<FailureRecord>& failures,
                                                     uint64_t id) {
  if (!available_.transport) return std::nullopt;
  StageRecord s;
  s.name = std::string(kStageTransport);
  std::vector<Interval> iv;
  const uint64_t interval = config_.tcp_sample_interval_ns;
  const double window_s = std::max(1e-9, static_cast<double>(c.end_ns - c.start_ns) / 1e9);
  const auto member = d == Direction::Save ? &TcpPoint::acked : &TcpPoint::received;
  for (auto& [cookie, conn] : connections_) {
    if (conn.points.empty() || conn.points.back().time_ns < c.start_ns ||
        conn.points.front().time_ns > c.end_ns + config_.checkpoint.quiet_gap_ns)
      continue;
    // Acknowledgements trail the sends by a round trip: count until one
    // sample interval after the checkpoint's last call.
    double moved = value_at(conn.points, c.end_ns + interval, member, interval) -
                   value_at(conn.points, c.start_ns, member, interval);
    if (moved > 0) s.bytes += static_cast<uint64_t>(std::llround(moved));
    for (size_t i = 1; i < conn.points.size(); ++i) {
      const TcpPoint& a = conn.points[i - 1];
      const TcpPoint& b = conn.points[i];
      // Busy while the counter grew, and, for a save, all along while data
      // was outstanding: a slow link delivers acks far apart, and the time
      // between them is the transport at work, not idle.
      if (d == Direction::Save && a.backlog > 0) {
        iv.emplace_back(a.time_ns, b.time_ns);
      } else if (b.*member > a.*member) {
        iv.emplace_back(std::max(a.time_ns, b.time_ns > interval ? b.time_ns - interval : 0),
                        b.time_ns);
      }
    }
    if (!s.max_Bps && conn.record.link_max_Bps) {
      s.max_Bps = conn.record.link_max_Bps;
      s.max_source = conn.record.link_max_source;
    }
    double retrans = value_at(conn.points, c.end_ns, &TcpPoint::retrans, interval) -
                     value_at(conn.points, c.start_ns, &TcpPoint::retrans, interval);
    if (retrans >= kMinStormRetransmits &&
        retrans / window_s >= static_cast<double>(config_.failures.retransmit_storm_per_s)) {
      failures.push_back(FailureRecord{
          "tcp_retransmit_storm", c.end_ns,
          fmt::format("{:.0f} retransmits in {:.2f} s ({:.0f}/s) on {} -> {}", retrans, window_s,
                      retrans / window_s, conn.record.local, conn.record.remote),
          id});
    }
    double zw = value_at(conn.points, c.end_ns, &TcpPoint::zero_window_ns, interval) -
                value_at(conn.points, c.start_ns, &TcpPoint::zero_window_ns, interval);
    if (zw >= static_cast<double>(config_.failures.zero_window_ns)) {
      failures.push_back(
          FailureRecord{"tcp_zero_window", c.end_ns,
                        fmt::format("server advertised a zero window for {:.1f} ms on {} -> {}",
                                    zw / 1e6, conn.record.local, conn.record.remote),
                        id});
    }
  }
  std::vector<PendingReset> claimed;
  for (auto it = pending_resets_.begin(); it != pending_resets_.end();) {
    if (it->time_ns >= c.start_ns && it->time_ns <= c.end_ns + interval) {
      claimed.push_back(std::move(*it));
      it = pending_resets_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& f : group_resets(std::move(claimed), id)) failures.push_back(std::move(f));
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns + interval);
  if (!s.max_Bps) {
    auto m = maxima_->transport("");
    s.max_Bps = m.Bps;
    s.max_source = m.source;
  }
  return s;
}

void Stitcher::close_open() {
  OpenCheckpoint c = std::move(*open_);
  open_.reset();

  std::vector<FailureRecord> failures = std::move(c.live_failures);
  for (const auto& [server, trouble] : c.server_trouble) {
    // Complete the live report: how long the server was away, and whether
    // it answered again (a reply from it after its last major timeout).
    std::string& evidence = failures[trouble.failure_index].evidence;
    evidence += fmt::format("; {} major timeout(s) over {:.1f} s", trouble.timeouts,
                            static_cast<double>(trouble.last_ns - trouble.first_ns) / 1e9);
    const uint32_t id = intern(server);
    uint64_t answered = 0;
    for (const auto& r : rpcs_)
      if (r.server == id && r.kind == RpcEvent::Kind::Done && r.time_ns > trouble.last_ns &&
          r.status >= 0) {
        answered = r.time_ns;
        break;
      }
    evidence += answered ? fmt::format("; responding again {:.1f} s after the first timeout",
                                       static_cast<double>(answered - trouble.first_ns) / 1e9)
                         : std::string("; no reply from it seen before the checkpoint ended");
  }
  for (const auto& ev : c.calls) {
    if (ev.ret < 0 && !is_retry_errno(static_cast<int>(-ev.ret))) {
      int err = static_cast<int>(-ev.ret);
      std::string kind = failure_kind_for_errno(err);
      // On a checkpoint file any failed data call is a failure; a failed
      // open/stat is only one for the errnos that mean the storage failed
      // (ENOENT while probing for the latest checkpoint is normal).
      if (kind.empty() && is_data_op(ev.op)) kind = "io_error";
      if (!kind.empty())
        failures.push_back(FailureRecord{kind, ev.end_ns, describe_call(ev), std::nullopt});
    }
    if (config_.checkpoint.stall_ns && ev.end_ns - ev.start_ns >= config_.checkpoint.stall_ns &&
        !stalls_flagged_.erase({ev.tid, ev.start_ns}))
      failures.push_back(
          FailureRecord{"stall", ev.end_ns, "no progress: " + describe_call(ev), std::nullopt});
  }
  const uint64_t bytes = c.bytes_written + c.bytes_read;
  if (bytes == 0 && failures.empty()) return;  // metadata probes only: not a checkpoint
  if (file_is_checkpoint_.size() > 500'000) file_is_checkpoint_.clear();  // bounded for long runs

  CheckpointRecord rec;
  rec.id = next_id_++;
  rec.direction = c.bytes_written > c.bytes_read || (bytes == 0 && c.write_calls >= c.read_calls)
                      ? Direction::Save
                      : Direction::Load;
  rec.start_ns = c.start_ns;
  rec.end_ns = c.end_ns;
  rec.bytes = bytes;

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
    f.busy_ns += ev.end_ns - ev.start_ns;
    if (ev.ret < 0) ++f.errors;
    if (ev.op == IoOp::Write) {
      ++f.write_calls;
      f.bytes_written += ev.bytes_moved();
    } else if (ev.op == IoOp::Read) {
      ++f.read_calls;
      f.bytes_read += ev.bytes_moved();
    } else {
      ++f.other_calls;
    }
  }
  for (auto& [key, f] : files) {
    if (f.write_calls + f.read_calls > 0) {
      ++rec.files;
      rec.file_io.push_back(std::move(f));
    }
  }
  std::sort(rec.file_io.begin(), rec.file_io.end(),
            [](const FileIoRecord& a, const FileIoRecord& b) { return a.path < b.path; });

  if (available_.gpu)
    if (auto g = gpu_copy_stage(c, rec)) rec.stages.push_back(std::move(*g));
  if (available_.job_io) {
    rec.stages.push_back(serialize_stage(c, rec.direction, bytes));
    rec.stages.push_back(host_io_stage(c, rec.direction));
    rec.stages.push_back(metadata_stage(c));
  }
  add_nfs_stages(c, rec, failures);
  if (auto t = transport_stage(c, rec.direction, failures, rec.id))
    rec.stages.push_back(std::move(*t));
  rec.bottleneck = choose_bottleneck(rec.stages);
  if (rec.nfs)
    rec.bottleneck = attribute_queue_verdict(rec.bottleneck, rec.stages, rec.nfs->wait_by_queue_ns);
  for (auto& f : failures) f.checkpoint_id = rec.id;
  std::sort(failures.begin(), failures.end(),
            [](const FailureRecord& a, const FailureRecord& b) { return a.time_ns < b.time_ns; });
  rec.failures = std::move(failures);

  for (auto& ev : c.calls) {
    out_io_calls_.push_back(IoCallRecord{
        ev.start_ns, ev.end_ns, ev.tgid, ev.tid, std::string(to_string(ev.op)), ev.ret,
        ev.bytes_moved(), ev.op == IoOp::Rename ? ev.path + " -> " + ev.path2 : ev.path, rec.id});
  }
  out_checkpoints_.push_back(std::move(rec));
}

void Stitcher::on_gpu_copy(GpuCopyEvent&& ev) {
  if (gpu_copies_.size() >= kMaxGpuCopies) {
    ++gpu_buffer_full_;
    return;
  }
  gpu_copies_.push_back(std::move(ev));
}

std::optional<StageRecord> Stitcher::gpu_copy_stage(const OpenCheckpoint& c,
                                                    CheckpointRecord& rec) {
  const bool save = rec.direction == Direction::Save;
  const GpuCopyKind kind = save ? GpuCopyKind::DtoH : GpuCopyKind::HtoD;
  const uint64_t gap = config_.checkpoint.quiet_gap_ns;
  std::vector<size_t> order;
  for (size_t i = 0; i < gpu_copies_.size(); ++i)
    if (gpu_copies_[i].kind == kind) order.push_back(i);
  std::vector<size_t> claimed;
  if (save) {
    // Inside the checkpoint, then backwards from its first call while the
    // copies keep coming (no pause as long as the quiet gap): torch.save
    // copies each tensor as it pickles it, DCP stages them all first.
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return gpu_copies_[a].end_ns > gpu_copies_[b].end_ns; });
    uint64_t cursor = c.start_ns;
    for (size_t i : order) {
      const GpuCopyEvent& g = gpu_copies_[i];
      if (g.start_ns > c.end_ns) continue;  // after the save: not its own
      if (g.start_ns >= c.start_ns) {
        claimed.push_back(i);
        continue;
      }
      if (g.end_ns + gap < cursor) break;
      claimed.push_back(i);
      cursor = std::min(cursor, g.start_ns);
    }
  } else {
    // Inside the load, then forwards from its last call while they keep
    // coming: the tensors go to the GPU as they are read.
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return gpu_copies_[a].start_ns < gpu_copies_[b].start_ns;
    });
    uint64_t cursor = c.end_ns;
    for (size_t i : order) {
      const GpuCopyEvent& g = gpu_copies_[i];
      if (g.end_ns < c.start_ns) continue;  // before the load: not its own
      if (g.start_ns <= c.end_ns) {
        claimed.push_back(i);
        continue;
      }
      if (g.start_ns > cursor + gap) break;
      claimed.push_back(i);
      cursor = std::max(cursor, g.end_ns);
    }
  }
  StageRecord s;
  s.name = std::string(kStageGpuCopy);
  CheckpointGpuRecord detail;
  std::vector<Interval> iv;
  std::set<std::string> devices;
  uint64_t lo = rec.start_ns, hi = rec.end_ns;
  for (size_t i : claimed) {
    const GpuCopyEvent& g = gpu_copies_[i];
    s.bytes += g.bytes;
    iv.emplace_back(g.start_ns, g.end_ns);
    ++detail.copies;
    detail.copy_count += g.copy_count;
    switch (g.host_memory()) {
      case GpuMemoryKind::Pageable:
        detail.pageable_bytes += g.bytes;
        break;
      case GpuMemoryKind::Pinned:
        detail.pinned_bytes += g.bytes;
        break;
      default:
        detail.other_bytes += g.bytes;
        break;
    }
    if (g.async) ++detail.async_copies;
    devices.insert(g.pci_address.empty() ? fmt::format("device {}", g.device_id) : g.pci_address);
    detail.first_ns = detail.first_ns == 0 ? g.start_ns : std::min(detail.first_ns, g.start_ns);
    detail.last_ns = std::max(detail.last_ns, g.end_ns);
    lo = std::min(lo, g.start_ns);
    hi = std::max(hi, g.end_ns);
  }
  s.busy_ns = union_length(iv, lo, hi);
  detail.devices.assign(devices.begin(), devices.end());
  std::vector<std::string> pci;
  for (const auto& d : detail.devices)
    if (!d.starts_with("device ")) pci.push_back(d);
  auto m = maxima_->gpu_copy(rec.direction, pci);
  s.max_Bps = m.Bps;
  s.max_source = m.source;
  // The copies are the checkpoint's first (save) or last (load) stage: its
  // window covers them.
  rec.start_ns = lo;
  rec.end_ns = hi;
  rec.gpu = std::move(detail);
  // Claimed copies are no other checkpoint's: one pass keeps the rest.
  std::vector<bool> taken(gpu_copies_.size(), false);
  for (size_t i : claimed) taken[i] = true;
  std::deque<GpuCopyEvent> rest;
  for (size_t i = 0; i < gpu_copies_.size(); ++i)
    if (!taken[i]) rest.push_back(std::move(gpu_copies_[i]));
  gpu_copies_ = std::move(rest);
  return s;
}

TcpSampleRecord tcp_sample_record(const TcpEvent& ev) {
  return TcpSampleRecord{ev.time_ns,     ev.cookie,         std::string(to_string(ev.kind)),
                         ev.bytes_acked, ev.bytes_received, ev.in_flight,
                         ev.backlog,     ev.snd_cwnd,       ev.srtt_us,
                         ev.snd_wnd,     ev.total_retrans,  ev.zero_window_ns,
                         ev.new_state};
}

DurationStats duration_stats(std::vector<uint64_t>& values) {
  DurationStats d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = values.size();
  long double sum = 0;
  for (uint64_t v : values) sum += static_cast<long double>(v);
  d.mean_ns = static_cast<uint64_t>(std::llround(static_cast<double>(sum / values.size())));
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(k, 1, values.size()) - 1];
  };
  d.p50_ns = rank(50);
  d.p90_ns = rank(90);
  d.p99_ns = rank(99);
  d.max_ns = values.back();
  return d;
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

namespace {

bool io_op_matches(NfsIoKind kind, std::string_view op) {
  switch (kind) {
    case NfsIoKind::Write:
      return op == "WRITE";
    case NfsIoKind::Read:
      return op == "READ" || op == "READ_PLUS";
    case NfsIoKind::Commit:
      return op == "COMMIT";
  }
  return false;
}

}  // namespace

void Stitcher::add_nfs_stages(const OpenCheckpoint& c, CheckpointRecord& rec,
                              std::vector<FailureRecord>& failures) {
  if (!available_.nfs) return;
  // NFS completions for a checkpoint's files come before its close/fsync
  // returns; allow the quiet gap for writeback that trails the last call.
  const uint64_t lo = c.start_ns;
  const uint64_t hi = c.end_ns + config_.checkpoint.quiet_gap_ns;
  const bool save = rec.direction == Direction::Save;
  auto carries = [&](NfsIoKind k) { return save ? k != NfsIoKind::Read : k == NfsIoKind::Read; };
  auto ours = [&](const FileId& f) { return c.files_touched.count(f) > 0; };

  std::vector<Interval> client_iv;
  uint64_t bytes = 0;
  for (const auto& io : nfs_io_) {
    if (io.end_ns < lo || io.start_ns > hi || !carries(io.kind) || !ours(io.file)) continue;
    client_iv.emplace_back(io.start_ns, io.end_ns);
    bytes += io.bytes();
  }

  NfsCheckpointRecord nfs;
  std::set<uint32_t> clients;
  std::set<std::string> servers;
  std::vector<uint64_t> queue_v;
  std::vector<uint64_t> rtt_v;
  std::array<uint64_t, kRpcQueues> waits{};
  std::vector<Interval> queue_iv;
  std::vector<Interval> rtt_iv;
  // The checkpoint's own I/O RPCs: finished page I/O on its files, moving
  // data its way, in its window.
  auto is_checkpoint_io = [&](const RpcPoint& r) {
    return r.kind == RpcEvent::Kind::Done && r.has_io && r.time_ns >= lo && r.start_ns <= hi &&
           carries(r.io) && ours(r.file) && io_op_matches(r.io, names_[r.op]);
  };
  for (const auto& r : rpcs_) {
    if (!is_checkpoint_io(r)) continue;
    ++nfs.io_rpcs;
    clients.insert(r.client_id);
    servers.insert(names_[r.server]);
    queue_v.push_back(r.queue_ns);
    rtt_v.push_back(r.rtt_ns);
    for (size_t q = 0; q < kRpcQueues; ++q) waits[q] += r.wait_ns[q];
    queue_iv.emplace_back(r.start_ns, r.start_ns + r.queue_ns);
    const uint64_t xmit = r.start_ns + r.queue_ns;
    rtt_iv.emplace_back(xmit, xmit + r.rtt_ns);
  }
  if (client_iv.empty() && nfs.io_rpcs == 0) return;  // nothing of it went over NFS

  // Paths of the checkpoint's files, for evidence.
  std::unordered_map<FileId, std::string, FileIdHash> paths;
  for (const auto& ev : c.calls)
    if (ev.file.known() && !ev.path.empty())
      paths[ev.file] = ev.op == IoOp::Rename && ev.ret == 0 ? ev.path2 : ev.path;

  // Every RPC of those clients in the window, by op; storage errors flagged
  // once per (errno, file or op) with a count.
  struct ErrorGroup {
    uint64_t count = 0;
    uint64_t first_ns = 0;
    std::string evidence;
  };
  std::map<std::pair<std::string, std::string>, ErrorGroup> errors;
  std::map<std::string, RpcOpStats> ops;
  for (const auto& r : rpcs_) {
    if (r.kind == RpcEvent::Kind::Timeout || !clients.count(r.client_id) || r.time_ns < lo ||
        r.start_ns > hi)
      continue;
    const std::string& name = names_[r.op];
    RpcOpStats& op = ops[name];
    op.op = name;
    count_rpc(op, r);
    // The same RPC as a row of its own, for timelines: exactly the RPCs
    // rpc_ops counts, those with checkpoint_io exactly queue_wait's and rtt's.
    const bool io = is_checkpoint_io(r);
    out_rpc_calls_.push_back(RpcCallRecord{
        r.start_ns, r.time_ns, r.queue_ns, r.rtt_ns, r.execute_ns, name, names_[r.server],
        r.bytes_sent, r.bytes_recv, io && r.io != NfsIoKind::Commit ? r.io_count : 0, r.status,
        r.ntrans, r.timeouts, io, rec.id});
    const int err = -r.status;
    if (r.status >= 0 || !is_storage_rpc_errno(err)) continue;
    const bool has_file = r.has_io && r.file.known();
    std::string target;
    if (has_file) {
      auto p = paths.find(r.file);
      target = p != paths.end() ? p->second : fmt::format("dev {} ino {}", r.file.dev, r.file.ino);
    }
    ErrorGroup& g = errors[{failure_kind_for_errno(err), has_file ? target : name}];
    if (g.count++ == 0 || r.time_ns < g.first_ns) {
      g.first_ns = r.time_ns;
      g.evidence = fmt::format(
          "{}{} to {} failed: -{} ({}) after {:.1f} ms, xid 0x{:08x}", name,
          has_file ? fmt::format(" of {} ({} bytes at offset {})", target, r.io_count, r.io_offset)
                   : std::string(),
          names_[r.server], errno_name(err), std::strerror(err),
          static_cast<double>(r.execute_ns) / 1e6, r.xid);
    }
  }
  for (auto& [key, g] : errors) {
    if (g.count > 1)
      g.evidence += fmt::format(" ({} RPCs failed this way in this checkpoint)", g.count);
    failures.push_back(
        FailureRecord{"rpc_" + key.first, g.first_ns, std::move(g.evidence), rec.id});
  }
  for (auto& [name, op] : ops) nfs.rpc_ops.push_back(std::move(op));
  std::sort(nfs.rpc_ops.begin(), nfs.rpc_ops.end(), [](const RpcOpStats& a, const RpcOpStats& b) {
    return a.count != b.count ? a.count > b.count : a.op < b.op;
  });

  nfs.servers.assign(servers.begin(), servers.end());
  nfs.io_bytes = bytes;
  nfs.queue_wait = duration_stats(queue_v);
  nfs.rtt = duration_stats(rtt_v);
  for (size_t q = 0; q < kRpcQueues; ++q)
    nfs.wait_by_queue_ns.emplace_back(std::string(rpc_queue_name(q)), waits[q]);

  // The transport to those servers meanwhile.
  if (available_.transport) {
    uint64_t in_flight_max = 0;
    long double in_flight_sum = 0;
    uint64_t backlog_max = 0;
    long double backlog_sum = 0;
    uint64_t points = 0;
    double retrans = 0;
    bool any = false;
    for (const auto& [cookie, conn] : connections_) {
      if (!servers.count(conn.record.remote) || conn.points.empty()) continue;
      any = true;
      for (const auto& p : conn.points) {
        if (p.time_ns < lo || p.time_ns > c.end_ns) continue;
        in_flight_max = std::max(in_flight_max, p.in_flight);
        in_flight_sum += static_cast<long double>(p.in_flight);
        backlog_max = std::max(backlog_max, p.backlog);
        backlog_sum += static_cast<long double>(p.backlog);
        ++points;
      }
      const uint64_t interval = config_.tcp_sample_interval_ns;
      retrans += value_at(conn.points, c.end_ns, &TcpPoint::retrans, interval) -
                 value_at(conn.points, c.start_ns, &TcpPoint::retrans, interval);
    }
    if (any) {
      nfs.tcp_in_flight_max = in_flight_max;
      nfs.tcp_in_flight_mean =
          points ? static_cast<double>(in_flight_sum / static_cast<long double>(points)) : 0.0;
      nfs.tcp_retransmits = static_cast<uint64_t>(std::llround(std::max(0.0, retrans)));
      nfs.tcp_backlog_max = backlog_max;
      nfs.tcp_backlog_mean =
          points ? static_cast<double>(backlog_sum / static_cast<long double>(points)) : 0.0;
    }
  }

  std::vector<FileId> files(c.files_touched.begin(), c.files_touched.end());
  if (files.size() > 16) files.resize(16);
  const StageMax storage = maxima_->host_io(rec.direction, files);
  StageMax link = maxima_->transport("");
  for (const auto& [cookie, conn] : connections_)
    if (servers.count(conn.record.remote) && conn.record.link_max_Bps) {
      link = StageMax{conn.record.link_max_Bps, conn.record.link_max_source};
      break;
    }

  StageRecord client{std::string(kStageNfsClient), bytes, union_length(client_iv, lo, hi),
                     storage.Bps, storage.source};
  // The queue drains into the transport; the round trip is wire and server.
  StageRecord queue{std::string(kStageRpcQueue), bytes, union_length(queue_iv, lo, hi), link.Bps,
                    link.source};
  StageRecord rtt{std::string(kStageRpcRtt), bytes, union_length(rtt_iv, lo, hi), storage.Bps,
                  storage.source};
  rec.stages.push_back(std::move(client));
  rec.stages.push_back(std::move(queue));
  rec.stages.push_back(std::move(rtt));
  rec.nfs = std::move(nfs);
}

std::vector<RpcTotals> Stitcher::rpc_totals() const {
  std::vector<RpcTotals> out;
  for (const auto& [key, ops] : rpc_totals_) {
    RpcTotals t{key.first, key.second, {}};
    for (const auto& [name, op] : ops) t.ops.push_back(op);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<DropRecord> Stitcher::drops() const {
  return {DropRecord{"stitcher", "nfs_buffer_full", nfs_buffer_full_},
          DropRecord{"stitcher", "gpu_buffer_full", gpu_buffer_full_}};
}

std::vector<CheckpointRecord> Stitcher::take_checkpoints() {
  return std::exchange(out_checkpoints_, {});
}
std::vector<FailureRecord> Stitcher::take_failures() { return std::exchange(out_failures_, {}); }
std::vector<IoCallRecord> Stitcher::take_io_calls() { return std::exchange(out_io_calls_, {}); }
std::vector<RpcCallRecord> Stitcher::take_rpc_calls() { return std::exchange(out_rpc_calls_, {}); }
std::vector<TcpSampleRecord> Stitcher::take_tcp_samples() {
  return std::exchange(out_tcp_samples_, {});
}

std::vector<ConnectionRecord> Stitcher::connections() const {
  std::vector<ConnectionRecord> out;
  out.reserve(connections_.size());
  for (const auto& [cookie, conn] : connections_) out.push_back(conn.record);
  return out;
}

}  // namespace ckpt
