// The trace file schema, one descriptor per table (exporters/sqlite/table.h):
// the CREATE TABLE text, the writer's INSERTs and the reader's SELECTs all
// come from the tables below. The comments live inside the SQL on purpose:
// SQLite keeps CREATE statements verbatim, so `sqlite3 trace.db .schema`
// shows this documentation to whoever opens a trace without the source at
// hand. docs/trace-schema.md describes the same schema and the versioning
// rules.
//
// The text of a shipped version must not change (files written before still
// read, and older readers read ours): a column's name, type, comment and
// place are the file format; a new version only adds. trace_schema_sql(5)
// rebuilds version 5 from the descriptors, and
// tests/unit/exporters/trace_store_test.cpp compares it, and versions 6 and 7,
// with the text as they shipped.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "exporters/sqlite/table.h"
#include "model/records.h"

namespace ckpt {

// PRAGMA user_version of the files this build writes, and the newest it reads.
// Bump it for any change an older reader would misread (see docs/trace-schema.md).
// Version 2 added the NFS tables (checkpoint_nfs, rpc_ops, nfs_mounts,
// nfs_mount_ops, nfs_mount_ebpf_ops) and tcp_samples.backlog. Version 3 added
// the job's name, log and failure cause (job.name, job.log_path,
// job.failure_class, job.failure_rule, job.failure_symptoms and the
// job_failure_evidence table). Version 4 added rpc_calls, every RPC behind a
// checkpoint's rpc_ops. Version 5 added checkpoint_gpu, the gpu_copy stage's
// detail (pageable and pinned bytes, copies, devices). Version 6 added the
// file layer's figures: io_calls.calls, via, busy_ns and storage_bytes,
// files.mmap_bytes and storage_bytes, checkpoints.bytes_by_via and
// job.probe_mode. Version 7 added stages.exclusive_ns, the part of a
// stage's busy time the stages below it do not explain. Version 8 added
// unrecognised_io and unrecognised_files, the job's data through files no
// checkpoint pattern recognised. Version 9 added io_accounting, the bytes
// the kernel counted the job's threads writing against the trace's. Version
// 10 added the storage stage's figures: checkpoints.dirty_at_end_bytes, and
// io_calls.storage_bytes for every data call (before: mmap rows only).
// Version 1 to 9 files still read.
inline constexpr int kTraceSchemaVersion = 10;

// The oldest schema version read_trace still reads.
inline constexpr int kOldestTraceSchemaVersion = 1;

// One row of the meta table: facts about the file itself.
struct TraceMetaEntry {
  std::string key;
  std::string value;

