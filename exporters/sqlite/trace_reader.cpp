// read_trace: validates before it trusts. The order of the checks decides the
// message a user sees: missing file, not SQLite at all, SQLite but not ours,
// ours but newer, ours but damaged (missing table, bad values, corrupt pages).
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>

#include "exporters/sqlite/schema.h"
#include "exporters/sqlite/sqlite_util.h"
#include "exporters/sqlite/trace_store.h"

namespace ckpt {
namespace {

using sqlite::Stmt;

class Reader {
 public:
  Reader(std::string path, sqlite::DbPtr db) : path_(std::move(path)), db_(std::move(db)) {}

  Error not_trace(std::string_view why) const {
    return make_error(fmt::format("'{}' is not a ckptscope trace: {}", path_, why));
  }
  Error damaged(std::string_view why) const {
    return make_error(fmt::format("'{}' is a damaged ckptscope trace: {}", path_, why));
  }

  Expected<void> check_version() {
    auto stmt = Stmt::prepare(db_.get(), "PRAGMA user_version");
    if (!stmt) return not_trace(stmt.error().message);
    if (stmt->step() != SQLITE_ROW) return not_trace(sqlite::last_error(db_.get()));
    int64_t version = stmt->col_i64(0);
    if (version == 0) return not_trace("it is an SQLite database without a ckptscope schema");
    if (version < 0) return not_trace(fmt::format("unknown schema version {}", version));
    if (version > kTraceSchemaVersion) {
      return make_error(fmt::format(
          "'{}' has trace schema version {}, this ckptscope reads up to {}: upgrade ckptscope",
          path_, version, kTraceSchemaVersion));
    }
    if (version < kOldestTraceSchemaVersion) {
      return not_trace(fmt::format("unknown schema version {}", version));
    }
    version_ = static_cast<int>(version);
    return {};
  }

  Expected<void> check_tables() {
    std::set<std::string, std::less<>> present;
    // sqlite_master rather than its newer alias sqlite_schema (3.33+).
    auto listed = each_row("sqlite_master", "SELECT name FROM sqlite_master WHERE type = 'table'",
                           [&](const Stmt& s) -> Expected<void> {
                             present.insert(s.col_text(0));
                             return {};
                           });
    if (!listed) return listed;
    for (const TraceTable& table : kTraceTables) {
      if (table.since <= version_ && present.find(table.name) == present.end()) {
        return damaged(fmt::format("table '{}' is missing", table.name));
      }
    }
    return {};
  }

  // meta.schema_version says the version again (docs/trace-schema.md):
  // missing, not a whole number, not a version this reader knows, or not
  // PRAGMA user_version, the file is not one any ckptscope wrote whole.
  Expected<void> check_meta_version() {
    std::optional<std::string> value;
    auto read = each_row("meta", "SELECT value FROM meta WHERE key = 'schema_version'",
                         [&](const Stmt& s) -> Expected<void> {
                           value = s.col_text(0);
                           return {};
                         });
    if (!read) return read;
    const std::string reads = fmt::format("this ckptscope reads schema versions {} to {}",
                                          kOldestTraceSchemaVersion, kTraceSchemaVersion);
    if (!value) return damaged(fmt::format("meta.schema_version is missing ({})", reads));
    int64_t v = 0;
    const char* end = value->data() + value->size();
    const auto [ptr, ec] = std::from_chars(value->data(), end, v);
    if (value->empty() || ec != std::errc() || ptr != end)
      return damaged(
          fmt::format("meta.schema_version is '{}', not a schema version ({})", *value, reads));
    if (v < kOldestTraceSchemaVersion || v > kTraceSchemaVersion)
      return damaged(
          fmt::format("meta.schema_version is {}, not a version it reads ({})", v, reads));
    if (v != version_)
      return damaged(
          fmt::format("meta.schema_version is {} but PRAGMA user_version is {}", v, version_));
    return {};
  }

