// report_html: one self-contained page. No script and no request: the style
// sheet and the charts (inline SVG) are in the file, and a Content Security
// Policy forbids loading anything else, so it opens the same from disk, a
// mail attachment or an air-gapped cluster. Colors come from CSS variables
// that follow prefers-color-scheme (light and dark).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "analysis/format.h"
#include "analysis/report/report_internal.h"
#include "analysis/report/svg.h"
#include "json/json_io.h"

namespace ckpt::report {
namespace {

using svg::escape;

std::string h(std::string_view s) { return escape(valid_utf8(s)); }

constexpr std::string_view kStyle = R"(
:root{--fg:#1b1d21;--bg:#ffffff;--muted:#5f6670;--grid:#e3e6ea;--panel:#f6f7f9;--bar:#3f72c4;
--hot:#c8372d;--queue:#c77700;--tcp:#17806f;--absent:#b9bec6;--ok:#2f7d32}
@media (prefers-color-scheme:dark){:root{--fg:#e7e9ec;--bg:#16181b;--muted:#a0a7b1;--grid:#30343a;
--panel:#1f2226;--bar:#79a6f2;--hot:#ff7b6e;--queue:#ffb545;--tcp:#4fd2bb;--absent:#4b5058;--ok:#7bcf7f}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--grid)}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px;border-bottom:1px solid var(--grid);
text-align:left;vertical-align:top}th{color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow-x:auto}.nodes-table td,.nodes-table th{font-size:12.5px;padding:2px 6px}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px}
pre{background:var(--panel);padding:6px 8px;overflow-x:auto;white-space:pre-wrap}
.verdict{background:var(--panel);border-left:4px solid var(--hot);padding:10px 14px;font-size:15px}
.muted{color:var(--muted)}.hot{color:var(--hot);font-weight:600}.ok{color:var(--ok)}
figure{margin:8px 0 16px}figcaption{color:var(--muted);font-size:12.5px}
svg{max-width:100%;height:auto;font-size:11px}
svg text{fill:var(--fg)}svg .tick{fill:var(--muted)}svg .label{fill:var(--muted);font-size:11.5px}
svg .axis{stroke:var(--muted);stroke-width:1}svg .grid{stroke:var(--grid);stroke-width:1}
svg .bar{fill:var(--bar)}svg .bar.hot{fill:var(--hot)}svg .absent{fill:var(--absent)}
svg .bar.busy{fill-opacity:.35}
svg .span{stroke:var(--muted);stroke-dasharray:4 3}
svg .bw{fill:var(--bar);fill-opacity:.35;stroke:var(--bar);stroke-width:1.5}
svg .wire{fill:none;stroke:var(--hot);stroke-width:1.3}
svg .queue{fill:none;stroke:var(--queue);stroke-width:1.5}svg .queue-dot{fill:var(--queue)}
svg .tcp{fill:none;stroke:var(--tcp);stroke-width:1.5}svg .tcp-dot{fill:var(--tcp)}
svg .bar.load{fill-opacity:.55}
li{margin:4px 0}.rec h3{margin-bottom:2px}
)";

std::string stage_text(const StageRecord& s) {
  std::string out =
      fmt::format("{} · {}", format_bytes(s.bytes), format_bandwidth(s.bandwidth_Bps()));
  if (auto f = s.fraction_of_max()) out += fmt::format(" · {} of max", format_percent(*f));
  return out;
}

// Busy time per stage against the checkpoint's duration, the stage's own
// (exclusive) part of it solid; the bottleneck in the hot color, stages not
// measured in gray.
std::string waterfall_svg(const CheckpointReport& cp, const CheckpointRecord& c,
                          uint64_t duration_ns) {
  uint64_t longest = duration_ns;
  for (const auto& s : c.stages) longest = std::max(longest, s.busy_ns);
  const svg::Unit unit = svg::time_unit(static_cast<double>(std::max<uint64_t>(longest, 1)));
  const double row = 24;
  const double rows = static_cast<double>(std::size(kAllStages));
  svg::Frame f{100, 10, 400, row * rows, 0, 0};
  const auto t = svg::ticks(static_cast<double>(longest) / unit.divisor, 6);
  f.x_max = t.back();
  // Room right of the bars for "busy (own) · bytes · bandwidth · of max · bottleneck".
  const double width = 1000;
  const double height = f.top + f.height + 42;
  std::string out =
      svg::open(width, height, fmt::format("stages of {}: busy time", checkpoint_label(cp)));
  out += svg::x_axis(f, t, fmt::format("busy time ({})", unit.name));
  for (size_t i = 0; i < std::size(kAllStages); ++i) {
    const double y = f.top + row * static_cast<double>(i);
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", f.left - 8,
                       y + 16, kAllStages[i]);
    const StageRecord* s = find_stage(c, kAllStages[i]);
    if (!s) {
      out +=
          fmt::format(R"(<rect class="absent" x="{:.1f}" y="{:.1f}" width="6" height="{:.1f}"/>)",
                      f.left, y + 5, row - 10);
      out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}">not measured</text>)",
                         f.left + 12, y + 16);
      continue;
    }
    const double w = std::max(1.0, f.x(static_cast<double>(s->busy_ns) / unit.divisor) - f.left);
    const bool hot = s->name == c.bottleneck;
    // Traces from before exclusive times were measured: the whole bar solid.
    const std::string own =
        s->exclusive_ns ? fmt::format(" ({} own)", format_duration(*s->exclusive_ns)) : "";
    out += fmt::format(
        R"(<rect class="bar{}{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"><title>{}: {} busy{}, {}</title></rect>)",
        hot ? " hot" : "", s->exclusive_ns ? " busy" : "", f.left, y + 4, w, row - 8, h(s->name),
        format_duration(s->busy_ns), own, h(stage_text(*s)));
    if (s->exclusive_ns && *s->exclusive_ns > 0) {
      const double wo =
          std::max(1.0, f.x(static_cast<double>(*s->exclusive_ns) / unit.divisor) - f.left);
      out += fmt::format(
          R"(<rect class="bar{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"><title>{}: {} own time</title></rect>)",
          hot ? " hot" : "", f.left, y + 4, wo, row - 8, h(s->name),
          format_duration(*s->exclusive_ns));
    }
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}"{}>{}{} · {}{}</text>)", f.left + f.width + 10,
                       y + 16, hot ? R"( class="hot")" : "", format_duration(s->busy_ns), own,
                       h(stage_text(*s)), hot ? " · bottleneck" : "");
  }
  const double xd = f.x(static_cast<double>(duration_ns) / unit.divisor);
  out += fmt::format(R"(<line class="span" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", xd,
                     f.top - 4, xd, f.top + f.height);
  out += "</svg>";
  return out;
}

