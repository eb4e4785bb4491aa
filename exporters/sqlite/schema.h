// The trace file schema. The comments live inside the SQL on purpose: SQLite
// keeps CREATE statements verbatim, so `sqlite3 trace.db .schema` shows this
// documentation to whoever opens a trace without the source at hand.
// docs/trace-schema.md describes the same schema and the versioning rules.
#pragma once

#include <string_view>

namespace ckpt {

// PRAGMA user_version of the files this build writes, and the newest it reads.
// Bump it for any change an older reader would misread (see docs/trace-schema.md).
inline constexpr int kTraceSchemaVersion = 1;

// Every table read_trace needs; a file missing one is reported by name.
inline constexpr std::string_view kTraceTables[] = {
    "meta",  "job",      "checkpoints", "stages",      "failures",
    "files", "io_calls", "connections", "tcp_samples", "drops"};

inline constexpr std::string_view kTraceSchemaSql = R"sql(
-- ckptscope trace, schema version 1 (PRAGMA user_version = 1, set by the writer).
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
  root_pids         TEXT NOT NULL      -- JSON array of the job's root process ids
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
                                         -- tcp_retransmit_storm, tcp_zero_window, ...
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
)sql";

}  // namespace ckpt
