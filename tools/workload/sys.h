// Thin, checked wrappers over the few libc calls every part of the workload
// needs: clocks, sleeping, errno text and writing a whole small file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace ckpt::workload {

// CLOCK_MONOTONIC, the clock the profiler stamps its events with, so ground
// truth and trace can be compared directly.
uint64_t monotonic_ns();

// CPU time of the calling thread; --serialize-ms burns this, not wall time.
uint64_t thread_cpu_ns();

// Sleeps the full duration even when signals interrupt the sleep.
void sleep_ms(uint64_t ms);

// strerror() is not thread-safe; writer threads report errors concurrently.
std::string errno_text(int err);

// Writes all of data to fd with write(2), looping over short writes.
Expected<void> write_all_fd(int fd, std::string_view data, std::string_view path);

// mkdir -p: creates path and any missing parents; existing directories are
// fine, an existing non-directory is an error.
Expected<void> make_dirs(const std::string& path);

// Writes path via a sibling temporary and rename(2), so a reader polling for
// the file (a test waiting for the sink's ready file) never sees it half
// written.
Expected<void> write_file_atomically(const std::string& path, std::string_view data);

}  // namespace ckpt::workload