// A value with its unit, for a tooltip: "12.5 ms".
std::string tick_text(double v, const svg::Unit& u) {
  return svg::tick_label(std::round(v * 100) / 100) + " " + u.name;
}

// One panel of the timeline: a series over the checkpoint's bins.
struct Panel {
  std::string label;
  std::string css;
  svg::Unit unit;
  std::vector<std::optional<double>> values;
  bool area = false;
  std::string absent_note;  // shown instead when the series was not measured
  // A second series on the same axes, drawn as a step line (NFS payload on
  // the wire over the calls' data), with a legend.
  std::vector<double> overlay;
  std::string legend;
};

std::string timeline_svg(const CheckpointReport& cp, const Timeline& tl) {
  const size_t n = tl.bandwidth_Bps.size();
  const double span_ns = static_cast<double>(tl.bin_ns) * static_cast<double>(n);
  const svg::Unit tu = svg::time_unit(span_ns);
  const auto xt = svg::ticks(span_ns / tu.divisor, 8);

  std::vector<Panel> panels;
  {
    double max = *std::max_element(tl.bandwidth_Bps.begin(), tl.bandwidth_Bps.end());
    for (double v : tl.nfs_bandwidth_Bps) max = std::max(max, v);
    Panel p{"data", "bw", svg::rate_unit(max), {}, true, ""};
    for (double v : tl.bandwidth_Bps) p.values.emplace_back(v);
    p.overlay = tl.nfs_bandwidth_Bps;
    p.legend = p.overlay.empty()
                   ? "area: read/write calls"
                   : "area: read/write calls · line: NFS READ/WRITE payload on the wire";
    panels.push_back(std::move(p));
  }
  {
    Panel p{"RPC queue",
            "queue",
            svg::plain_unit("ms"),
            tl.rpc_queue_ms,
            false,
            "RPC queue time not measured (no NFS probes, or no NFS RPCs for this checkpoint)"};
    panels.push_back(std::move(p));
  }
  {
    double max = 0;
    for (const auto& v : tl.tcp_backlog_bytes)
      if (v) max = std::max(max, *v);
    Panel p{"backlog",
            "tcp",
            svg::bytes_unit(max),
            tl.tcp_backlog_bytes,
            false,
            "TCP backlog not measured (no transport probes or no storage connection)"};
    panels.push_back(std::move(p));
  }
  const double panel_h = 90, gap = 46, left = 110, width = 900;
  const double height = 10 + static_cast<double>(panels.size()) * (panel_h + gap);
  std::string out =
      svg::open(width, height,
                fmt::format("{}: checkpoint bandwidth, RPC queue wait and TCP backlog over time",
                            checkpoint_label(cp)));
  for (size_t pi = 0; pi < panels.size(); ++pi) {
    const Panel& p = panels[pi];
    svg::Frame f{
        left, 10 + static_cast<double>(pi) * (panel_h + gap), width - left - 20, panel_h, xt.back(),
        1};
    bool any =
        std::any_of(p.values.begin(), p.values.end(), [](const auto& v) { return v.has_value(); });
    if (!any) {
      out += svg::x_axis(f, xt, fmt::format("time since the checkpoint started ({})", tu.name));
      out +=
          fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                      f.left + f.width / 2, f.top + f.height / 2, escape(p.absent_note));
      out += fmt::format(R"(<text class="label" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)",
                         f.left - 8, f.top + f.height / 2, escape(p.label));
      continue;
    }
    double max = 0;
    for (const auto& v : p.values)
      if (v) max = std::max(max, *v / p.unit.divisor);
    for (double v : p.overlay) max = std::max(max, v / p.unit.divisor);
    const auto yt = svg::ticks(max, 3);
    f.y_max = yt.back();
    out += svg::y_axis(f, yt, fmt::format("{} ({})", p.label, p.unit.name));
    out += svg::x_axis(f, xt, fmt::format("time since the checkpoint started ({})", tu.name));
    const double bin_w = static_cast<double>(tl.bin_ns) / tu.divisor;
    if (p.area) {
      // A step area: each bin's value across its width.
      std::string path = fmt::format("M{:.1f},{:.1f}", f.x(0), f.y(0));
      for (size_t b = 0; b < p.values.size(); ++b) {
        double v = p.values[b].value_or(0) / p.unit.divisor;
        path += fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f}", f.x(bin_w * static_cast<double>(b)),
                            f.y(v), f.x(bin_w * static_cast<double>(b + 1)), f.y(v));
      }
      path += fmt::format(" L{:.1f},{:.1f} Z", f.x(bin_w * static_cast<double>(p.values.size())),
                          f.y(0));
      out += fmt::format(R"(<path class="{}" d="{}"/>)", p.css, path);
      if (!p.overlay.empty()) {
        std::string line;
        for (size_t b = 0; b < p.overlay.size(); ++b) {
          double v = p.overlay[b] / p.unit.divisor;
          line += fmt::format("{}{:.1f},{:.1f} L{:.1f},{:.1f} ", b == 0 ? "M" : "L",
                              f.x(bin_w * static_cast<double>(b)), f.y(v),
                              f.x(bin_w * static_cast<double>(b + 1)), f.y(v));
        }
        out += fmt::format(R"(<path class="wire" d="{}"/>)", line);
      }
      if (!p.legend.empty())
        out +=
            fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)",
                        f.left + f.width, f.top - 2, escape(p.legend));
      continue;
    }
    // A line through the bins that have a value; gaps where none.
    std::string path;
    bool pen = false;
    for (size_t b = 0; b < p.values.size(); ++b) {
      if (!p.values[b]) {
        pen = false;
        continue;
      }
      double x = f.x(bin_w * (static_cast<double>(b) + 0.5));
      double y = f.y(*p.values[b] / p.unit.divisor);
      path += fmt::format("{}{:.1f},{:.1f} ", pen ? "L" : "M", x, y);
      pen = true;
      if (p.css == "queue")
        out += fmt::format(R"(<circle class="queue-dot" cx="{:.1f}" cy="{:.1f}" r="1.8"/>)", x, y);
    }
    out += fmt::format(R"(<path class="{}" d="{}"/>)", p.css, path);
  }
  out += "</svg>";
  return out;
}

