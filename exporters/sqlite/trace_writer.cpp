// TraceWriter: prepared statements over one long-lived transaction. The
// incremental mode runs in WAL with synchronous=NORMAL, so a commit costs one
// WAL append and a killed process loses only the open batch; the bulk mode
// (write_trace's private temp file) turns journaling and syncing off, since a
// failure there discards the whole file anyway.
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "exporters/sqlite/schema.h"
#include "exporters/sqlite/sqlite_util.h"
#include "exporters/sqlite/trace_store.h"
#include "files/output_file.h"

#ifndef CKPTSCOPE_VERSION_STRING
#error "CKPTSCOPE_VERSION_STRING must be defined by the build"
#endif

namespace ckpt {
namespace {

using sqlite::Stmt;

// A new trace must not inherit an old trace's -wal or -journal: SQLite would
// replay it into the new file.
// Only regular files are removed: a device, a directory or a symbolic link
// at a trace's name (or its companions') is refused, never replaced
// (files/output_file.h).
Expected<void> remove_trace_files(const std::string& path, const std::string& shown_as) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::string file = path + suffix;
    auto exists = check_output_path(file, "trace");
    if (!exists)
      return make_error(
          fmt::format("cannot write trace '{}': {}", shown_as, exists.error().message));
    if (*exists && unlink(file.c_str()) != 0 && errno != ENOENT)
      return make_error(fmt::format("cannot replace '{}': {}", file, std::strerror(errno)));
  }
  return {};
}

int64_t wall_now_ns() {
  auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count();
}

}  // namespace

struct TraceWriter::Impl {
  // Declared first so it is destroyed last, after the statements.
  sqlite::DbPtr db;
  std::string path;
  Mode mode = Mode::Incremental;

  Stmt job, job_evidence_clear, job_evidence, checkpoint, stage, failure, file, io_call, rpc_call,
      connection_insert, connection_update, tcp_sample, drops_clear, drop, checkpoint_nfs,
      checkpoint_gpu, rpc_op, nfs_mount, nfs_mount_op, nfs_mount_ebpf_op, unrecognised_clear,
      unrecognised_io, unrecognised_file, io_accounting;

  // Every statement but the clears comes from its table's descriptor.
  Expected<void> prepare_all() {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    struct Entry {
      Stmt* stmt;
      std::string sql;
    };
    const Entry entries[] = {
        // The single job row is replaced, never added to.
        {&job, table::insert_sql(kJobTable, "INSERT OR REPLACE")},
        {&job_evidence_clear, "DELETE FROM job_failure_evidence"},
        {&job_evidence, table::insert_sql(kJobFailureEvidenceTable)},
        {&checkpoint, table::insert_sql(kCheckpointsTable)},
        {&stage, table::insert_sql(kStagesTable)},
        {&failure, table::insert_sql(kFailuresTable)},
        {&file, table::insert_sql(kFilesTable)},
        {&io_call, table::insert_sql(kIoCallsTable)},
        {&rpc_call, table::insert_sql(kRpcCallsTable)},
        {&connection_insert, table::insert_sql(kConnectionsTable)},
        {&connection_update, table::update_sql(kConnectionsTable, "cookie")},
        {&tcp_sample, table::insert_sql(kTcpSamplesTable)},
        {&drops_clear, "DELETE FROM drops"},
        {&drop, table::insert_sql(kDropsTable)},
        {&checkpoint_nfs, table::insert_sql(kCheckpointNfsTable)},
        {&checkpoint_gpu, table::insert_sql(kCheckpointGpuTable)},
        {&rpc_op, table::insert_sql(kRpcOpsTable)},
        {&nfs_mount, table::insert_sql(kNfsMountsTable)},
        {&nfs_mount_op, table::insert_sql(kNfsMountOpsTable)},
        {&nfs_mount_ebpf_op, table::insert_sql(kNfsMountEbpfOpsTable)},
        {&unrecognised_clear, "DELETE FROM unrecognised_files"},
        // The single row is replaced, never added to.
        {&unrecognised_io, table::insert_sql(kUnrecognisedIoTable, "INSERT OR REPLACE")},
        {&unrecognised_file, table::insert_sql(kUnrecognisedFilesTable)},
        {&io_accounting, table::insert_sql(kIoAccountingTable, "INSERT OR REPLACE")},
    };
    for (const auto& e : entries) {
      auto stmt = Stmt::prepare(db.get(), e.sql);
      if (!stmt) return stmt.error();
      *e.stmt = std::move(stmt).value();
    }
    return {};
  }

