// Turns the event stream into checkpoint records: bursts of I/O on checkpoint
// files closed by a quiet gap, each split into stages with bytes, busy time,
// bandwidth against the stage's maximum, a bottleneck and its failures.
// docs/stitching.md documents every rule; the tests hold known answers.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "config/checkpoint_matcher.h"
#include "config/config.h"
#include "model/event_sink.h"
#include "model/events.h"
#include "model/records.h"
#include "stitch/maxima.h"

namespace ckpt {

// Which stages this run can measure; the others are absent, never zero.
struct StageAvailability {
  bool job_io = false;     // host_io, metadata, serialize
  bool transport = false;  // TCP toward storage servers
  bool nfs = false;        // nfs_client, rpc_queue, rpc_rtt: the NFS client's probes
  bool gpu = false;        // gpu_copy: the CUPTI library runs in the job
};

class Stitcher : public EventSink {
 public:
  Stitcher(const Config& config, std::shared_ptr<MaximaProvider> maxima,
           StageAvailability available);

  void on_event(Event&& event) override;
  // The NFS probes can start late (the modules load with the first mount).
  void set_nfs_available(bool yes) { available_.nfs = yes; }
  // The CUPTI library said hello from one of the job's processes.
  void set_gpu_available(bool yes) { available_.gpu = yes; }
  // Closes a checkpoint once `now_ns` is a quiet gap past its last I/O
  // (plus a small allowance for events still in the ring buffer).
  void advance(uint64_t now_ns);
  // End of trace: closes whatever is open.
  void finish();

  // Output produced since the last take (the collector writes it out
  // incrementally, so a killed profiler keeps what it had).
  std::vector<CheckpointRecord> take_checkpoints();
  std::vector<FailureRecord> take_failures();
  std::vector<IoCallRecord> take_io_calls();
  // Every RPC a closed checkpoint's nfs.rpc_ops counts, one record each.
  std::vector<RpcCallRecord> take_rpc_calls();
  std::vector<TcpSampleRecord> take_tcp_samples();
  [[nodiscard]] std::vector<ConnectionRecord> connections() const;
  [[nodiscard]] std::vector<RpcTotals> rpc_totals() const;
  // NFS events the stitcher could not keep (its buffers are bounded).
  [[nodiscard]] std::vector<DropRecord> drops() const;

 private:
  struct CpuWindow {
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t cpu_ns;
  };
  struct TcpPoint {
    uint64_t time_ns;
    uint64_t acked;
    uint64_t received;
    uint64_t retrans;
    uint64_t zero_window_ns;
    uint64_t in_flight;
    uint64_t backlog;
  };
  struct PendingReset {
    uint64_t time_ns;
    std::string local;
    std::string remote;
    bool sent;
  };
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
  // A server not responding during a checkpoint: flagged at its first major
  // timeout, its evidence completed when the checkpoint closes.
  struct ServerTrouble {
    size_t failure_index;
    uint64_t timeouts;
    uint64_t first_ns;
    uint64_t last_ns;
  };
  struct Connection {
    ConnectionRecord record;
    uint64_t base_acked = 0;
    uint64_t base_sent = 0;
    uint64_t base_received = 0;
    uint64_t base_retrans = 0;
    std::deque<TcpPoint> points;
  };
  struct OpenCheckpoint {
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    uint64_t last_activity_ns = 0;             // end of the last call that extends it
    std::vector<FailureRecord> live_failures;  // stalls seen while calls were in flight
    uint64_t bytes_written = 0;
    uint64_t bytes_read = 0;
    uint64_t write_calls = 0;
    uint64_t read_calls = 0;
    std::vector<IoEvent> calls;
    std::unordered_set<FileId, FileIdHash> files_touched;
    std::map<std::string, ServerTrouble> server_trouble;
    bool nfs_stall_flagged = false;
  };

  struct InFlightCall {
    CallStartEvent start;
    bool stall_flagged = false;
  };

  void on_io(IoEvent&& ev);
  void on_call_start(CallStartEvent&& ev);
  [[nodiscard]] bool call_in_flight_within(const OpenCheckpoint& c) const;
  void flag_nfs_stall(uint64_t now_ns);
  void flag_live_stalls(uint64_t now_ns);
  void release_unclaimed_resets(uint64_t now_ns);
  static std::vector<FailureRecord> group_resets(std::vector<PendingReset> resets,
                                                 std::optional<uint64_t> checkpoint_id);
  void on_cpu(const CpuEvent& ev);
  void on_proc(const ProcEvent& ev);
  void flag_partial_save(const ProcEvent& ev);
  void on_tcp(const TcpEvent& ev);
  void on_nfs_io(const NfsIoEvent& ev);
  void on_rpc(const RpcEvent& ev);
  void on_gpu_copy(GpuCopyEvent&& ev);
  // The gpu_copy stage: the D2H copies that lead into a save (those inside
  // it and the burst just before it), the H2D copies that follow a load's
  // reads; claimed copies leave the buffer.
  std::optional<StageRecord> gpu_copy_stage(const OpenCheckpoint& c, CheckpointRecord& rec);
  void flag_server_timeout(const RpcEvent& ev);
  uint32_t intern(const std::string& name);
  void add_nfs_stages(const OpenCheckpoint& c, CheckpointRecord& rec,
                      std::vector<FailureRecord>& failures);