// Each node's window of a checkpoint on one time axis: the straggler shows.
std::string nodes_svg(const Report& r, const CheckpointReport& cp) {
  const double row = 22, left = 140, width = 900;
  const double span_ns = static_cast<double>(std::max<uint64_t>(cp.duration_ns(), 1));
  const svg::Unit tu = svg::time_unit(span_ns);
  const auto xt = svg::ticks(span_ns / tu.divisor, 8);
  svg::Frame f{left, 8, 560, row * static_cast<double>(cp.nodes.size()), xt.back(), 1};
  std::string out =
      svg::open(width, f.top + f.height + 42,
                fmt::format("{}: each node's part on one time axis", checkpoint_label(cp)));
  out += svg::x_axis(f, xt, fmt::format("time since the first node started ({})", tu.name));
  for (size_t i = 0; i < cp.nodes.size(); ++i) {
    const NodeCheckpoint& nc = cp.nodes[i];
    const double y = f.top + row * static_cast<double>(i);
    const double s = static_cast<double>(nc.start_wall_ns - cp.start_wall_ns) / tu.divisor;
    const double e = static_cast<double>(nc.end_wall_ns - cp.start_wall_ns) / tu.divisor;
    const bool hot = i == cp.slowest && cp.nodes.size() > 1;
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", f.left - 8,
                       y + 15, h(r.nodes[nc.node].node));
    out +=
        fmt::format(R"(<rect class="bar{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)",
                    hot ? " hot" : "", f.x(s), y + 4, std::max(1.0, f.x(e) - f.x(s)), row - 8);
    out +=
        fmt::format(R"(<text x="{:.1f}" y="{:.1f}"{}>{} · {} · {}</text>)", f.left + f.width + 10,
                    y + 15, hot ? R"( class="hot")" : "", format_duration(nc.duration_ns()),
                    format_bytes(nc.record->bytes),
                    nc.record->bottleneck.empty() ? "no stage measured" : h(nc.record->bottleneck));
  }
  out += "</svg>";
  return out;
}

