// A trace on disk: the stitched records (model/records.h) in one SQLite file,
// schema in exporters/sqlite/schema.h and docs/trace-schema.md.
//
// Two ways to write: write_trace for a finished Trace (fast, all or nothing,
// atomic replacement of the file), and TraceWriter while a job runs, so a
// profiler that is killed keeps everything up to its last commit().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "model/records.h"

namespace ckpt {

// Writes `trace` to `path`, replacing any file there. The data goes to a
// temporary file next to `path` that is renamed over it at the end, so a
// failure (or a crash) leaves the previous file untouched.
Expected<void> write_trace(const std::string& path, const Trace& trace);

// Reads a trace back exactly as written. Files from a killed TraceWriter read
// as of their last commit. Errors name the file and the problem: missing, not
// a ckptscope trace (not SQLite, truncated, corrupt), a newer schema, a
// missing table. Never crashes on bad input.
Expected<Trace> read_trace(const std::string& path);

// Incremental writing. Every append goes into an open transaction that
// commit() makes durable (and visible to readers) and then reopens; each
// append is all-or-nothing on its own. Checkpoint ids must be unique.
class TraceWriter {
 public:
  // Creates a new trace at `path`, replacing any file there, with the schema
  // committed at once so even a writer killed before its first commit leaves
  // a readable (empty) trace.
  static Expected<TraceWriter> open(const std::string& path);

  TraceWriter(TraceWriter&& other) noexcept;
  TraceWriter& operator=(TraceWriter&& other) noexcept;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  // Commits what is pending and closes (close(), errors ignored).
  ~TraceWriter();

  // The single job row: inserted the first time, replaced after, together
  // with its failure's evidence rows.
  Expected<void> write_job(const JobRecord& job);
  // The checkpoint with its stages, failures, file I/O and NFS figures.
  Expected<void> append_checkpoint(const CheckpointRecord& checkpoint);
  // A job-level failure (Trace::failures); checkpoint failures come with
  // append_checkpoint.
  Expected<void> append_failure(const FailureRecord& failure);
  Expected<void> append_io_calls(const std::vector<IoCallRecord>& calls);
  // RPCs of closed checkpoints (Trace::rpc_calls), in the order given.
  Expected<void> append_rpc_calls(const std::vector<RpcCallRecord>& calls);
  Expected<void> append_connection(const ConnectionRecord& connection);
  // Replaces the connection(s) with the same cookie, or appends a new one.
  Expected<void> upsert_connection(const ConnectionRecord& connection);
  Expected<void> append_tcp_samples(const std::vector<TcpSampleRecord>& samples);
  // Replaces all drop counters.
  Expected<void> set_drops(const std::vector<DropRecord>& drops);
  // Replaces all NFS mounts (with their mountstats ops and eBPF ops); the
  // mounts are known only once the trace ends, from the closing snapshot.
  Expected<void> set_nfs_mounts(const std::vector<NfsMountRecord>& mounts);
  // Replaces the unrecognised-I/O figures (the row and its largest files).
  Expected<void> set_unrecognised_io(const UnrecognisedIoRecord& io);
  // Replaces the end-of-run accounting row.
  Expected<void> set_io_accounting(const IoAccountingRecord& io);

  // Makes everything appended so far durable, then starts the next batch.
  Expected<void> commit();
  // Commits, leaves the file self-contained (no -wal beside it) and closes.
  // Every later call fails with "trace writer for '...' is closed".
  Expected<void> close();

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  struct Impl;
  enum class Mode { Incremental, Bulk };

  TraceWriter(std::string path, std::unique_ptr<Impl> impl);
  // `shown_as` is the path error messages name (write_trace's target, not its
  // temporary file).
  static Expected<TraceWriter> open_with(const std::string& path, Mode mode,
                                         const std::string& shown_as);
  Expected<Impl*> live();
  friend Expected<void> write_trace(const std::string& path, const Trace& trace);

  std::string path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ckpt