  Expected<void> create_schema() {
    const std::string_view pragmas =
        mode == Mode::Incremental
            ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
            : "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
              "PRAGMA cache_size=-65536;";
    if (auto r = sqlite::exec(db.get(), pragmas); !r) return r;
    if (auto r = sqlite::exec(db.get(), "BEGIN"); !r) return r;
    if (auto r = sqlite::exec(db.get(), trace_schema_sql()); !r) return r;
    auto version =
        sqlite::exec(db.get(), fmt::format("PRAGMA user_version = {}", kTraceSchemaVersion));
    if (!version) return version;
    auto meta = Stmt::prepare(db.get(), table::insert_sql(trace_tables::kMetaTable));
    if (!meta) return meta.error();
    const TraceMetaEntry entries[] = {
        {"schema_version", std::to_string(kTraceSchemaVersion)},
        {"ckptscope_version", CKPTSCOPE_VERSION_STRING},
        {"created_wall_ns", std::to_string(wall_now_ns())},
    };
    for (const TraceMetaEntry& entry : entries) {
      table::bind_row(*meta, trace_tables::kMetaTable, entry);
      if (auto r = meta->run(); !r) return r;
    }
    return sqlite::exec(db.get(), "COMMIT; BEGIN");
  }

  Error failed(std::string_view what, const Error& cause) const {
    return make_error(fmt::format("cannot write {} to trace '{}': {}", what, path, cause.message));
  }

  // Runs `body` so that it applies entirely or not at all. Bulk mode has no
  // journal to roll back with; there a failure abandons the whole file.
  template <typename Body>
  Expected<void> atomically(std::string_view what, Body&& body) {
    if (mode == Mode::Bulk) {
      if (auto r = body(); !r) return failed(what, r.error());
      return {};
    }
    if (auto r = sqlite::exec(db.get(), "SAVEPOINT append"); !r) return failed(what, r.error());
    auto r = body();
    if (!r) {
      (void)sqlite::exec(db.get(), "ROLLBACK TO append; RELEASE append");
      return failed(what, r.error());
    }
    if (auto released = sqlite::exec(db.get(), "RELEASE append"); !released) {
      return failed(what, released.error());
    }
    return {};
  }

  // Binds `record` to `stmt` by the table's descriptor and runs it.
  template <typename Record>
  static Expected<void> insert(Stmt& stmt, const table::Table<Record>& t, const Record& record,
                               const table::RowKey& key = {}) {
    table::bind_row(stmt, t, record, key);
    return stmt.run();
  }

  // `owner`: the checkpoint whose failure list holds it; none for the job's.
  Expected<void> insert_failure(const FailureRecord& f, std::optional<uint64_t> owner) {
    return insert(failure, trace_tables::kFailuresTable, f, {.owner = owner});
  }

  Expected<void> insert_checkpoint(const CheckpointRecord& c) {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    if (auto r = insert(checkpoint, kCheckpointsTable, c); !r) return r;
    for (size_t i = 0; i < c.stages.size(); ++i) {
      if (auto r = insert(stage, kStagesTable, c.stages[i], {.owner = c.id, .ordinal = i}); !r) {
        return r;
      }
    }
    for (const FailureRecord& f : c.failures) {
      if (auto r = insert_failure(f, c.id); !r) return r;
    }
    for (const FileIoRecord& f : c.file_io) {
      if (auto r = insert(file, kFilesTable, f, {.owner = c.id}); !r) return r;
    }
    if (c.gpu) {
      if (auto r = insert(checkpoint_gpu, kCheckpointGpuTable, *c.gpu, {.owner = c.id}); !r) {
        return r;
      }
    }
    if (!c.nfs) return {};
    if (auto r = insert(checkpoint_nfs, kCheckpointNfsTable, *c.nfs, {.owner = c.id}); !r) {
      return r;
    }
    for (const RpcOpStats& op : c.nfs->rpc_ops) {
      if (auto r = insert(rpc_op, kRpcOpsTable, op, {.owner = c.id}); !r) return r;
    }
    return {};
  }

