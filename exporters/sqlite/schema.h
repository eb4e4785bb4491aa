// The trace file schema. The comments live inside the SQL on purpose: SQLite
// keeps CREATE statements verbatim, so `sqlite3 trace.db .schema` shows this
// documentation to whoever opens a trace without the source at hand.
// docs/trace-schema.md describes the same schema and the versioning rules.
#pragma once

#include <string_view>

namespace ckpt {

// PRAGMA user_version of the files this build writes, and the newest it reads.
// Bump it for any change an older reader would misread (see docs/trace-schema.md).
// Version 2 added the NFS tables (checkpoint_nfs, rpc_ops, nfs_mounts,
// nfs_mount_ops, nfs_mount_ebpf_ops) and tcp_samples.backlog. Version 3 added
// the job's name, log and failure cause (job.name, job.log_path,
// job.failure_class, job.failure_rule, job.failure_symptoms and the
// job_failure_evidence table). Version 4 added rpc_calls, every RPC behind a
// checkpoint's rpc_ops. Version 5 added checkpoint_gpu, the gpu_copy stage's
// detail (pageable and pinned bytes, copies, devices). Version 1 to 4 files
// still read.
inline constexpr int kTraceSchemaVersion = 5;

// The oldest schema version read_trace still reads.
inline constexpr int kOldestTraceSchemaVersion = 1;

// Every table read_trace needs, with the schema version that introduced it: a
// file of version N must have every table with since <= N, and a file
// missing one is reported by name.
struct TraceTable {
  std::string_view name;
  int since;
};
inline constexpr TraceTable kTraceTables[] = {
    {"meta", 1},
    {"job", 1},
    {"checkpoints", 1},
    {"stages", 1},
    {"failures", 1},
    {"files", 1},
    {"io_calls", 1},
    {"connections", 1},
    {"tcp_samples", 1},
    {"drops", 1},
    {"checkpoint_nfs", 2},
    {"rpc_ops", 2},
    {"nfs_mounts", 2},
    {"nfs_mount_ops", 2},
    {"nfs_mount_ebpf_ops", 2},
    {"job_failure_evidence", 3},
    {"rpc_calls", 4},
    {"checkpoint_gpu", 5},
};

inline constexpr std::string_view kTraceSchemaSql = R"sql(
-- ckptscope trace, schema version 5 (PRAGMA user_version = 5, set by the writer).
-- Version 2 added checkpoint_nfs, rpc_ops, nfs_mounts, nfs_mount_ops and
-- nfs_mount_ebpf_ops; version 1 files lack them and mean "no NFS figures".
-- Version 2 also added tcp_samples.backlog; version 1 files lack it (read as 0).
-- Version 3 added job.name, job.log_path, job.failure_class, job.failure_rule,
-- job.failure_symptoms and job_failure_evidence; older files lack them and
-- mean "no name, no log, failure not classified".
-- Version 4 added rpc_calls; older files lack it and mean "no per-RPC rows".
-- Version 5 added checkpoint_gpu; older files lack it and mean "no GPU figures".
-- Conventions:
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

-- Facts about the file itself, as text key/value pairs:
-- 'schema_version' (same as user_version), 'ckptscope_version' (the writer),
-- 'created_wall_ns' (CLOCK_REALTIME when the file was created).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- The traced job: exactly one row, id = 1 (absent if the writer died first).
CREATE TABLE job (
  id                INTEGER PRIMARY KEY CHECK (id = 1),
  command           TEXT NOT NULL,     -- argv as a JSON array of strings; bytes that
                                       -- are not UTF-8 are kept raw
  mode              TEXT NOT NULL,     -- 'run' (ckptscope started it) or 'attach'
  node              TEXT NOT NULL,     -- hostname
  kernel            TEXT NOT NULL,     -- uname -r
  ckptscope_version TEXT NOT NULL,     -- the profiler that traced the job
  config_json       TEXT NOT NULL,     -- the effective configuration, JSON
  start_wall_ns     INTEGER NOT NULL,  -- CLOCK_REALTIME at start_mono_ns: the wall anchor
  start_mono_ns     INTEGER NOT NULL,  -- trace start
  end_mono_ns       INTEGER NOT NULL,  -- trace end (0 while running)
  exit_code         INTEGER,           -- NULL: the job did not exit normally (or yet)
  exit_signal       INTEGER,           -- NULL: no signal ended the job
  traced            INTEGER NOT NULL,  -- 1 when eBPF tracing ran, 0 when it could not load
  trace_warning     TEXT NOT NULL,     -- why nothing (or less) was traced; '' if all went well
  root_pids         TEXT NOT NULL,     -- JSON array of the job's root process ids
  name              TEXT NOT NULL,     -- the job name, e.g. 'train'; '' when none (since
                                       -- version 3)
  log_path          TEXT NOT NULL,     -- the durable job log 'ckptscope run' wrote; '' when
                                       -- none (since version 3)
  failure_class     TEXT,              -- why the job failed, the classifier's class ('cuda_oom',
                                       -- 'gpu_lost', 'storage_io', ..., 'unknown'); NULL: no
                                       -- failure cause (the job did not fail, or has not ended).
                                       -- Since version 3, as are the two columns below
  failure_rule      TEXT,              -- the rule that fired, '' for unknown; NULL iff
                                       -- failure_class is NULL
  failure_symptoms  TEXT               -- JSON array of strings: the other classes seen, e.g.
                                       -- 'nccl (rule nccl) at line 8'; NULL iff failure_class
                                       -- is NULL. The evidence is in job_failure_evidence.
);

