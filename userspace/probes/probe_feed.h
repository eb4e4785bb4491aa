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
};

}  // namespace ckpt
