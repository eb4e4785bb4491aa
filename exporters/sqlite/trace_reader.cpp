// read_trace: validates before it trusts. The order of the checks decides the
// message a user sees: missing file, not SQLite at all, SQLite but not ours,
// ours but newer, ours but damaged (missing table, bad values, corrupt pages).
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>

#include "exporters/sqlite/json_text.h"
#include "exporters/sqlite/schema.h"
#include "exporters/sqlite/sqlite_util.h"
#include "exporters/sqlite/trace_store.h"

namespace ckpt {
namespace {

using sqlite::Stmt;

// RpcOpStats from column `first` on, in the order rpc_ops and
// nfs_mount_ebpf_ops share (op, count, ..., execute_ns).
RpcOpStats rpc_op_at(const Stmt& s, int first) {
  RpcOpStats op;
  op.op = s.col_text(first);
  op.count = s.col_u64(first + 1);
  op.errors = s.col_u64(first + 2);
  op.major_timeouts = s.col_u64(first + 3);
  op.transmissions = s.col_u64(first + 4);
  op.bytes_sent = s.col_u64(first + 5);
  op.bytes_received = s.col_u64(first + 6);
  op.queue_ns = s.col_u64(first + 7);
  op.rtt_ns = s.col_u64(first + 8);
  op.execute_ns = s.col_u64(first + 9);
  return op;
}

// DurationStats from column `first` on: count, mean, p50, p90, p99, max.
DurationStats durations_at(const Stmt& s, int first) {
  DurationStats d;
  d.count = s.col_u64(first);
  d.mean_ns = s.col_u64(first + 1);
  d.p50_ns = s.col_u64(first + 2);
  d.p90_ns = s.col_u64(first + 3);
  d.p99_ns = s.col_u64(first + 4);
  d.max_ns = s.col_u64(first + 5);
  return d;
}

// A non-optional double: NULL is how SQLite stored a NaN.
double double_or_nan(const Stmt& s, int col) {
  return s.col_opt_double(col).value_or(std::numeric_limits<double>::quiet_NaN());
}

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

