// Turns the event stream into checkpoint records: bursts of I/O on checkpoint
// files closed by a quiet gap, each split into stages with bytes, busy time,
// bandwidth against the stage's maximum, a bottleneck and its failures.
// docs/stitching.md documents every rule; the tests hold known answers.
//
// This is the core: it takes the events, decides which calls are checkpoint
// I/O and when a checkpoint opens and closes, and hands each probe family's
// events to its stage builder (host_io_stages.h, nfs_stages.h,
// transport_stage.h, gpu_copy_stage.h) and the failure detectors
// (failure_detectors.h), which build their part of a closing checkpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/checkpoint_matcher.h"
#include "config/config.h"
#include "model/event_sink.h"
#include "model/events.h"
#include "model/records.h"
#include "stitch/errnos.h"
#include "stitch/failure_detectors.h"
#include "stitch/gpu_copy_stage.h"
#include "stitch/host_io_stages.h"
#include "stitch/maxima.h"
#include "stitch/nfs_stages.h"
#include "stitch/open_checkpoint.h"
#include "stitch/pending_files.h"
#include "stitch/storage_stage.h"
#include "stitch/transport_stage.h"
#include "stitch/unrecognised_io.h"

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
  // Called when the verdict on a regular file is decided or changes: at an
  // open with a resolved path (the kernel forgets the verdict at every open),
  // a rename, or the first data call on a file with none. Never for a
  // directory or a call whose path could not be resolved. The FileId is user
  // space's (st_dev, st_ino); the collector tells the kernel's file_verdicts.
  using VerdictListener = std::function<void(const FileId&, bool is_checkpoint)>;
  void set_verdict_listener(VerdictListener listener) { verdict_listener_ = std::move(listener); }

  // Whether the thread of a call in flight has left it unseen
  // (sources/call_return.h reads /proc). Asked of a call in flight for a
  // quiet gap, where a call's exit can be missed (the file layer: bpf/
  // jobio_file_layer.bpf.h, "A missed exit"); a call it says has returned
  // no longer holds its checkpoint open, nor becomes a stall. Unset
  // (replays, tests, syscall mode): only a record of the thread ends a call.
  using CallReturnedQuery = std::function<bool(const CallStartEvent& call)>;
  void set_call_returned_query(CallReturnedQuery query) { call_returned_ = std::move(query); }

  // NFS events the stitcher could not keep (its buffers are bounded).
  [[nodiscard]] std::vector<DropRecord> drops() const;

  // The job's data through files not recognised as checkpoints, so far.
  [[nodiscard]] UnrecognisedIoRecord unrecognised_io() const { return unrecognised_.record(); }
  // Written outside checkpoints, to files excluded by name too, and to how
  // many files (the end-of-run accounting's side of the trace).
  [[nodiscard]] uint64_t written_outside_checkpoints() const {
    return unrecognised_.all_bytes_written();
  }
  [[nodiscard]] uint64_t files_written_outside_checkpoints() const {
    return unrecognised_.all_files_written();
  }
  // Off: that accounting is skipped (the node exporter, which reports none of it).
  void count_unrecognised_io(bool yes) { count_unrecognised_ = yes; }

 private:
  void on_io(IoEvent&& ev);
  void on_call_start(CallStartEvent&& ev);
  void on_proc(const ProcEvent& ev);
  void on_tcp(const TcpEvent& ev);
  void on_rpc(const RpcEvent& ev);
  void on_other_io(const OtherIoEvent& ev);
  void note_unrecognised(const IoEvent& ev);
  // A checkpoint call joins the open checkpoint (or opens one).
  void admit(IoEvent&& ev);
  // Decided late (decided_late.cpp, docs/stitching.md): what a successful
  // rename (or unlink) settles of the files held under temporary names and
  // of those counted as unrecognised.
  void settle_rename(const IoEvent& ev);
  void settle_unlink(const IoEvent& ev);
  // A file renamed into a checkpoint's name: its held calls and its summed
  // bytes join the checkpoint, once.
  void promote(const FileId& file, const std::string& path);
  // A held file that no rename made a checkpoint's: unrecognised I/O.
  void release_pending(const FileId& file);
  void release_stale_pending(uint64_t horizon_ns);
  // Bytes the kernel summed on a file now known to be a checkpoint's.
  void admit_summed(const FileId& file, const std::string& path,
                    const UnrecognisedIo::Moved& moved);
  bool is_checkpoint_call(const IoEvent& ev);
  void decide(const FileId& file, bool is_checkpoint, bool tell_always);
  // A file no rule makes a checkpoint's under a temporary name: held.
  void hold_if_temporary(const IoEvent& ev, bool is_checkpoint);
  void set_verdict(const FileId& file, bool is_checkpoint);
  static void count_mapped_pages(OpenCheckpoint& c, IoEvent& ev);
  [[nodiscard]] bool in_flight_within(const OpenCheckpoint& c, uint64_t now_ns) const;
  OpenCheckpoint* open_checkpoint() { return open_ ? &*open_ : nullptr; }
  void release_unclaimed_resets(uint64_t now_ns);
  void close_open();
  // One checkpoint record (with its stages, failures and calls) from `c`.
  void emit(OpenCheckpoint&& c);
  void prune(uint64_t horizon_ns);

  Config config_;
  CheckpointMatcher matcher_;
  std::shared_ptr<MaximaProvider> maxima_;
  StageAvailability available_;

  std::optional<OpenCheckpoint> open_;
  uint64_t next_id_ = 1;

  // Per data-call file: is it a checkpoint file? Keyed by dev:ino; renames update it.
  std::unordered_map<FileId, bool, FileIdHash> file_is_checkpoint_;
  VerdictListener verdict_listener_;
  CallReturnedQuery call_returned_;
  UnrecognisedIo unrecognised_;
  bool count_unrecognised_ = true;
  // Files under temporary names, their calls held until a rename decides.
  PendingFiles pending_;

  // The probe families, each with the buffers it builds its stages from.
  HostIoStages host_io_;
  StorageStage storage_;
  NfsStages nfs_;
  TransportStage transport_;
  GpuCopyStage gpu_;
  FailureDetectors detectors_;

  std::vector<CheckpointRecord> out_checkpoints_;
  std::vector<FailureRecord> out_failures_;
  std::vector<IoCallRecord> out_io_calls_;
  std::vector<RpcCallRecord> out_rpc_calls_;
  std::vector<TcpSampleRecord> out_tcp_samples_;
};

// The bottleneck rule (docs/stitching.md): the stage with the most own time
// (exclusive_ns; busy_ns where that is unknown) bounds the checkpoint;
// stages within 90% of it are a near-tie, which the one furthest down the
// pipeline wins. Maxima play no part.
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

}  // namespace ckpt
