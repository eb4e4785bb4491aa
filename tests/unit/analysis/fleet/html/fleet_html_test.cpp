#include "analysis/fleet/html/fleet_html.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ckpt::fleet::html {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FleetHtml, PageIsSelfContainedAndEscaped) {
  const std::string page = render_page({"exclusions <top>", "from sacct & sinfo", {"<p>x</p>"}});
  EXPECT_THAT(page, HasSubstr("Content-Security-Policy"));
  EXPECT_THAT(page, HasSubstr("<title>exclusions &lt;top&gt;</title>"));
  EXPECT_THAT(page, HasSubstr("from sacct &amp; sinfo"));
  EXPECT_THAT(page, HasSubstr("<p>x</p>"));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
}

// Issue 22: a node name with a byte that is not UTF-8 (from sinfo, sacct or a
// sessions CSV) was written raw into a page declared UTF-8.
TEST(FleetHtml, InvalidUtf8BecomesReplacementCharacters) {
  const std::string bad = "gpu\xff<01>";
  EXPECT_EQ(escape(bad), "gpu\xEF\xBF\xBD&lt;01&gt;");
  const std::string page =
      render_page({"nodes " + bad, bad, {table({"node"}, {{bad}}), "<p>\xfe</p>"}});
  EXPECT_THAT(page, Not(HasSubstr("\xff")));
  EXPECT_THAT(page, Not(HasSubstr("\xfe")));
  EXPECT_THAT(page, HasSubstr("<td>gpu\xEF\xBF\xBD&lt;01&gt;</td>"));
  EXPECT_THAT(page, HasSubstr("<p>\xEF\xBF\xBD</p>"));
}

TEST(FleetHtml, TableRightAlignsNumericColumnsOnly) {
  const std::string t =
      table({"node", "exclusions", "share"}, {{"gpu01", "12", "41.4%"}, {"gpu<2>", "3", ""}});
  EXPECT_THAT(t, HasSubstr("<th>node</th>"));
  EXPECT_THAT(t, HasSubstr("<th class=\"num\">exclusions</th>"));
  EXPECT_THAT(t, HasSubstr("<td class=\"num\">41.4%</td>"));
  EXPECT_THAT(t, HasSubstr("<td>gpu&lt;2&gt;</td>"));
}

TEST(FleetHtml, LineChartBreaksAtGapsAndDrawsReferences) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  LineChartOptions o;
  o.title = "fraction of maximum";
  o.y_reference_lines = {{1.0, "maximum"}};
  const std::string chart =
      line_chart({{"read", {{0, 0.1}, {1, 0.2}, {2, nan}, {3, 0.3}, {4, 0.2}}}}, o);
  // Two runs of points: two pen-up moves in one path.
  const size_t d = chart.find(" d=\"");
  ASSERT_NE(d, std::string::npos);
  const std::string path = chart.substr(d, chart.find('"', d + 4) - d);
  EXPECT_EQ(count(path, "M"), 2U);
  EXPECT_EQ(count(path, "L"), 2U);
  EXPECT_THAT(chart, HasSubstr("class=\"ref\""));
  EXPECT_THAT(chart, HasSubstr(">maximum</text>"));
  EXPECT_THAT(chart, Not(HasSubstr("nan")));
}

TEST(FleetHtml, LorenzChartHasTheLineOfEquality) {
  LineChartOptions o;
  o.diagonal = true;
  o.y_max = 1;
  const std::string chart = line_chart({{"nodes", {{0, 0}, {0.5, 0.1}, {1, 1}}}}, o);
  EXPECT_THAT(chart, HasSubstr("class=\"diag\""));
}

TEST(FleetHtml, EmptyDataSaysSo) {
  EXPECT_THAT(line_chart({}, {.title = "bandwidth"}), HasSubstr("bandwidth: no data."));
  EXPECT_THAT(bar_chart({}, {.title = "top nodes"}), HasSubstr("top nodes: no data."));
  EXPECT_THAT(heat_map({}, {}, {}, "ranks"), HasSubstr("ranks: no data."));
}

TEST(FleetHtml, TimeAxisIsLabelledInUtc) {
  LineChartOptions o;
  o.x_is_unix_time = true;
  o.x_label = "time";
  // 2026-01-01T00:00:00Z to one hour later.
  const std::string chart = line_chart({{"a", {{1767225600, 1}, {1767229200, 2}}}}, o);
  EXPECT_THAT(chart, HasSubstr(">00:00:00<"));
  EXPECT_THAT(chart, HasSubstr("time (UTC)"));
}

TEST(FleetHtml, BarsAsPercentagesAndHeatMapCells) {
  const std::string bars =
      bar_chart({{"gpu01", 0.5}, {"gpu02", 0.25}},
                {.title = "share", .value_label = "share", .values_are_fractions = true});
  EXPECT_THAT(bars, HasSubstr("gpu01: 50.0%"));
  EXPECT_THAT(bars, HasSubstr("share (%)"));
  const std::string map =
      heat_map({"xid 79 @ n1"}, {"m1", "m2"}, {{1.0, std::nan("")}}, "calibrated score");
  EXPECT_EQ(count(map, "class=\"cell\""), 1U);
  EXPECT_EQ(count(map, "class=\"empty\""), 1U);
}

}  // namespace
}  // namespace ckpt::fleet::html
