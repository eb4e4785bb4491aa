// The NFS stages: nfs_client (the page I/O on the checkpoint's files),
// rpc_queue (RPCs waiting to be sent) and rpc_rtt (on the wire and at the
// server), with the checkpoint's NFS record, its RPC rows and its RPC
// failures. Owns the NFS page I/O and RPC buffers (names interned: a big
// checkpoint has one RPC per wsize of data) and the per-server RPC totals.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/events.h"
#include "model/records.h"
#include "stitch/exclusive.h"
#include "stitch/maxima.h"
#include "stitch/open_checkpoint.h"
#include "stitch/transport_stage.h"

namespace ckpt {

// The oldest NFS page I/O on some files that has not completed, and how
// many there are.
struct OutstandingNfsIo {
  FileId file;
  uint64_t start_ns;
  NfsIoKind kind;
  size_t count;
};

class NfsStages {
 public:
  NfsStages(std::shared_ptr<MaximaProvider> maxima, uint64_t quiet_gap_ns)
      : maxima_(std::move(maxima)), quiet_gap_ns_(quiet_gap_ns) {}

  void on_nfs_io(const NfsIoEvent& ev);
  // Counts a finished RPC in its server's totals and keeps it (a timed-out
  // one too: it is the evidence) for the checkpoints still to close.
  void on_rpc(const RpcEvent& ev);
  // Forgets page I/O whose completion never came (its task killed).
  void forget_stale_outstanding(uint64_t now_ns);
  [[nodiscard]] bool io_outstanding_on(const std::unordered_set<FileId, FileIdHash>& files) const;
  [[nodiscard]] std::optional<OutstandingNfsIo> oldest_outstanding_on(
      const std::unordered_set<FileId, FileIdHash>& files) const;
  // When `server` first answered an RPC successfully after `after_ns`; 0 if
  // no reply from it is kept.
  [[nodiscard]] uint64_t first_reply_after(const std::string& server, uint64_t after_ns) const;
  // The closing checkpoint's NFS stages and record when any of its I/O went
  // over NFS; its RPCs as rows to `rpc_rows`, its RPC failures to
  // `failures`. The transport's connections name the link; their samples
  // describe it when `transport_measured`. The stages' intervals, by file,
  // go to `spans`.
  void add_stages(const OpenCheckpoint& c, CheckpointRecord& rec,
                  std::vector<FailureRecord>& failures, std::vector<RpcCallRecord>& rpc_rows,
                  const TransportStage& transport, bool transport_measured, StageSpans& spans);
  // Drops the page I/O and RPCs that finished before `horizon_ns`.
  void prune(uint64_t horizon_ns);
  [[nodiscard]] std::vector<RpcTotals> totals() const;
  // NFS events not kept because the buffers were full.
  [[nodiscard]] DropRecord drops() const;

 private:
  // One finished (or timed-out) RPC, compact: a big checkpoint has one per
  // wsize of data, so names are interned.
  struct RpcPoint {
    uint64_t start_ns;
    uint64_t time_ns;
    uint64_t queue_ns;
    uint64_t rtt_ns;
    uint64_t execute_ns;
    uint64_t bytes_sent;
    uint64_t bytes_recv;
    std::array<uint64_t, kRpcQueues> wait_ns;
    FileId file;
    uint64_t io_offset;
    uint64_t io_count;
    uint32_t op;      // interned name
    uint32_t server;  // interned name
    uint32_t client_id;
    uint32_t xid;
    uint32_t ntrans;
    uint32_t timeouts;
    int32_t status;
    uint32_t vers;
    RpcEvent::Kind kind;
    bool has_io;
    NfsIoKind io;
  };
  // NFS page I/O initiated and not yet done, by rpc_task: a checkpoint whose
  // files still have some is not over (a write(2) blocked on a dead server
  // is not a flush call, but its pages are here).
  struct NfsOutstanding {
    FileId file;
    uint64_t start_ns;
    NfsIoKind kind;
  };

  uint32_t intern(const std::string& name);

  std::shared_ptr<MaximaProvider> maxima_;
  uint64_t quiet_gap_ns_;
  // NFS page I/O and RPCs, kept until no checkpoint can claim them.
  std::deque<NfsIoEvent> nfs_io_;
  std::unordered_map<uint64_t, NfsOutstanding> nfs_outstanding_;
  std::deque<RpcPoint> rpcs_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::map<std::pair<std::string, uint32_t>, std::map<std::string, RpcOpStats>> rpc_totals_;
  uint64_t nfs_buffer_full_ = 0;
};

// Nearest-rank percentiles of `values` (sorted in place).
DurationStats duration_stats(std::vector<uint64_t>& values);

}  // namespace ckpt
