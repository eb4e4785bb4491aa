// A thread's own I/O counters from /proc/PID/task/TID/io (the kernel's
// task->ioac, the same the exit records carry): what a thread running
// before `attach` had already moved, so the end-of-run accounting counts
// only what it moved under the trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/events.h"

namespace ckpt {

// Parses the file's text ("rchar: N\n...read_bytes: N\nwrite_bytes: N\n
// cancelled_write_bytes: N\n"); nullopt when a counter is missing.
std::optional<ProcEvent::ThreadIo> parse_thread_io(const std::string& text);

struct ThreadIoReading {
  uint32_t tid = 0;
  ProcEvent::ThreadIo io;
};

// Every thread of `tgid` now, with its counters; threads whose file cannot
// be read (gone, or no CONFIG_TASK_IO_ACCOUNTING) are left out.
std::vector<ThreadIoReading> read_threads_io(uint32_t tgid, const std::string& proc_root = "/proc");

}  // namespace ckpt