  Expected<Trace> read() {
    Trace t;
    if (auto r = read_job(t.job); !r) return r.error();
    if (auto r = read_checkpoints(t); !r) return r.error();
    if (auto r = read_io_calls(t.io_calls); !r) return r.error();
    // Older files have no per-RPC rows: they read as none.
    if (version_ >= 4) {
      if (auto r = read_rpc_calls(t.rpc_calls); !r) return r.error();
    }
    if (auto r = read_connections(t.connections); !r) return r.error();
    if (auto r = read_tcp_samples(t.tcp_samples); !r) return r.error();
    if (auto r = read_drops(t.drops); !r) return r.error();
    if (version_ >= 2) {
      if (auto r = read_nfs_mounts(t.nfs_mounts); !r) return r.error();
    }
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

  // job.name, job.log_path and the failure columns are new in version 3:
  // older files read as no name, no log and no failure cause.
  Expected<void> read_job(JobRecord& job) {
    bool seen = false;
    const std::string sql = fmt::format(
        "SELECT command, mode, node, kernel, ckptscope_version, config_json, start_wall_ns, "
        "start_mono_ns, end_mono_ns, exit_code, exit_signal, traced, trace_warning, root_pids, "
        "{} FROM job ORDER BY id LIMIT 1",
        version_ >= 3 ? "name, log_path, failure_class, failure_rule, failure_symptoms"
                      : "'', '', NULL, NULL, NULL");
    auto read = each_row("job", sql, [&](const Stmt& s) -> Expected<void> {
      seen = true;
      auto command = json_text::decode_strings(s.col_text(0));
      if (!command) return damaged("job.command is not a JSON array of strings");
      auto root_pids = json_text::decode_u32s(s.col_text(13));
      if (!root_pids) return damaged("job.root_pids is not a JSON array of process ids");
      job.command = std::move(*command);
      job.mode = s.col_text(1);
      job.node = s.col_text(2);
      job.kernel = s.col_text(3);
      job.ckptscope_version = s.col_text(4);
      job.config_json = s.col_text(5);
      job.start_wall_ns = s.col_u64(6);
      job.start_mono_ns = s.col_u64(7);
      job.end_mono_ns = s.col_u64(8);
      job.exit_code = s.col_opt_int(9);
      job.exit_signal = s.col_opt_int(10);
      job.traced = s.col_i64(11) != 0;
      job.trace_warning = s.col_text(12);
      job.root_pids = std::move(*root_pids);
      job.name = s.col_text(14);
      job.log_path = s.col_text(15);
      const bool has_class = !s.is_null(16);
      if (has_class != !s.is_null(17) || has_class != !s.is_null(18)) {
        return damaged(
            "job.failure_class, job.failure_rule and job.failure_symptoms are not all NULL or "
            "all set");
      }
      if (!has_class) return {};
      auto symptoms = json_text::decode_strings(s.col_text(18));
      if (!symptoms) return damaged("job.failure_symptoms is not a JSON array of strings");
      JobFailure& f = job.failure.emplace();
      f.cls = s.col_text(16);
      f.rule = s.col_text(17);
      f.symptoms = std::move(*symptoms);
      return {};
    });
    if (!read || version_ < 3) return read;
    return each_row(
        "job_failure_evidence", "SELECT line, text, source FROM job_failure_evidence ORDER BY seq",
        [&](const Stmt& s) -> Expected<void> {
          if (!job.failure) {
            return damaged(seen ? "job_failure_evidence has rows but job.failure_class is NULL"
                                : "job_failure_evidence has rows but there is no job row");
          }
          job.failure->evidence.push_back({s.col_u64(0), s.col_text(1), s.col_text(2)});
          return {};
        });
  }

  Expected<void> read_checkpoints(Trace& t) {
    std::unordered_map<uint64_t, size_t> index;  // checkpoint id -> position in t.checkpoints
    auto read = each_row(
        "checkpoints",
        "SELECT id, direction, start_ns, end_ns, bytes, files, bottleneck FROM checkpoints "
        "ORDER BY seq",
        [&](const Stmt& s) -> Expected<void> {
          CheckpointRecord c;
          c.id = s.col_u64(0);
          std::string direction = s.col_text(1);
          auto d = direction_from_string(direction);
          if (!d) {
            return damaged(
                fmt::format("checkpoint {} has unknown direction '{}'", c.id, direction));
          }
          c.direction = *d;
          c.start_ns = s.col_u64(2);
          c.end_ns = s.col_u64(3);
          c.bytes = s.col_u64(4);
          c.files = static_cast<uint32_t>(s.col_u64(5));
          c.bottleneck = s.col_text(6);
          if (!index.emplace(c.id, t.checkpoints.size()).second) {
            return damaged(fmt::format("checkpoint {} appears twice", c.id));
          }
          t.checkpoints.push_back(std::move(c));
          return {};
        });
    if (!read) return read;

    auto owner = [&](std::string_view table, uint64_t id) -> Expected<CheckpointRecord*> {
      auto it = index.find(id);
      if (it == index.end()) {
        return damaged(fmt::format("{} refer to checkpoint {}, which does not exist", table, id));
      }
      return &t.checkpoints[it->second];
    };

    read = each_row("stages",
                    "SELECT checkpoint_id, name, bytes, busy_ns, max_Bps, max_source FROM stages "
                    "ORDER BY checkpoint_id, ordinal",
                    [&](const Stmt& s) -> Expected<void> {
                      auto c = owner("stages", s.col_u64(0));
                      if (!c) return c.error();
                      StageRecord st;
                      st.name = s.col_text(1);
                      st.bytes = s.col_u64(2);
                      st.busy_ns = s.col_u64(3);
                      st.max_Bps = s.col_opt_double(4);
                      st.max_source = s.col_text(5);
                      (*c)->stages.push_back(std::move(st));
                      return {};
                    });
    if (!read) return read;

    read =
        each_row("failures",
                 "SELECT owner_checkpoint_id, checkpoint_id, kind, time_ns, evidence FROM failures "
                 "ORDER BY seq",
                 [&](const Stmt& s) -> Expected<void> {
                   FailureRecord f;
                   f.checkpoint_id = s.col_opt_u64(1);
                   f.kind = s.col_text(2);
                   f.time_ns = s.col_u64(3);
                   f.evidence = s.col_text(4);
                   if (s.is_null(0)) {
                     t.failures.push_back(std::move(f));
                     return {};
                   }
                   auto c = owner("failures", s.col_u64(0));
                   if (!c) return c.error();
                   (*c)->failures.push_back(std::move(f));
                   return {};
                 });
    if (!read) return read;

    read = each_row("files",
                    "SELECT checkpoint_id, path, dev, ino, bytes_written, bytes_read, write_calls, "
                    "read_calls, other_calls, errors, busy_ns, first_ns, last_ns FROM files "
                    "ORDER BY seq",
                    [&](const Stmt& s) -> Expected<void> {
                      auto c = owner("files", s.col_u64(0));
                      if (!c) return c.error();
                      FileIoRecord f;
                      f.path = s.col_text(1);
                      f.dev = s.col_u64(2);
                      f.ino = s.col_u64(3);
                      f.bytes_written = s.col_u64(4);
                      f.bytes_read = s.col_u64(5);
                      f.write_calls = s.col_u64(6);
                      f.read_calls = s.col_u64(7);
                      f.other_calls = s.col_u64(8);
                      f.errors = s.col_u64(9);
                      f.busy_ns = s.col_u64(10);
                      f.first_ns = s.col_u64(11);
                      f.last_ns = s.col_u64(12);
                      (*c)->file_io.push_back(std::move(f));
                      return {};
                    });
    if (!read || version_ < 2) return read;
    read = read_checkpoint_nfs(owner);
    if (!read || version_ < 5) return read;
    return each_row(
        "checkpoint_gpu",
        "SELECT checkpoint_id, copies, copy_count, pageable_bytes, pinned_bytes, "
        "other_bytes, async_copies, first_ns, last_ns, devices FROM checkpoint_gpu "
        "ORDER BY checkpoint_id",
        [&](const Stmt& s) -> Expected<void> {
          const uint64_t id = s.col_u64(0);
          auto c = owner("checkpoint_gpu", id);
          if (!c) return c.error();
          CheckpointGpuRecord g;
          g.copies = s.col_u64(1);
          g.copy_count = s.col_u64(2);
          g.pageable_bytes = s.col_u64(3);
          g.pinned_bytes = s.col_u64(4);
          g.other_bytes = s.col_u64(5);
          g.async_copies = s.col_u64(6);
          g.first_ns = s.col_u64(7);
          g.last_ns = s.col_u64(8);
          auto devices = json_text::decode_strings(s.col_text(9));
          if (!devices)
            return damaged(fmt::format(
                "checkpoint_gpu.devices of checkpoint {} is not a JSON array of strings", id));
          g.devices = std::move(*devices);
          (*c)->gpu = std::move(g);
          return {};
        });
  }

  // checkpoint_nfs and rpc_ops (version 2 on). `owner` finds a checkpoint by
  // id, or says which table named one that does not exist.
  template <typename Owner>
  Expected<void> read_checkpoint_nfs(Owner& owner) {
    auto read = each_row(
        "checkpoint_nfs",
        "SELECT checkpoint_id, servers, io_rpcs, io_bytes, queue_wait_count, queue_wait_mean_ns, "
        "queue_wait_p50_ns, queue_wait_p90_ns, queue_wait_p99_ns, queue_wait_max_ns, rtt_count, "
        "rtt_mean_ns, rtt_p50_ns, rtt_p90_ns, rtt_p99_ns, rtt_max_ns, wait_by_queue, "
        "tcp_in_flight_max, tcp_in_flight_mean, tcp_backlog_max, tcp_backlog_mean, "
        "tcp_retransmits FROM checkpoint_nfs "
        "ORDER BY checkpoint_id",
        [&](const Stmt& s) -> Expected<void> {
          const uint64_t id = s.col_u64(0);
          auto c = owner("checkpoint_nfs rows", id);
          if (!c) return c.error();
          auto servers = json_text::decode_strings(s.col_text(1));
          if (!servers) {
            return damaged(fmt::format(
                "checkpoint_nfs.servers of checkpoint {} is not a JSON array of strings", id));
          }
          auto wait_by_queue = json_text::decode_u64_object(s.col_text(16));
          if (!wait_by_queue) {
            return damaged(fmt::format(
                "checkpoint_nfs.wait_by_queue of checkpoint {} is not a JSON object of counts",
                id));
          }
          NfsCheckpointRecord n;
          n.servers = std::move(*servers);
          n.io_rpcs = s.col_u64(2);
          n.io_bytes = s.col_u64(3);
          n.queue_wait = durations_at(s, 4);
          n.rtt = durations_at(s, 10);
          n.wait_by_queue_ns = std::move(*wait_by_queue);
          n.tcp_in_flight_max = s.col_opt_u64(17);
          n.tcp_in_flight_mean = s.col_opt_double(18);
          n.tcp_backlog_max = s.col_opt_u64(19);
          n.tcp_backlog_mean = s.col_opt_double(20);
          n.tcp_retransmits = s.col_opt_u64(21);
          (*c)->nfs = std::move(n);
          return {};
        });
    if (!read) return read;
    return each_row(
        "rpc_ops",
        "SELECT checkpoint_id, op, count, errors, major_timeouts, transmissions, bytes_sent, "
        "bytes_received, queue_ns, rtt_ns, execute_ns FROM rpc_ops ORDER BY seq",
        [&](const Stmt& s) -> Expected<void> {
          const uint64_t id = s.col_u64(0);
          auto c = owner("rpc_ops", id);
          if (!c) return c.error();
          if (!(*c)->nfs) {
            return damaged(
                fmt::format("rpc_ops refer to checkpoint {}, which has no checkpoint_nfs row", id));
          }
          (*c)->nfs->rpc_ops.push_back(rpc_op_at(s, 1));
          return {};
        });
  }

  // nfs_mounts, nfs_mount_ops and nfs_mount_ebpf_ops (version 2 on).
  Expected<void> read_nfs_mounts(std::vector<NfsMountRecord>& mounts) {
    std::unordered_map<int64_t, size_t> index;  // nfs_mounts.seq -> position in mounts
    auto read = each_row(
        "nfs_mounts",
        "SELECT seq, device, mount_point, fstype, version, server, interval_s, since_mount, "
        "normal_read_bytes, normal_write_bytes, direct_read_bytes, direct_write_bytes, "
        "server_read_bytes, server_write_bytes, xprt_sends, xprt_receives, avg_backlog_queue, "
        "avg_sending_queue, avg_pending_queue, has_ebpf_ops FROM nfs_mounts ORDER BY seq",
        [&](const Stmt& s) -> Expected<void> {
          NfsMountRecord m;
          m.device = s.col_text(1);
          m.mount_point = s.col_text(2);
          m.fstype = s.col_text(3);
          m.version = s.col_text(4);
          m.server = s.col_text(5);
          m.interval_s = s.col_u64(6);
          m.since_mount = s.col_i64(7) != 0;
          m.normal_read_bytes = s.col_u64(8);
          m.normal_write_bytes = s.col_u64(9);
          m.direct_read_bytes = s.col_u64(10);
          m.direct_write_bytes = s.col_u64(11);
          m.server_read_bytes = s.col_u64(12);
          m.server_write_bytes = s.col_u64(13);
          m.xprt_sends = s.col_u64(14);
          m.xprt_receives = s.col_u64(15);
          m.avg_backlog_queue = double_or_nan(s, 16);
          m.avg_sending_queue = double_or_nan(s, 17);
          m.avg_pending_queue = double_or_nan(s, 18);
          if (s.col_i64(19) != 0) m.ebpf_ops.emplace();
          index.emplace(s.col_i64(0), mounts.size());
          mounts.push_back(std::move(m));
          return {};
        });
    if (!read) return read;

    auto mount = [&](std::string_view table, int64_t seq) -> Expected<NfsMountRecord*> {
      auto it = index.find(seq);
      if (it == index.end()) {
        return damaged(fmt::format("{} refer to NFS mount {}, which does not exist", table, seq));
      }
      return &mounts[it->second];
    };

    read = each_row("nfs_mount_ops",
                    "SELECT mount_seq, op, ops, transmissions, major_timeouts, bytes_sent, "
                    "bytes_received, queue_ms, rtt_ms, execute_ms, errors FROM nfs_mount_ops "
                    "ORDER BY seq",
                    [&](const Stmt& s) -> Expected<void> {
                      auto m = mount("nfs_mount_ops", s.col_i64(0));
                      if (!m) return m.error();
                      NfsMountOpRecord op;
                      op.op = s.col_text(1);
                      op.ops = s.col_u64(2);
                      op.transmissions = s.col_u64(3);
                      op.major_timeouts = s.col_u64(4);
                      op.bytes_sent = s.col_u64(5);
                      op.bytes_received = s.col_u64(6);
                      op.queue_ms = s.col_u64(7);
                      op.rtt_ms = s.col_u64(8);
                      op.execute_ms = s.col_u64(9);
                      op.errors = s.col_opt_u64(10);
                      (*m)->ops.push_back(std::move(op));
                      return {};
                    });
    if (!read) return read;

    return each_row(
        "nfs_mount_ebpf_ops",
        "SELECT mount_seq, op, count, errors, major_timeouts, transmissions, bytes_sent, "
        "bytes_received, queue_ns, rtt_ns, execute_ns FROM nfs_mount_ebpf_ops ORDER BY seq",
        [&](const Stmt& s) -> Expected<void> {
          const int64_t seq = s.col_i64(0);
          auto m = mount("nfs_mount_ebpf_ops", seq);
          if (!m) return m.error();
          if (!(*m)->ebpf_ops) {
            return damaged(fmt::format(
                "nfs_mount_ebpf_ops refer to NFS mount {}, whose has_ebpf_ops is 0", seq));
          }
          (*m)->ebpf_ops->push_back(rpc_op_at(s, 1));
          return {};
        });
  }

  Expected<void> read_io_calls(std::vector<IoCallRecord>& calls) {
    calls.reserve(size_hint("io_calls"));
    return each_row("io_calls",
                    "SELECT start_ns, end_ns, tgid, tid, op, ret, bytes, path, checkpoint_id "
                    "FROM io_calls ORDER BY seq",
                    [&](const Stmt& s) -> Expected<void> {
                      IoCallRecord c;
                      c.start_ns = s.col_u64(0);
                      c.end_ns = s.col_u64(1);
                      c.tgid = static_cast<uint32_t>(s.col_u64(2));
                      c.tid = static_cast<uint32_t>(s.col_u64(3));
                      c.op = s.col_text(4);
                      c.ret = s.col_i64(5);
                      c.bytes = s.col_u64(6);
                      c.path = s.col_text(7);
                      c.checkpoint_id = s.col_opt_u64(8);
                      calls.push_back(std::move(c));
                      return {};
                    });
  }

  // rpc_calls (version 4 on).
  Expected<void> read_rpc_calls(std::vector<RpcCallRecord>& calls) {
    calls.reserve(size_hint("rpc_calls"));
    return each_row("rpc_calls",
                    "SELECT start_ns, end_ns, queue_ns, rtt_ns, execute_ns, op, server, "
                    "bytes_sent, bytes_received, payload_bytes, status, transmissions, "
                    "major_timeouts, checkpoint_io, checkpoint_id FROM rpc_calls ORDER BY seq",
                    [&](const Stmt& s) -> Expected<void> {
                      RpcCallRecord c;
                      c.start_ns = s.col_u64(0);
                      c.end_ns = s.col_u64(1);
                      c.queue_ns = s.col_u64(2);
                      c.rtt_ns = s.col_u64(3);
                      c.execute_ns = s.col_u64(4);
                      c.op = s.col_text(5);
                      c.server = s.col_text(6);
                      c.bytes_sent = s.col_u64(7);
                      c.bytes_received = s.col_u64(8);
                      c.payload_bytes = s.col_u64(9);
                      c.status = static_cast<int32_t>(s.col_i64(10));
                      c.transmissions = static_cast<uint32_t>(s.col_u64(11));
                      c.major_timeouts = static_cast<uint32_t>(s.col_u64(12));
                      c.checkpoint_io = s.col_i64(13) != 0;
                      c.checkpoint_id = s.col_opt_u64(14);
                      calls.push_back(std::move(c));
                      return {};
                    });
  }

  Expected<void> read_connections(std::vector<ConnectionRecord>& connections) {
    return each_row("connections",
                    "SELECT cookie, local, remote, first_ns, last_ns, bytes_sent, bytes_received, "
                    "retransmits, zero_window_ns, resets, link_max_Bps, link_max_source "
                    "FROM connections ORDER BY seq",
                    [&](const Stmt& s) -> Expected<void> {
                      ConnectionRecord c;
                      c.cookie = s.col_u64(0);
                      c.local = s.col_text(1);
                      c.remote = s.col_text(2);
                      c.first_ns = s.col_u64(3);
                      c.last_ns = s.col_u64(4);
                      c.bytes_sent = s.col_u64(5);
                      c.bytes_received = s.col_u64(6);
                      c.retransmits = s.col_u64(7);
                      c.zero_window_ns = s.col_u64(8);
                      c.resets = s.col_u64(9);
                      c.link_max_Bps = s.col_opt_double(10);
                      c.link_max_source = s.col_text(11);
                      connections.push_back(std::move(c));
                      return {};
                    });
  }

  // tcp_samples.backlog is new in version 2: version 1 samples read 0.
  Expected<void> read_tcp_samples(std::vector<TcpSampleRecord>& samples) {
    samples.reserve(size_hint("tcp_samples"));
    const std::string sql = fmt::format(
        "SELECT time_ns, cookie, event, bytes_acked, bytes_received, in_flight, {}, cwnd, "
        "srtt_us, snd_wnd, total_retrans, zero_window_ns, new_state FROM tcp_samples "
        "ORDER BY seq",
        version_ >= 2 ? "backlog" : "0");
    return each_row("tcp_samples", sql, [&](const Stmt& s) -> Expected<void> {
      TcpSampleRecord r;
      r.time_ns = s.col_u64(0);
      r.cookie = s.col_u64(1);
      r.event = s.col_text(2);
      r.bytes_acked = s.col_u64(3);
      r.bytes_received = s.col_u64(4);
      r.in_flight = static_cast<uint32_t>(s.col_u64(5));
      r.backlog = static_cast<uint32_t>(s.col_u64(6));
      r.cwnd = static_cast<uint32_t>(s.col_u64(7));
      r.srtt_us = static_cast<uint32_t>(s.col_u64(8));
      r.snd_wnd = static_cast<uint32_t>(s.col_u64(9));
      r.total_retrans = static_cast<uint32_t>(s.col_u64(10));
      r.zero_window_ns = s.col_u64(11);
      r.new_state = static_cast<int32_t>(s.col_i64(12));
      samples.push_back(std::move(r));
      return {};
    });
  }

  Expected<void> read_drops(std::vector<DropRecord>& drops) {
    return each_row("drops", "SELECT source, cause, count FROM drops ORDER BY seq",
                    [&](const Stmt& s) -> Expected<void> {
                      drops.push_back({s.col_text(0), s.col_text(1), s.col_u64(2)});
                      return {};
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
  return reader.read();
}

}  // namespace ckpt