-- One row per detected checkpoint save or load.
CREATE TABLE checkpoints (
  seq        INTEGER PRIMARY KEY,
  id         INTEGER NOT NULL UNIQUE,  -- 1, 2, ... in start order; other tables refer to it
  direction  TEXT NOT NULL,            -- 'save' or 'load'
  start_ns   INTEGER NOT NULL,
  end_ns     INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,         -- bytes moved by the calls (never file sizes)
  files      INTEGER NOT NULL,         -- distinct checkpoint files touched
  bottleneck TEXT NOT NULL             -- a stages.name, or '' when nothing was measured
);

-- Pipeline stages of a checkpoint. Only stages this build measured have rows:
-- an absent stage means "not measured", never zero.
CREATE TABLE stages (
  checkpoint_id INTEGER NOT NULL REFERENCES checkpoints(id),
  ordinal       INTEGER NOT NULL,  -- position in the checkpoint's stage list (pipeline order)
  name          TEXT NOT NULL,     -- gpu_copy, serialize, host_io, metadata, nfs_client,
                                   -- rpc_queue, rpc_rtt, transport
  bytes         INTEGER NOT NULL,
  busy_ns       INTEGER NOT NULL,  -- wall time the stage was active (union of intervals)
  max_Bps       REAL,              -- the stage's maximum bandwidth; NULL when unknown
  max_source    TEXT NOT NULL,     -- where max_Bps came from, e.g. 'config:storage.write_Bps',
                                   -- 'sysfs:/sys/class/net/eth0/speed', 'unknown'
  PRIMARY KEY (checkpoint_id, ordinal)
);

-- Failures seen during the trace (ENOSPC, ESTALE, TCP resets, ...).
CREATE TABLE failures (
  seq                 INTEGER PRIMARY KEY,
  owner_checkpoint_id INTEGER,           -- the checkpoint whose failure list holds the row;
                                         -- NULL: the job-level list (outside any checkpoint)
  checkpoint_id       INTEGER,           -- the checkpoint the failure is attributed to; NULL: none
  kind                TEXT NOT NULL,     -- enospc, edquot, estale, eio, io_error, tcp_reset,
                                         -- tcp_retransmit_storm, tcp_zero_window, ...; from
                                         -- the kernel log: gpu_xid, oom_kill,
                                         -- kernel_nfs_not_responding
  time_ns             INTEGER NOT NULL,
  evidence            TEXT NOT NULL      -- human-readable: the call, the file, the errno
);

