// Where a collector's kernel records come from: its own probes
// (ProbeManager), or a node exporter that already traces the node and
// forwards the job's records over a local socket (exporter/exporter_feed.h).
// Either way the records are bpf/*.h's layouts, handed to the same sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "config/config.h"
#include "model/events.h"
#include "model/records.h"

namespace ckpt {

struct TcpLatest;
struct ProgramStats;

// A traced call its thread left the CPU inside and has not returned from
// (bpf/jobio.h ckpt_parked_call), in user space's terms.
struct ParkedCall {
  uint64_t start_ns = 0;
  std::vector<FileId> files;      // the file it moves data on or flushes; a copy's two
  int fd = -1;                    // -1: none known (the file layer, a copy)
  uint64_t running_since_ns = 0;  // when it last got a CPU inside the call; 0: off one now
};

class ProbeFeed {
 public:
  virtual ~ProbeFeed() = default;

  // Follow this process (and what it forks) too.
  virtual Expected<void> trace_tgid(uint32_t tgid) = 0;
  // Waits up to timeout_ms for records and hands them to the handlers;
  // the number consumed, or an error.
  virtual Expected<int> poll(int timeout_ms) = 0;
  // The NFS stages' probes, when they were not running, if they can run now.
  virtual Expected<void> start_nfs_if_available() = 0;
  [[nodiscard]] virtual bool nfs_enabled() const = 0;
  [[nodiscard]] virtual bool tcp_enabled() const = 0;
  virtual Expected<void> add_storage_endpoint(const StorageEndpoint& endpoint) = 0;
  // The newest counters of every tracked storage socket (may be empty).
  [[nodiscard]] virtual std::vector<TcpLatest> tcp_latest() const = 0;
  // Cumulative drop counters, by source and cause.
  [[nodiscard]] virtual std::vector<DropRecord> drops() const = 0;
  [[nodiscard]] virtual std::vector<ProgramStats> program_stats() const = 0;
  [[nodiscard]] virtual const std::vector<std::string>& notes() const = 0;
  // Everything the kernel has recorded so far has been handed over (a
  // forwarded feed asks its exporter; local probes drain their rings).
  virtual void sync(int timeout_ms) = 0;
  // Where the records come from, for the user: "probes of its own", ...
  [[nodiscard]] virtual std::string description() const { return "probes of its own"; }
  // How the job's file I/O is traced (enum ckpt_probe_mode by name:
  // "syscall" or "file_layer"); "" when the feed does not say.
  [[nodiscard]] virtual std::string probe_mode() const { return ""; }
  // Why that mode, in words (for the user, not the trace).
  [[nodiscard]] virtual std::string probe_mode_reason() const { return ""; }
  // The stitcher's decision on a file (user-space dev, ino): the kernel then
  // records a file that is no checkpoint's no more (bpf/jobio.h
  // ckpt_file_verdict). Never fails the trace: a write that fails is
  // counted. A feed that does not own the probes ignores it.
  virtual void set_file_verdict(const FileId& /*file*/, bool /*is_checkpoint*/) {}
  // The call thread `tid` is inside, if it left the CPU in it (blocked, or
  // preempted) and has not returned; nullopt: none, or a feed that cannot
  // say (one forwarded from an exporter: it does not own the probes).
  [[nodiscard]] virtual std::optional<ParkedCall> parked_call(uint32_t /*tid*/) const {
    return std::nullopt;
  }
};

}  // namespace ckpt