  // Every row of `records` into `stmt`'s table, in order.
  template <typename Record>
  static Expected<void> insert_all(Stmt& stmt, const table::Table<Record>& t,
                                   const std::vector<Record>& records) {
    for (const Record& record : records) {
      if (auto r = insert(stmt, t, record); !r) return r;
    }
    return {};
  }

  Expected<void> upsert(const ConnectionRecord& c) {
    if (auto r = insert(connection_update, trace_tables::kConnectionsTable, c); !r) return r;
    if (sqlite3_changes(db.get()) > 0) return {};
    return insert(connection_insert, trace_tables::kConnectionsTable, c);
  }

  Expected<void> replace_drops(const std::vector<DropRecord>& drops) {
    if (auto r = drops_clear.run(); !r) return r;
    return insert_all(drop, trace_tables::kDropsTable, drops);
  }

  Expected<void> replace_nfs_mounts(const std::vector<NfsMountRecord>& mounts) {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    if (auto r = sqlite::exec(db.get(),
                              "DELETE FROM nfs_mount_ebpf_ops; "
                              "DELETE FROM nfs_mount_ops; DELETE FROM nfs_mounts");
        !r) {
      return r;
    }
    for (const NfsMountRecord& m : mounts) {
      if (auto r = insert(nfs_mount, kNfsMountsTable, m); !r) return r;
      // The mount's seq, which its op rows refer to.
      const table::RowKey mount{.owner =
                                    static_cast<uint64_t>(sqlite3_last_insert_rowid(db.get()))};
      for (const NfsMountOpRecord& op : m.ops) {
        if (auto r = insert(nfs_mount_op, kNfsMountOpsTable, op, mount); !r) return r;
      }
      if (!m.ebpf_ops) continue;
      for (const RpcOpStats& op : *m.ebpf_ops) {
        if (auto r = insert(nfs_mount_ebpf_op, kNfsMountEbpfOpsTable, op, mount); !r) return r;
      }
    }
    return {};
  }

  Expected<void> replace_unrecognised_io(const UnrecognisedIoRecord& io) {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    if (auto r = insert(unrecognised_io, kUnrecognisedIoTable, io); !r) return r;
    if (auto r = unrecognised_clear.run(); !r) return r;
    return insert_all(unrecognised_file, kUnrecognisedFilesTable, io.largest);
  }

  // COMMIT, then BEGIN the next batch. A failed COMMIT may or may not have
  // ended the transaction; either way the writer keeps one open afterwards.
  Expected<void> commit_batch() {
    auto committed = sqlite::exec(db.get(), "COMMIT");
    if (sqlite3_get_autocommit(db.get()) != 0) {
      if (auto begun = sqlite::exec(db.get(), "BEGIN"); !begun && committed) return begun;
    }
    return committed;
  }
};

TraceWriter::TraceWriter(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}

TraceWriter::TraceWriter(TraceWriter&& other) noexcept = default;

TraceWriter& TraceWriter::operator=(TraceWriter&& other) noexcept {
  if (this != &other) {
    if (impl_) (void)close();
    path_ = std::move(other.path_);
    impl_ = std::move(other.impl_);
  }
  return *this;
}

TraceWriter::~TraceWriter() {
  if (impl_) (void)close();
}

Expected<TraceWriter> TraceWriter::open(const std::string& path) {
  return open_with(path, Mode::Incremental, path);
}

Expected<TraceWriter> TraceWriter::open_with(const std::string& path, Mode mode,
                                             const std::string& shown_as) {
  if (auto removed = remove_trace_files(path, shown_as); !removed) return removed.error();
  // Created here, new (O_EXCL: a file or link planted since the removal is
  // never opened); SQLite then opens it without following a link.
  if (auto created = open_output_file(path, "trace", OutputMode::kCreateNew); !created)
    return make_error(
        fmt::format("cannot create trace file '{}': {}", shown_as, created.error().message));
  auto db =
      sqlite::open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX);
  if (!db) {
    return make_error(
        fmt::format("cannot create trace file '{}': {}", shown_as, db.error().message));
  }
  auto impl = std::make_unique<Impl>();
  impl->db = std::move(db).value();
  impl->path = shown_as;
  impl->mode = mode;
  sqlite3_busy_timeout(impl->db.get(), 2000);
  auto created = impl->create_schema();
  if (created) created = impl->prepare_all();
  if (!created) {
    return make_error(
        fmt::format("cannot create trace file '{}': {}", shown_as, created.error().message));
  }
  return TraceWriter(path, std::move(impl));
}