-- File I/O per file, per checkpoint.
CREATE TABLE files (
  seq           INTEGER PRIMARY KEY,
  checkpoint_id INTEGER NOT NULL REFERENCES checkpoints(id),
  path          TEXT NOT NULL,     -- as the job named it; bytes that are not UTF-8 are kept raw
  dev           INTEGER NOT NULL,  -- st_dev
  ino           INTEGER NOT NULL,  -- st_ino
  bytes_written INTEGER NOT NULL,
  bytes_read    INTEGER NOT NULL,
  write_calls   INTEGER NOT NULL,
  read_calls    INTEGER NOT NULL,
  other_calls   INTEGER NOT NULL,  -- fsync, close, ftruncate and metadata calls
  errors        INTEGER NOT NULL,  -- calls that failed
  busy_ns       INTEGER NOT NULL,  -- summed call time; may exceed wall time with parallel calls
  first_ns      INTEGER NOT NULL,  -- first call start
  last_ns       INTEGER NOT NULL   -- last call end
);

-- Every traced call on a checkpoint file (the timeline). The biggest table:
-- no secondary indexes, so writing stays fast; create what a query needs.
CREATE TABLE io_calls (
  seq           INTEGER PRIMARY KEY,
  start_ns      INTEGER NOT NULL,
  end_ns        INTEGER NOT NULL,
  tgid          INTEGER NOT NULL,  -- process id
  tid           INTEGER NOT NULL,  -- thread id
  op            TEXT NOT NULL,     -- read, write, fsync, close, ftruncate, open, rename,
                                   -- mkdir, unlink, stat
  ret           INTEGER NOT NULL,  -- the call's return: bytes, fd, 0 or -errno (signed)
  bytes         INTEGER NOT NULL,  -- bytes moved (ret when a read or write succeeded)
  path          TEXT NOT NULL,
  checkpoint_id INTEGER            -- NULL: the call was outside any checkpoint
);

-- TCP connections to storage servers, totals over the trace.
CREATE TABLE connections (
  seq             INTEGER PRIMARY KEY,
  cookie          INTEGER NOT NULL,  -- socket cookie; tcp_samples.cookie refers to it
  local           TEXT NOT NULL,     -- 'addr:port'
  remote          TEXT NOT NULL,     -- 'addr:port'
  first_ns        INTEGER NOT NULL,
  last_ns         INTEGER NOT NULL,
  bytes_sent      INTEGER NOT NULL,  -- acked bytes (delta of tcp_sock.bytes_acked)
  bytes_received  INTEGER NOT NULL,  -- delta of tcp_sock.bytes_received
  retransmits     INTEGER NOT NULL,  -- delta of tcp_sock.total_retrans
  zero_window_ns  INTEGER NOT NULL,  -- time the peer advertised a zero window
  resets          INTEGER NOT NULL,
  link_max_Bps    REAL,              -- the link's bandwidth; NULL when unknown
  link_max_source TEXT NOT NULL      -- where link_max_Bps came from
);
CREATE INDEX connections_by_cookie ON connections (cookie);

-- TCP state samples and events, in time order as written.
CREATE TABLE tcp_samples (
  seq            INTEGER PRIMARY KEY,
  time_ns        INTEGER NOT NULL,
  cookie         INTEGER NOT NULL,  -- connections.cookie
  event          TEXT NOT NULL,     -- sample, state, retransmit, reset_sent, reset_received
  bytes_acked    INTEGER NOT NULL,  -- tcp_sock.bytes_acked at the sample
  bytes_received INTEGER NOT NULL,  -- tcp_sock.bytes_received at the sample
  in_flight      INTEGER NOT NULL,  -- snd_nxt - snd_una
  backlog        INTEGER NOT NULL,  -- write_seq - snd_una: bytes queued in the socket and in
                                    -- flight (since version 2; read as 0 from version 1)
  cwnd           INTEGER NOT NULL,  -- congestion window, segments
  srtt_us        INTEGER NOT NULL,  -- smoothed RTT, microseconds
  snd_wnd        INTEGER NOT NULL,  -- peer's receive window, bytes
  total_retrans  INTEGER NOT NULL,
  zero_window_ns INTEGER NOT NULL,
  new_state      INTEGER NOT NULL   -- TCP state after a 'state' event (signed)
);

