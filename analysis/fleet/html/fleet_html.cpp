#include "analysis/fleet/html/fleet_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>

#include "analysis/report/svg.h"
#include "json/json_io.h"

namespace ckpt::fleet::html {

namespace svg = ckpt::report::svg;

namespace {

// The report's palette (analysis/report/report_html.cpp), so fleet pages and
// the post-run report read alike; a series cycles through --s0..--s5.
constexpr std::string_view kStyle = R"(
:root{--fg:#1b1d21;--bg:#ffffff;--muted:#5f6670;--grid:#e3e6ea;--panel:#f6f7f9;--bar:#3f72c4;
--hot:#c8372d;--s0:#3f72c4;--s1:#c77700;--s2:#17806f;--s3:#c8372d;--s4:#7a4fc4;--s5:#5f6670}
@media (prefers-color-scheme:dark){:root{--fg:#e7e9ec;--bg:#16181b;--muted:#a0a7b1;--grid:#30343a;
--panel:#1f2226;--bar:#79a6f2;--hot:#ff7b6e;--s0:#79a6f2;--s1:#ffb545;--s2:#4fd2bb;--s3:#ff7b6e;
--s4:#b99cf5;--s5:#a0a7b1}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--grid)}
table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px;border-bottom:1px solid var(--grid);
text-align:left;vertical-align:top}th{color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow-x:auto}.muted{color:var(--muted)}
.figures{display:flex;flex-wrap:wrap;gap:12px;margin:10px 0}
.figure{background:var(--panel);padding:8px 14px;min-width:120px}
.figure .value{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}
.figure .name{color:var(--muted);font-size:12.5px}
figure{margin:8px 0 16px}figcaption{color:var(--muted);font-size:12.5px}
svg{max-width:100%;height:auto;font-size:11px}
svg text{fill:var(--fg)}svg .tick{fill:var(--muted)}svg .label{fill:var(--muted);font-size:11.5px}
svg .axis{stroke:var(--muted);stroke-width:1}svg .grid{stroke:var(--grid);stroke-width:1}
svg .bar{fill:var(--bar)}svg .ref{stroke:var(--hot);stroke-dasharray:5 3;stroke-width:1.2}
svg .ref-label{fill:var(--hot)}svg .diag{stroke:var(--muted);stroke-dasharray:3 3}
svg .s0{stroke:var(--s0)}svg .s1{stroke:var(--s1)}svg .s2{stroke:var(--s2)}
svg .s3{stroke:var(--s3)}svg .s4{stroke:var(--s4)}svg .s5{stroke:var(--s5)}
svg .line{fill:none;stroke-width:1.6}svg .swatch{stroke-width:3}
svg .cell{fill:var(--hot)}svg .empty{fill:var(--panel)}
)";

bool looks_numeric(std::string_view cell) {
  if (cell.empty()) return false;
  std::string_view s = cell;
  // Units and percent signs after a number still read as numbers.
  const size_t end = s.find_first_not_of("+-0123456789.eE");
  if (end == 0) return false;
  double v = 0;
  auto [ptr, ec] =
      std::from_chars(s.data(), s.data() + (end == std::string_view::npos ? s.size() : end), v);
  return ec == std::errc();
}

std::string utc_label(double unix_s, double span_s) {
  const auto t = static_cast<std::time_t>(std::llround(unix_s));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  // Days apart: the date; hours apart: the date and time; less: the time.
  const char* format = span_s > 4 * 86400.0  ? "%Y-%m-%d"
                       : span_s > 6 * 3600.0 ? "%m-%d %H:%M"
                                             : "%H:%M:%S";
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

struct Extent {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  [[nodiscard]] bool empty() const { return min > max; }
};

}  // namespace

// Node names, reasons and file names come from scheduler records and logs:
// bytes, not UTF-8. Invalid sequences become U+FFFD before escaping, so the
// page (declared UTF-8) is valid whatever the records held.
std::string escape(std::string_view text) { return svg::escape(valid_utf8(text)); }

std::string render_page(const Page& page) {
  std::string out = svg::page_preamble();
  out += "<title>" + escape(page.title) + "</title>\n<style>" + std::string(kStyle) +
         "</style></head>\n<body>\n";
  out += "<header><h1>" + escape(page.title) + "</h1>";
  if (!page.subtitle.empty()) out += "<p class=\"muted\">" + escape(page.subtitle) + "</p>";
  out += "</header>\n";
  for (const auto& s : page.sections) out += s;
  out +=
      "<footer class=\"muted\"><p>ckptscope fleet analyses: docs/fleet.md.</p></footer>\n"
      "</body></html>\n";
  // Sections are ready HTML from callers: any raw byte they let through
  // still leaves a valid UTF-8 page.
  return valid_utf8(out);
}

std::string section(std::string_view heading, std::string_view explanation,
                    std::string_view body_html) {
  std::string out = "<section><h2>" + escape(heading) + "</h2>";
  if (!explanation.empty()) out += "<p class=\"muted\">" + escape(explanation) + "</p>";
  out += body_html;
  return out + "</section>\n";
}

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  // A column is numeric when every non-empty cell in it is.
  std::vector<bool> numeric(header.size(), true);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size() && i < numeric.size(); ++i)
      if (!row[i].empty() && !looks_numeric(row[i])) numeric[i] = false;
  std::string out = "<div class=\"scroll\"><table><thead><tr>";
  for (size_t i = 0; i < header.size(); ++i)
    out += fmt::format("<th{}>{}</th>", numeric[i] && !rows.empty() ? " class=\"num\"" : "",
                       escape(header[i]));
  out += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i)
      out += fmt::format("<td{}>{}</td>", i < numeric.size() && numeric[i] ? " class=\"num\"" : "",
                         escape(row[i]));
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

std::string figures(const std::vector<std::pair<std::string, std::string>>& label_values) {
  std::string out = "<div class=\"figures\">";
  for (const auto& [label, value] : label_values)
    out += "<div class=\"figure\"><div class=\"value\">" + escape(value) +
           "</div><div class=\"name\">" + escape(label) + "</div></div>";
  return out + "</div>";
}

std::string line_chart(const std::vector<Series>& series, const LineChartOptions& options) {
  Extent xs, ys;
  for (const auto& s : series)
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(y)) continue;
      xs.add(x);
      ys.add(y);
    }
  if (xs.empty()) {
    return "<p class=\"muted\">" + escape(options.title) + ": no data.</p>";
  }
  double x0 = xs.min, x1 = xs.max;
  if (options.x_min != 0 || options.x_max != 0) {
    x0 = options.x_min;
    x1 = options.x_max;
  }
  if (!(x1 > x0)) x1 = x0 + 1;
  double y_top = options.y_max > 0 ? options.y_max : std::max(ys.max, 0.0);
  for (const auto& [v, label] : options.y_reference_lines) y_top = std::max(y_top, v);
  if (!(y_top > 0)) y_top = 1;
  const auto y_ticks = svg::ticks(y_top, 5);
  // The legend: four entries to a row (rounded up), above the plot.
  const size_t legend_rows = series.size() > 1 ? (series.size() + 3) / 4 : 0;
  const double width = 900, legend_h = 18.0 * static_cast<double>(legend_rows);
  svg::Frame f{70, 14 + legend_h, 800, 240, 0, 0};
  f.y_max = y_ticks.back();
  // The x axis: offsets from x0 (svg::Frame starts at 0), labelled in the
  // data's own terms.
  std::vector<double> x_ticks = svg::ticks(x1 - x0, 6);
  f.x_max = options.x_is_unix_time ? x1 - x0 : x_ticks.back();
  const double height = f.top + f.height + 44;
  std::string out = "<figure>" + svg::open(width, height, options.title);
  out += svg::y_axis(f, y_ticks, options.y_label);
  const double base = f.top + f.height;
  out += fmt::format(R"(<line class="axis" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)",
                     f.left, base, f.left + f.width, base);
  for (double t : x_ticks) {
    if (t > f.x_max + 1e-9 * f.x_max) break;
    const double x = f.x(t);
    out += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", x,
                       f.top, x, base);
    const std::string label =
        options.x_is_unix_time ? utc_label(x0 + t, x1 - x0) : svg::tick_label(x0 + t);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                       x, base + 14, escape(label));
  }
  out += fmt::format(R"(<text class="label" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                     f.left + f.width / 2, base + 32,
                     escape(options.x_is_unix_time ? options.x_label + " (UTC)" : options.x_label));
  if (options.diagonal) {
    const double d = std::min(f.x_max + x0, f.y_max);
    out += fmt::format(R"(<line class="diag" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)",
                       f.x(0), f.y(x0), f.x(d - x0), f.y(d));
  }
  for (const auto& [v, label] : options.y_reference_lines) {
    out += fmt::format(R"(<line class="ref" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)",
                       f.left, f.y(v), f.left + f.width, f.y(v));
    out +=
        fmt::format(R"(<text class="ref-label" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)",
                    f.left + f.width - 4, f.y(v) - 4, escape(label));
  }
  for (size_t i = 0; i < series.size(); ++i) {
    // A gap (NaN) breaks the line rather than joining across it.
    std::string path;
    bool pen_down = false;
    for (const auto& [x, y] : series[i].points) {
      if (!std::isfinite(y) || x < x0 || x > x1) {
        pen_down = false;
        continue;
      }
      path += fmt::format("{}{:.1f},{:.1f} ", pen_down ? "L" : "M", f.x(x - x0),
                          f.y(std::min(y, f.y_max)));
      pen_down = true;
    }
    out += fmt::format(R"(<path class="line s{}" d="{}"><title>{}</title></path>)", i % 6, path,
                       escape(series[i].name));
    if (series.size() > 1) {
      const double lx = f.left + 200.0 * static_cast<double>(i % 4);
      const size_t legend_row = i / 4;
      const double ly = 12 + 18.0 * static_cast<double>(legend_row);
      out += fmt::format(
          R"(<line class="swatch s{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)"
          R"(<text x="{:.1f}" y="{:.1f}">{}</text>)",
          i % 6, lx, ly - 4, lx + 18, ly - 4, lx + 24, ly, escape(series[i].name));
    }
  }
  out += "</svg>";
  if (!options.title.empty()) out += "<figcaption>" + escape(options.title) + "</figcaption>";
  return out + "</figure>";
}

