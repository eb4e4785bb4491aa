// write_trace: a bulk TraceWriter on a temporary file, renamed over the target
// once complete, so readers see either the old trace or the whole new one.
#include "exporters/sqlite/trace_store.h"

#include "files/output_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ckpt {
namespace {

void remove_quietly(const std::string& path) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

Expected<void> write_all(TraceWriter& w, const Trace& trace) {
  if (auto r = w.write_job(trace.job); !r) return r;
  for (const CheckpointRecord& c : trace.checkpoints) {
    if (auto r = w.append_checkpoint(c); !r) return r;
  }
  for (const FailureRecord& f : trace.failures) {
    if (auto r = w.append_failure(f); !r) return r;
  }
  if (auto r = w.append_io_calls(trace.io_calls); !r) return r;
  if (auto r = w.append_rpc_calls(trace.rpc_calls); !r) return r;
  for (const ConnectionRecord& c : trace.connections) {
    if (auto r = w.append_connection(c); !r) return r;
  }
  if (auto r = w.append_tcp_samples(trace.tcp_samples); !r) return r;
  if (auto r = w.set_drops(trace.drops); !r) return r;
  if (auto r = w.set_nfs_mounts(trace.nfs_mounts); !r) return r;
  if (trace.unrecognised_io) {
    if (auto r = w.set_unrecognised_io(*trace.unrecognised_io); !r) return r;
  }
  if (trace.io_accounting) {
    if (auto r = w.set_io_accounting(*trace.io_accounting); !r) return r;
  }
  return w.close();
}

}  // namespace

Expected<void> write_trace(const std::string& path, const Trace& trace) {
  // Written beside the target under a name no one can guess, then renamed
  // over it: only a regular file (or no file) at `path` is ever replaced.
  auto replacement = ReplacementFile::create(path, "trace");
  if (!replacement) return replacement.error();
  const std::string& tmp = replacement->temp_path();
  Expected<void> written;
  {
    auto writer = TraceWriter::open_with(tmp, TraceWriter::Mode::Bulk, path);
    if (!writer) return writer.error();
    written = write_all(*writer, trace);
  }
  // SQLite's companions of the temporary, if any were left.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) remove_quietly(tmp + suffix);
  if (!written) return written;
  // An old trace's -wal/-shm next to `path` would be replayed into the new
  // file by the next reader: remove them before the new file appears.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::string stale = path + suffix;
    auto exists = check_output_path(stale, "trace");
    if (!exists) return exists.error();
    if (*exists && std::remove(stale.c_str()) != 0 && errno != ENOENT)
      return make_error(fmt::format("cannot replace '{}': {}", stale, std::strerror(errno)));
  }
  if (auto committed = replacement->commit(); !committed)
    return make_error(fmt::format("cannot write trace '{}': {}", path, committed.error().message));
  return {};
}

}  // namespace ckpt
