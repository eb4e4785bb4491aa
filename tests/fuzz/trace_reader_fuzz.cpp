// The trace reader (`report`, `export`, `summary`): the input is written to a
// file and read as a trace, as a damaged or hostile .db would be.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "exporters/sqlite/trace_store.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// One file per process, rewritten for every input (a fresh name each time
// would leave SQLite's journal files behind on a crash).
const std::string& trace_path() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/ckptscope-fuzz-trace-" +
           std::to_string(getpid()) + ".db";
  }();
  return path;
}

}  // namespace

CKPT_FUZZ_TARGET {
  const std::string& path = trace_path();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) std::abort();  // the harness, not the reader, is broken
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  std::fclose(file);
  auto trace = ckpt::read_trace(path);
  (void)trace;
  std::remove(path.c_str());
  std::remove((path + "-journal").c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  return 0;
}
