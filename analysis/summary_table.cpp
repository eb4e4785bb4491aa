// summary_table: the terminal rendering. Fixed-width stage columns keep
// checkpoints comparable by eye; free text (sources, evidence) goes last on
// its line so a long value never shifts the numbers.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "analysis/format.h"
#include "analysis/summary.h"

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

void job_lines(std::string& out, const JobRecord& job) {
  const std::string status = fmt::format("  ({}, {})", exit_status(job), trace_status(job));
  const std::string prefix = "job: ";
  const size_t room =
      kWidth > prefix.size() + status.size() ? kWidth - prefix.size() - status.size() : 20;
  out += fmt::format("{}{}{}\n", prefix, fit_head(shell_join(job.command), room), status);
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

// Stage rows: marker, name, bytes, busy, bandwidth, max, % of max, then the
// max's source in whatever room is left.
constexpr std::string_view kStageRow = "  {:<2}{:<11}{:>10}{:>10}{:>13}{:>13}{:>8}  {}\n";
constexpr size_t kStageFixedWidth = 71;  // columns before the source

void stage_row(std::string& out, const StageRecord& s, bool bottleneck) {
  const auto fraction = s.fraction_of_max();
  const std::string source = s.max_source.empty() ? "-" : s.max_source;
  out += fmt::format(
      kStageRow, bottleneck ? "*" : "", s.name, format_bytes(s.bytes), format_duration(s.busy_ns),
      format_bandwidth(s.bandwidth_Bps()), s.max_Bps ? format_bandwidth(*s.max_Bps) : "unknown",
      fraction ? format_percent(*fraction) : "-", fit_tail(source, kWidth - kStageFixedWidth));
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
  out += fmt::format(kStageRow, "", "stage", "bytes", "busy", "bandwidth", "max", "of max",
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
    if (!present) out += fmt::format("    {:<11}  —  not traced in this build\n", name);
  }
  // Stages outside the fixed vocabulary (a newer stitcher) still get shown.
  for (const StageRecord& s : c.stages) {
    if (!known(s.name)) stage_row(out, s, s.name == c.bottleneck);
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
  out += fmt::format("\nfailures ({})\n", all.size());
  for (const auto& [f, where] : all) {
    out += fmt::format("  {:>10}  {:<20}  {:<13}  {}\n",
                       format_offset_s(static_cast<int64_t>(f->time_ns - trace.job.start_mono_ns)),
                       f->kind, where, f->evidence);
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
  job_lines(out, trace.job);
  if (trace.checkpoints.empty()) out += "\ncheckpoints: none detected\n";
  for (const CheckpointRecord& c : trace.checkpoints) checkpoint_lines(out, c, trace.job);
  failure_lines(out, trace);
  connection_lines(out, trace.connections);
  drop_lines(out, trace.drops);
  return out;
}

}  // namespace ckpt
