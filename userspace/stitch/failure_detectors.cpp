#include "stitch/failure_detectors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "model/vocabulary.h"

namespace ckpt {
namespace {

// A kernel copy refused, which is how GNU cp learns to copy another way, no
// failure: a reflink the file system cannot make (ext4, tmpfs: EOPNOTSUPP),
// a copy_file_range across file systems (EXDEV) or one they do not offer
// (EOPNOTSUPP, ENOSYS, EINVAL). One the storage failed (EIO, ENOSPC) is one.
bool is_refused_copy(const IoEvent& ev) {
  if (ev.ret >= 0 || !is_copy_via(ev.via)) return false;
  const int err = static_cast<int>(-ev.ret);
  if (!failure_kind_for_errno(err).empty()) return false;
  return ev.via == IoVia::Reflink || err == EXDEV || err == EOPNOTSUPP || err == ENOSYS ||
         err == EINVAL;
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

// What a call in flight names: its file (a copy's source too, a rename's
// new name), by path where known.
std::string describe_target(const CallStartEvent& call) {
  std::string target = call.path.empty() && call.file.known()
                           ? fmt::format("dev {} ino {}", call.file.dev, call.file.ino)
                           : call.path;
  if (call.op == IoOp::Rename) target += " -> " + call.path2;
  if (call.copy_source)
    target =
        fmt::format("{} <- {}", target,
                    call.copy_source_path.empty()
                        ? fmt::format("dev {} ino {}", call.copy_source->dev, call.copy_source->ino)
                        : call.copy_source_path);
  return target;
}

constexpr uint64_t kJobLevelTimeoutEveryNs = 60'000'000'000ull;

}  // namespace

void FailureDetectors::on_call_start(CallStartEvent&& ev) {
  const uint32_t tid = ev.tid;  // the assignment's right side is evaluated first
  in_flight_[tid] = InFlightCall{std::move(ev), false, std::nullopt};
}

void FailureDetectors::forget_returned_unseen(
    uint64_t now_ns, const std::function<bool(const CallStartEvent&)>& returned) {
  std::erase_if(in_flight_, [&](const auto& entry) {
    const InFlightCall& call = entry.second;
    return !call.closed_in && now_ns >= call.start.start_ns + quiet_gap_ns_ && returned(call.start);
  });
}

bool FailureDetectors::call_in_flight_within(const OpenCheckpoint& c, uint64_t now_ns) const {
  for (const auto& [tid, call] : in_flight_)
    if (!call.closed_in && call.start.start_ns <= c.last_activity_ns + quiet_gap_ns_ &&
        now_ns < call.start.start_ns + in_flight_limit_ns_)
      return true;
  return false;
}

void FailureDetectors::checkpoint_closed(const OpenCheckpoint& c, uint64_t id) {
  for (auto& [tid, call] : in_flight_)
    if (!call.closed_in && call.start.start_ns <= c.last_activity_ns + quiet_gap_ns_)
      call.closed_in = id;
}

bool FailureDetectors::is_late_return(const IoEvent& ev) const {
  if (last_late_ && last_late_->tid == ev.tid && last_late_->start_ns == ev.start_ns &&
      last_late_->end_ns == ev.end_ns)
    return true;
  auto it = in_flight_.find(ev.tid);
  return it != in_flight_.end() && it->second.closed_in && ev.via != IoVia::Mmap &&
         ev.start_ns <= it->second.start.start_ns && ev.end_ns >= it->second.start.start_ns;
}

std::optional<FailureRecord> FailureDetectors::late_return(const IoEvent& ev) {
  if (!is_late_return(ev)) return std::nullopt;
  auto it = in_flight_.find(ev.tid);
  if (it == in_flight_.end() || !it->second.closed_in) return std::nullopt;  // a copy's other half
  const uint64_t checkpoint = *it->second.closed_in;
  stalls_flagged_.erase({ev.tid, it->second.start.start_ns});
  in_flight_.erase(it);
  last_late_ = LateRecord{ev.tid, ev.start_ns, ev.end_ns};
  return FailureRecord{
      std::string(kFailureStall), ev.end_ns,
      fmt::format("returned after checkpoint {} ended without it (in flight past "
                  "checkpoint.in_flight_limit_s, {} s): {}",
                  checkpoint, in_flight_limit_ns_ / 1'000'000'000, describe_call(ev)),
      checkpoint};
}

void FailureDetectors::flag_nfs_stall(uint64_t now_ns, OpenCheckpoint& open,
                                      const NfsStages& nfs) const {
  if (open.nfs_stall_flagged) return;
  // A hung flush already said it: one stall, not two, for one hang.
  if (std::any_of(open.live_failures.begin(), open.live_failures.end(),
                  [](const FailureRecord& f) { return f.kind == kFailureStall; })) {
    open.nfs_stall_flagged = true;
    return;
  }
  // The oldest NFS page I/O on the checkpoint's files that has not completed.
  const auto oldest = nfs.oldest_outstanding_on(open.files_touched);
  if (!oldest || now_ns < oldest->start_ns + stall_ns_) return;
  open.nfs_stall_flagged = true;
  std::string path = fmt::format("dev {} ino {}", oldest->file.dev, oldest->file.ino);
  for (const auto& call : open.calls)
    if (call.file == oldest->file && !call.path.empty()) {
      path = call.path;
      break;
    }
  open.live_failures.push_back(FailureRecord{
      std::string(kFailureStall), now_ns,
      fmt::format("no progress: NFS {} of {} initiated {:.1f} s ago has not completed ({} NFS "
                  "I/O RPCs of this checkpoint outstanding)",
                  to_string(oldest->kind), path,
                  static_cast<double>(now_ns - oldest->start_ns) / 1e9, oldest->count),
      std::nullopt});
}

void FailureDetectors::flag_live_stalls(uint64_t now_ns, OpenCheckpoint* open, const NfsStages& nfs,
                                        std::vector<FailureRecord>& job_failures) {
  if (!stall_ns_) return;
  for (auto& [tid, call] : in_flight_) {
    if (call.stall_flagged || now_ns < call.start.start_ns + stall_ns_) continue;
    call.stall_flagged = true;
    FailureRecord f{
        std::string(kFailureStall), now_ns,
        fmt::format("no progress: {}({}) has not returned after {:.1f} s, pid {} tid {}",
                    to_string(call.start.op), describe_target(call.start),
                    static_cast<double>(now_ns - call.start.start_ns) / 1e9, call.start.tgid, tid),
        std::nullopt};
    stalls_flagged_.insert({tid, call.start.start_ns});
    if (open) {
      open->live_failures.push_back(std::move(f));
    } else {
      job_failures.push_back(std::move(f));
    }
  }
  if (open) flag_nfs_stall(now_ns, *open, nfs);
}

void FailureDetectors::flag_server_timeout(const RpcEvent& ev, OpenCheckpoint* open,
                                           std::vector<FailureRecord>& job_failures) {
  const std::string server = ev.server.empty() ? "(unknown server)" : ev.server;
  std::string evidence = fmt::format(
      "server {} not responding: {} (RPC task {}, xid 0x{:08x}) reached major timeout #{} "
      "{:.1f} s after it started",
      server, ev.op, ev.task_pid, ev.xid, ev.timeouts, static_cast<double>(ev.execute_ns) / 1e9);
  if (open) {
    auto [it, fresh] = open->server_trouble.try_emplace(server);
    if (fresh) {
      it->second = ServerTrouble{open->live_failures.size(), 1, ev.time_ns, ev.time_ns};
      open->live_failures.push_back(FailureRecord{std::string(kFailureNfsServerNotResponding),
                                                  ev.time_ns, std::move(evidence), std::nullopt});
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
  job_failures.push_back(FailureRecord{std::string(kFailureNfsServerNotResponding), ev.time_ns,
                                       std::move(evidence), std::nullopt});
}

std::vector<FailureRecord> FailureDetectors::closing_failures(OpenCheckpoint& c,
                                                              const NfsStages& nfs) {
  std::vector<FailureRecord> failures = std::move(c.live_failures);
  for (const auto& [server, trouble] : c.server_trouble) {
    // Complete the live report: how long the server was away, and whether
    // it answered again (a reply from it after its last major timeout).
    std::string& evidence = failures[trouble.failure_index].evidence;
    evidence += fmt::format("; {} major timeout(s) over {:.1f} s", trouble.timeouts,
                            static_cast<double>(trouble.last_ns - trouble.first_ns) / 1e9);
    const uint64_t answered = nfs.first_reply_after(server, trouble.last_ns);
    evidence += answered ? fmt::format("; responding again {:.1f} s after the first timeout",
                                       static_cast<double>(answered - trouble.first_ns) / 1e9)
                         : std::string("; no reply from it seen before the checkpoint ended");
  }
  for (const auto& ev : c.calls) {
    if (is_refused_copy(ev)) continue;
    if (ev.ret < 0 && !is_retry_errno(static_cast<int>(-ev.ret))) {
      int err = static_cast<int>(-ev.ret);
      std::string kind = failure_kind_for_errno(err);
      // On a checkpoint file any failed data call is a failure; a failed
      // open/stat is only one for the errnos that mean the storage failed
      // (ENOENT while probing for the latest checkpoint is normal).
      if (kind.empty() && is_data_op(ev.op)) kind = kFailureIoError;
      if (!kind.empty())
        failures.push_back(FailureRecord{kind, ev.end_ns, describe_call(ev), std::nullopt});
    }
    if (stall_ns_ && ev.end_ns - ev.start_ns >= stall_ns_ &&
        !stalls_flagged_.erase({ev.tid, ev.start_ns}))
      failures.push_back(FailureRecord{std::string(kFailureStall), ev.end_ns,
                                       "no progress: " + describe_call(ev), std::nullopt});
  }
  return failures;
}

void flag_partial_save(const ProcEvent& ev, OpenCheckpoint& open) {
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
  for (const auto& call : open.calls) {
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
  open.live_failures.push_back(FailureRecord{
      std::string(kFailurePartialSave), ev.time_ns,
      fmt::format("pid {} ({}) died by signal {} ({}) with {} checkpoint file(s) written and still "
                  "open for writing: {}",
                  ev.tgid, ev.comm, signal, strsignal(signal), partial.size(), list),
      std::nullopt});
}

std::optional<FailureRecord> job_failure(const IoEvent& ev) {
  if (ev.ret >= 0 || is_retry_errno(static_cast<int>(-ev.ret))) return std::nullopt;
  std::string kind = failure_kind_for_errno(static_cast<int>(-ev.ret));
  if (kind.empty()) return std::nullopt;
  return FailureRecord{kind, ev.end_ns, describe_call(ev), std::nullopt};
}

std::vector<FailureRecord> group_resets(std::vector<PendingReset> resets,
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
    out.push_back(FailureRecord{std::string(kFailureTcpReset), first.time_ns, std::move(evidence),
                                checkpoint_id});
  }
  return out;
}

}  // namespace ckpt