  static uint64_t acked_data(const Connection& conn, const TcpEvent& ev);
  bool is_checkpoint_call(const IoEvent& ev);
  void add_cpu_window(uint32_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t cpu_ns);
  void note_job_failure(const IoEvent& ev);
  void close_open();
  void prune(uint64_t horizon_ns);

  StageRecord host_io_stage(const OpenCheckpoint& c, Direction d);
  StageRecord metadata_stage(const OpenCheckpoint& c);
  StageRecord serialize_stage(const OpenCheckpoint& c, Direction d, uint64_t bytes);
  std::optional<StageRecord> transport_stage(const OpenCheckpoint& c, Direction d,
                                             std::vector<FailureRecord>& failures, uint64_t id);

  Config config_;
  CheckpointMatcher matcher_;
  std::shared_ptr<MaximaProvider> maxima_;
  StageAvailability available_;

  std::optional<OpenCheckpoint> open_;
  uint64_t next_id_ = 1;

  // Per data-call file: is it a checkpoint file? Keyed by dev:ino; renames update it.
  std::unordered_map<FileId, bool, FileIdHash> file_is_checkpoint_;
  std::unordered_map<uint32_t, std::deque<CpuWindow>> cpu_windows_;
  std::map<uint64_t, Connection> connections_;

  // NFS page I/O and RPCs, kept until no checkpoint can claim them.
  std::deque<NfsIoEvent> nfs_io_;
  // NFS page I/O initiated and not yet done, by rpc_task: a checkpoint whose
  // files still have some is not over (a write(2) blocked on a dead server
  // is not a flush call, but its pages are here).
  struct NfsOutstanding {
    FileId file;
    uint64_t start_ns;
    NfsIoKind kind;
  };
  std::unordered_map<uint64_t, NfsOutstanding> nfs_outstanding_;
  std::deque<RpcPoint> rpcs_;
  // GPU copies not yet claimed by a checkpoint (bounded; kept a minute).
  std::deque<GpuCopyEvent> gpu_copies_;
  uint64_t gpu_buffer_full_ = 0;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::map<std::pair<std::string, uint32_t>, std::map<std::string, RpcOpStats>> rpc_totals_;
  std::map<std::string, uint64_t>
      job_level_timeout_ns_;  // server -> last flagged outside checkpoints
  uint64_t nfs_buffer_full_ = 0;

  // Flush calls on checkpoint files that have started and not returned, by tid.
  std::unordered_map<uint32_t, InFlightCall> in_flight_;
  std::set<std::pair<uint32_t, uint64_t>> stalls_flagged_;  // (tid, start) reported live
  std::vector<PendingReset> pending_resets_;                // not yet claimed by a checkpoint

  std::vector<CheckpointRecord> out_checkpoints_;
  std::vector<FailureRecord> out_failures_;
  std::vector<IoCallRecord> out_io_calls_;
  std::vector<RpcCallRecord> out_rpc_calls_;
  std::vector<TcpSampleRecord> out_tcp_samples_;
};

// The bottleneck rule (docs/stitching.md): the stage with the most
// wall-clock busy time bounds the checkpoint; stages within 90% of it are
// contenders, and among contenders the one closest to its known maximum wins,
// then the longest, then the one further down the pipeline.
std::string choose_bottleneck(const std::vector<StageRecord>& stages);

// A queue is never the limit itself: RPCs wait in rpc_queue because the stage
// after it is full. When `verdict` is rpc_queue, it goes to transport when
// the RPCs mostly waited to be sent (the "sending" queue: the connection
// could not take more) and the transport stage was measured, to rpc_rtt when
// they mostly waited for a request slot ("backlog": every slot awaited a
// reply from the server); otherwise it stays.
std::string attribute_queue_verdict(const std::string& verdict,
                                    const std::vector<StageRecord>& stages,
                                    const std::vector<std::pair<std::string, uint64_t>>& waits);

// A TCP event as the sample row traces and metrics keep of it.
TcpSampleRecord tcp_sample_record(const TcpEvent& ev);

// Nearest-rank percentiles of `values` (sorted in place).
DurationStats duration_stats(std::vector<uint64_t>& values);

// Failure kind for an errno from a call: "enospc", "edquot", "estale",
// "eio", or "" when the errno is not a failure by itself (ENOENT on a probe).
std::string failure_kind_for_errno(int err);
// Restart codes, EINTR and EAGAIN: the call is retried, nothing failed.
bool is_retry_errno(int err);

}  // namespace ckpt