std::string row(std::initializer_list<std::string> cells,
                std::initializer_list<bool> numeric = {}) {
  std::string out = "<tr>";
  auto num = numeric.begin();
  for (const auto& c : cells) {
    bool is_num = num != numeric.end() && *num;
    if (num != numeric.end()) ++num;
    out += is_num ? "<td class=\"num\">" + c + "</td>" : "<td>" + c + "</td>";
  }
  return out + "</tr>\n";
}

std::string job_section(const Report& r) {
  std::string out = "<section id=\"job\"><h2>Job</h2><table>\n";
  out += row({"command", "<code>" + h(shell_join(r.command)) + "</code>"});
  out += row({"started", h(format_wall_time_utc(r.start_wall_ns))});
  out += row({"duration", format_duration(r.end_wall_ns - r.start_wall_ns)});
  out +=
      "</table>\n<table><tr><th>node</th><th>kernel</th><th>exit</th><th>traced</th><th "
      "class=\"num\">drops</th><th>failure cause</th><th>trace</th></tr>\n";
  for (const auto& n : r.nodes) {
    bool bad = n.exit_signal || (n.exit_code && *n.exit_code != 0);
    std::string cause =
        n.failure ? "<span class=\"hot\">" + h(n.failure->cls) + "</span>" +
                        (n.failure->rule.empty() ? "" : " (rule " + h(n.failure->rule) + ")")
                  : "";
    out += row({h(n.node), h(n.kernel),
                bad ? "<span class=\"hot\">" + h(exit_text(n)) + "</span>" : h(exit_text(n)),
                n.traced ? h(traced_text(n)) : "<span class=\"hot\">no</span>",
                std::to_string(n.drops), cause, "<code>" + h(n.trace_path) + "</code>"},
               {false, false, false, false, true, false, false});
  }
  out += "</table>\n";
  for (const auto& n : r.nodes) {
    if (!n.failure || n.failure->evidence.empty()) continue;
    out += fmt::format("<p>Why {} failed: <b>{}</b></p><pre>", h(n.node), h(n.failure->cls));
    for (const auto& e : n.failure->evidence)
      out += h(evidence_where(e.line, e.source, false)) + ": " + h(e.text) + "\n";
    out += "</pre>\n";
  }
  return out + "</section>\n";
}

