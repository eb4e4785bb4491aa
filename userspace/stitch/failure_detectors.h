// The failures the stitcher derives from the events (docs/failures.md):
// stalls (a call in flight or NFS page I/O with no progress), servers not responding,
// partial saves (a writer killed mid-save), failed calls by errno, connection
// resets grouped by server. Live ones go into the open checkpoint or, with
// none open, to the job; the rest are found when a checkpoint closes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/events.h"
#include "model/records.h"
#include "stitch/errnos.h"
#include "stitch/nfs_stages.h"
#include "stitch/open_checkpoint.h"
#include "stitch/transport_stage.h"

namespace ckpt {

class FailureDetectors {
 public:
  FailureDetectors(uint64_t stall_ns, uint64_t quiet_gap_ns, uint64_t in_flight_limit_ns)
      : stall_ns_(stall_ns), quiet_gap_ns_(quiet_gap_ns), in_flight_limit_ns_(in_flight_limit_ns) {}

  // A call on a checkpoint file is in flight on its thread (its start record).
  void on_call_start(CallStartEvent&& ev);
  // Whatever the thread had in flight has returned (or never will).
  void on_call_returned(uint32_t tid) { in_flight_.erase(tid); }
  // Forgets the calls in flight for at least a quiet gap whose thread
  // `returned(call)` says has left them unseen (their exit program was
  // skipped: stitcher.h set_call_returned_query).
  void forget_returned_unseen(uint64_t now_ns,
                              const std::function<bool(const CallStartEvent&)>& returned);
  // A call that began inside `c` (up to a quiet gap after its last
  // activity) is still in flight at `now_ns`, for less than the in-flight
  // limit: the checkpoint is not over, however long the call takes.
  [[nodiscard]] bool call_in_flight_within(const OpenCheckpoint& c, uint64_t now_ns) const;
  // `c` closed as checkpoint `id`: the calls that began inside it and are
  // still in flight (past the in-flight limit, or at the end of a trace)
  // are its, and their records, if they come, are late returns.
  void checkpoint_closed(const OpenCheckpoint& c, uint64_t id);
  // The record of a call whose checkpoint closed without it: a stall of that
  // checkpoint, saying what the call did; nullopt for any other record. Both
  // halves of a copy are the same late return; the first says it.
  std::optional<FailureRecord> late_return(const IoEvent& ev);
  [[nodiscard]] bool is_late_return(const IoEvent& ev) const;
  // Flushes and NFS page I/O with no progress for the stall time, flagged
  // once each: into `open`, or with none open (null) to `job_failures`.
  void flag_live_stalls(uint64_t now_ns, OpenCheckpoint* open, const NfsStages& nfs,
                        std::vector<FailureRecord>& job_failures);
  // A major timeout: once per server in the open checkpoint, else once a
  // minute per server to `job_failures`.
  void flag_server_timeout(const RpcEvent& ev, OpenCheckpoint* open,
                           std::vector<FailureRecord>& job_failures);
  // The closing checkpoint's failures: its live ones (server trouble
  // completed from `nfs`'s replies), then its failed and stalled calls.
  std::vector<FailureRecord> closing_failures(OpenCheckpoint& c, const NfsStages& nfs);

 private:
  struct InFlightCall {
    CallStartEvent start;
    bool stall_flagged = false;
    std::optional<uint64_t> closed_in;  // the checkpoint that ended without it
  };
  // The last late return, whose other half (a copy's) is late too.
  struct LateRecord {
    uint32_t tid = 0;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
  };

  void flag_nfs_stall(uint64_t now_ns, OpenCheckpoint& open, const NfsStages& nfs) const;

  uint64_t stall_ns_;
  uint64_t quiet_gap_ns_;
  uint64_t in_flight_limit_ns_;
  // Calls on checkpoint files that have started and not returned, by tid.
  std::unordered_map<uint32_t, InFlightCall> in_flight_;
  std::optional<LateRecord> last_late_;
  std::set<std::pair<uint32_t, uint64_t>> stalls_flagged_;  // (tid, start) reported live
  std::map<std::string, uint64_t>
      job_level_timeout_ns_;  // server -> last flagged outside checkpoints
};

// A process of the job died by a signal during `open` with checkpoint files
// it wrote still open for writing: a partial_save into `open`.
void flag_partial_save(const ProcEvent& ev, OpenCheckpoint& open);

// A call outside checkpoints whose errno is a storage failure by itself.
std::optional<FailureRecord> job_failure(const IoEvent& ev);

// One tcp_reset per server, with the count and the span of its resets.
std::vector<FailureRecord> group_resets(std::vector<PendingReset> resets,
                                        std::optional<uint64_t> checkpoint_id);

}  // namespace ckpt