  // Tables newer than the file read as none: no NFS figures (before 2), no
  // failure cause (before 3), no per-RPC rows (before 4), no GPU detail
  // (before 5).
  Expected<Trace> read() {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    Trace t;
    if (auto r = read_job(t.job); !r) return r.error();
    if (auto r = read_checkpoints(t); !r) return r.error();
    if (auto r = read_list(kIoCallsTable, t.io_calls); !r) return r.error();
    if (auto r = read_list(kRpcCallsTable, t.rpc_calls); !r) return r.error();
    if (auto r = read_list(kConnectionsTable, t.connections); !r) return r.error();
    if (auto r = read_list(kTcpSamplesTable, t.tcp_samples); !r) return r.error();
    if (auto r = read_list(kDropsTable, t.drops); !r) return r.error();
    if (auto r = read_nfs_mounts(t.nfs_mounts); !r) return r.error();
    if (auto r = read_unrecognised_io(t); !r) return r.error();
    // Absent before version 9 (not counted), and in a file with no row.
    if (auto r = read_table(kIoAccountingTable,
                            [&](IoAccountingRecord&& io, const table::RowFound&) {
                              t.io_accounting = io;
                              return Expected<void>{};
                            });
        !r)
      return r.error();
    return t;
  }

 private:
  // Runs `sql` and hands each row to `on_row`, which may reject it. SQLite
  // errors (corrupt or truncated pages show up here) name the table.
  template <typename OnRow>
  Expected<void> each_row(std::string_view table, std::string_view sql, OnRow&& on_row) {
    auto stmt = Stmt::prepare(db_.get(), sql);
    if (!stmt) return not_trace(fmt::format("reading table {}: {}", table, stmt.error().message));
    int rc = SQLITE_ROW;
    while ((rc = stmt->step()) == SQLITE_ROW) {
      if (auto r = on_row(*stmt); !r) return r;
    }
    if (rc != SQLITE_DONE) {
      return not_trace(fmt::format("reading table {}: {}", table, sqlite::last_error(db_.get())));
    }
    return {};
  }

  // Row count hint from the largest seq: O(log n), unlike count(*). Capped
  // so a corrupt value cannot ask for an absurd allocation.
  size_t size_hint(std::string_view table) {
    auto stmt = Stmt::prepare(db_.get(), fmt::format("SELECT max(seq) FROM {}", table));
    if (!stmt || stmt->step() != SQLITE_ROW) return 0;
    int64_t n = stmt->col_i64(0);
    return n > 0 ? static_cast<size_t>(std::min<int64_t>(n, int64_t{1} << 24)) : 0;
  }

  // Reads `t` in written order by its descriptor, handing each row's record
  // (and its owner's key or row number) to `on_row`. A table newer than the
  // file reads as no rows; columns newer than it, as what older files mean.
  template <typename Record, typename OnRow>
  Expected<void> read_table(const table::Table<Record>& t, OnRow&& on_row) {
    if (t.since > version_) return {};
    const std::string sql = table::select_sql(t, version_);
    return each_row(t.name, sql, [&](const Stmt& s) -> Expected<void> {
      Record record;
      table::RowFound found;
      if (auto refused = table::read_row(s, t, record, found)) return damaged(*refused);
      return on_row(std::move(record), found);
    });
  }

  Expected<void> read_job(JobRecord& job) {
    bool seen = false;
    auto read = read_table(trace_tables::kJobTable,
                           [&](JobRecord&& row, const table::RowFound&) -> Expected<void> {
                             seen = true;
                             job = std::move(row);
                             return {};
                           });
    if (!read) return read;
    return read_table(
        trace_tables::kJobFailureEvidenceTable,
        [&](JobEvidence&& e, const table::RowFound&) -> Expected<void> {
          if (!job.failure) {
            return damaged(seen ? "job_failure_evidence has rows but job.failure_class is NULL"
                                : "job_failure_evidence has rows but there is no job row");
          }
          job.failure->evidence.push_back(std::move(e));
          return {};
        });
  }