std::string cost_section(const Report& r) {
  const CheckpointCost& c = r.cost;
  std::string out = "<section id=\"cost\"><h2>Checkpoint cost to training</h2>";
  if (!c.share) {
    out +=
        "<p class=\"muted\">Unknown: the job's duration is not known (a trace of a job still "
        "running).</p>";
    return out + "</section>\n";
  }
  out += fmt::format(
      "<p><b>{}</b> of the job's wall time was spent blocked in checkpoints: {} of {} per node "
      "({} saving, {} loading).{}</p>",
      format_percent(*c.share), format_duration(c.blocked_ns), format_duration(c.job_wall_ns),
      format_duration(c.save_blocked_ns), format_duration(c.load_blocked_ns),
      r.nodes.size() > 1 && c.worst_node_share
          ? fmt::format(" Worst node: {} ({}).", h(c.worst_node),
                        format_percent(*c.worst_node_share))
          : "");
  out +=
      "<p class=\"muted\">Blocked: the whole checkpoint when a process's main thread moved its "
      "data "
      "(a synchronous save), else only the GPU copy (docs/report.md).</p>";
  return out + "</section>\n";
}

// Handed to the sink a checkpoint at a time.
void checkpoints_section(const Report& r, const TextSink& sink) {
  std::string out = "<section id=\"checkpoints\"><h2>Checkpoints</h2>\n";
  if (r.checkpoints.empty()) {
    sink(out + "<p>No checkpoint I/O was seen.</p></section>\n");
    return;
  }
  out +=
      "<table><tr><th>checkpoint</th><th class=\"num\">start</th><th class=\"num\">duration</th>"
      "<th class=\"num\">bytes</th><th class=\"num\">files</th><th class=\"num\">nodes</th>"
      "<th class=\"num\">bandwidth</th><th class=\"num\">of storage max</th><th>bottleneck</th>"
      "<th>slowest node</th><th>failures</th></tr>\n";
  const std::vector<size_t> failures_of = failures_per_checkpoint(r);
  for (const auto& cp : r.checkpoints) {
    const size_t failures = cp.index < failures_of.size() ? failures_of[cp.index] : 0;
    const std::string& b = cp.slowest_record().bottleneck;
    out += row({fmt::format("<a href=\"#checkpoint-{}\">{}</a>", cp.index, checkpoint_label(cp)),
                format_offset_s(static_cast<int64_t>(cp.start_wall_ns - r.start_wall_ns)),
                format_duration(cp.duration_ns()), format_bytes(cp.bytes), std::to_string(cp.files),
                std::to_string(cp.nodes.size()), format_bandwidth(cp.aggregate_Bps),
                storage_fraction_text(cp, "max unknown"),
                b.empty() ? "<span class=\"muted\">none measured</span>" : "<b>" + h(b) + "</b>",
                h(r.nodes[cp.nodes[cp.slowest].node].node),
                failures ? "<span class=\"hot\">" + std::to_string(failures) + "</span>" : "0"},
               {false, true, true, true, true, true, true, true, false, false, false});
    sink(out);
    out.clear();
  }
  sink("</table>\n");
  for (const auto& cp : r.checkpoints) {
    out.clear();
    const NodeCheckpoint& slow = cp.nodes[cp.slowest];
    out += fmt::format("<article class=\"checkpoint\" id=\"checkpoint-{}\"><h3>{}: {} in {}</h3>\n",
                       cp.index, checkpoint_label(cp), format_bytes(cp.bytes),
                       format_duration(cp.duration_ns()));
    if (cp.storage_max_Bps && cp.storage_bytes)
      out += fmt::format(
          "<p>{} nodes together: {} reached the storage ({} of the bytes moved), {}, {} of the "
          "storage's {} ({}).</p>\n",
          cp.nodes.size(), format_bytes(*cp.storage_bytes), format_bytes(cp.bytes),
          format_bandwidth(cp.storage_Bps.value_or(0)), h(storage_fraction_text(cp, "")),
          format_bandwidth(*cp.storage_max_Bps), h(cp.storage_max_source));
    else if (cp.storage_max_Bps)
      out += fmt::format("<p>{} nodes together: {}, {} of the storage's {} ({}).</p>\n",
                         cp.nodes.size(), format_bandwidth(cp.aggregate_Bps),
                         h(storage_fraction_text(cp, "")), format_bandwidth(*cp.storage_max_Bps),
                         h(cp.storage_max_source));
    if (const std::string via = via_text(cp); !via.empty())
      out += "<p>Bytes moved through: " + h(via) + ".</p>\n";
    out += fmt::format(
        "<figure class=\"waterfall\">{}<figcaption>Stages of {} by busy time (bars) against the "
        "checkpoint's duration (dashed line), solid the stage's own time (busy with no stage below "
        "it busy on the same files), which names the bottleneck (red).</figcaption></figure>\n",
        waterfall_svg(cp, *slow.record, slow.duration_ns()),
        cp.nodes.size() > 1 ? "its slowest node, " + h(r.nodes[slow.node].node) + ","
                            : std::string("this checkpoint"));
    if (cp.nodes.size() > 1) {
      out += fmt::format(
          "<figure class=\"nodes\">{}<figcaption>Each node's part; the slowest (red) sets the "
          "job's stall: "
          "{:.2f}x the median node.</figcaption></figure>\n",
          nodes_svg(r, cp), cp.straggler_ratio);
    }
    out +=
        "<div class=\"scroll\"><table class=\"nodes-table\"><tr><th>node</th><th "
        "class=\"num\">duration</th><th class=\"num\">bytes</th>"
        "<th>bottleneck</th><th>mode</th><th class=\"num\">threads</th>";
    for (auto s : kAllStages) out += fmt::format("<th class=\"num\">{}</th>", s);
    out += "</tr>\n";
    for (const auto& nc : cp.nodes) {
      out += "<tr><td>" + h(r.nodes[nc.node].node) + "</td><td class=\"num\">" +
             format_duration(nc.duration_ns()) + "</td><td class=\"num\">" +
             format_bytes(nc.record->bytes) + "</td><td>" + h(nc.record->bottleneck) +
             "</td><td title=\"" + h(nc.mode_basis) + "\">" + (nc.synchronous ? "sync" : "async") +
             "</td><td class=\"num\">" + std::to_string(nc.writer_threads) + "</td>";
      for (auto name : kAllStages) {
        const StageRecord* s = find_stage(*nc.record, name);
        out += s ? fmt::format("<td class=\"num\" title=\"{}\">{}</td>", h(stage_text(*s)),
                               format_duration(s->busy_ns))
                 : "<td class=\"num muted\">–</td>";
      }
      out += "</tr>\n";
    }
    out += "</table></div></article>\n";
    sink(out);
  }
  sink("</section>\n");
}