std::string bar_chart(const std::vector<std::pair<std::string, double>>& bars,
                      const BarChartOptions& options) {
  if (bars.empty()) return "<p class=\"muted\">" + escape(options.title) + ": no data.</p>";
  double top = 0;
  for (const auto& [label, v] : bars)
    if (std::isfinite(v)) top = std::max(top, v);
  if (options.values_are_fractions) top = std::max(top, 1e-9);
  const double scale = options.values_are_fractions ? 100 : 1;
  const auto t = svg::ticks(std::max(top * scale, 1e-9), 5);
  const double row = 20;
  svg::Frame f{200, 8, 620, row * static_cast<double>(bars.size()), 0, 0};
  f.x_max = t.back();
  const double height = f.top + f.height + 42;
  std::string out = "<figure>" + svg::open(900, height, options.title);
  out += svg::x_axis(
      f, t, options.values_are_fractions ? options.value_label + " (%)" : options.value_label);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = f.top + row * static_cast<double>(i);
    const double v = std::isfinite(bars[i].second) ? bars[i].second * scale : 0;
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", f.left - 8,
                       y + 14, escape(bars[i].first));
    out += fmt::format(
        R"(<rect class="bar" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"><title>{}: {}</title></rect>)",
        f.left, y + 3, std::max(0.0, f.x(v) - f.left), row - 6, escape(bars[i].first),
        options.values_are_fractions ? fmt::format("{:.1f}%", v) : svg::tick_label(v));
  }
  out += "</svg>";
  if (!options.title.empty()) out += "<figcaption>" + escape(options.title) + "</figcaption>";
  return out + "</figure>";
}

