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

#include "exporters/sqlite/json_text.h"
#include "exporters/sqlite/schema.h"
#include "exporters/sqlite/sqlite_util.h"
#include "exporters/sqlite/trace_store.h"

#ifndef CKPTSCOPE_VERSION_STRING
#error "CKPTSCOPE_VERSION_STRING must be defined by the build"
#endif

namespace ckpt {
namespace {

using sqlite::Stmt;

// A new trace must not inherit an old trace's -wal or -journal: SQLite would
// replay it into the new file.
Expected<void> remove_trace_files(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::string file = path + suffix;
    if (std::remove(file.c_str()) != 0 && errno != ENOENT) {
      return make_error(fmt::format("cannot replace '{}': {}", file, std::strerror(errno)));
    }
  }
  return {};
}

int64_t wall_now_ns() {
  auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count();
}

// Parameter order shared by the connection INSERT and UPDATE (cookie is ?1).
void bind_connection(Stmt& s, const ConnectionRecord& c) {
  s.bind_u64(1, c.cookie);
  s.bind_text(2, c.local);
  s.bind_text(3, c.remote);
  s.bind_u64(4, c.first_ns);
  s.bind_u64(5, c.last_ns);
  s.bind_u64(6, c.bytes_sent);
  s.bind_u64(7, c.bytes_received);
  s.bind_u64(8, c.retransmits);
  s.bind_u64(9, c.zero_window_ns);
  s.bind_u64(10, c.resets);
  s.bind_opt_double(11, c.link_max_Bps);
  s.bind_text(12, c.link_max_source);
}

// RpcOpStats from parameter `first` on, in the column order rpc_ops and
// nfs_mount_ebpf_ops share (op, count, ..., execute_ns).
void bind_rpc_op(Stmt& s, int first, const RpcOpStats& op) {
  s.bind_text(first, op.op);
  s.bind_u64(first + 1, op.count);
  s.bind_u64(first + 2, op.errors);
  s.bind_u64(first + 3, op.major_timeouts);
  s.bind_u64(first + 4, op.transmissions);
  s.bind_u64(first + 5, op.bytes_sent);
  s.bind_u64(first + 6, op.bytes_received);
  s.bind_u64(first + 7, op.queue_ns);
  s.bind_u64(first + 8, op.rtt_ns);
  s.bind_u64(first + 9, op.execute_ns);
}

// DurationStats from parameter `first` on: count, mean, p50, p90, p99, max.
void bind_durations(Stmt& s, int first, const DurationStats& d) {
  s.bind_u64(first, d.count);
  s.bind_u64(first + 1, d.mean_ns);
  s.bind_u64(first + 2, d.p50_ns);
  s.bind_u64(first + 3, d.p90_ns);
  s.bind_u64(first + 4, d.p99_ns);
  s.bind_u64(first + 5, d.max_ns);
}

// A double that SQLite stores as NULL when it is NaN; the reader maps that
// NULL back to NaN for fields that are not optional.
void bind_double_or_nan(Stmt& s, int i, double v) { s.bind_opt_double(i, v); }

}  // namespace

struct TraceWriter::Impl {
  // Declared first so it is destroyed last, after the statements.
  sqlite::DbPtr db;
  std::string path;
  Mode mode = Mode::Incremental;

  Stmt job, job_evidence_clear, job_evidence, checkpoint, stage, failure, file, io_call, rpc_call,
      connection_insert, connection_update, tcp_sample, drops_clear, drop, checkpoint_nfs,
      checkpoint_gpu, rpc_op, nfs_mount, nfs_mount_op, nfs_mount_ebpf_op;

