// What the workload did, exactly: the figures the profiler's output is
// checked against. Filled by the writer/reader, merged across threads and
// processes by the worker driver, written out by ground_truth.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ckpt::workload {

enum class Phase { Save, Load };

inline const char* to_string(Phase phase) { return phase == Phase::Save ? "save" : "load"; }

// One failed call (or a failed verification, err == 0).
struct IoFailure {
  std::string op;      // "open", "write", "fsync", "close", "rename", "read", "verify", "send", ...
  std::string path;    // file path, "tcp HOST:PORT", or "" where none applies
  int err = 0;         // errno; 0 when the failure is not a failed call
  std::string detail;  // the text when err == 0, e.g. "content differs at byte 17"
  bool usage = false;  // a setup the user must change (O_DIRECT refused): exit 2, not 1

  [[nodiscard]] std::string message() const;  // "write /d/shard-0.pt: No space left on device"
};

// One shard file saved or loaded. Counts are of calls that returned >= 0:
// a short write is one call, the retry another; every byte counted was
// moved by the kernel.
struct FileResult {
  uint32_t shard = 0;
  std::string path;      // final path, absolute
  std::string tmp_path;  // --rename-commit: the path the bytes were written under
  int32_t pid = 0;
  int32_t tid = 0;
  uint64_t bytes = 0;  // written (save) or read (load)
  uint64_t calls = 0;  // write(2) (save) or read(2) (load) calls
  uint64_t fsync_calls = 0;
  uint64_t checksum = 0;  // Checksum of the bytes moved
  uint64_t serialize_cpu_ns = 0;
  uint64_t start_ns = 0;  // before open (after the serialize burn)
  uint64_t end_ns = 0;    // after close (and rename)
  bool o_direct = false;
  bool complete = false;  // all bytes moved (and, on load, verified)
};

// One shard streamed over the process's TCP connection (--tcp-sink).
struct StreamResult {
  uint32_t shard = 0;
  int32_t pid = 0;
  int32_t tid = 0;
  uint64_t bytes_sent = 0;
  uint64_t send_calls = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// One checkpoint saved or loaded: from one process, or merged over all.
struct StepResult {
  Phase phase = Phase::Save;
  uint32_t checkpoint = 0;
  std::string dir;  // absolute; "" with --tcp-only
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::vector<FileResult> files;      // by shard
  std::vector<StreamResult> streams;  // by shard
  std::vector<IoFailure> failures;
};

// The whole run.
struct RunResult {
  std::vector<StepResult> steps;  // in start order; a failed step is the last one
  std::vector<int32_t> worker_pids;
  std::vector<IoFailure> failures;  // outside steps: connect, a worker that died, ...
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;

  [[nodiscard]] bool ok() const;
  [[nodiscard]] bool usage_error() const;  // some failure asks for exit 2
  [[nodiscard]] std::vector<IoFailure> all_failures() const;
};

}  // namespace ckpt::workload
