// End-of-run accounting (docs/stitching.md): the job's threads' own write
// counters, summed as each exits (the exit records carry task->ioac), less
// what a thread had moved before the trace began, against the bytes the
// trace attributed. A write by a way no probe sees is then a named
// difference, never silent.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/events.h"
#include "model/records.h"

namespace ckpt {

class IoAccounting {
 public:
  // A thread that was running when the trace began (attach), with the
  // counters it had then: only what it moves from now on counts.
  void baseline(uint32_t tid, const ProcEvent::ThreadIo& io) { baselines_[tid] = io; }
  // A traced thread exited (its exit record): its counters join the sums.
  // Records without counters (a kernel without them) are counted apart.
  void on_exit(const ProcEvent& ev);
  // Threads that exited without counters in their records.
  [[nodiscard]] uint64_t threads_without_counters() const { return without_; }

  // What the trace saw written outside its checkpoints: every file the
  // checkpoint patterns did not take, excluded ones too.
  struct OutsideCheckpoints {
    uint64_t bytes_written = 0;
    uint64_t files_written = 0;
    uint64_t notice_bytes = 0;  // checkpoint.unrecognised_notice_mib
  };
  // The record for the trace: the kernel's sums, the trace's own figures
  // (the checkpoints' written bytes and files, and the rest), and how many
  // of the job's processes still run.
  [[nodiscard]] IoAccountingRecord record(const std::vector<CheckpointRecord>& checkpoints,
                                          const OutsideCheckpoints& outside,
                                          uint64_t processes_running, uint64_t page_bytes) const;

 private:
  std::unordered_map<uint32_t, ProcEvent::ThreadIo> baselines_;
  uint64_t threads_ = 0;
  uint64_t without_ = 0;
  uint64_t read_bytes_ = 0;
  uint64_t written_bytes_ = 0;
};

}  // namespace ckpt