// The whole job: each checkpoint as a bar over its window, as high as its
// aggregate bandwidth (saves and loads apart), with its slowest node's RPC
// queue wait (p50) and mean TCP backlog as points on the same time axis, so
// a trend across the job (saves slowing as the storage fills) shows.
std::string overview_svg(const Report& r) {
  const double span_ns =
      static_cast<double>(std::max<uint64_t>(r.end_wall_ns - r.start_wall_ns, 1));
  const svg::Unit tu = svg::time_unit(span_ns);
  const auto xt = svg::ticks(span_ns / tu.divisor, 8);
  double max_bw = 0, max_q = 0, max_b = 0;
  for (const auto& cp : r.checkpoints) {
    max_bw = std::max(max_bw, cp.aggregate_Bps);
    if (const auto& n = cp.slowest_record().nfs) {
      if (n->queue_wait.count > 0)
        max_q = std::max(max_q, static_cast<double>(n->queue_wait.p50_ns));
      if (n->tcp_backlog_mean) max_b = std::max(max_b, *n->tcp_backlog_mean);
    }
  }
  const svg::Unit bwu = svg::rate_unit(max_bw);
  const svg::Unit qu = svg::time_unit(max_q);
  const svg::Unit bu = svg::bytes_unit(max_b);
  const double panel_h = 90, gap = 46, left = 110, width = 900;
  const int panels = 1 + (max_q > 0 ? 1 : 0) + (max_b > 0 ? 1 : 0);
  std::string out =
      svg::open(width, 10 + panels * (panel_h + gap),
                "the job: checkpoint bandwidth, RPC queue wait and TCP backlog per checkpoint");
  const std::string x_label = fmt::format("time since the job started ({})", tu.name);
  auto x_of = [&](uint64_t wall) {
    return static_cast<double>(wall - r.start_wall_ns) / tu.divisor;
  };
  double top = 10;
  {
    const auto yt = svg::ticks(max_bw / bwu.divisor, 3);
    svg::Frame f{left, top, width - left - 20, panel_h, xt.back(), yt.back()};
    out += svg::y_axis(f, yt, fmt::format("data ({})", bwu.name));
    out += svg::x_axis(f, xt, x_label);
    for (const auto& cp : r.checkpoints) {
      const double x0 = f.x(x_of(cp.start_wall_ns));
      const double y = f.y(cp.aggregate_Bps / bwu.divisor);
      out += fmt::format(
          R"(<rect class="bar{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"><title>{}: {} in {}, {}</title></rect>)",
          cp.direction == Direction::Load ? " load" : "", x0, y,
          std::max(2.0, f.x(x_of(cp.end_wall_ns)) - x0), f.top + f.height - y, checkpoint_label(cp),
          format_bytes(cp.bytes), format_duration(cp.duration_ns()),
          format_bandwidth(cp.aggregate_Bps));
    }
    out += fmt::format(
        R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">bars: saves · loads (lighter)</text>)",
        f.left + f.width, f.top - 2);
    top += panel_h + gap;
  }
  auto points = [&](const svg::Unit& u, double max, const char* label, const char* css,
                    const std::function<std::optional<double>(const NfsCheckpointRecord&)>& value) {
    const auto yt = svg::ticks(max / u.divisor, 3);
    svg::Frame f{left, top, width - left - 20, panel_h, xt.back(), yt.back()};
    out += svg::y_axis(f, yt, fmt::format("{} ({})", label, u.name));
    out += svg::x_axis(f, xt, x_label);
    for (const auto& cp : r.checkpoints) {
      const auto& n = cp.slowest_record().nfs;
      if (!n) continue;
      auto v = value(*n);
      if (!v) continue;
      out += fmt::format(
          R"(<circle class="{}" cx="{:.1f}" cy="{:.1f}" r="3"><title>{}: {}</title></circle>)", css,
          f.x(x_of(cp.start_wall_ns + cp.duration_ns() / 2)), f.y(*v / u.divisor),
          checkpoint_label(cp), tick_text(*v / u.divisor, u));
    }
    top += panel_h + gap;
  };
  if (max_q > 0)
    points(qu, max_q, "RPC queue", "queue-dot",
           [](const NfsCheckpointRecord& n) -> std::optional<double> {
             if (n.queue_wait.count == 0) return std::nullopt;
             return static_cast<double>(n.queue_wait.p50_ns);
           });
  if (max_b > 0)
    points(bu, max_b, "backlog", "tcp-dot",
           [](const NfsCheckpointRecord& n) { return n.tcp_backlog_mean; });
  return out + "</svg>";
}

void timeline_section(const Report& r, const TextSink& sink) {
  std::string out = "<section id=\"timeline\"><h2>Timeline</h2>\n";
  if (!r.checkpoints.empty())
    out += fmt::format(
        "<figure class=\"overview\">{}<figcaption>The whole job: each checkpoint's aggregate "
        "bandwidth over its window; its slowest node's RPC queue wait (p50) and mean TCP backlog "
        "toward the storage.</figcaption></figure>\n",
        overview_svg(r));
  out +=
      "<p class=\"muted\">Per checkpoint: its data "
      "bandwidth (all nodes), the queue wait of its NFS RPCs by the time they were sent, and the "
      "TCP backlog toward the storage. Queue wait and backlog rising together is the signature of "
      "a saturated transport.</p>\n";
  sink(out);
  Timeline scratch;
  for (const auto& cp : r.checkpoints)
    sink(fmt::format(
        "<figure class=\"timeline\" id=\"timeline-{}\"><figcaption>{}</figcaption>{}</figure>\n",
        cp.index, checkpoint_label(cp), timeline_svg(cp, timeline_of(r, cp, scratch))));
  sink(r.checkpoints.empty() ? "<p>No checkpoint to show.</p>\n</section>\n" : "</section>\n");
}

std::string failures_section(const Report& r) {
  std::string out = "<section id=\"failures\"><h2>Failures</h2>\n";
  if (r.failures.empty()) return out + "<p class=\"ok\">No failure was seen.</p></section>\n";
  out +=
      "<table><tr><th "
      "class=\"num\">time</th><th>node</th><th>kind</th><th>checkpoint</th><th>evidence</th></"
      "tr>\n";
  for (const auto& f : r.failures)
    out += row(
        {format_offset_s(static_cast<int64_t>(f.wall_ns) - static_cast<int64_t>(r.start_wall_ns)),
         h(r.nodes[f.node].node), "<span class=\"hot\">" + h(f.failure.kind) + "</span>",
         f.checkpoint ? fmt::format("#{}", *f.checkpoint) : "",
         "<code>" + h(f.failure.evidence) + "</code>"},
        {true, false, false, false, false});
  return out + "</table></section>\n";
}

std::string recommendations_section(const Report& r) {
  std::string out = "<section id=\"recommendations\"><h2>Recommendations</h2>\n";
  if (r.recommendations.empty())
    return out + "<p class=\"ok\">No rule of the rule base fired (docs/report.md).</p></section>\n";
  for (const auto& rec : r.recommendations) {
    out += fmt::format(
        "<div class=\"rec\" id=\"rec-{}\"><h3>{} <span "
        "class=\"muted\">({})</span></h3><p>{}</p><ul>",
        h(rec.id), h(rec.title), h(rec.id), h(rec.advice));
    for (const auto& e : rec.evidence)
      out += "<li>" + (e.node.empty() ? "" : h(e.node) + ": ") + h(e.text) + "</li>";
    out += "</ul></div>\n";
  }
  return out + "</section>\n";
}

}  // namespace