  Expected<void> read_checkpoints(Trace& t) {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    std::unordered_map<uint64_t, size_t> index;  // checkpoint id -> position in t.checkpoints
    auto read = read_table(kCheckpointsTable,
                           [&](CheckpointRecord&& c, const table::RowFound&) -> Expected<void> {
                             if (!index.emplace(c.id, t.checkpoints.size()).second) {
                               return damaged(fmt::format("checkpoint {} appears twice", c.id));
                             }
                             t.checkpoints.push_back(std::move(c));
                             return {};
                           });
    if (!read) return read;

    // The checkpoint a row of `table` belongs to.
    auto owner = [&](std::string_view table,
                     const table::RowFound& row) -> Expected<CheckpointRecord*> {
      const uint64_t id = row.owner.value_or(0);
      auto it = index.find(id);
      if (it == index.end()) {
        return damaged(fmt::format("{} refer to checkpoint {}, which does not exist", table, id));
      }
      return &t.checkpoints[it->second];
    };

    read = read_table(kStagesTable, [&](StageRecord&& st, const table::RowFound& row) {
      auto c = owner("stages", row);
      if (!c) return Expected<void>(c.error());
      (*c)->stages.push_back(std::move(st));
      return Expected<void>{};
    });
    if (!read) return read;

    read = read_table(kFailuresTable, [&](FailureRecord&& f, const table::RowFound& row) {
      if (!row.owner) {
        t.failures.push_back(std::move(f));
        return Expected<void>{};
      }
      auto c = owner("failures", row);
      if (!c) return Expected<void>(c.error());
      (*c)->failures.push_back(std::move(f));
      return Expected<void>{};
    });
    if (!read) return read;

    read = read_table(kFilesTable, [&](FileIoRecord&& f, const table::RowFound& row) {
      auto c = owner("files", row);
      if (!c) return Expected<void>(c.error());
      (*c)->file_io.push_back(std::move(f));
      return Expected<void>{};
    });
    if (!read) return read;

    read =
        read_table(kCheckpointNfsTable, [&](NfsCheckpointRecord&& n, const table::RowFound& row) {
          auto c = owner("checkpoint_nfs rows", row);
          if (!c) return Expected<void>(c.error());
          (*c)->nfs = std::move(n);
          return Expected<void>{};
        });
    if (!read) return read;

    read = read_table(kRpcOpsTable, [&](RpcOpStats&& op, const table::RowFound& row) {
      auto c = owner("rpc_ops", row);
      if (!c) return Expected<void>(c.error());
      if (!(*c)->nfs) {
        return Expected<void>(damaged(fmt::format(
            "rpc_ops refer to checkpoint {}, which has no checkpoint_nfs row", (*c)->id)));
      }
      (*c)->nfs->rpc_ops.push_back(std::move(op));
      return Expected<void>{};
    });
    if (!read) return read;

    return read_table(kCheckpointGpuTable,
                      [&](CheckpointGpuRecord&& g, const table::RowFound& row) {
                        auto c = owner("checkpoint_gpu", row);
                        if (!c) return Expected<void>(c.error());
                        (*c)->gpu = std::move(g);
                        return Expected<void>{};
                      });
  }

