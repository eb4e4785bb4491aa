// The `--html` page of every `ckptscope fleet` command: one self-contained
// file (inline CSS and SVG, no script, no request), light and dark, in the
// look of the post-run report (analysis/report). Charts are drawn with the
// report's SVG primitives (analysis/report/svg.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckpt::fleet::html {

// Text for HTML content and attribute values.
std::string escape(std::string_view text);

// A page: a title, a line under it (what was analysed, from where, when) and
// sections of ready HTML (from the functions below).
struct Page {
  std::string title;
  std::string subtitle;
  std::vector<std::string> sections;
};
std::string render_page(const Page& page);

// <section> with an <h2> heading, an optional explanatory paragraph (plain
// text, escaped) and body HTML.
std::string section(std::string_view heading, std::string_view explanation,
                    std::string_view body_html);

// A table; every cell is plain text (escaped). Cells that parse as numbers are
// right-aligned.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);

// Key figures shown large at the top of a page: {label, value}.
std::string figures(const std::vector<std::pair<std::string, std::string>>& label_values);

struct Series {
  std::string name;                               // legend entry
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct LineChartOptions {
  std::string title;            // for screen readers and above the chart
  std::string x_label;          // "time", "share of nodes"
  std::string y_label;          // "fraction of maximum"
  bool x_is_unix_time = false;  // x in Unix seconds: ticks as UTC dates/times
  double y_max = 0;             // 0 = from the data
  double x_min = 0, x_max = 0;  // both 0 = from the data
  std::vector<std::pair<double, std::string>> y_reference_lines;  // e.g. {1.0, "maximum"}
  bool diagonal = false;  // draw y = x (a Lorenz curve's line of equality)
};
std::string line_chart(const std::vector<Series>& series, const LineChartOptions& options);

// Horizontal bars: {label, value}, drawn in the given order.
struct BarChartOptions {
  std::string title;
  std::string value_label;            // "exclusions", "share of rank-1 places"
  bool values_are_fractions = false;  // show values as percentages
};
std::string bar_chart(const std::vector<std::pair<std::string, double>>& bars,
                      const BarChartOptions& options);

// A heat map: rows x columns of values in [0, 1] (NaN = empty cell), e.g.
// failures x metrics of an attribution.
std::string heat_map(const std::vector<std::string>& row_labels,
                     const std::vector<std::string>& column_labels,
                     const std::vector<std::vector<double>>& values, std::string_view title);

}  // namespace ckpt::fleet::html
