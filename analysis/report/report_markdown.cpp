// report_markdown: the report for a ticket or a chat (GitHub-flavored
// Markdown tables). The same sections and numbers as the HTML, without the
// charts: the timeline is summarized by its peaks.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/format.h"
#include "analysis/report/markdown.h"
#include "analysis/report/report_internal.h"
#include "json/json_io.h"

namespace ckpt::report {

// A table cell: no pipe or newline may break the row.
std::string markdown_cell(std::string_view s) {
  std::string out;
  for (char c : valid_utf8(s)) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r' || c == '\t')
      out += ' ';
    else
      out.push_back(c);
  }
  return out;
}

namespace {

std::string cell(std::string_view s) { return markdown_cell(s); }

std::string peaks(const Timeline& t) {
  std::string out;
  double bw = t.bandwidth_Bps.empty()
                  ? 0
                  : *std::max_element(t.bandwidth_Bps.begin(), t.bandwidth_Bps.end());
  out += fmt::format("peak bandwidth {} (bins of {})", format_bandwidth(bw),
                     format_duration(t.bin_ns));
  double q = -1, b = -1;
  for (const auto& v : t.rpc_queue_ms)
    if (v) q = std::max(q, *v);
  for (const auto& v : t.tcp_backlog_bytes)
    if (v) b = std::max(b, *v);
  if (q >= 0) out += fmt::format(", RPC queue wait up to {:.1f} ms", q);
  if (b >= 0) out += fmt::format(", TCP backlog up to {}", format_bytes(static_cast<uint64_t>(b)));
  return out;
}

}  // namespace

std::string report_markdown(const Report& r) {
  std::string out;
  out +=
      fmt::format("# Checkpoint report{}\n\n", r.job_name.empty() ? "" : ": " + cell(r.job_name));
  out += "## Verdict\n\n" + cell(r.verdict.text) + "\n\n";
  if (!r.warnings.empty()) {
    out += "## Warnings\n\n";
    for (const auto& w : r.warnings) out += "- " + cell(w) + "\n";
    out += "\n";
  }

  out += "## Job\n\n";
  out += fmt::format("- command: `{}`\n- started: {}\n- duration: {}\n\n",
                     cell(shell_join(r.command)), format_wall_time_utc(r.start_wall_ns),
                     format_duration(r.end_wall_ns - r.start_wall_ns));
  out += "| node | kernel | exit | traced | drops | failure cause |\n|---|---|---|---|---:|---|\n";
  for (const auto& n : r.nodes)
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(n.node), cell(n.kernel),
                       exit_text(n), n.traced ? cell(traced_text(n)) : "**no**", n.drops,
                       n.failure ? "**" + cell(n.failure->cls) + "**" : "");
  for (const auto& n : r.nodes) {
    if (!n.failure || n.failure->evidence.empty()) continue;
    out += fmt::format("\nWhy {} failed: **{}**\n\n```\n", cell(n.node), cell(n.failure->cls));
    for (const auto& e : n.failure->evidence)
      out += cell(evidence_where(e.line, e.source, false)) + ": " + cell(e.text) + "\n";
    out += "```\n";
  }

  out += "\n## Checkpoint cost to training\n\n";
  if (r.cost.share)
    out += fmt::format(
        "{} of the job's wall time blocked in checkpoints: {} of {} per node ({} saving, {} "
        "loading).\n\n",
        format_percent(*r.cost.share), format_duration(r.cost.blocked_ns),
        format_duration(r.cost.job_wall_ns), format_duration(r.cost.save_blocked_ns),
        format_duration(r.cost.load_blocked_ns));
  else
    out += "Unknown: the job's duration is not known.\n\n";

  out += "## Checkpoints\n\n";
  if (r.checkpoints.empty())
    out += "No checkpoint I/O was seen.\n\n";
  else {
    out +=
        "| checkpoint | start | duration | bytes | files | nodes | bandwidth | of storage max | "
        "bottleneck | "
        "slowest node |\n|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
    for (const auto& cp : r.checkpoints)
      out += fmt::format(
          "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", checkpoint_label(cp),
          format_offset_s(static_cast<int64_t>(cp.start_wall_ns - r.start_wall_ns)),
          format_duration(cp.duration_ns()), format_bytes(cp.bytes), cp.files, cp.nodes.size(),
          format_bandwidth(cp.aggregate_Bps), storage_fraction_text(cp, "unknown"),
          cp.slowest_record().bottleneck.empty()
              ? "none measured"
              : "**" + cell(cp.slowest_record().bottleneck) + "**",
          cell(r.nodes[cp.nodes[cp.slowest].node].node));
  }
  for (const auto& cp : r.checkpoints) {
    const NodeCheckpoint& slow = cp.nodes[cp.slowest];
    out += fmt::format("\n### {}: {} in {}\n\n", checkpoint_label(cp), format_bytes(cp.bytes),
                       format_duration(cp.duration_ns()));
    if (cp.nodes.size() > 1)
      out += fmt::format("Slowest node {}: {:.2f}x the median node's {}.\n\n",
                         cell(r.nodes[slow.node].node), cp.straggler_ratio,
                         format_duration(cp.median_node_ns));
    if (const std::string via = via_text(cp); !via.empty())
      out += "Bytes moved through: " + cell(via) + ".\n\n";
    out +=
        "| stage | bytes | busy | own | bandwidth | max | of max |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n";
    for (auto name : kAllStages) {
      const StageRecord* s = find_stage(*slow.record, name);
      if (!s) {
        out += fmt::format("| {} | | | | | | not measured |\n", name);
        continue;
      }
      bool hot = s->name == slow.record->bottleneck;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n",
                         hot ? "**" + s->name + "**" : s->name, format_bytes(s->bytes),
                         format_duration(s->busy_ns),
                         s->exclusive_ns ? format_duration(*s->exclusive_ns) : "",
                         format_bandwidth(s->bandwidth_Bps()),
                         s->max_Bps ? format_bandwidth(*s->max_Bps) : "unknown",
                         s->fraction_of_max() ? format_percent(*s->fraction_of_max()) : "");
    }
    Timeline scratch;
    out += "\nTimeline: " + peaks(timeline_of(r, cp, scratch)) + ".\n";
  }

  out += "\n## Failures\n\n";
  if (r.failures.empty())
    out += "No failure was seen.\n";
  else {
    out += "| time | node | kind | checkpoint | evidence |\n|---:|---|---|---|---|\n";
    for (const auto& f : r.failures)
      out += fmt::format(
          "| {} | {} | {} | {} | `{}` |\n",
          format_offset_s(static_cast<int64_t>(f.wall_ns) - static_cast<int64_t>(r.start_wall_ns)),
          cell(r.nodes[f.node].node), cell(f.failure.kind),
          f.checkpoint ? fmt::format("#{}", *f.checkpoint) : "", cell(f.failure.evidence));
  }

  out += "\n## Recommendations\n\n";
  if (r.recommendations.empty()) out += "No rule of the rule base fired.\n";
  for (const auto& rec : r.recommendations) {
    out += fmt::format("### {} (`{}`)\n\n{}\n\n", cell(rec.title), rec.id, cell(rec.advice));
    for (const auto& e : rec.evidence)
      out += "- " + (e.node.empty() ? "" : cell(e.node) + ": ") + cell(e.text) + "\n";
    out += "\n";
  }
  for (const auto& x : r.extra_sections) out += "\n## " + cell(x.title) + "\n\n" + x.markdown;
  return out;
}

}  // namespace ckpt::report