  Expected<void> prepare_all() {
    struct Entry {
      Stmt* stmt;
      std::string_view sql;
    };
    const Entry entries[] = {
        {&job,
         "INSERT OR REPLACE INTO job (id, command, mode, node, kernel, ckptscope_version, "
         "config_json, start_wall_ns, start_mono_ns, end_mono_ns, exit_code, exit_signal, traced, "
         "trace_warning, root_pids, name, log_path, failure_class, failure_rule, "
         "failure_symptoms) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
         "?14, ?15, ?16, ?17, ?18, ?19)"},
        {&job_evidence_clear, "DELETE FROM job_failure_evidence"},
        {&job_evidence,
         "INSERT INTO job_failure_evidence (line, text, source) VALUES (?1, ?2, ?3)"},
        {&checkpoint,
         "INSERT INTO checkpoints (id, direction, start_ns, end_ns, bytes, files, bottleneck) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
        {&stage,
         "INSERT INTO stages (checkpoint_id, ordinal, name, bytes, busy_ns, max_Bps, max_source) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
        {&failure,
         "INSERT INTO failures (owner_checkpoint_id, checkpoint_id, kind, time_ns, evidence) "
         "VALUES (?1, ?2, ?3, ?4, ?5)"},
        {&file,
         "INSERT INTO files (checkpoint_id, path, dev, ino, bytes_written, bytes_read, "
         "write_calls, read_calls, other_calls, errors, busy_ns, first_ns, last_ns) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"},
        {&io_call,
         "INSERT INTO io_calls (start_ns, end_ns, tgid, tid, op, ret, bytes, path, "
         "checkpoint_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"},
        {&rpc_call,
         "INSERT INTO rpc_calls (start_ns, end_ns, queue_ns, rtt_ns, execute_ns, op, server, "
         "bytes_sent, bytes_received, payload_bytes, status, transmissions, major_timeouts, "
         "checkpoint_io, checkpoint_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
         "?12, ?13, ?14, ?15)"},
        {&connection_insert,
         "INSERT INTO connections (cookie, local, remote, first_ns, last_ns, bytes_sent, "
         "bytes_received, retransmits, zero_window_ns, resets, link_max_Bps, link_max_source) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"},
        {&connection_update,
         "UPDATE connections SET local = ?2, remote = ?3, first_ns = ?4, last_ns = ?5, "
         "bytes_sent = ?6, bytes_received = ?7, retransmits = ?8, zero_window_ns = ?9, "
         "resets = ?10, link_max_Bps = ?11, link_max_source = ?12 WHERE cookie = ?1"},
        {&tcp_sample,
         "INSERT INTO tcp_samples (time_ns, cookie, event, bytes_acked, bytes_received, "
         "in_flight, backlog, cwnd, srtt_us, snd_wnd, total_retrans, zero_window_ns, new_state) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"},
        {&drops_clear, "DELETE FROM drops"},
        {&drop, "INSERT INTO drops (source, cause, count) VALUES (?1, ?2, ?3)"},
        {&checkpoint_nfs,
         "INSERT INTO checkpoint_nfs (checkpoint_id, servers, io_rpcs, io_bytes, "
         "queue_wait_count, queue_wait_mean_ns, queue_wait_p50_ns, queue_wait_p90_ns, "
         "queue_wait_p99_ns, queue_wait_max_ns, rtt_count, rtt_mean_ns, rtt_p50_ns, rtt_p90_ns, "
         "rtt_p99_ns, rtt_max_ns, wait_by_queue, tcp_in_flight_max, tcp_in_flight_mean, "
         "tcp_backlog_max, tcp_backlog_mean, tcp_retransmits) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
         "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)"},
        {&checkpoint_gpu,
         "INSERT INTO checkpoint_gpu (checkpoint_id, copies, copy_count, pageable_bytes, "
         "pinned_bytes, other_bytes, async_copies, first_ns, last_ns, devices) VALUES (?1, ?2, "
         "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"},
        {&rpc_op,
         "INSERT INTO rpc_ops (checkpoint_id, op, count, errors, major_timeouts, transmissions, "
         "bytes_sent, bytes_received, queue_ns, rtt_ns, execute_ns) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"},
        {&nfs_mount,
         "INSERT INTO nfs_mounts (device, mount_point, fstype, version, server, interval_s, "
         "since_mount, normal_read_bytes, normal_write_bytes, direct_read_bytes, "
         "direct_write_bytes, server_read_bytes, server_write_bytes, xprt_sends, xprt_receives, "
         "avg_backlog_queue, avg_sending_queue, avg_pending_queue, has_ebpf_ops) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
         "?18, ?19)"},
        {&nfs_mount_op,
         "INSERT INTO nfs_mount_ops (mount_seq, op, ops, transmissions, major_timeouts, "
         "bytes_sent, bytes_received, queue_ms, rtt_ms, execute_ms, errors) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"},
        {&nfs_mount_ebpf_op,
         "INSERT INTO nfs_mount_ebpf_ops (mount_seq, op, count, errors, major_timeouts, "
         "transmissions, bytes_sent, bytes_received, queue_ns, rtt_ns, execute_ns) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"},
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
    if (auto r = sqlite::exec(db.get(), kTraceSchemaSql); !r) return r;
    auto version =
        sqlite::exec(db.get(), fmt::format("PRAGMA user_version = {}", kTraceSchemaVersion));
    if (!version) return version;
    auto meta = Stmt::prepare(db.get(), "INSERT INTO meta (key, value) VALUES (?1, ?2)");
    if (!meta) return meta.error();
    const std::string values[][2] = {
        {"schema_version", std::to_string(kTraceSchemaVersion)},
        {"ckptscope_version", CKPTSCOPE_VERSION_STRING},
        {"created_wall_ns", std::to_string(wall_now_ns())},
    };
    for (const auto& kv : values) {
      meta->bind_text(1, kv[0]);
      meta->bind_text(2, kv[1]);
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

  Expected<void> insert_failure(const FailureRecord& f, std::optional<uint64_t> owner) {
    failure.bind_opt_u64(1, owner);
    failure.bind_opt_u64(2, f.checkpoint_id);
    failure.bind_text(3, f.kind);
    failure.bind_u64(4, f.time_ns);
    failure.bind_text(5, f.evidence);
    return failure.run();
  }

  Expected<void> insert_checkpoint(const CheckpointRecord& c) {
    checkpoint.bind_u64(1, c.id);
    checkpoint.bind_text(2, to_string(c.direction));
    checkpoint.bind_u64(3, c.start_ns);
    checkpoint.bind_u64(4, c.end_ns);
    checkpoint.bind_u64(5, c.bytes);
    checkpoint.bind_u64(6, c.files);
    checkpoint.bind_text(7, c.bottleneck);
    if (auto r = checkpoint.run(); !r) return r;
    for (size_t i = 0; i < c.stages.size(); ++i) {
      const StageRecord& s = c.stages[i];
      stage.bind_u64(1, c.id);
      stage.bind_u64(2, i);
      stage.bind_text(3, s.name);
      stage.bind_u64(4, s.bytes);
      stage.bind_u64(5, s.busy_ns);
      stage.bind_opt_double(6, s.max_Bps);
      stage.bind_text(7, s.max_source);
      if (auto r = stage.run(); !r) return r;
    }
    for (const FailureRecord& f : c.failures) {
      if (auto r = insert_failure(f, c.id); !r) return r;
    }
    for (const FileIoRecord& f : c.file_io) {
      file.bind_u64(1, c.id);
      file.bind_text(2, f.path);
      file.bind_u64(3, f.dev);
      file.bind_u64(4, f.ino);
      file.bind_u64(5, f.bytes_written);
      file.bind_u64(6, f.bytes_read);
      file.bind_u64(7, f.write_calls);
      file.bind_u64(8, f.read_calls);
      file.bind_u64(9, f.other_calls);
      file.bind_u64(10, f.errors);
      file.bind_u64(11, f.busy_ns);
      file.bind_u64(12, f.first_ns);
      file.bind_u64(13, f.last_ns);
      if (auto r = file.run(); !r) return r;
    }
    if (c.gpu) {
      const CheckpointGpuRecord& g = *c.gpu;
      const std::string devices = json_text::encode_strings(g.devices);
      Stmt& s = checkpoint_gpu;
      s.bind_u64(1, c.id);
      s.bind_u64(2, g.copies);
      s.bind_u64(3, g.copy_count);
      s.bind_u64(4, g.pageable_bytes);
      s.bind_u64(5, g.pinned_bytes);
      s.bind_u64(6, g.other_bytes);
      s.bind_u64(7, g.async_copies);
      s.bind_u64(8, g.first_ns);
      s.bind_u64(9, g.last_ns);
      s.bind_text(10, devices);
      if (auto r = s.run(); !r) return r;
    }
    if (c.nfs) return insert_checkpoint_nfs(c.id, *c.nfs);
    return {};
  }

  Expected<void> insert_checkpoint_nfs(uint64_t checkpoint_id, const NfsCheckpointRecord& n) {
    const std::string servers = json_text::encode_strings(n.servers);
    const std::string wait_by_queue = json_text::encode_u64_object(n.wait_by_queue_ns);
    Stmt& s = checkpoint_nfs;
    s.bind_u64(1, checkpoint_id);
    s.bind_text(2, servers);
    s.bind_u64(3, n.io_rpcs);
    s.bind_u64(4, n.io_bytes);
    bind_durations(s, 5, n.queue_wait);
    bind_durations(s, 11, n.rtt);
    s.bind_text(17, wait_by_queue);
    s.bind_opt_u64(18, n.tcp_in_flight_max);
    s.bind_opt_double(19, n.tcp_in_flight_mean);
    s.bind_opt_u64(20, n.tcp_backlog_max);
    s.bind_opt_double(21, n.tcp_backlog_mean);
    s.bind_opt_u64(22, n.tcp_retransmits);
    if (auto r = s.run(); !r) return r;
    for (const RpcOpStats& op : n.rpc_ops) {
      rpc_op.bind_u64(1, checkpoint_id);
      bind_rpc_op(rpc_op, 2, op);
      if (auto r = rpc_op.run(); !r) return r;
    }
    return {};
  }

  Expected<void> insert_io_calls(const std::vector<IoCallRecord>& calls) {
    for (const IoCallRecord& c : calls) {
      io_call.bind_u64(1, c.start_ns);
      io_call.bind_u64(2, c.end_ns);
      io_call.bind_u64(3, c.tgid);
      io_call.bind_u64(4, c.tid);
      io_call.bind_text(5, c.op);
      io_call.bind_i64(6, c.ret);
      io_call.bind_u64(7, c.bytes);
      io_call.bind_text(8, c.path);
      io_call.bind_opt_u64(9, c.checkpoint_id);
      if (auto r = io_call.run(); !r) return r;
    }
    return {};
  }

  Expected<void> insert_rpc_calls(const std::vector<RpcCallRecord>& calls) {
    for (const RpcCallRecord& c : calls) {
      rpc_call.bind_u64(1, c.start_ns);
      rpc_call.bind_u64(2, c.end_ns);
      rpc_call.bind_u64(3, c.queue_ns);
      rpc_call.bind_u64(4, c.rtt_ns);
      rpc_call.bind_u64(5, c.execute_ns);
      rpc_call.bind_text(6, c.op);
      rpc_call.bind_text(7, c.server);
      rpc_call.bind_u64(8, c.bytes_sent);
      rpc_call.bind_u64(9, c.bytes_received);
      rpc_call.bind_u64(10, c.payload_bytes);
      rpc_call.bind_i64(11, c.status);
      rpc_call.bind_u64(12, c.transmissions);
      rpc_call.bind_u64(13, c.major_timeouts);
      rpc_call.bind_i64(14, c.checkpoint_io ? 1 : 0);
      rpc_call.bind_opt_u64(15, c.checkpoint_id);
      if (auto r = rpc_call.run(); !r) return r;
    }
    return {};
  }

  Expected<void> insert_tcp_samples(const std::vector<TcpSampleRecord>& samples) {
    for (const TcpSampleRecord& t : samples) {
      tcp_sample.bind_u64(1, t.time_ns);
      tcp_sample.bind_u64(2, t.cookie);
      tcp_sample.bind_text(3, t.event);
      tcp_sample.bind_u64(4, t.bytes_acked);
      tcp_sample.bind_u64(5, t.bytes_received);
      tcp_sample.bind_u64(6, t.in_flight);
      tcp_sample.bind_u64(7, t.backlog);
      tcp_sample.bind_u64(8, t.cwnd);
      tcp_sample.bind_u64(9, t.srtt_us);
      tcp_sample.bind_u64(10, t.snd_wnd);
      tcp_sample.bind_u64(11, t.total_retrans);
      tcp_sample.bind_u64(12, t.zero_window_ns);
      tcp_sample.bind_i64(13, t.new_state);
      if (auto r = tcp_sample.run(); !r) return r;
    }
    return {};
  }

  Expected<void> upsert(const ConnectionRecord& c) {
    bind_connection(connection_update, c);
    if (auto r = connection_update.run(); !r) return r;
    if (sqlite3_changes(db.get()) > 0) return {};
    bind_connection(connection_insert, c);
    return connection_insert.run();
  }

  Expected<void> replace_drops(const std::vector<DropRecord>& drops) {
    if (auto r = drops_clear.run(); !r) return r;
    for (const DropRecord& d : drops) {
      drop.bind_text(1, d.source);
      drop.bind_text(2, d.cause);
      drop.bind_u64(3, d.count);
      if (auto r = drop.run(); !r) return r;
    }
    return {};
  }

  Expected<void> replace_nfs_mounts(const std::vector<NfsMountRecord>& mounts) {
    if (auto r = sqlite::exec(db.get(),
                              "DELETE FROM nfs_mount_ebpf_ops; "
                              "DELETE FROM nfs_mount_ops; DELETE FROM nfs_mounts");
        !r) {
      return r;
    }
    for (const NfsMountRecord& m : mounts) {
      Stmt& s = nfs_mount;
      s.bind_text(1, m.device);
      s.bind_text(2, m.mount_point);
      s.bind_text(3, m.fstype);
      s.bind_text(4, m.version);
      s.bind_text(5, m.server);
      s.bind_u64(6, m.interval_s);
      s.bind_i64(7, m.since_mount ? 1 : 0);
      s.bind_u64(8, m.normal_read_bytes);
      s.bind_u64(9, m.normal_write_bytes);
      s.bind_u64(10, m.direct_read_bytes);
      s.bind_u64(11, m.direct_write_bytes);
      s.bind_u64(12, m.server_read_bytes);
      s.bind_u64(13, m.server_write_bytes);
      s.bind_u64(14, m.xprt_sends);
      s.bind_u64(15, m.xprt_receives);
      bind_double_or_nan(s, 16, m.avg_backlog_queue);
      bind_double_or_nan(s, 17, m.avg_sending_queue);
      bind_double_or_nan(s, 18, m.avg_pending_queue);
      s.bind_i64(19, m.ebpf_ops ? 1 : 0);
      if (auto r = s.run(); !r) return r;
      const int64_t mount_seq = sqlite3_last_insert_rowid(db.get());
      for (const NfsMountOpRecord& op : m.ops) {
        Stmt& o = nfs_mount_op;
        o.bind_i64(1, mount_seq);
        o.bind_text(2, op.op);
        o.bind_u64(3, op.ops);
        o.bind_u64(4, op.transmissions);
        o.bind_u64(5, op.major_timeouts);
        o.bind_u64(6, op.bytes_sent);
        o.bind_u64(7, op.bytes_received);
        o.bind_u64(8, op.queue_ms);
        o.bind_u64(9, op.rtt_ms);
        o.bind_u64(10, op.execute_ms);
        o.bind_opt_u64(11, op.errors);
        if (auto r = o.run(); !r) return r;
      }
      if (!m.ebpf_ops) continue;
      for (const RpcOpStats& op : *m.ebpf_ops) {
        nfs_mount_ebpf_op.bind_i64(1, mount_seq);
        bind_rpc_op(nfs_mount_ebpf_op, 2, op);
        if (auto r = nfs_mount_ebpf_op.run(); !r) return r;
      }
    }
    return {};
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
  if (auto removed = remove_trace_files(path); !removed) return removed.error();
  auto db = sqlite::open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
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
    const std::string command = json_text::encode_strings(j.command);
    const std::string root_pids = json_text::encode_u32s(j.root_pids);
    Stmt& s = w.job;
    s.bind_text(1, command);
    s.bind_text(2, j.mode);
    s.bind_text(3, j.node);
    s.bind_text(4, j.kernel);
    s.bind_text(5, j.ckptscope_version);
    s.bind_text(6, j.config_json);
    s.bind_u64(7, j.start_wall_ns);
    s.bind_u64(8, j.start_mono_ns);
    s.bind_u64(9, j.end_mono_ns);
    s.bind_opt_int(10, j.exit_code);
    s.bind_opt_int(11, j.exit_signal);
    s.bind_i64(12, j.traced ? 1 : 0);
    s.bind_text(13, j.trace_warning);
    s.bind_text(14, root_pids);
    s.bind_text(15, j.name);
    s.bind_text(16, j.log_path);
    // The failure columns are NULL together when there is no failure.
    const JobFailure* f = j.failure ? &*j.failure : nullptr;
    const std::string symptoms = f ? json_text::encode_strings(f->symptoms) : std::string();
    if (f) {
      s.bind_text(17, f->cls);
      s.bind_text(18, f->rule);
      s.bind_text(19, symptoms);
    } else {
      s.bind_null(17);
      s.bind_null(18);
      s.bind_null(19);
    }
    if (auto r = s.run(); !r) return r;
    // The evidence goes with the row it belongs to: replaced, never appended.
    if (auto r = w.job_evidence_clear.run(); !r) return r;
    if (!f) return Expected<void>{};
    for (const JobEvidence& e : f->evidence) {
      w.job_evidence.bind_u64(1, e.line);
      w.job_evidence.bind_text(2, e.text);
      w.job_evidence.bind_text(3, e.source);
      if (auto r = w.job_evidence.run(); !r) return r;
    }
    return Expected<void>{};
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
  return w.atomically("I/O calls", [&]() { return w.insert_io_calls(calls); });
}

Expected<void> TraceWriter::append_rpc_calls(const std::vector<RpcCallRecord>& calls) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("RPC calls", [&]() { return w.insert_rpc_calls(calls); });
}

Expected<void> TraceWriter::append_connection(const ConnectionRecord& connection) {
  auto impl = live();
  if (!impl) return impl.error();
  Impl& w = **impl;
  return w.atomically("a connection", [&]() {
    bind_connection(w.connection_insert, connection);
    return w.connection_insert.run();
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
  return w.atomically("TCP samples", [&]() { return w.insert_tcp_samples(samples); });
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