void write_report_html(const Report& r, const TextSink& sink) {
  std::string title = r.job_name.empty() ? "checkpoint report" : "checkpoint report: " + r.job_name;
  std::string out = svg::page_preamble();
  out += "<title>" + h(title) + "</title>\n<style>" + std::string(kStyle) +
         "</style></head>\n<body>\n";
  out += fmt::format(
      "<header><h1>{}</h1><p class=\"muted\">{} node{} · {} · ckptscope {}</p></header>\n",
      h(title), r.nodes.size(), r.nodes.size() == 1 ? "" : "s",
      h(format_wall_time_utc(r.start_wall_ns)), h(r.nodes.front().ckptscope_version));
  out += "<section id=\"verdict\"><h2>Verdict</h2><p class=\"verdict\">" + h(r.verdict.text) +
         "</p></section>\n";
  if (!r.warnings.empty()) {
    out += "<section id=\"warnings\"><h2>Warnings</h2><ul>";
    for (const auto& w : r.warnings) out += "<li>" + h(w) + "</li>";
    out += "</ul></section>\n";
  }
  out += job_section(r);
  out += cost_section(r);
  sink(out);
  checkpoints_section(r, sink);
  timeline_section(r, sink);
  sink(failures_section(r));
  sink(recommendations_section(r));
  for (const auto& x : r.extra_sections)
    sink(
        fmt::format("<section id=\"{}\"><h2>{}</h2>\n{}</section>\n", h(x.id), h(x.title), x.html));
  sink(
      "<footer class=\"muted\"><p>Stages, verdict and rules: docs/report.md and docs/stitching.md "
      "of "
      "ckptscope.</p></footer>\n</body></html>\n");
}

std::string report_html(const Report& r) {
  std::string out;
  write_report_html(r, [&out](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace ckpt::report