Expected<TraceWriter::Impl*> TraceWriter::live() {
  if (!impl_) return make_error(fmt::format("trace writer for '{}' is closed", path_));
  return impl_.get();
}

Expected<void> TraceWriter::write_job(const JobRecord& j) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("the job", [&]() {
    if (auto r = Impl::insert(w.job, trace_tables::kJobTable, j); !r) return r;
    // The evidence goes with the row it belongs to: replaced, never appended.
    if (auto r = w.job_evidence_clear.run(); !r) return r;
    if (!j.failure) return Expected<void>{};
    return Impl::insert_all(w.job_evidence, trace_tables::kJobFailureEvidenceTable,
                            j.failure->evidence);
  });
}

Expected<void> TraceWriter::append_checkpoint(const CheckpointRecord& checkpoint) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically(fmt::format("checkpoint {}", checkpoint.id),
                      [&]() { return w.insert_checkpoint(checkpoint); });
}

Expected<void> TraceWriter::append_failure(const FailureRecord& failure) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("a failure", [&]() { return w.insert_failure(failure, std::nullopt); });
}

Expected<void> TraceWriter::append_io_calls(const std::vector<IoCallRecord>& calls) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("I/O calls", [&]() {
    return Impl::insert_all(w.io_call, trace_tables::kIoCallsTable, calls);
  });
}

Expected<void> TraceWriter::append_rpc_calls(const std::vector<RpcCallRecord>& calls) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("RPC calls", [&]() {
    return Impl::insert_all(w.rpc_call, trace_tables::kRpcCallsTable, calls);
  });
}

Expected<void> TraceWriter::append_connection(const ConnectionRecord& connection) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("a connection", [&]() {
    return Impl::insert(w.connection_insert, trace_tables::kConnectionsTable, connection);
  });
}

Expected<void> TraceWriter::upsert_connection(const ConnectionRecord& connection) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("a connection", [&]() { return w.upsert(connection); });
}

Expected<void> TraceWriter::append_tcp_samples(const std::vector<TcpSampleRecord>& samples) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("TCP samples", [&]() {
    return Impl::insert_all(w.tcp_sample, trace_tables::kTcpSamplesTable, samples);
  });
}

Expected<void> TraceWriter::set_drops(const std::vector<DropRecord>& drops) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("drop counters", [&]() { return w.replace_drops(drops); });
}

Expected<void> TraceWriter::set_nfs_mounts(const std::vector<NfsMountRecord>& mounts) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("NFS mounts", [&]() { return w.replace_nfs_mounts(mounts); });
}

Expected<void> TraceWriter::set_unrecognised_io(const UnrecognisedIoRecord& io) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("unrecognised I/O", [&]() { return w.replace_unrecognised_io(io); });
}

Expected<void> TraceWriter::set_io_accounting(const IoAccountingRecord& io) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("I/O accounting", [&]() {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    return w.insert(w.io_accounting, kIoAccountingTable, io);
  });
}

Expected<void> TraceWriter::commit() {
  auto impl = live();
  if (!impl) return impl.error();
  if (auto r = (*impl)->commit_batch(); !r) {
    return make_error(
        fmt::format("cannot commit trace '{}': {}", (*impl)->path, r.error().message));
  }
  return {};
}

Expected<void> TraceWriter::close() {
  auto impl = live();
  if (!impl) return impl.error();
  std::unique_ptr<Impl> w = std::move(impl_);
  Expected<void> result;
  if (sqlite3_get_autocommit(w->db.get()) == 0) {
    if (auto r = sqlite::exec(w->db.get(), "COMMIT"); !r) {
      result = make_error(fmt::format("cannot commit trace '{}': {}", w->path, r.error().message));
    }
  }
  if (w->mode == Mode::Incremental) {
    // Back to a rollback journal so the finished file stands alone. That
    // needs every other connection gone; if a reader still holds one, don't
    // wait for it: the file stays in WAL mode, which is still a valid trace.
    sqlite3_busy_timeout(w->db.get(), 0);
    (void)sqlite::exec(w->db.get(), "PRAGMA journal_mode=DELETE");
  }
  return result;
}

}  // namespace ckpt