-- Events the tracer lost, per source and cause: non-zero counts mean the other
-- tables are incomplete.
CREATE TABLE drops (
  seq    INTEGER PRIMARY KEY,
  source TEXT NOT NULL,     -- jobio, tcp, collector
  cause  TEXT NOT NULL,     -- ringbuf_full, inflight_full, ...
  count  INTEGER NOT NULL
);

-- The NFS side of a checkpoint (since version 2): one row per checkpoint whose
-- files' RPCs the NFS probes saw. No row: no NFS figures for that checkpoint.
-- Durations are per RPC over the checkpoint's own I/O RPCs (READ, WRITE,
-- COMMIT on its files), percentiles nearest-rank.
CREATE TABLE checkpoint_nfs (
  checkpoint_id      INTEGER PRIMARY KEY REFERENCES checkpoints(id),
  servers            TEXT NOT NULL,     -- JSON array of 'addr:port', the RPCs' transports
  io_rpcs            INTEGER NOT NULL,  -- READ/WRITE/COMMIT RPCs on the checkpoint's files
  io_bytes           INTEGER NOT NULL,  -- their payload bytes (the nfs_client stage's bytes)
  queue_wait_count   INTEGER NOT NULL,  -- RPCs in the queue-wait distribution
  queue_wait_mean_ns INTEGER NOT NULL,  -- queue wait: start -> first transmission
  queue_wait_p50_ns  INTEGER NOT NULL,
  queue_wait_p90_ns  INTEGER NOT NULL,
  queue_wait_p99_ns  INTEGER NOT NULL,
  queue_wait_max_ns  INTEGER NOT NULL,
  rtt_count          INTEGER NOT NULL,  -- RPCs in the round-trip distribution
  rtt_mean_ns        INTEGER NOT NULL,  -- round trip: transmission -> reply
  rtt_p50_ns         INTEGER NOT NULL,
  rtt_p90_ns         INTEGER NOT NULL,
  rtt_p99_ns         INTEGER NOT NULL,
  rtt_max_ns         INTEGER NOT NULL,
  wait_by_queue      TEXT NOT NULL,     -- JSON object, transport queue -> ns those RPCs slept
                                        -- there: backlog (no free slot), sending (transport
                                        -- busy), pending (awaiting the reply), other
  tcp_in_flight_max  INTEGER,           -- max bytes sent and not yet acked on the transport to
                                        -- those servers; NULL: transport probes were off
  tcp_in_flight_mean REAL,              -- mean of the same; NULL: transport probes were off
  tcp_backlog_max    INTEGER,           -- max bytes handed to TCP and not yet acked (queued in
                                        -- the socket and in flight: write_seq - snd_una) on
                                        -- that transport; NULL: transport probes were off
  tcp_backlog_mean   REAL,              -- mean of the same; NULL: transport probes were off
  tcp_retransmits    INTEGER            -- retransmits on that transport; NULL: probes were off
);

-- Every RPC of the checkpoint's RPC clients during the checkpoint, by
-- procedure (since version 2). Rows belong to a checkpoint_nfs row.
CREATE TABLE rpc_ops (
  seq            INTEGER PRIMARY KEY,
  checkpoint_id  INTEGER NOT NULL REFERENCES checkpoint_nfs(checkpoint_id),
  op             TEXT NOT NULL,     -- WRITE, READ, COMMIT, GETATTR, ...
  count          INTEGER NOT NULL,  -- RPCs finished
  errors         INTEGER NOT NULL,  -- finished with an error status
  major_timeouts INTEGER NOT NULL,  -- major timeouts ('server not responding'), finished or not
  transmissions  INTEGER NOT NULL,  -- retransmissions included
  bytes_sent     INTEGER NOT NULL,  -- request bytes on the wire, headers included
  bytes_received INTEGER NOT NULL,  -- reply bytes, headers included
  queue_ns       INTEGER NOT NULL,  -- sum of start -> first transmission
  rtt_ns         INTEGER NOT NULL,  -- sum of transmission -> reply
  execute_ns     INTEGER NOT NULL   -- sum of start -> done
);

-- NFS mounts over the trace, from /proc/self/mountstats at its start and end
-- (since version 2): the kernel's own counters. seq identifies the mount for
-- nfs_mount_ops and nfs_mount_ebpf_ops.
CREATE TABLE nfs_mounts (
  seq                INTEGER PRIMARY KEY,
  device             TEXT NOT NULL,     -- 'server:/export'
  mount_point        TEXT NOT NULL,
  fstype             TEXT NOT NULL,     -- 'nfs' or 'nfs4'
  version            TEXT NOT NULL,     -- the vers= option, e.g. '4.2'
  server             TEXT NOT NULL,     -- the addr= option
  interval_s         INTEGER NOT NULL,  -- seconds between the snapshots
  since_mount        INTEGER NOT NULL,  -- 1: mounted during the trace, figures are its totals
  normal_read_bytes  INTEGER NOT NULL,  -- read(2) through the page cache
  normal_write_bytes INTEGER NOT NULL,  -- write(2) through the page cache
  direct_read_bytes  INTEGER NOT NULL,  -- O_DIRECT reads
  direct_write_bytes INTEGER NOT NULL,  -- O_DIRECT writes
  server_read_bytes  INTEGER NOT NULL,  -- READ payload on the wire
  server_write_bytes INTEGER NOT NULL,  -- WRITE payload on the wire
  xprt_sends         INTEGER NOT NULL,  -- transports summed: requests sent
  xprt_receives      INTEGER NOT NULL,  -- replies received
  avg_backlog_queue  REAL,              -- average queue lengths a send saw; NULL only for NaN
  avg_sending_queue  REAL,              -- (SQLite stores NaN as NULL), which reads back as NaN
  avg_pending_queue  REAL,
  has_ebpf_ops       INTEGER NOT NULL   -- 1: the eBPF probes ran for this mount, its rows in
                                        -- nfs_mount_ebpf_ops (maybe none) are what they saw;
                                        -- 0: they did not run, nothing to cross-check
);

-- Per-op counters of a mount from mountstats (since version 2): ops with
-- activity in the interval.
CREATE TABLE nfs_mount_ops (
  seq            INTEGER PRIMARY KEY,
  mount_seq      INTEGER NOT NULL REFERENCES nfs_mounts(seq),
  op             TEXT NOT NULL,     -- WRITE, READ, COMMIT, GETATTR, ...
  ops            INTEGER NOT NULL,  -- operations completed
  transmissions  INTEGER NOT NULL,
  major_timeouts INTEGER NOT NULL,
  bytes_sent     INTEGER NOT NULL,  -- headers included
  bytes_received INTEGER NOT NULL,
  queue_ms       INTEGER NOT NULL,  -- summed, milliseconds (the kernel's resolution)
  rtt_ms         INTEGER NOT NULL,
  execute_ms     INTEGER NOT NULL,
  errors         INTEGER            -- NULL: the kernel's iostats predate 1.1, no error count
);

-- What the eBPF probes saw for a mount's RPC client over the trace, per op
-- (since version 2): the cross-check of nfs_mount_ops. Only for mounts with
-- has_ebpf_ops = 1. Columns as in rpc_ops.
CREATE TABLE nfs_mount_ebpf_ops (
  seq            INTEGER PRIMARY KEY,
  mount_seq      INTEGER NOT NULL REFERENCES nfs_mounts(seq),
  op             TEXT NOT NULL,
  count          INTEGER NOT NULL,
  errors         INTEGER NOT NULL,
  major_timeouts INTEGER NOT NULL,
  transmissions  INTEGER NOT NULL,
  bytes_sent     INTEGER NOT NULL,
  bytes_received INTEGER NOT NULL,
  queue_ns       INTEGER NOT NULL,
  rtt_ns         INTEGER NOT NULL,
  execute_ns     INTEGER NOT NULL
);

-- The lines that made the failure classifier decide (since version 3), in the
-- classifier's order (ORDER BY seq). Rows exist only while job.failure_class
-- is not NULL; the job row's writer replaces them with the row.
CREATE TABLE job_failure_evidence (
  seq    INTEGER PRIMARY KEY,
  line   INTEGER NOT NULL,  -- 1-based line in source; 0 when not from a log (the exit status)
  text   TEXT NOT NULL,     -- the line as the classifier read it; bytes kept raw
  source TEXT NOT NULL      -- the job log's path (job.log_path), 'kmsg' (the kernel log) or
                            -- 'exit_status'
);

-- Every RPC of a checkpoint's RPC clients during the checkpoint, one row each
-- (since version 4): the RPCs rpc_ops counts (per checkpoint and op, as many
-- rows as rpc_ops.count), and among them, with checkpoint_io = 1, those
-- checkpoint_nfs.io_rpcs counts and queue_wait_* and rtt_* describe. An RPC in
-- the windows of two checkpoints (a save followed at once by a load) has a
-- row in each. Written as each checkpoint closes; like io_calls, no secondary
-- index, so writing stays fast: create what a query needs.
CREATE TABLE rpc_calls (
  seq            INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,  -- the rpc_task started
  end_ns         INTEGER NOT NULL,  -- it finished (or failed before it was sent)
  queue_ns       INTEGER NOT NULL,  -- start -> transmission (the last one, if resent)
  rtt_ns         INTEGER NOT NULL,  -- transmission -> reply
  execute_ns     INTEGER NOT NULL,  -- start -> done
  op             TEXT NOT NULL,     -- WRITE, READ, COMMIT, GETATTR, ...
  server         TEXT NOT NULL,     -- 'addr:port' of its transport; '' when unknown
  bytes_sent     INTEGER NOT NULL,  -- request bytes on the wire, headers included
  bytes_received INTEGER NOT NULL,  -- reply bytes, headers included
  payload_bytes  INTEGER NOT NULL,  -- the page I/O's requested payload of a READ or WRITE with
                                    -- checkpoint_io = 1; 0 for every other RPC and COMMIT
  status         INTEGER NOT NULL,  -- 0 or -errno (signed)
  transmissions  INTEGER NOT NULL,  -- retransmissions included
  major_timeouts INTEGER NOT NULL,  -- major timeouts ('server not responding') it met
  checkpoint_io  INTEGER NOT NULL,  -- 1: page I/O of the checkpoint's files (a READ, WRITE or
                                    -- COMMIT counted in checkpoint_nfs.io_rpcs); 0: other
  checkpoint_id  INTEGER            -- the checkpoint whose rpc_ops count it; NULL: none
);

-- The gpu_copy stage's detail (since version 5): the GPU copies a checkpoint
-- claimed (D2H into a save, H2D out of a load), timed by CUPTI in the job
-- (libckptscope_cupti.so). A row exactly when the stage has one in stages.
CREATE TABLE checkpoint_gpu (
  checkpoint_id  INTEGER PRIMARY KEY REFERENCES checkpoints(id),
  copies         INTEGER NOT NULL,  -- CUPTI memcpy records claimed
  copy_count     INTEGER NOT NULL,  -- copies they stand for (a batched record counts each)
  pageable_bytes INTEGER NOT NULL,  -- host side in pageable memory (torch.save, safetensors)
  pinned_bytes   INTEGER NOT NULL,  -- host side in pinned memory (PyTorch's async DCP)
  other_bytes    INTEGER NOT NULL,  -- managed, or the host memory's kind unknown
  async_copies   INTEGER NOT NULL,  -- records of asynchronous copies
  first_ns       INTEGER NOT NULL,  -- the first copy's start (CLOCK_MONOTONIC)
  last_ns        INTEGER NOT NULL,  -- the last copy's end
  devices        TEXT NOT NULL      -- JSON array: the GPUs' PCI addresses ('0000:3b:00.0'),
                                    -- or 'device N' when the library did not say
);
)sql";

}  // namespace ckpt