  bool operator==(const TraceMetaEntry&) const = default;
};

namespace trace_tables {

using table::computed;
using table::constant;
using table::field;
using table::ordinal;
using table::owner;
using table::row_id;

// nfs_mounts.has_ebpf_ops: whether the mount has an eBPF op list at all (its
// rows, maybe none, are in nfs_mount_ebpf_ops).
inline bool has_ebpf_ops(const NfsMountRecord& m) { return m.ebpf_ops.has_value(); }
inline void set_has_ebpf_ops(NfsMountRecord& m, bool ran) {
  if (ran) {
    m.ebpf_ops.emplace();
  } else {
    m.ebpf_ops.reset();
  }
}

inline std::string checkpoint_row_name(const CheckpointRecord& c) {
  return "checkpoint " + std::to_string(c.id);
}

// The text before the first table: the conventions every table follows,
// after the versions' history up to the one written. One entry per version,
// each several adjacent literals on purpose (one per SQL comment line).
// NOLINTBEGIN(bugprone-suspicious-missing-comma)
inline constexpr std::string_view kSchemaHistory[] = {
    "",  // version 1
    "-- Version 2 added checkpoint_nfs, rpc_ops, nfs_mounts, nfs_mount_ops and\n"
    "-- nfs_mount_ebpf_ops; version 1 files lack them and mean \"no NFS figures\".\n"
    "-- Version 2 also added tcp_samples.backlog; version 1 files lack it (read as 0).\n",
    "-- Version 3 added job.name, job.log_path, job.failure_class, job.failure_rule,\n"
    "-- job.failure_symptoms and job_failure_evidence; older files lack them and\n"
    "-- mean \"no name, no log, failure not classified\".\n",
    "-- Version 4 added rpc_calls; older files lack it and mean \"no per-RPC rows\".\n",
    "-- Version 5 added checkpoint_gpu; older files lack it and mean \"no GPU figures\".\n",
    "-- Version 6 added io_calls.calls, via, busy_ns and storage_bytes,\n"
    "-- files.mmap_bytes and storage_bytes, checkpoints.bytes_by_via and\n"
    "-- job.probe_mode; older files lack them and read 1, 'syscall', the call's\n"
    "-- duration, 0, 0, 0, '{}' and '' (\"every call traced one by one, as syscalls\").\n",
    "-- Version 7 added stages.exclusive_ns; older files lack it and read NULL\n"
    "-- (\"not known\": their bottleneck was chosen by busy time).\n",
    "-- Version 8 added unrecognised_io and unrecognised_files; older files lack\n"
    "-- them and mean \"not counted\".\n",
    "-- Version 9 added io_accounting; older files lack it and mean \"not counted\".\n",
    "-- Version 10 added the storage stage (a stages.name) and checkpoints.dirty_at_end_bytes,\n"
    "-- and io_calls.storage_bytes of every data call: the bytes the file's block device\n"
    "-- read or wrote for it (all of them under O_DIRECT; 0 on NFS and tmpfs). Older\n"
    "-- files have no storage stage (host_io's maximum was the storage's), read NULL for\n"
    "-- dirty_at_end_bytes and 0 for storage_bytes but on mmap rows.\n",
};
// NOLINTEND(bugprone-suspicious-missing-comma)

inline constexpr std::string_view kSchemaConventions = R"sql(-- Conventions:
--  * Times are CLOCK_MONOTONIC nanoseconds except *_wall_ns (CLOCK_REALTIME).
--    job.start_wall_ns was read at job.start_mono_ns: wall = start_wall_ns +
--    (t - start_mono_ns).
--  * Unsigned 64-bit values live in INTEGER columns as the int64 with the same
--    bit pattern. Values of 2^63 and above therefore read as negative numbers
--    in plain SQL (two's complement) and come back unchanged through ckptscope.
--    In SQL: CASE WHEN x < 0 THEN x + 18446744073709551616.0 ELSE x END.
--  * NULL means "not known" for the columns marked NULL; nothing else is NULL.
--  * seq keeps the order records were written in; read tables ORDER BY seq.
--  * Bandwidths are bytes per second (REAL).
--  * JSON columns hold standard JSON when their strings are valid UTF-8; other
--    bytes are kept raw. Numbers in them are unsigned decimals (no two's
--    complement), exact up to 2^64 - 1.
)sql";

inline std::string schema_preamble(int version) {
  std::string text = "\n-- ckptscope trace, schema version " + std::to_string(version) +
                     " (PRAGMA user_version = " + std::to_string(version) +
                     ", set by the writer).\n";
  for (int v = 1; v <= version && v <= static_cast<int>(std::size(kSchemaHistory)); ++v)
    text += kSchemaHistory[v - 1];
  text += kSchemaConventions;
  return text;
}

inline constexpr table::Column<TraceMetaEntry> kMetaColumns[] = {
    field<&TraceMetaEntry::key>("key", "TEXT PRIMARY KEY"),
    field<&TraceMetaEntry::value>("value", "TEXT NOT NULL"),
};

inline constexpr table::Table<TraceMetaEntry> kMetaTable{
    .name = "meta",
    .since = 1,
    .comment =
        "Facts about the file itself, as text key/value pairs:\n"
        "'schema_version' (same as user_version), 'ckptscope_version' (the writer),\n"
        "'created_wall_ns' (CLOCK_REALTIME when the file was created).",
    .columns = kMetaColumns,
};

inline constexpr table::Column<JobRecord> kJobColumns[] = {
    constant<JobRecord>("id", "INTEGER PRIMARY KEY CHECK (id = 1)", 1),
    field<&JobRecord::command>("command", "TEXT NOT NULL",
                               "argv as a JSON array of strings; bytes that\n"
                               "are not UTF-8 are kept raw"),
    field<&JobRecord::mode>("mode", "TEXT NOT NULL", "'run' (ckptscope started it) or 'attach'"),
    field<&JobRecord::node>("node", "TEXT NOT NULL", "hostname"),
    field<&JobRecord::kernel>("kernel", "TEXT NOT NULL", "uname -r"),
    field<&JobRecord::ckptscope_version>("ckptscope_version", "TEXT NOT NULL",
                                         "the profiler that traced the job"),
    field<&JobRecord::config_json>("config_json", "TEXT NOT NULL",
                                   "the effective configuration, JSON"),
    field<&JobRecord::start_wall_ns>("start_wall_ns", "INTEGER NOT NULL",
                                     "CLOCK_REALTIME at start_mono_ns: the wall anchor"),
    field<&JobRecord::start_mono_ns>("start_mono_ns", "INTEGER NOT NULL", "trace start"),
    field<&JobRecord::end_mono_ns>("end_mono_ns", "INTEGER NOT NULL",
                                   "trace end (0 while running)"),
    field<&JobRecord::exit_code>("exit_code", "INTEGER",
                                 "NULL: the job did not exit normally (or yet)"),
    field<&JobRecord::exit_signal>("exit_signal", "INTEGER", "NULL: no signal ended the job"),
    field<&JobRecord::traced>("traced", "INTEGER NOT NULL",
                              "1 when eBPF tracing ran, 0 when it could not load"),
    field<&JobRecord::trace_warning>("trace_warning", "TEXT NOT NULL",
                                     "why nothing (or less) was traced; '' if all went well"),
    field<&JobRecord::root_pids>("root_pids", "TEXT NOT NULL",
                                 "JSON array of the job's root process ids"),
    field<&JobRecord::name>("name", "TEXT NOT NULL",
                            "the job name, e.g. 'train'; '' when none (since\n"
                            "version 3)")
        .added_in(3, "''"),
    field<&JobRecord::log_path>("log_path", "TEXT NOT NULL",
                                "the durable job log 'ckptscope run' wrote; '' when\n"
                                "none (since version 3)")
        .added_in(3, "''"),
    field<&JobRecord::failure, &JobFailure::cls>(
        "failure_class", "TEXT",
        "why the job failed, the classifier's class ('cuda_oom',\n"
        "'gpu_lost', 'storage_io', ..., 'unknown'); NULL: no\n"
        "failure cause (the job did not fail, or has not ended).\n"
        "Since version 3, as are the two columns below")
        .added_in(3, "NULL"),
    field<&JobRecord::failure, &JobFailure::rule>("failure_rule", "TEXT",
                                                  "the rule that fired, '' for unknown; NULL iff\n"
                                                  "failure_class is NULL")
        .added_in(3, "NULL"),
    field<&JobRecord::failure, &JobFailure::symptoms>(
        "failure_symptoms", "TEXT",
        "JSON array of strings: the other classes seen, e.g.\n"
        "'nccl (rule nccl) at line 8'; NULL iff failure_class\n"
        "is NULL. The evidence is in job_failure_evidence.")
        .added_in(3, "NULL"),
    field<&JobRecord::probe_mode>("probe_mode", "TEXT NOT NULL",
                                  "how the job's file I/O was traced: 'file_layer'\n"
                                  "(fentry/fexit on the VFS) or 'syscall' (raw\n"
                                  "syscalls, the fallback); '' when not traced or not\n"
                                  "known (since version 6)")
        .added_in(6, "''"),
};

inline constexpr table::Table<JobRecord> kJobTable{
    .name = "job",
    .since = 1,
    .comment = "The traced job: exactly one row, id = 1 (absent if the writer died first).",
    .columns = kJobColumns,
};

inline constexpr table::Column<CheckpointRecord> kCheckpointsColumns[] = {
    row_id<CheckpointRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&CheckpointRecord::id>("id", "INTEGER NOT NULL UNIQUE",
                                 "1, 2, ... in start order; other tables refer to it"),
    field<&CheckpointRecord::direction>("direction", "TEXT NOT NULL", "'save' or 'load'"),
    field<&CheckpointRecord::start_ns>("start_ns", "INTEGER NOT NULL"),
    field<&CheckpointRecord::end_ns>("end_ns", "INTEGER NOT NULL"),
    field<&CheckpointRecord::bytes>("bytes", "INTEGER NOT NULL",
                                    "bytes moved by the calls (never file sizes)"),
    field<&CheckpointRecord::files>("files", "INTEGER NOT NULL",
                                    "distinct checkpoint files touched"),
    field<&CheckpointRecord::bottleneck>("bottleneck", "TEXT NOT NULL",
                                         "a stages.name, or '' when nothing was measured"),
    field<&CheckpointRecord::bytes_by_via>(
        "bytes_by_via", "TEXT NOT NULL",
        "JSON object: which interfaces moved the bytes, e.g.\n"
        "{\"syscall\": N, \"io_uring\": M, \"copy_file_range\": ...,\n"
        "\"sendfile\": ..., \"mmap\": ...}, non-zero ones only; sums\n"
        "to bytes (since version 6; older files read '{}')")
        .added_in(6, "'{}'"),
    field<&CheckpointRecord::dirty_at_end_bytes>(
        "dirty_at_end_bytes", "INTEGER",
        "a save: page-cache bytes its writes left dirty on local\n"
        "files that none of its calls wrote back (no fsync);\n"
        "NULL when no write dirtied a page, for a load, and in\n"
        "older files (since version 10)")
        .added_in(10, "NULL"),
};

inline constexpr table::Table<CheckpointRecord> kCheckpointsTable{
    .name = "checkpoints",
    .since = 1,
    .comment = "One row per detected checkpoint save or load.",
    .columns = kCheckpointsColumns,
    .row_name = checkpoint_row_name,
};

inline constexpr table::Column<StageRecord> kStagesColumns[] = {
    owner<StageRecord>("checkpoint_id", "INTEGER NOT NULL REFERENCES checkpoints(id)",
                       "checkpoint"),
    ordinal<StageRecord>("ordinal", "INTEGER NOT NULL",
                         "position in the checkpoint's stage list (pipeline order)"),
    field<&StageRecord::name>("name", "TEXT NOT NULL",
                              "gpu_copy, serialize, host_io, metadata, nfs_client,\n"
                              "rpc_queue, rpc_rtt, transport"),
    field<&StageRecord::bytes>("bytes", "INTEGER NOT NULL"),
    field<&StageRecord::busy_ns>("busy_ns", "INTEGER NOT NULL",
                                 "wall time the stage was active (union of intervals)"),
    field<&StageRecord::max_Bps>("max_Bps", "REAL",
                                 "the stage's maximum bandwidth; NULL when unknown"),
    field<&StageRecord::max_source>("max_source", "TEXT NOT NULL",
                                    "where max_Bps came from, e.g. 'config:storage.write_Bps',\n"
                                    "'sysfs:/sys/class/net/eth0/speed', 'unknown'"),
    field<&StageRecord::exclusive_ns>("exclusive_ns", "INTEGER",
                                      "of busy_ns, the time no stage below it explained\n"
                                      "on the same files (docs/stitching.md), what the\n"
                                      "bottleneck is chosen by; NULL: not known (since\n"
                                      "version 7)")
        .added_in(7, "NULL"),
};

inline constexpr table::Table<StageRecord> kStagesTable{
    .name = "stages",
    .since = 1,
    .comment =
        "Pipeline stages of a checkpoint. Only stages this build measured have rows:\n"
        "an absent stage means \"not measured\", never zero.",
    .columns = kStagesColumns,
    .constraints = "PRIMARY KEY (checkpoint_id, ordinal)",
};

inline constexpr table::Column<FailureRecord> kFailuresColumns[] = {
    row_id<FailureRecord>("seq", "INTEGER PRIMARY KEY"),
    owner<FailureRecord>("owner_checkpoint_id", "INTEGER", "checkpoint",
                         "the checkpoint whose failure list holds the row;\n"
                         "NULL: the job-level list (outside any checkpoint)"),
    field<&FailureRecord::checkpoint_id>("checkpoint_id", "INTEGER",
                                         "the checkpoint the failure is attributed to; NULL: none"),
    field<&FailureRecord::kind>("kind", "TEXT NOT NULL",
                                "enospc, edquot, estale, eio, io_error, tcp_reset,\n"
                                "tcp_retransmit_storm, tcp_zero_window, ...; from\n"
                                "the kernel log: gpu_xid, oom_kill,\n"
                                "kernel_nfs_not_responding"),
    field<&FailureRecord::time_ns>("time_ns", "INTEGER NOT NULL"),
    field<&FailureRecord::evidence>("evidence", "TEXT NOT NULL",
                                    "human-readable: the call, the file, the errno"),
};

inline constexpr table::Table<FailureRecord> kFailuresTable{
    .name = "failures",
    .since = 1,
    .comment = "Failures seen during the trace (ENOSPC, ESTALE, TCP resets, ...).",
    .columns = kFailuresColumns,
};

inline constexpr table::Column<FileIoRecord> kFilesColumns[] = {
    row_id<FileIoRecord>("seq", "INTEGER PRIMARY KEY"),
    owner<FileIoRecord>("checkpoint_id", "INTEGER NOT NULL REFERENCES checkpoints(id)",
                        "checkpoint"),
    field<&FileIoRecord::path>("path", "TEXT NOT NULL",
                               "as the job named it; bytes that are not UTF-8 are kept raw"),
    field<&FileIoRecord::dev>("dev", "INTEGER NOT NULL", "st_dev").identifier(),
    field<&FileIoRecord::ino>("ino", "INTEGER NOT NULL", "st_ino").identifier(),
    field<&FileIoRecord::bytes_written>("bytes_written", "INTEGER NOT NULL"),
    field<&FileIoRecord::bytes_read>("bytes_read", "INTEGER NOT NULL"),
    field<&FileIoRecord::write_calls>("write_calls", "INTEGER NOT NULL"),
    field<&FileIoRecord::read_calls>("read_calls", "INTEGER NOT NULL"),
    field<&FileIoRecord::other_calls>("other_calls", "INTEGER NOT NULL",
                                      "fsync, close, ftruncate and metadata calls"),
    field<&FileIoRecord::errors>("errors", "INTEGER NOT NULL", "calls that failed"),
    field<&FileIoRecord::busy_ns>("busy_ns", "INTEGER NOT NULL",
                                  "summed call time; may exceed wall time with parallel calls"),
    field<&FileIoRecord::first_ns>("first_ns", "INTEGER NOT NULL", "first call start"),
    field<&FileIoRecord::last_ns>("last_ns", "INTEGER NOT NULL", "last call end"),
    field<&FileIoRecord::mmap_bytes>("mmap_bytes", "INTEGER NOT NULL",
                                     "of bytes_read: distinct pages mapped by mmap faults,\n"
                                     "each once per checkpoint (since version 6)")
        .added_in(6, "0"),
    field<&FileIoRecord::storage_bytes>("storage_bytes", "INTEGER NOT NULL",
                                        "of mmap_bytes: read from storage into the page\n"
                                        "cache by the faults (since version 6)")
        .added_in(6, "0"),
};

inline constexpr table::Table<FileIoRecord> kFilesTable{
    .name = "files",
    .since = 1,
    .comment = "File I/O per file, per checkpoint.",
    .columns = kFilesColumns,
};

inline constexpr table::Column<IoCallRecord> kIoCallsColumns[] = {
    row_id<IoCallRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&IoCallRecord::start_ns>("start_ns", "INTEGER NOT NULL"),
    field<&IoCallRecord::end_ns>("end_ns", "INTEGER NOT NULL"),
    field<&IoCallRecord::tgid>("tgid", "INTEGER NOT NULL", "process id"),
    field<&IoCallRecord::tid>("tid", "INTEGER NOT NULL", "thread id"),
    field<&IoCallRecord::op>("op", "TEXT NOT NULL",
                             "read, write, fsync, close, ftruncate, open, rename,\n"
                             "mkdir, unlink, stat"),
    field<&IoCallRecord::ret>("ret", "INTEGER NOT NULL",
                              "the call's return: bytes, fd, 0 or -errno (signed)"),
    field<&IoCallRecord::bytes>("bytes", "INTEGER NOT NULL",
                                "bytes moved (ret when a read or write succeeded)"),
    field<&IoCallRecord::path>("path", "TEXT NOT NULL"),
    field<&IoCallRecord::checkpoint_id>("checkpoint_id", "INTEGER",
                                        "NULL: the call was outside any checkpoint"),
    field<&IoCallRecord::calls>("calls", "INTEGER NOT NULL",
                                "calls in the row: 1, or how many small calls the\n"
                                "kernel folded into it (op 'mmap': page faults);\n"
                                "ret and bytes are then sums (since version 6)")
        .added_in(6, "1"),
    field<&IoCallRecord::via>("via", "TEXT NOT NULL",
                              "how the call reached the file: 'syscall', 'io_uring',\n"
                              "'copy_file_range', 'sendfile' or 'mmap' (op 'mmap':\n"
                              "page faults; bytes are pages not yet counted in the\n"
                              "checkpoint) (since version 6)")
        .added_in(6, "'syscall'"),
    field<&IoCallRecord::busy_ns>("busy_ns", "INTEGER NOT NULL",
                                  "the calls' durations summed; older files read\n"
                                  "end_ns - start_ns (since version 6)")
        .added_in(6, "end_ns - start_ns"),
    // Since version 10 also the other data calls' bytes the file's block
    // device read or wrote (the history says so): the column's text stays
    // as version 6 wrote it, which older versions' schema text is rebuilt from.
    field<&IoCallRecord::storage_bytes>("storage_bytes", "INTEGER NOT NULL",
                                        "op 'mmap': of bytes, read from storage by the\n"
                                        "faults; else 0 (since version 6)")
        .added_in(6, "0"),
};

inline constexpr table::Table<IoCallRecord> kIoCallsTable{
    .name = "io_calls",
    .since = 1,
    .comment =
        "Every traced call on a checkpoint file (the timeline). The biggest table:\n"
        "no secondary indexes, so writing stays fast; create what a query needs.",
    .columns = kIoCallsColumns,
};

inline constexpr table::Column<ConnectionRecord> kConnectionsColumns[] = {
    row_id<ConnectionRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&ConnectionRecord::cookie>("cookie", "INTEGER NOT NULL",
                                     "socket cookie; tcp_samples.cookie refers to it")
        .identifier(),
    field<&ConnectionRecord::local>("local", "TEXT NOT NULL", "'addr:port'"),
    field<&ConnectionRecord::remote>("remote", "TEXT NOT NULL", "'addr:port'"),
    field<&ConnectionRecord::first_ns>("first_ns", "INTEGER NOT NULL"),
    field<&ConnectionRecord::last_ns>("last_ns", "INTEGER NOT NULL"),
    field<&ConnectionRecord::bytes_sent>("bytes_sent", "INTEGER NOT NULL",
                                         "acked bytes (delta of tcp_sock.bytes_acked)"),
    field<&ConnectionRecord::bytes_received>("bytes_received", "INTEGER NOT NULL",
                                             "delta of tcp_sock.bytes_received"),
    field<&ConnectionRecord::retransmits>("retransmits", "INTEGER NOT NULL",
                                          "delta of tcp_sock.total_retrans"),
    field<&ConnectionRecord::zero_window_ns>("zero_window_ns", "INTEGER NOT NULL",
                                             "time the peer advertised a zero window"),
    field<&ConnectionRecord::resets>("resets", "INTEGER NOT NULL"),
    field<&ConnectionRecord::link_max_Bps>("link_max_Bps", "REAL",
                                           "the link's bandwidth; NULL when unknown"),
    field<&ConnectionRecord::link_max_source>("link_max_source", "TEXT NOT NULL",
                                              "where link_max_Bps came from"),
};

inline constexpr table::Table<ConnectionRecord> kConnectionsTable{
    .name = "connections",
    .since = 1,
    .comment = "TCP connections to storage servers, totals over the trace.",
    .columns = kConnectionsColumns,
    .after = "CREATE INDEX connections_by_cookie ON connections (cookie);",
};

inline constexpr table::Column<TcpSampleRecord> kTcpSamplesColumns[] = {
    row_id<TcpSampleRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&TcpSampleRecord::time_ns>("time_ns", "INTEGER NOT NULL"),
    field<&TcpSampleRecord::cookie>("cookie", "INTEGER NOT NULL", "connections.cookie")
        .identifier(),
    field<&TcpSampleRecord::event>("event", "TEXT NOT NULL",
                                   "sample, state, retransmit, reset_sent, reset_received"),
    field<&TcpSampleRecord::bytes_acked>("bytes_acked", "INTEGER NOT NULL",
                                         "tcp_sock.bytes_acked at the sample"),
    field<&TcpSampleRecord::bytes_received>("bytes_received", "INTEGER NOT NULL",
                                            "tcp_sock.bytes_received at the sample"),
    field<&TcpSampleRecord::in_flight>("in_flight", "INTEGER NOT NULL", "snd_nxt - snd_una"),
    field<&TcpSampleRecord::backlog>("backlog", "INTEGER NOT NULL",
                                     "write_seq - snd_una: bytes queued in the socket and in\n"
                                     "flight (since version 2; read as 0 from version 1)")
        .added_in(2, "0"),
    field<&TcpSampleRecord::cwnd>("cwnd", "INTEGER NOT NULL", "congestion window, segments"),
    field<&TcpSampleRecord::srtt_us>("srtt_us", "INTEGER NOT NULL", "smoothed RTT, microseconds"),
    field<&TcpSampleRecord::snd_wnd>("snd_wnd", "INTEGER NOT NULL", "peer's receive window, bytes"),
    field<&TcpSampleRecord::total_retrans>("total_retrans", "INTEGER NOT NULL"),
    field<&TcpSampleRecord::zero_window_ns>("zero_window_ns", "INTEGER NOT NULL"),
    field<&TcpSampleRecord::new_state>("new_state", "INTEGER NOT NULL",
                                       "TCP state after a 'state' event (signed)"),
};

inline constexpr table::Table<TcpSampleRecord> kTcpSamplesTable{
    .name = "tcp_samples",
    .since = 1,
    .comment = "TCP state samples and events, in time order as written.",
    .columns = kTcpSamplesColumns,
};

inline constexpr table::Column<DropRecord> kDropsColumns[] = {
    row_id<DropRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&DropRecord::source>("source", "TEXT NOT NULL", "jobio, tcp, collector"),
    field<&DropRecord::cause>("cause", "TEXT NOT NULL", "ringbuf_full, inflight_full, ..."),
    field<&DropRecord::count>("count", "INTEGER NOT NULL"),
};

inline constexpr table::Table<DropRecord> kDropsTable{
    .name = "drops",
    .since = 1,
    .comment =
        "Events the tracer lost, per source and cause: non-zero counts mean the other\n"
        "tables are incomplete.",
    .columns = kDropsColumns,
};

inline constexpr table::Column<NfsCheckpointRecord> kCheckpointNfsColumns[] = {
    owner<NfsCheckpointRecord>("checkpoint_id", "INTEGER PRIMARY KEY REFERENCES checkpoints(id)",
                               "checkpoint"),
    field<&NfsCheckpointRecord::servers>("servers", "TEXT NOT NULL",
                                         "JSON array of 'addr:port', the RPCs' transports"),
    field<&NfsCheckpointRecord::io_rpcs>("io_rpcs", "INTEGER NOT NULL",
                                         "READ/WRITE/COMMIT RPCs on the checkpoint's files"),
    field<&NfsCheckpointRecord::io_bytes>("io_bytes", "INTEGER NOT NULL",
                                          "their payload bytes (the nfs_client stage's bytes)"),
    field<&NfsCheckpointRecord::queue_wait, &DurationStats::count>(
        "queue_wait_count", "INTEGER NOT NULL", "RPCs in the queue-wait distribution"),
    field<&NfsCheckpointRecord::queue_wait, &DurationStats::mean_ns>(
        "queue_wait_mean_ns", "INTEGER NOT NULL", "queue wait: start -> first transmission"),
    field<&NfsCheckpointRecord::queue_wait, &DurationStats::p50_ns>("queue_wait_p50_ns",
                                                                    "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::queue_wait, &DurationStats::p90_ns>("queue_wait_p90_ns",
                                                                    "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::queue_wait, &DurationStats::p99_ns>("queue_wait_p99_ns",
                                                                    "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::queue_wait, &DurationStats::max_ns>("queue_wait_max_ns",
                                                                    "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::rtt, &DurationStats::count>("rtt_count", "INTEGER NOT NULL",
                                                            "RPCs in the round-trip distribution"),
    field<&NfsCheckpointRecord::rtt, &DurationStats::mean_ns>("rtt_mean_ns", "INTEGER NOT NULL",
                                                              "round trip: transmission -> reply"),
    field<&NfsCheckpointRecord::rtt, &DurationStats::p50_ns>("rtt_p50_ns", "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::rtt, &DurationStats::p90_ns>("rtt_p90_ns", "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::rtt, &DurationStats::p99_ns>("rtt_p99_ns", "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::rtt, &DurationStats::max_ns>("rtt_max_ns", "INTEGER NOT NULL"),
    field<&NfsCheckpointRecord::wait_by_queue_ns>(
        "wait_by_queue", "TEXT NOT NULL",
        "JSON object, transport queue -> ns those RPCs slept\n"
        "there: backlog (no free slot), sending (transport\n"
        "busy), pending (awaiting the reply), other"),
    field<&NfsCheckpointRecord::tcp_in_flight_max>(
        "tcp_in_flight_max", "INTEGER",
        "max bytes sent and not yet acked on the transport to\n"
        "those servers; NULL: transport probes were off"),
    field<&NfsCheckpointRecord::tcp_in_flight_mean>(
        "tcp_in_flight_mean", "REAL", "mean of the same; NULL: transport probes were off"),
    field<&NfsCheckpointRecord::tcp_backlog_max>(
        "tcp_backlog_max", "INTEGER",
        "max bytes handed to TCP and not yet acked (queued in\n"
        "the socket and in flight: write_seq - snd_una) on\n"
        "that transport; NULL: transport probes were off"),
    field<&NfsCheckpointRecord::tcp_backlog_mean>(
        "tcp_backlog_mean", "REAL", "mean of the same; NULL: transport probes were off"),
    field<&NfsCheckpointRecord::tcp_retransmits>(
        "tcp_retransmits", "INTEGER", "retransmits on that transport; NULL: probes were off"),
};

inline constexpr table::Table<NfsCheckpointRecord> kCheckpointNfsTable{
    .name = "checkpoint_nfs",
    .since = 2,
    .comment =
        "The NFS side of a checkpoint (since version 2): one row per checkpoint whose\n"
        "files' RPCs the NFS probes saw. No row: no NFS figures for that checkpoint.\n"
        "Durations are per RPC over the checkpoint's own I/O RPCs (READ, WRITE,\n"
        "COMMIT on its files), percentiles nearest-rank.",
    .columns = kCheckpointNfsColumns,
};

inline constexpr table::Column<RpcOpStats> kRpcOpsColumns[] = {
    row_id<RpcOpStats>("seq", "INTEGER PRIMARY KEY"),
    owner<RpcOpStats>("checkpoint_id", "INTEGER NOT NULL REFERENCES checkpoint_nfs(checkpoint_id)",
                      "checkpoint"),
    field<&RpcOpStats::op>("op", "TEXT NOT NULL", "WRITE, READ, COMMIT, GETATTR, ..."),
    field<&RpcOpStats::count>("count", "INTEGER NOT NULL", "RPCs finished"),
    field<&RpcOpStats::errors>("errors", "INTEGER NOT NULL", "finished with an error status"),
    field<&RpcOpStats::major_timeouts>("major_timeouts", "INTEGER NOT NULL",
                                       "major timeouts ('server not responding'), finished or not"),
    field<&RpcOpStats::transmissions>("transmissions", "INTEGER NOT NULL",
                                      "retransmissions included"),
    field<&RpcOpStats::bytes_sent>("bytes_sent", "INTEGER NOT NULL",
                                   "request bytes on the wire, headers included"),
    field<&RpcOpStats::bytes_received>("bytes_received", "INTEGER NOT NULL",
                                       "reply bytes, headers included"),
    field<&RpcOpStats::queue_ns>("queue_ns", "INTEGER NOT NULL",
                                 "sum of start -> first transmission"),
    field<&RpcOpStats::rtt_ns>("rtt_ns", "INTEGER NOT NULL", "sum of transmission -> reply"),
    field<&RpcOpStats::execute_ns>("execute_ns", "INTEGER NOT NULL", "sum of start -> done"),
};

inline constexpr table::Table<RpcOpStats> kRpcOpsTable{
    .name = "rpc_ops",
    .since = 2,
    .comment =
        "Every RPC of the checkpoint's RPC clients during the checkpoint, by\n"
        "procedure (since version 2). Rows belong to a checkpoint_nfs row.",
    .columns = kRpcOpsColumns,
};

inline constexpr table::Column<NfsMountRecord> kNfsMountsColumns[] = {
    row_id<NfsMountRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&NfsMountRecord::device>("device", "TEXT NOT NULL", "'server:/export'"),
    field<&NfsMountRecord::mount_point>("mount_point", "TEXT NOT NULL"),
    field<&NfsMountRecord::fstype>("fstype", "TEXT NOT NULL", "'nfs' or 'nfs4'"),
    field<&NfsMountRecord::version>("version", "TEXT NOT NULL", "the vers= option, e.g. '4.2'"),
    field<&NfsMountRecord::server>("server", "TEXT NOT NULL", "the addr= option"),
    field<&NfsMountRecord::interval_s>("interval_s", "INTEGER NOT NULL",
                                       "seconds between the snapshots"),
    field<&NfsMountRecord::since_mount>("since_mount", "INTEGER NOT NULL",
                                        "1: mounted during the trace, figures are its totals"),
    field<&NfsMountRecord::normal_read_bytes>("normal_read_bytes", "INTEGER NOT NULL",
                                              "read(2) through the page cache"),
    field<&NfsMountRecord::normal_write_bytes>("normal_write_bytes", "INTEGER NOT NULL",
                                               "write(2) through the page cache"),
    field<&NfsMountRecord::direct_read_bytes>("direct_read_bytes", "INTEGER NOT NULL",
                                              "O_DIRECT reads"),
    field<&NfsMountRecord::direct_write_bytes>("direct_write_bytes", "INTEGER NOT NULL",
                                               "O_DIRECT writes"),
    field<&NfsMountRecord::server_read_bytes>("server_read_bytes", "INTEGER NOT NULL",
                                              "READ payload on the wire"),
    field<&NfsMountRecord::server_write_bytes>("server_write_bytes", "INTEGER NOT NULL",
                                               "WRITE payload on the wire"),
    field<&NfsMountRecord::xprt_sends>("xprt_sends", "INTEGER NOT NULL",
                                       "transports summed: requests sent"),
    field<&NfsMountRecord::xprt_receives>("xprt_receives", "INTEGER NOT NULL", "replies received"),
    field<&NfsMountRecord::avg_backlog_queue>(
        "avg_backlog_queue", "REAL", "average queue lengths a send saw; NULL only for NaN"),
    field<&NfsMountRecord::avg_sending_queue>(
        "avg_sending_queue", "REAL", "(SQLite stores NaN as NULL), which reads back as NaN"),
    field<&NfsMountRecord::avg_pending_queue>("avg_pending_queue", "REAL"),
    computed<NfsMountRecord, bool, has_ebpf_ops, set_has_ebpf_ops>(
        "has_ebpf_ops", "INTEGER NOT NULL",
        "1: the eBPF probes ran for this mount, its rows in\n"
        "nfs_mount_ebpf_ops (maybe none) are what they saw;\n"
        "0: they did not run, nothing to cross-check"),
};

inline constexpr table::Table<NfsMountRecord> kNfsMountsTable{
    .name = "nfs_mounts",
    .since = 2,
    .comment =
        "NFS mounts over the trace, from /proc/self/mountstats at its start and end\n"
        "(since version 2): the kernel's own counters. seq identifies the mount for\n"
        "nfs_mount_ops and nfs_mount_ebpf_ops.",
    .columns = kNfsMountsColumns,
};

inline constexpr table::Column<NfsMountOpRecord> kNfsMountOpsColumns[] = {
    row_id<NfsMountOpRecord>("seq", "INTEGER PRIMARY KEY"),
    owner<NfsMountOpRecord>("mount_seq", "INTEGER NOT NULL REFERENCES nfs_mounts(seq)",
                            "NFS mount"),
    field<&NfsMountOpRecord::op>("op", "TEXT NOT NULL", "WRITE, READ, COMMIT, GETATTR, ..."),
    field<&NfsMountOpRecord::ops>("ops", "INTEGER NOT NULL", "operations completed"),
    field<&NfsMountOpRecord::transmissions>("transmissions", "INTEGER NOT NULL"),
    field<&NfsMountOpRecord::major_timeouts>("major_timeouts", "INTEGER NOT NULL"),
    field<&NfsMountOpRecord::bytes_sent>("bytes_sent", "INTEGER NOT NULL", "headers included"),
    field<&NfsMountOpRecord::bytes_received>("bytes_received", "INTEGER NOT NULL"),
    field<&NfsMountOpRecord::queue_ms>("queue_ms", "INTEGER NOT NULL",
                                       "summed, milliseconds (the kernel's resolution)"),
    field<&NfsMountOpRecord::rtt_ms>("rtt_ms", "INTEGER NOT NULL"),
    field<&NfsMountOpRecord::execute_ms>("execute_ms", "INTEGER NOT NULL"),
    field<&NfsMountOpRecord::errors>("errors", "INTEGER",
                                     "NULL: the kernel's iostats predate 1.1, no error count"),
};

inline constexpr table::Table<NfsMountOpRecord> kNfsMountOpsTable{
    .name = "nfs_mount_ops",
    .since = 2,
    .comment =
        "Per-op counters of a mount from mountstats (since version 2): ops with\n"
        "activity in the interval.",
    .columns = kNfsMountOpsColumns,
};

inline constexpr table::Column<RpcOpStats> kNfsMountEbpfOpsColumns[] = {
    row_id<RpcOpStats>("seq", "INTEGER PRIMARY KEY"),
    owner<RpcOpStats>("mount_seq", "INTEGER NOT NULL REFERENCES nfs_mounts(seq)", "NFS mount"),
    field<&RpcOpStats::op>("op", "TEXT NOT NULL"),
    field<&RpcOpStats::count>("count", "INTEGER NOT NULL"),
    field<&RpcOpStats::errors>("errors", "INTEGER NOT NULL"),
    field<&RpcOpStats::major_timeouts>("major_timeouts", "INTEGER NOT NULL"),
    field<&RpcOpStats::transmissions>("transmissions", "INTEGER NOT NULL"),
    field<&RpcOpStats::bytes_sent>("bytes_sent", "INTEGER NOT NULL"),
    field<&RpcOpStats::bytes_received>("bytes_received", "INTEGER NOT NULL"),
    field<&RpcOpStats::queue_ns>("queue_ns", "INTEGER NOT NULL"),
    field<&RpcOpStats::rtt_ns>("rtt_ns", "INTEGER NOT NULL"),
    field<&RpcOpStats::execute_ns>("execute_ns", "INTEGER NOT NULL"),
};

inline constexpr table::Table<RpcOpStats> kNfsMountEbpfOpsTable{
    .name = "nfs_mount_ebpf_ops",
    .since = 2,
    .comment =
        "What the eBPF probes saw for a mount's RPC client over the trace, per op\n"
        "(since version 2): the cross-check of nfs_mount_ops. Only for mounts with\n"
        "has_ebpf_ops = 1. Columns as in rpc_ops.",
    .columns = kNfsMountEbpfOpsColumns,
};

inline constexpr table::Column<JobEvidence> kJobFailureEvidenceColumns[] = {
    row_id<JobEvidence>("seq", "INTEGER PRIMARY KEY"),
    field<&JobEvidence::line>("line", "INTEGER NOT NULL",
                              "1-based line in source; 0 when not from a log (the exit status)"),
    field<&JobEvidence::text>("text", "TEXT NOT NULL",
                              "the line as the classifier read it; bytes kept raw"),
    field<&JobEvidence::source>("source", "TEXT NOT NULL",
                                "the job log's path (job.log_path), 'kmsg' (the kernel log) or\n"
                                "'exit_status'"),
};

inline constexpr table::Table<JobEvidence> kJobFailureEvidenceTable{
    .name = "job_failure_evidence",
    .since = 3,
    .comment =
        "The lines that made the failure classifier decide (since version 3), in the\n"
        "classifier's order (ORDER BY seq). Rows exist only while job.failure_class\n"
        "is not NULL; the job row's writer replaces them with the row.",
    .columns = kJobFailureEvidenceColumns,
};

inline constexpr table::Column<RpcCallRecord> kRpcCallsColumns[] = {
    row_id<RpcCallRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&RpcCallRecord::start_ns>("start_ns", "INTEGER NOT NULL", "the rpc_task started"),
    field<&RpcCallRecord::end_ns>("end_ns", "INTEGER NOT NULL",
                                  "it finished (or failed before it was sent)"),
    field<&RpcCallRecord::queue_ns>("queue_ns", "INTEGER NOT NULL",
                                    "start -> transmission (the last one, if resent)"),
    field<&RpcCallRecord::rtt_ns>("rtt_ns", "INTEGER NOT NULL", "transmission -> reply"),
    field<&RpcCallRecord::execute_ns>("execute_ns", "INTEGER NOT NULL", "start -> done"),
    field<&RpcCallRecord::op>("op", "TEXT NOT NULL", "WRITE, READ, COMMIT, GETATTR, ..."),
    field<&RpcCallRecord::server>("server", "TEXT NOT NULL",
                                  "'addr:port' of its transport; '' when unknown"),
    field<&RpcCallRecord::bytes_sent>("bytes_sent", "INTEGER NOT NULL",
                                      "request bytes on the wire, headers included"),
    field<&RpcCallRecord::bytes_received>("bytes_received", "INTEGER NOT NULL",
                                          "reply bytes, headers included"),
    field<&RpcCallRecord::payload_bytes>(
        "payload_bytes", "INTEGER NOT NULL",
        "the page I/O's requested payload of a READ or WRITE with\n"
        "checkpoint_io = 1; 0 for every other RPC and COMMIT"),
    field<&RpcCallRecord::status>("status", "INTEGER NOT NULL", "0 or -errno (signed)"),
    field<&RpcCallRecord::transmissions>("transmissions", "INTEGER NOT NULL",
                                         "retransmissions included"),
    field<&RpcCallRecord::major_timeouts>("major_timeouts", "INTEGER NOT NULL",
                                          "major timeouts ('server not responding') it met"),
    field<&RpcCallRecord::checkpoint_io>("checkpoint_io", "INTEGER NOT NULL",
                                         "1: page I/O of the checkpoint's files (a READ, WRITE or\n"
                                         "COMMIT counted in checkpoint_nfs.io_rpcs); 0: other"),
    field<&RpcCallRecord::checkpoint_id>("checkpoint_id", "INTEGER",
                                         "the checkpoint whose rpc_ops count it; NULL: none"),
};

inline constexpr table::Table<RpcCallRecord> kRpcCallsTable{
    .name = "rpc_calls",
    .since = 4,
    .comment =
        "Every RPC of a checkpoint's RPC clients during the checkpoint, one row each\n"
        "(since version 4): the RPCs rpc_ops counts (per checkpoint and op, as many\n"
        "rows as rpc_ops.count), and among them, with checkpoint_io = 1, those\n"
        "checkpoint_nfs.io_rpcs counts and queue_wait_* and rtt_* describe. An RPC in\n"
        "the windows of two checkpoints (a save followed at once by a load) has a\n"
        "row in each. Written as each checkpoint closes; like io_calls, no secondary\n"
        "index, so writing stays fast: create what a query needs.",
    .columns = kRpcCallsColumns,
};

inline constexpr table::Column<CheckpointGpuRecord> kCheckpointGpuColumns[] = {
    owner<CheckpointGpuRecord>("checkpoint_id", "INTEGER PRIMARY KEY REFERENCES checkpoints(id)",
                               "checkpoint"),
    field<&CheckpointGpuRecord::copies>("copies", "INTEGER NOT NULL",
                                        "CUPTI memcpy records claimed"),
    field<&CheckpointGpuRecord::copy_count>("copy_count", "INTEGER NOT NULL",
                                            "copies they stand for (a batched record counts each)"),
    field<&CheckpointGpuRecord::pageable_bytes>(
        "pageable_bytes", "INTEGER NOT NULL",
        "host side in pageable memory (torch.save, safetensors)"),
    field<&CheckpointGpuRecord::pinned_bytes>("pinned_bytes", "INTEGER NOT NULL",
                                              "host side in pinned memory (PyTorch's async DCP)"),
    field<&CheckpointGpuRecord::other_bytes>("other_bytes", "INTEGER NOT NULL",
                                             "managed, or the host memory's kind unknown"),
    field<&CheckpointGpuRecord::async_copies>("async_copies", "INTEGER NOT NULL",
                                              "records of asynchronous copies"),
    field<&CheckpointGpuRecord::first_ns>("first_ns", "INTEGER NOT NULL",
                                          "the first copy's start (CLOCK_MONOTONIC)"),
    field<&CheckpointGpuRecord::last_ns>("last_ns", "INTEGER NOT NULL", "the last copy's end"),
    field<&CheckpointGpuRecord::devices>("devices", "TEXT NOT NULL",
                                         "JSON array: the GPUs' PCI addresses ('0000:3b:00.0'),\n"
                                         "or 'device N' when the library did not say"),
};

inline constexpr table::Table<CheckpointGpuRecord> kCheckpointGpuTable{
    .name = "checkpoint_gpu",
    .since = 5,
    .comment =
        "The gpu_copy stage's detail (since version 5): the GPU copies a checkpoint\n"
        "claimed (D2H into a save, H2D out of a load), timed by CUPTI in the job\n"
        "(libckptscope_cupti.so). A row exactly when the stage has one in stages.",
    .columns = kCheckpointGpuColumns,
};

inline constexpr table::Column<UnrecognisedIoRecord> kUnrecognisedIoColumns[] = {
    constant<UnrecognisedIoRecord>("id", "INTEGER PRIMARY KEY CHECK (id = 1)", 1),
    field<&UnrecognisedIoRecord::bytes_read>("bytes_read", "INTEGER NOT NULL",
                                             "read from such files, all of them"),
    field<&UnrecognisedIoRecord::bytes_written>("bytes_written", "INTEGER NOT NULL",
                                                "written to them"),
    field<&UnrecognisedIoRecord::files>("files", "INTEGER NOT NULL", "distinct files"),
    field<&UnrecognisedIoRecord::notice_bytes>(
        "notice_bytes", "INTEGER NOT NULL",
        "checkpoint.unrecognised_notice_mib in bytes: the summary and\n"
        "the report tell of these files when bytes_read +\n"
        "bytes_written is above it"),
};

inline constexpr table::Table<UnrecognisedIoRecord> kUnrecognisedIoTable{
    .name = "unrecognised_io",
    .since = 8,
    .comment =
        "The job's data through regular files no checkpoint pattern recognised (and\n"
        "exclude_globs did not rule out), since version 8: successful reads and\n"
        "writes, io_uring and copies included, page faults not. One row, id = 1,\n"
        "replaced as the trace goes; absent: not counted (not traced).",
    .columns = kUnrecognisedIoColumns,
};

inline constexpr table::Column<UnrecognisedFileRecord> kUnrecognisedFilesColumns[] = {
    row_id<UnrecognisedFileRecord>("seq", "INTEGER PRIMARY KEY"),
    field<&UnrecognisedFileRecord::path>("path", "TEXT NOT NULL",
                                         "as the job opened it; '' when not known"),
    field<&UnrecognisedFileRecord::dev>("dev", "INTEGER NOT NULL", "st_dev").identifier(),
    field<&UnrecognisedFileRecord::ino>("ino", "INTEGER NOT NULL", "st_ino").identifier(),
    field<&UnrecognisedFileRecord::bytes_read>("bytes_read", "INTEGER NOT NULL"),
    field<&UnrecognisedFileRecord::bytes_written>("bytes_written", "INTEGER NOT NULL"),
    field<&UnrecognisedFileRecord::checkpoint_glob>(
        "checkpoint_glob", "TEXT NOT NULL",
        "the --checkpoint-glob value (a checkpoint.name_globs\n"
        "entry) that would include it; '' when the path is not known"),
    field<&UnrecognisedFileRecord::checkpoint_dir>(
        "checkpoint_dir", "TEXT NOT NULL",
        "the --checkpoint-dir value (a checkpoint.dir_globs entry)\n"
        "that would; '' when a directory is not enough (its name is\n"
        "not a generic one)"),
};

inline constexpr table::Table<UnrecognisedFileRecord> kUnrecognisedFilesTable{
    .name = "unrecognised_files",
    .since = 8,
    .comment =
        "The largest of those files (at most 5), largest first (ORDER BY seq), since\n"
        "version 8; replaced with the unrecognised_io row.",
    .columns = kUnrecognisedFilesColumns,
};

inline constexpr table::Column<IoAccountingRecord> kIoAccountingColumns[] = {
    constant<IoAccountingRecord>("id", "INTEGER PRIMARY KEY CHECK (id = 1)", 1),
    field<&IoAccountingRecord::threads>("threads", "INTEGER NOT NULL",
                                        "the job's threads whose exit carried their counters"),
    field<&IoAccountingRecord::processes_running>(
        "processes_running", "INTEGER NOT NULL",
        "the job's processes still running when the trace ended\n"
        "(their threads are not in the sums: nothing is compared)"),
    field<&IoAccountingRecord::kernel_read_bytes>("kernel_read_bytes", "INTEGER NOT NULL",
                                                  "read from storage (task->ioac.read_bytes)"),
    field<&IoAccountingRecord::kernel_written_bytes>(
        "kernel_written_bytes", "INTEGER NOT NULL",
        "written (page-cache bytes dirtied, O_DIRECT bytes) less the\n"
        "dirty bytes a truncate or unlink dropped"),
    field<&IoAccountingRecord::traced_written_bytes>(
        "traced_written_bytes", "INTEGER NOT NULL",
        "what the trace attributed: the checkpoints' writes and the\n"
        "unrecognised files'"),
    field<&IoAccountingRecord::files_written>("files_written", "INTEGER NOT NULL",
                                              "files the trace saw written"),
    field<&IoAccountingRecord::page_bytes>("page_bytes", "INTEGER NOT NULL",
                                           "the kernel's page: it counts whole ones"),
    field<&IoAccountingRecord::notice_bytes>(
        "notice_bytes", "INTEGER NOT NULL",
        "checkpoint.unrecognised_notice_mib in bytes: a kernel count\n"
        "above the trace's by more than it (and two pages a file\n"
        "written) is told"),
};

inline constexpr table::Table<IoAccountingRecord> kIoAccountingTable{
    .name = "io_accounting",
    .since = 9,
    .comment =
        "End-of-run accounting (since version 9): the bytes the kernel counted the\n"
        "job's threads writing, summed as each exited, against the bytes the trace\n"
        "attributed. One row, id = 1, written at the end; absent: not counted\n"
        "(untraced, or the kernel keeps no per-task I/O counters).",
    .columns = kIoAccountingColumns,
};

// Calls `f` with every table, in the order of the schema.
template <typename F>
constexpr void for_each_table(F&& f) {
  f(kMetaTable);
  f(kJobTable);
  f(kCheckpointsTable);
  f(kStagesTable);
  f(kFailuresTable);
  f(kFilesTable);
  f(kIoCallsTable);
  f(kConnectionsTable);
  f(kTcpSamplesTable);
  f(kDropsTable);
  f(kCheckpointNfsTable);
  f(kRpcOpsTable);
  f(kNfsMountsTable);
  f(kNfsMountOpsTable);
  f(kNfsMountEbpfOpsTable);
  f(kJobFailureEvidenceTable);
  f(kRpcCallsTable);
  f(kCheckpointGpuTable);
  f(kUnrecognisedIoTable);
  f(kUnrecognisedFilesTable);
  f(kIoAccountingTable);
}

}  // namespace trace_tables

// Every table with the schema version that introduced it: a file of version
// N must have every table with since <= N, and read_trace names the first
// one missing.
struct TraceTable {
  std::string_view name;
  int since;
};
inline constexpr auto kTraceTables = [] {
  constexpr size_t kCount = [] {
    size_t n = 0;
    trace_tables::for_each_table([&n](const auto&) { ++n; });
    return n;
  }();
  std::array<TraceTable, kCount> tables{};
  size_t i = 0;
  trace_tables::for_each_table([&](const auto& t) { tables[i++] = {t.name, t.since}; });
  return tables;
}();

// The whole schema as the writer executes it: the preamble, then each
// table's CREATE TABLE (and its indexes), a blank line between. `version`:
// the text as that version shipped it (for the test that keeps it frozen).
inline std::string trace_schema_sql_of(int version) {
  std::string text = trace_tables::schema_preamble(version);
  trace_tables::for_each_table([&text, version](const auto& t) {
    if (t.since > version) return;
    text += '\n';
    text += table::create_table_sql(t, version);
  });
  return text;
}

inline const std::string& trace_schema_sql() {
  static const std::string sql = trace_schema_sql_of(kTraceSchemaVersion);
  return sql;
}

}  // namespace ckpt
