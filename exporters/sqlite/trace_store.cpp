// write_trace: a bulk TraceWriter on a temporary file, renamed over the target
// once complete, so readers see either the old trace or the whole new one.
#include "exporters/sqlite/trace_store.h"

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
  return w.close();
}

}  // namespace

Expected<void> write_trace(const std::string& path, const Trace& trace) {
  // Same directory as the target, so the final rename stays on one filesystem.
  // The counter keeps two writes of one path from one process apart.
  static std::atomic<unsigned> serial{0};
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, ::getpid(), serial++);
  Expected<void> written;
  {
    auto writer = TraceWriter::open_with(tmp, TraceWriter::Mode::Bulk, path);
    if (!writer) {
      remove_quietly(tmp);
      return writer.error();
    }
    written = write_all(*writer, trace);
  }
  if (!written) {
    remove_quietly(tmp);
    return written;
  }
  // An old trace's -wal/-shm next to `path` would be replayed into the new
  // file by the next reader: remove them before the new file appears.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::string stale = path + suffix;
    if (std::remove(stale.c_str()) != 0 && errno != ENOENT) {
      remove_quietly(tmp);
      return make_error(fmt::format("cannot replace '{}': {}", stale, std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    remove_quietly(tmp);
    return make_error(fmt::format("cannot write trace '{}': {}", path, std::strerror(err)));
  }
  return {};
}

}  // namespace ckpt
