// summary_table: the terminal rendering. Fixed-width stage columns keep
// checkpoints comparable by eye; free text (sources, evidence) goes last on
// its line so a long value never shifts the numbers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/above_max_note.h"
#include "analysis/format.h"
#include "analysis/io_accounting_notice.h"
#include "analysis/nfs_crosscheck.h"
#include "analysis/storage_copy_note.h"
#include "analysis/summary.h"
#include "analysis/unrecognised_notice.h"

namespace ckpt {
namespace {

constexpr size_t kWidth = 100;

// Cuts `s` to `width` bytes, keeping the head, without splitting a UTF-8
// sequence.
std::string fit_head(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  size_t cut = width > 3 ? width - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

// Same, keeping the tail: for sources such as sysfs paths the end says most.
std::string fit_tail(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  size_t keep = width > 3 ? width - 3 : 0;
  size_t from = s.size() - keep;
  while (from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;
  return "..." + std::string(s.substr(from));
}

std::string exit_status(const JobRecord& job) {
  if (job.exit_signal) return fmt::format("killed by signal {}", *job.exit_signal);
  if (job.exit_code) return fmt::format("exit {}", *job.exit_code);
  return "exit status unknown";
}

std::string trace_status(const JobRecord& job) {
  if (!job.traced) return "NOT TRACED";
  return job.trace_warning.empty() ? "traced" : "traced with warnings";
}

// A line from a log as one terminal line: control bytes (carriage returns,
// escape sequences, tabs) become spaces, trailing blanks go.
std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// `prefix` then `text`, the text cut to what is left of kWidth (at least 20).
std::string fitted(const std::string& prefix, std::string_view text) {
  const size_t room = kWidth > prefix.size() + 20 ? kWidth - prefix.size() : 20;
  return prefix + fit_head(one_line(text), room) + "\n";
}

// Where an evidence line is: "line N" in the job's own log, "SOURCE:N"
// elsewhere (the kernel log), "SOURCE" for what is not a line of a log (the
// exit status).
std::string where(const JobEvidence& e, const JobRecord& job) {
  return evidence_where(e.line, fit_tail(one_line(e.source), 40),
                        e.source.empty() || e.source == job.log_path);
}

// The classifier's cause of a failed job: class and rule, the evidence lines
// in its order, then the other classes it saw.
void job_failure_lines(std::string& out, const JobRecord& job) {
  if (!job.failure) return;
  const JobFailure& f = *job.failure;
  const std::string cls = f.cls.empty() ? std::string("unknown") : one_line(f.cls);
  out += f.rule.empty() ? fmt::format("  failure: {}\n", cls)
                        : fmt::format("  failure: {} (rule {})\n", cls, one_line(f.rule));
  for (const JobEvidence& e : f.evidence) {
    out += fitted(fmt::format("    {}: ", where(e, job)), e.text);
  }
  for (const std::string& symptom : f.symptoms) out += fitted("    also seen: ", symptom);
}

void job_lines(std::string& out, const JobRecord& job, const FailureRecord* log_incomplete) {
  const std::string probe_mode =
      job.probe_mode.empty() ? std::string() : ", probe mode: " + one_line(job.probe_mode);
  const std::string status =
      fmt::format("  ({}, {}{})", exit_status(job), trace_status(job), probe_mode);
  const std::string prefix = "job: ";
  const size_t room =
      kWidth > prefix.size() + status.size() ? kWidth - prefix.size() - status.size() : 20;
  out += fmt::format("{}{}{}\n", prefix, fit_head(shell_join(job.command), room), status);
  job_failure_lines(out, job);
  // The log's path is never cut: it is there to be copied.
  if (!job.log_path.empty()) out += fmt::format("  log: {}\n", one_line(job.log_path));
  // Never cut either: how much is missing and why is the point.
  if (log_incomplete) out += "  LOG INCOMPLETE: " + one_line(log_incomplete->evidence) + "\n";
  if (!job.trace_warning.empty()) out += fmt::format("  warning: {}\n", job.trace_warning);
  std::string where = job.node.empty() ? "unknown node" : job.node;
  if (!job.kernel.empty()) where += fmt::format(" (kernel {})", job.kernel);
  std::string when = job.start_wall_ns != 0
                         ? fmt::format("started {}", format_wall_time_utc(job.start_wall_ns))
                         : std::string("start time unknown");
  std::string ran =
      job.end_mono_ns > job.start_mono_ns
          ? fmt::format(", ran {}", format_duration(job.end_mono_ns - job.start_mono_ns))
          : std::string();
  std::string mode = job.mode.empty() ? "" : fmt::format(", mode {}", job.mode);
  out += fmt::format("  {}{}, {}{}\n", where, mode, when, ran);
}

// Stage rows: marker, name, bytes, busy, own (exclusive) time, bandwidth,
// max, % of max, then the max's source in whatever room is left.
constexpr std::string_view kStageRow = "  {:<2}{:<11}{:>9}{:>9}{:>9}{:>12}{:>12}{:>8}  {}\n";
constexpr size_t kStageFixedWidth = 76;  // columns before the source

void stage_row(std::string& out, const StageRecord& s, bool bottleneck) {
  const auto fraction = s.fraction_of_max();
  const std::string source = s.max_source.empty() ? "-" : s.max_source;
  out += fmt::format(
      kStageRow, bottleneck ? "*" : "", s.name, format_bytes(s.bytes), format_duration(s.busy_ns),
      s.exclusive_ns ? format_duration(*s.exclusive_ns) : "-", format_bandwidth(s.bandwidth_Bps()),
      s.max_Bps ? format_bandwidth(*s.max_Bps) : "unknown",
      fraction ? format_percent(*fraction) : "-",
      // A calibration's date is what to read first ("calibrated 2026-12-02
      // (memory copy, 2 threads)"); a sysfs path's end.
      source.starts_with("calibrated ") ? fit_head(source, kWidth - kStageFixedWidth)
                                        : fit_tail(source, kWidth - kStageFixedWidth));
}

// "p50 1.20 ms, p99 4.50 ms", or "-" when no RPC was timed.
std::string p50_p99(const DurationStats& d) {
  if (d.count == 0) return "-";
  return fmt::format("p50 {}, p99 {}", format_duration(d.p50_ns), format_duration(d.p99_ns));
}

// `head` then `parts` joined by single spaces, as one line when it fits
// kWidth; otherwise broken between parts onto lines indented by `indent`
// spaces. Parts carry their own punctuation ("WRITE 128,") and are never
// split, so a part wider than the room still overflows.
void wrapped_line(std::string& out, const std::string& head, const std::vector<std::string>& parts,
                  size_t indent) {
  std::string line = head + ' ';  // every part is followed by one space
  size_t on_line = 0;
  for (const std::string& part : parts) {
    if (on_line > 0 && line.size() + part.size() > kWidth) {
      line.pop_back();
      out += line + "\n";
      line = std::string(indent, ' ');
      on_line = 0;
    }
    line += part + ' ';
    ++on_line;
  }
  line.pop_back();
  out += line + "\n";
}

// A sentence's words, for wrapped_line.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  for (size_t at = 0; at < text.size();) {
    size_t space = text.find(' ', at);
    if (space == std::string_view::npos) space = text.size();
    words.push_back(one_line(text.substr(at, space - at)));
    at = space + 1;
  }
  return words;
}

// "a, b, c": each item but the last gets a comma; the last gets `end`.
void append_list(std::vector<std::string>& parts, const std::vector<std::string>& items,
                 std::string_view end) {
  for (size_t i = 0; i < items.size(); ++i) {
    parts.push_back(items[i] + std::string(i + 1 < items.size() ? "," : end));
  }
}

// The checkpoint's NFS figures: the RPCs by op, the I/O RPCs' queue wait and
// round trip, and the transport when its probes ran (in flight, backlog,
// retransmits: whichever is known). One line when it fits 100 columns,
// wrapped between items when not.
void nfs_line(std::string& out, const NfsCheckpointRecord& n) {
  std::vector<std::string> rpcs;
  for (const RpcOpStats& op : n.rpc_ops) rpcs.push_back(fmt::format("{} {}", op.op, op.count));
  if (rpcs.empty()) rpcs.emplace_back("none");
  std::vector<std::string> parts;
  append_list(parts, rpcs, ";");
  parts.push_back(fmt::format("queue wait {};", p50_p99(n.queue_wait)));
  std::vector<std::string> tcp;
  if (n.tcp_in_flight_max) {
    tcp.push_back(fmt::format("in flight max {}", format_bytes(*n.tcp_in_flight_max)));
  }
  if (n.tcp_backlog_max) {
    tcp.push_back(fmt::format("backlog max {}", format_bytes(*n.tcp_backlog_max)));
  }
  if (n.tcp_retransmits) {
    tcp.push_back(
        fmt::format("{} retransmit{}", *n.tcp_retransmits, *n.tcp_retransmits == 1 ? "" : "s"));
  }
  parts.push_back(fmt::format("rtt {}{}", p50_p99(n.rtt), tcp.empty() ? "" : ";"));
  if (!tcp.empty()) {
    tcp.front() = "TCP " + tcp.front();
    append_list(parts, tcp, "");
  }
  wrapped_line(out, "  nfs: RPCs:", parts, 7);
}

// Which interfaces moved the bytes, when any but plain syscalls did:
// "  via: syscall 1.0 MiB, io_uring 3.0 MiB, mmap 40.1 KiB".
void via_line(std::string& out, const CheckpointRecord& c) {
  const bool only_syscalls = std::all_of(c.bytes_by_via.begin(), c.bytes_by_via.end(),
                                         [](const auto& v) { return v.first == "syscall"; });
  if (only_syscalls) return;
  std::vector<std::string> parts;
  parts.reserve(c.bytes_by_via.size());
  for (const auto& [via, bytes] : c.bytes_by_via)
    parts.push_back(fmt::format("{} {}", one_line(via), format_bytes(bytes)));
  out += fitted("  via: ", fmt::format("{}", fmt::join(parts, ", ")));
}

void checkpoint_lines(std::string& out, const CheckpointRecord& c, const JobRecord& job) {
  const std::string took =
      c.end_ns >= c.start_ns ? format_duration(c.end_ns - c.start_ns) : std::string("?");
  const std::string bottleneck = c.bottleneck.empty()
                                     ? std::string("no bottleneck measured")
                                     : fmt::format("bottleneck: {} (*)", c.bottleneck);
  out += fmt::format("\ncheckpoint {}  {}  at {}  took {}  {}  {} file{}  {}\n", c.id,
                     to_string(c.direction),
                     format_offset_s(static_cast<int64_t>(c.start_ns - job.start_mono_ns)), took,
                     format_bytes(c.bytes), c.files, c.files == 1 ? "" : "s", bottleneck);
  out += fmt::format(kStageRow, "", "stage", "bytes", "busy", "own", "bandwidth", "max", "of max",
                     "max from");
  auto known = [](std::string_view name) {
    return std::find(std::begin(kAllStages), std::end(kAllStages), name) != std::end(kAllStages);
  };
  for (std::string_view name : kAllStages) {
    bool present = false;
    for (const StageRecord& s : c.stages) {
      if (s.name != name) continue;
      present = true;
      stage_row(out, s, s.name == c.bottleneck);
    }
    if (!present)
      out += fmt::format(
          "    {:<11}  —  not measured: nothing of it in this checkpoint, or not traced here\n",
          name);
  }
  // Stages outside the fixed vocabulary (a newer stitcher) still get shown.
  for (const StageRecord& s : c.stages) {
    if (!known(s.name)) stage_row(out, s, s.name == c.bottleneck);
  }
  for (const std::string& note : above_max_notes(c))
    wrapped_line(out, "  note:", words_of(note), 8);
  if (auto note = storage_copy_note(c)) wrapped_line(out, "  note:", words_of(*note), 8);
  if (c.dirty_at_end_bytes && *c.dirty_at_end_bytes > 0)
    wrapped_line(out, "  note:",
                 words_of(fmt::format("{} of this save was still dirty in the page cache when it "
                                      "ended (no fsync): the storage got it later, outside the "
                                      "storage stage",
                                      format_bytes(*c.dirty_at_end_bytes))),
                 8);
  via_line(out, c);
  if (c.nfs) nfs_line(out, *c.nfs);
  if (c.gpu) {
    const CheckpointGpuRecord& g = *c.gpu;
    out += fmt::format(
        "  gpu: {} cop{} ({} async) on {}; host memory: pageable {}, pinned {}{}\n", g.copy_count,
        g.copy_count == 1 ? "y" : "ies", g.async_copies,
        g.devices.empty() ? std::string("no GPU") : fmt::format("{}", fmt::join(g.devices, ", ")),
        format_bytes(g.pageable_bytes), format_bytes(g.pinned_bytes),
        g.other_bytes ? ", other " + format_bytes(g.other_bytes) : std::string());
  }
}

// An unrecognised file's row: bytes, written, read, then its name (free text last).
constexpr std::string_view kUnrecognisedRow = "  {:>10} {:>10} {:>10}  {}\n";

// The unrecognised-I/O notice (docs/stitching.md), when above its threshold:
// the totals, the largest files with their bytes and the flags that would
// include each (paths and flags never cut: they are there to be copied), then
// what to do, wrapped to the width.
void unrecognised_lines(std::string& out, const std::optional<UnrecognisedIoRecord>& io) {
  if (!io || !io->notice()) return;
  out += fmt::format(
      "\nunrecognised I/O: {} through {} file{} that no checkpoint pattern "
      "recognised\n",
      format_bytes(io->bytes()), io->files, io->files == 1 ? "" : "s");
  out += fmt::format(kUnrecognisedRow, "bytes", "written", "read", "file");
  for (const UnrecognisedFileRecord& f : io->largest) {
    out += fmt::format(kUnrecognisedRow, format_bytes(f.bytes()), format_bytes(f.bytes_written),
                       format_bytes(f.bytes_read), one_line(unrecognised_file_name(f)));
    const std::string flags = include_flags(f);
    if (!flags.empty()) out += "      include with " + one_line(flags) + "\n";
  }
  wrapped_line(out, " ", words_of(unrecognised_hint()), 2);
}

// The eBPF cross-check of one mount, when the probes ran for it: a verdict,
// then one row per op that disagrees.
void crosscheck_lines(std::string& out, const std::vector<NfsOpCrosscheck>& rows) {
  const std::string within = format_percent(kNfsAgreeFraction);
  const auto agreeing = static_cast<size_t>(
      std::count_if(rows.begin(), rows.end(), [](const NfsOpCrosscheck& r) { return r.agree; }));
  const size_t disagreeing = rows.size() - agreeing;
  auto ops = [](size_t n) { return fmt::format("{} op{}", n, n == 1 ? "" : "s"); };
  if (disagreeing == 0) {
    out += fmt::format("    mountstats vs eBPF: agree within {} on {}\n", within, ops(rows.size()));
    return;
  }
  out += fmt::format("    mountstats vs eBPF: DISAGREE by more than {} on {}{}\n", within,
                     ops(disagreeing),
                     agreeing > 0 ? fmt::format(" (agree on {})", ops(agreeing)) : "");
  for (const NfsOpCrosscheck& r : rows) {
    if (r.agree) continue;
    out += fmt::format("      {}: ops {} vs {} ({}), bytes {} vs {} ({})\n", r.op, r.mountstats_ops,
                       r.ebpf_ops, format_percent(r.ops_diff_fraction),
                       format_bytes(r.mountstats_bytes), format_bytes(r.ebpf_bytes),
                       format_percent(r.bytes_diff_fraction));
  }
}

void nfs_mount_lines(std::string& out, const std::vector<NfsMountRecord>& mounts) {
  if (mounts.empty()) return;
  out += "\nNFS mounts (mountstats)\n";
  for (const NfsMountRecord& m : mounts) {
    std::string kind = m.fstype;
    if (!m.version.empty()) kind += fmt::format(" {}", m.version);
    if (!m.server.empty()) kind += fmt::format(", server {}", m.server);
    const std::string span = format_duration(m.interval_s * uint64_t{1'000'000'000});
    out += fmt::format(
        "  {} on {}  ({})  {}\n", m.device, m.mount_point, kind,
        m.since_mount ? fmt::format("since mount, {}", span) : fmt::format("over {}", span));
    uint64_t total = 0;
    std::vector<std::string> ops;  // ops with activity, bytes = sent + received
    for (const NfsMountOpRecord& op : m.ops) {
      if (op.ops == 0) continue;
      total += op.ops;
      ops.push_back(fmt::format("{} {} ({})", op.op, op.ops,
                                format_bytes(op.bytes_sent + op.bytes_received)));
    }
    if (ops.empty()) {
      out += "    ops: none\n";
    } else {
      std::vector<std::string> parts;
      append_list(parts, ops, "");
      wrapped_line(out, fmt::format("    {} op{}:", total, total == 1 ? "" : "s"), parts, 6);
    }
    out += fmt::format("    applications wrote {} and read {}; WRITE payload {}, READ payload {}\n",
                       format_bytes(m.normal_write_bytes + m.direct_write_bytes),
                       format_bytes(m.normal_read_bytes + m.direct_read_bytes),
                       format_bytes(m.server_write_bytes), format_bytes(m.server_read_bytes));
    if (auto rows = nfs_crosscheck(m)) crosscheck_lines(out, *rows);
  }
}

void failure_lines(std::string& out, const Trace& trace) {
  std::vector<std::pair<const FailureRecord*, std::string>> all;  // failure, where
  for (const CheckpointRecord& c : trace.checkpoints) {
    for (const FailureRecord& f : c.failures)
      all.emplace_back(&f, fmt::format("checkpoint {}", c.id));
  }
  for (const FailureRecord& f : trace.failures) {
    all.emplace_back(&f, f.checkpoint_id ? fmt::format("checkpoint {}", *f.checkpoint_id) : "job");
  }
  if (all.empty()) {
    out += "\nfailures: none\n";
    return;
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.first->time_ns < b.first->time_ns;
  });
  // The kind column widens for long kinds (kernel_nfs_not_responding) so the
  // columns after it stay aligned.
  size_t kind_w = 20;
  for (const auto& [f, where] : all) kind_w = std::max(kind_w, f->kind.size());
  out += fmt::format("\nfailures ({})\n", all.size());
  for (const auto& [f, where] : all) {
    out += fmt::format("  {:>10}  {:<{}}  {:<13}  {}\n",
                       format_offset_s(static_cast<int64_t>(f->time_ns - trace.job.start_mono_ns)),
                       f->kind, kind_w, where, f->evidence);
  }
}

void connection_lines(std::string& out, const std::vector<ConnectionRecord>& connections) {
  if (connections.empty()) {
    out += "\nconnections: none\n";
    return;
  }
  size_t remote_w = 6, local_w = 5;  // at least the header words
  for (const ConnectionRecord& c : connections) {
    remote_w = std::max(remote_w, c.remote.size());
    local_w = std::max(local_w, c.local.size());
  }
  out += fmt::format("\nconnections ({})\n", connections.size());
  out += fmt::format("  {:<{}}  {:<{}}  {:>10}  {:>10}  {:>7}  {:>11}  {:>6}\n", "remote", remote_w,
                     "local", local_w, "sent", "received", "retrans", "zero window", "resets");
  for (const ConnectionRecord& c : connections) {
    out +=
        fmt::format("  {:<{}}  {:<{}}  {:>10}  {:>10}  {:>7}  {:>11}  {:>6}\n", c.remote, remote_w,
                    c.local, local_w, format_bytes(c.bytes_sent), format_bytes(c.bytes_received),
                    c.retransmits, format_duration(c.zero_window_ns), c.resets);
  }
}

void drop_lines(std::string& out, const std::vector<DropRecord>& drops) {
  // Sum repeated source.cause pairs, keeping first-seen order.
  std::vector<std::pair<std::string, uint64_t>> counters;
  uint64_t total = 0;
  for (const DropRecord& d : drops) {
    if (d.count == 0) continue;
    std::string key = fmt::format("{}.{}", d.source, d.cause);
    auto it = std::find_if(counters.begin(), counters.end(),
                           [&](const auto& kv) { return kv.first == key; });
    if (it == counters.end()) {
      counters.emplace_back(std::move(key), d.count);
    } else {
      it->second += d.count;
    }
    total += d.count;
  }
  if (counters.empty()) {
    out += "\ndrops: none\n";
    return;
  }
  std::string list;
  for (const auto& [key, count] : counters) {
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", key, count);
  }
  out += fmt::format("\ndrops: {} (total {}): events were lost, the trace is incomplete\n", list,
                     total);
}

}  // namespace

std::string summary_table(const Trace& trace) {
  std::string out;
  job_lines(out, trace.job, job_log_incomplete(trace));
  if (trace.checkpoints.empty()) out += "\ncheckpoints: none detected\n";
  for (const CheckpointRecord& c : trace.checkpoints) checkpoint_lines(out, c, trace.job);
  unrecognised_lines(out, trace.unrecognised_io);
  if (trace.io_accounting) {
    out += "\n";
    wrapped_line(out, "written:", words_of(io_accounting_line(*trace.io_accounting)), 2);
    if (auto n = io_accounting_notice(*trace.io_accounting))
      wrapped_line(out, "  note:", words_of(*n), 8);
  }
  nfs_mount_lines(out, trace.nfs_mounts);
  failure_lines(out, trace);
  connection_lines(out, trace.connections);
  drop_lines(out, trace.drops);
  return out;
}

}  // namespace ckpt
