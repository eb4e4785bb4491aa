// The per-checkpoint summary of a trace, in two renderings: JSON for tools
// (a fixed contract, see summary_json) and a table for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/records.h"

namespace ckpt {

// The machine-readable summary. Other tools rely on these keys; new keys may
// be added, existing ones are never renamed or retyped:
//
//   {"job": {"command": [..], "name", "mode", "node", "kernel", "ckptscope_version",
//            "exit_code": int|null, "exit_signal": int|null, "traced",
//            "trace_warning", "start_wall_ns", "duration_ns": uint|null,
//            "root_pids": [..], "log": string|null, "log_incomplete": string|null,
//            "failure": null | {"class", "rule",
//                               "evidence": [{"line", "text", "source"}],
//                               "symptoms": [string, ..]}},
//    "probe_mode": "file_layer"|"syscall"|"" (how the job's file I/O was traced),
//    "checkpoints": [{"id", "direction": "save"|"load", "start_ns", "end_ns",
//                     "start_offset_ns" (signed, from job start),
//                     "duration_ns": uint|null (null when end < start),
//                     "bytes", "bytes_by_via": {"syscall": N, "io_uring": N,
//                                   "copy_file_range": N, "sendfile": N, "mmap": N,
//                                   "summed": N}
//                                   (non-zero only), "files", "bottleneck": string|null,
//                     "stages": [{"name", "bytes", "busy_ns",
//                                 "exclusive_ns": uint|null (of busy_ns, what no
//                                 stage below it explained; null in older traces),
//                                 "bandwidth_Bps", "max_Bps": number|null, "max_source",
//                                 "fraction_of_max": number|null}],
//                     "absent_stages": [names of kAllStages not measured],
//                     "notes": [a sentence per stage above 1.05 of its maximum,
//                               saying why (analysis/above_max_note.h)],
//                     "failures": [{"kind", "time_ns", "evidence"}],
//                     "nfs": null | {"servers": ["addr:port", ..], "io_rpcs", "io_bytes",
//                             "rpc_ops": [RPC_OP, ..],
//                             "queue_wait": DURATIONS, "rtt": DURATIONS,
//                             "wait_by_queue_ns": {"backlog": ns, "sending": ns, ..},
//                             "tcp_in_flight_max": uint|null,
//                             "tcp_in_flight_mean": number|null,
//                             "tcp_backlog_max": uint|null,
//                             "tcp_backlog_mean": number|null,
//                             "tcp_retransmits": uint|null}}],
//    "failures": [{"kind", "time_ns", "evidence", "checkpoint_id": uint|null}],
//    "connections": [{"cookie", "remote", "local", "first_ns", "last_ns",
//                     "bytes_sent", "bytes_received", "retransmits",
//                     "zero_window_ns", "resets", "link_max_Bps": number|null,
//                     "link_max_source"}],
//    "drops": {"<source>.<cause>": count, ..., "total": count},
//    "nfs_mounts": [{"device", "mount_point", "fstype", "version", "server",
//                    "interval_s", "since_mount": bool,
//                    "bytes": {"normal_read", "normal_write", "direct_read",
//                              "direct_write", "server_read", "server_write"},
//                    "xprt": {"sends", "receives", "avg_backlog_queue",
//                             "avg_sending_queue", "avg_pending_queue"},
//                    "ops": [{"op", "ops", "transmissions", "major_timeouts",
//                             "bytes_sent", "bytes_received", "queue_ms",
//                             "rtt_ms", "execute_ms", "errors": uint|null}],
//                    "ebpf_ops": null | [RPC_OP, ..],
//                    "crosscheck": null | [{"op", "mountstats_ops", "ebpf_ops",
//                                           "ops_diff_fraction", "mountstats_bytes",
//                                           "ebpf_bytes", "bytes_diff_fraction",
//                                           "agree": bool}]}],
//    "unrecognised_io": null | {"total_bytes", "bytes_read", "bytes_written",
//                               "file_count", "notice_bytes",
//                               "files": [{"path": string|null, "dev": "MAJ:MIN", "ino",
//                                          "bytes_read", "bytes_written",
//                                          "checkpoint_glob": string|null,
//                                          "checkpoint_dir": string|null}],
//                               "hint"},
//    "io_accounting": null | {"threads", "processes_running", "kernel_read_bytes",
//                             "kernel_written_bytes", "traced_written_bytes",
//                             "unseen_written_bytes", "allowance_bytes",
//                             "notice": string|null}}
//
// where RPC_OP is {"op", "count", "errors", "major_timeouts", "transmissions",
// "bytes_sent", "bytes_received", "queue_ns", "rtt_ns", "execute_ns"} (sums
// over the op's RPCs) and DURATIONS is {"count", "mean_ns", "p50_ns",
// "p90_ns", "p99_ns", "max_ns"} (per RPC, nearest-rank percentiles).
//
// A checkpoint's "nfs" is null when the NFS probes did not see its files'
// RPCs. "wait_by_queue_ns" sums a repeated queue name. "tcp_in_flight_*" are
// bytes sent and not yet acknowledged (snd_nxt - snd_una), "tcp_backlog_*"
// bytes handed to TCP and not yet acknowledged (write_seq - snd_una: queued
// in the socket and in flight), on the transport to its servers; these and
// "tcp_retransmits" are null when the transport probes were off. A mount's
// "ebpf_ops" and "crosscheck" are null when the eBPF probes did not run for
// it; the cross-check has one entry per op that mountstats counted (ops > 0)
// or eBPF reported, mountstats' order first, with "*_bytes" = bytes_sent +
// bytes_received, "*_diff_fraction" = |a - b| / max(a, b) (0 when both are
// 0) and "agree" when both fractions are <= 0.01 (analysis/nfs_crosscheck.h).
//
// The job's "name" is "" when it has none, its "log" (the durable log `run`
// wrote) null when there is none, its "log_incomplete" null unless that log
// could not be written whole (a full disk): then why, and how much is missing
// (the trace's job-level `job_log_incomplete` failure). Its "failure" is the failure classifier's
// cause, present only when the job failed (a non-zero exit or a signal) and
// the trace records a cause (traces before schema version 3 never do):
// "class" ("cuda_oom", "gpu_lost", ..., "unknown"), "rule" ("" for unknown),
// the "evidence" lines in the classifier's order, each with its 1-based
// "line" (0 when not from a log) in its "source" (the job log's path, "kmsg"
// or "exit_status"), and the "symptoms", other classes seen, as text.
//
// "io_accounting" is the end-of-run accounting (docs/stitching.md): the bytes
// the kernel counted the job's threads writing (summed as each exited) against
// the bytes the trace attributed to checkpoints and unrecognised files; null
// when not counted (not traced, a kernel without per-task I/O counters, or a
// trace older than schema version 9). "notice" says the difference in words
// when it is above "allowance_bytes" (the notice threshold and two pages a
// file written); nothing is compared while "processes_running" is not 0.
//
// "unrecognised_io" is the notice that the job moved more than "notice_bytes"
// (checkpoint.unrecognised_notice_mib) through regular files that no
// checkpoint pattern recognised (docs/stitching.md, "Unrecognised I/O"):
// null when it moved no more than that, or the trace did not count it (not
// traced, or older than schema version 8). "files" are the largest (at most
// 5, largest first), "path" null when not known (then "dev" and "ino" name
// it), "checkpoint_glob" the --checkpoint-glob value (name_globs entry) that
// would include it, "checkpoint_dir" the --checkpoint-dir value (dir_globs
// entry) that would, null when a directory is not enough (a name that is not
// generic); "hint" says what to do, in words.
//
// Top-level "failures" are the job-level ones (outside any checkpoint), among
// them those from the kernel log ("gpu_xid", "oom_kill",
// "kernel_nfs_not_responding").
// Strings are made valid UTF-8 (invalid bytes become U+FFFD) so the result
// always dumps.
nlohmann::json summary_json(const Trace& trace);

// The trace's job_log_incomplete failure, if the job's log is incomplete.
const FailureRecord* job_log_incomplete(const Trace& trace);

// The terminal rendering: the job (with its failure cause, evidence,
// symptoms and log when it has them), then per checkpoint a header line, one
// row per stage in pipeline order (kAllStages) and, with NFS figures, one
// "nfs" line (RPCs by op, queue wait and RTT p50/p99, TCP in flight,
// backlog and retransmits when known); then the NFS mounts (mountstats, with
// the eBPF cross-check), failures, connections and drops. Fits 100 columns
// except for the job's log path and why it is incomplete, the failures
// section's long evidence, addresses, NFS op lists and mount names. The job's failure evidence and
// symptoms are cut to fit (one line each, control bytes shown as spaces).
std::string summary_table(const Trace& trace);

}  // namespace ckpt