std::string heat_map(const std::vector<std::string>& row_labels,
                     const std::vector<std::string>& column_labels,
                     const std::vector<std::vector<double>>& values, std::string_view title) {
  if (row_labels.empty() || column_labels.empty())
    return "<p class=\"muted\">" + escape(title) + ": no data.</p>";
  const double cell = 16, left = 220, top = 150;
  const double width = left + cell * static_cast<double>(column_labels.size()) + 20;
  const double height = top + cell * static_cast<double>(row_labels.size()) + 10;
  std::string out = "<figure><div class=\"scroll\">" + svg::open(width, height, title);
  for (size_t c = 0; c < column_labels.size(); ++c) {
    const double x = left + cell * static_cast<double>(c) + cell / 2;
    out += fmt::format(
        R"svg(<text x="{:.1f}" y="{:.1f}" transform="rotate(-60 {:.1f} {:.1f})">{}</text>)svg", x,
        top - 6, x, top - 6, escape(column_labels[c]));
  }
  for (size_t r = 0; r < row_labels.size(); ++r) {
    const double y = top + cell * static_cast<double>(r);
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", left - 6,
                       y + cell - 4, escape(row_labels[r]));
    for (size_t c = 0; c < column_labels.size(); ++c) {
      const double v = r < values.size() && c < values[r].size()
                           ? values[r][c]
                           : std::numeric_limits<double>::quiet_NaN();
      const double x = left + cell * static_cast<double>(c);
      if (!std::isfinite(v)) {
        out += fmt::format(
            R"(<rect class="empty" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)", x, y,
            cell - 1, cell - 1);
        continue;
      }
      out += fmt::format(
          R"(<rect class="cell" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill-opacity="{:.2f}"><title>{} · {}: {:.3g}</title></rect>)",
          x, y, cell - 1, cell - 1, 0.08 + 0.92 * std::clamp(v, 0.0, 1.0), escape(row_labels[r]),
          escape(column_labels[c]), v);
    }
  }
  out += "</svg></div>";
  if (!title.empty()) out += "<figcaption>" + escape(title) + "</figcaption>";
  return out + "</figure>";
}

}  // namespace ckpt::fleet::html
