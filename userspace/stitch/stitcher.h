// Turns the event stream into checkpoint records: bursts of I/O on checkpoint
// files closed by a quiet gap, each split into stages with bytes, busy time,
// bandwidth against the stage's maximum, a bottleneck and its failures.
// docs/stitching.md documents every rule; the tests hold known answers.
#pragma once

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
#include "model/events.h"
#include "model/records.h"
#include "stitch/maxima.h"

namespace ckpt {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(Event&& event) = 0;
};

// Which stages this run can measure; the others are absent, never zero.
struct StageAvailability {
  bool job_io = false;     // host_io, metadata, serialize
  bool transport = false;  // TCP toward storage servers
};

class Stitcher : public EventSink {
 public:
  Stitcher(const Config& config, std::shared_ptr<MaximaProvider> maxima,
           StageAvailability available);

  void on_event(Event&& event) override;
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
  std::vector<TcpSampleRecord> take_tcp_samples();
  [[nodiscard]] std::vector<ConnectionRecord> connections() const;

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
  };

  struct InFlightCall {
    CallStartEvent start;
    bool stall_flagged = false;
  };

  void on_io(IoEvent&& ev);
  void on_call_start(CallStartEvent&& ev);
  [[nodiscard]] bool call_in_flight_within(const OpenCheckpoint& c) const;
  void flag_live_stalls(uint64_t now_ns);
  void release_unclaimed_resets(uint64_t now_ns);
  void on_cpu(const CpuEvent& ev);
  void on_proc(const ProcEvent& ev);
  void on_tcp(const TcpEvent& ev);

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

  // Flush calls on checkpoint files that have started and not returned, by tid.
  std::unordered_map<uint32_t, InFlightCall> in_flight_;
  std::set<std::pair<uint32_t, uint64_t>> stalls_flagged_;  // (tid, start) reported live
  std::vector<FailureRecord> pending_resets_;               // not yet claimed by a checkpoint

  std::vector<CheckpointRecord> out_checkpoints_;
  std::vector<FailureRecord> out_failures_;
  std::vector<IoCallRecord> out_io_calls_;
  std::vector<TcpSampleRecord> out_tcp_samples_;
};

// The bottleneck rule (docs/stitching.md): the stage with the most
// wall-clock busy time bounds the checkpoint; stages within 90% of it are
// contenders, and among contenders the one closest to its known maximum wins,
// then the longest, then the one further down the pipeline.
std::string choose_bottleneck(const std::vector<StageRecord>& stages);

// Failure kind for an errno from a call: "enospc", "edquot", "estale",
// "eio", or "" when the errno is not a failure by itself (ENOENT on a probe).
std::string failure_kind_for_errno(int err);
// Restart codes, EINTR and EAGAIN: the call is retried, nothing failed.
bool is_retry_errno(int err);

}  // namespace ckpt