  Expected<void> read_nfs_mounts(std::vector<NfsMountRecord>& mounts) {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    std::unordered_map<int64_t, size_t> index;  // nfs_mounts.seq -> position in mounts
    auto read = read_table(kNfsMountsTable, [&](NfsMountRecord&& m, const table::RowFound& row) {
      index.emplace(row.row_id, mounts.size());
      mounts.push_back(std::move(m));
      return Expected<void>{};
    });
    if (!read) return read;

    // The mount a row of `table` belongs to.
    auto mount = [&](std::string_view table,
                     const table::RowFound& row) -> Expected<NfsMountRecord*> {
      const auto seq = static_cast<int64_t>(row.owner.value_or(0));
      auto it = index.find(seq);
      if (it == index.end()) {
        return damaged(fmt::format("{} refer to NFS mount {}, which does not exist", table, seq));
      }
      return &mounts[it->second];
    };

    read = read_table(kNfsMountOpsTable, [&](NfsMountOpRecord&& op, const table::RowFound& row) {
      auto m = mount("nfs_mount_ops", row);
      if (!m) return Expected<void>(m.error());
      (*m)->ops.push_back(std::move(op));
      return Expected<void>{};
    });
    if (!read) return read;

    return read_table(kNfsMountEbpfOpsTable, [&](RpcOpStats&& op, const table::RowFound& row) {
      auto m = mount("nfs_mount_ebpf_ops", row);
      if (!m) return Expected<void>(m.error());
      if (!(*m)->ebpf_ops) {
        return Expected<void>(
            damaged(fmt::format("nfs_mount_ebpf_ops refer to NFS mount {}, whose has_ebpf_ops is 0",
                                static_cast<int64_t>(row.owner.value_or(0)))));
      }
      (*m)->ebpf_ops->push_back(std::move(op));
      return Expected<void>{};
    });
  }

  // Absent before version 8 (not counted), and in a file with no row.
  Expected<void> read_unrecognised_io(Trace& t) {
    using namespace trace_tables;  // NOLINT(google-build-using-namespace): the table names
    auto read =
        read_table(kUnrecognisedIoTable, [&](UnrecognisedIoRecord&& io, const table::RowFound&) {
          t.unrecognised_io = std::move(io);
          return Expected<void>{};
        });
    if (!read) return read;
    return read_table(kUnrecognisedFilesTable, [&](UnrecognisedFileRecord&& f,
                                                   const table::RowFound&) {
      if (!t.unrecognised_io) {
        return Expected<void>(damaged("unrecognised_files has rows but unrecognised_io has none"));
      }
      t.unrecognised_io->largest.push_back(std::move(f));
      return Expected<void>{};
    });
  }

  // The tables of records in a flat list: every row, in written order.
  template <typename Record>
  Expected<void> read_list(const table::Table<Record>& t, std::vector<Record>& records) {
    if (t.since <= version_) records.reserve(size_hint(t.name));
    return read_table(t, [&](Record&& r, const table::RowFound&) {
      records.push_back(std::move(r));
      return Expected<void>{};
    });
  }

  std::string path_;
  sqlite::DbPtr db_;
  int version_ = kTraceSchemaVersion;  // the file's, once check_version has passed
};

}  // namespace

Expected<Trace> read_trace(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return make_error(fmt::format("trace file '{}' does not exist", path));
    return make_error(fmt::format("cannot read trace file '{}': {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    return make_error(fmt::format("'{}' is not a ckptscope trace: it is a directory", path));
  }
  if (st.st_size == 0) {
    return make_error(fmt::format("'{}' is not a ckptscope trace: the file is empty", path));
  }
  auto db = sqlite::open_db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  if (!db) {
    return make_error(fmt::format("'{}' is not a ckptscope trace: {}", path, db.error().message));
  }
  // A live TraceWriter may be committing; WAL readers wait only briefly.
  sqlite3_busy_timeout(db->get(), 2000);
  // One read transaction: a consistent snapshot even while a writer commits.
  // It ends (rolls back, nothing to undo) when the connection closes.
  if (auto begun = sqlite::exec(db->get(), "BEGIN"); !begun) {
    return make_error(
        fmt::format("'{}' is not a ckptscope trace: {}", path, begun.error().message));
  }
  Reader reader(path, std::move(db).value());
  if (auto r = reader.check_version(); !r) return r.error();
  if (auto r = reader.check_tables(); !r) return r.error();
  if (auto r = reader.check_meta_version(); !r) return r.error();
  return reader.read();
}

}  // namespace ckpt
