#include "analysis/fleet/attribution/attribution.h"

#include <cmath>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/fleet/attribution/duration.h"
#include "analysis/fleet/attribution/render.h"
#include "analysis/format.h"

namespace ckpt::fleet::attribution {
namespace {

using ::testing::HasSubstr;

// Deterministic noise in [0, 1) from a series number and a time.
double uniform(int series, double t) {
  const double x = std::sin(t * 12.9898 + series * 78.233) * 43758.5453;
  return x - std::floor(x);
}
// Roughly normal, mean 0, sd 0.58 (a sum of four uniforms, centred).
double noise(int series, double t) {
  return uniform(series, t) + uniform(series + 100, t) + uniform(series + 200, t) +
         uniform(series + 300, t) - 2;
}

constexpr double kFrom = 1769000000;  // a multiple of 600
constexpr double kTo = kFrom + 2 * 86400;
constexpr double kFailure = kFrom + 86400;  // a multiple of 600: a noisy spike lands on it

struct FakeSeries {
  Labels labels;
  std::function<double(double)> value;
};

// Series of node n1 from memory, sampled on the query's step grid, as a
// Prometheus range query of a plain selector returns them.
std::vector<FakeSeries> node_series() {
  const Labels base = {{"instance", "n1:9100"}, {"job", "node"}};
  auto with_name = [&](const std::string& name, Labels extra = {}) {
    Labels l = base;
    l["__name__"] = name;
    l.insert(extra.begin(), extra.end());
    return l;
  };
  return {
      // Shifts up by 8 sd 10 minutes before the failure, until 5 minutes after.
      {with_name("planted", {{"gpu", "3"}}),
       [](double t) {
         return 10 + noise(1, t) + (t >= kFailure - 600 && t <= kFailure + 300 ? 5 : 0);
       }},
      // Spikes every 10 minutes, one on the failure: a large raw score in
      // every window, so calibration must push it down.
      {with_name("noisy"),
       [](double t) { return noise(2, t) + (std::fmod(t, 600) == 0 ? 80 : 0); }},
      {with_name("calm"), [](double t) { return 5 + 0.5 * noise(3, t); }},
      // A counter at about 100/s: scored through its rate.
      {with_name("bytes_total"), [](double t) { return 100 * (t - kFrom) + 10 * noise(4, t); }},
  };
}

MetricSource memory_source(std::vector<std::string>* queries) {
  MetricSource source;
  source.query_range = [queries](const std::string& promql, const TimeRange& range, double step_s,
                                 const ChunkCallback& on_chunk) -> Expected<void> {
    queries->push_back(promql);
    for (const auto& s : node_series()) {
      SeriesChunk chunk{.labels = s.labels, .samples = {}};
      for (double t = std::ceil(range.from_s / step_s) * step_s; t <= range.to_s; t += step_s)
        chunk.samples.push_back({t, s.value(t)});
      if (auto done = on_chunk(chunk); !done) return done;
    }
    return {};
  };
  source.metric_types = [] {
    return Expected<std::map<std::string, std::string>>(std::map<std::string, std::string>{});
  };
  return source;
}

AttributionOptions options() {
  AttributionOptions o;
  o.range = {.from_s = kFrom, .to_s = kTo};
  o.top_k = 3;
  return o;
}

TEST(Attribution, PlantedShiftRanksFirstAndTheNoisyMetricDoesNot) {
  std::vector<std::string> queries;
  const auto source = memory_source(&queries);
  std::vector<FailureEvent> events = {
      {.node = "n1", .time_unix_s = kFailure, .type = "79", .source = "file", .where = "f:1"}};
  auto result = attribute_events(source, options(), events);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->events.size(), 1u);
  const auto& e = result->events[0];
  EXPECT_EQ(e.calibration_windows, 20u);
  EXPECT_EQ(e.series_seen, 4u);
  EXPECT_EQ(e.series_scored, 4u);
  ASSERT_EQ(e.ranked.size(), 4u);
  EXPECT_EQ(e.ranked[0].metric, "planted");
  EXPECT_EQ(e.ranked[0].labels, (Labels{{"gpu", "3"}, {"job", "node"}}));
  EXPECT_EQ(e.ranked[0].raw.sign, 1);
  EXPECT_GE(e.ranked[0].raw.lead_s, -300);
  EXPECT_LE(e.ranked[0].raw.lead_s, 600);
  EXPECT_LT(e.ranked[0].calibration.p_value, 0.05);
  // The noisy metric has the largest raw score but stands low once calibrated.
  double noisy_raw = 0;
  for (const auto& m : e.ranked) {
    if (m.metric == "noisy") noisy_raw = m.raw.score;
    if (m.metric == "bytes_total") EXPECT_TRUE(m.through_rate);
  }
  EXPECT_GT(noisy_raw, e.ranked[0].raw.score);
  EXPECT_NE(e.ranked[1].metric, "noisy");
  // 20 calibration windows and the failure's, all with the node's selector.
  ASSERT_EQ(queries.size(), 21u);
  EXPECT_EQ(queries[0], node_selector("n1", "instance"));
  EXPECT_DOUBLE_EQ(result->dominance.max_rank1_share, 1.0);
  EXPECT_EQ(result->dominance.max_rank1_metric, "planted");
}

TEST(Attribution, ReproducibleForASeed) {
  std::vector<std::string> queries;
  const auto source = memory_source(&queries);
  std::vector<FailureEvent> events = {{.node = "n1", .time_unix_s = kFailure, .type = "79"}};
  auto a = attribute_events(source, options(), events);
  auto b = attribute_events(source, options(), events);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->events[0].ranked[0].calibration.calibrated,
            b->events[0].ranked[0].calibration.calibrated);
}

TEST(Attribution, NodeSelectorQuotesTheNodeAndLeavesOutBucketsAndFailureMetrics) {
  EXPECT_EQ(node_selector("gpu-1.example", "instance"),
            R"({instance=~"gpu\\-1\\.example(:[0-9]+)?",)"
            R"(__name__!~".+_bucket|DCGM_FI_DEV_XID_ERRORS|ckptscope_failures_total"})");
}

TEST(CalibrationAnchors, SeededInRangeAndAwayFromFailures) {
  WindowSpec w;  // 60 min baseline, 15 min before, 5 min after
  const TimeRange range{.from_s = 0, .to_s = 86400};
  const std::vector<double> failures = {20000, 50000};
  const auto a = calibration_anchors("n1", failures, range, w, 120, 30, 7);
  ASSERT_EQ(a.size(), 30u);
  EXPECT_EQ(a, calibration_anchors("n1", failures, range, w, 120, 30, 7));
  EXPECT_NE(a, calibration_anchors("n1", failures, range, w, 120, 30, 8));
  EXPECT_NE(a, calibration_anchors("n2", failures, range, w, 120, 30, 7));
  const double margin = w.before_s + w.after_s;
  for (double t : a) {
    EXPECT_GE(t, w.span_before_s() + 120);
    EXPECT_LE(t, 86400 - w.after_s);
    for (double f : failures) {
      const bool clear = f < t - w.span_before_s() - margin || f > t + w.after_s + margin;
      EXPECT_TRUE(clear) << "anchor " << t << " near failure " << f;
    }
  }
  // A range shorter than one window has no room.
  EXPECT_TRUE(calibration_anchors("n1", {}, {.from_s = 0, .to_s = 3600}, w, 120, 5, 1).empty());
}

TEST(RankMetrics, UncalibratedSeriesComeLastAndTheBestSeriesStandsForItsMetric) {
  NodeWindow window;
  window["a{gpu=\"0\"}"] = {.labels = {{"__name__", "a"}, {"gpu", "0"}}, .samples = {}};
  window["a{gpu=\"1\"}"] = {.labels = {{"__name__", "a"}, {"gpu", "1"}}, .samples = {}};
  window["b"] = {.labels = {{"__name__", "b"}}, .samples = {}};
  window["c"] = {.labels = {{"__name__", "c"}}, .samples = {}};
  std::map<std::string, RobustScore> scores;
  scores["a{gpu=\"0\"}"].score = 3;
  scores["a{gpu=\"1\"}"].score = 9;
  scores["b"].score = 100;  // never seen in a calibration window
  scores["c"].score = 5;
  const std::map<std::string, std::vector<double>> nulls = {
      {"a{gpu=\"0\"}", {1, 2, 3}}, {"a{gpu=\"1\"}", {1, 2, 3}}, {"c", {4, 5, 6}}};
  const auto ranked = rank_metrics(window, scores, nulls, {});
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].metric, "a");
  EXPECT_EQ(ranked[0].labels.at("gpu"), "1");
  EXPECT_DOUBLE_EQ(ranked[0].calibration.calibrated, 7);  // (9 - 2) / 1
  EXPECT_EQ(ranked[1].metric, "c");
  EXPECT_EQ(ranked[2].metric, "b");
  EXPECT_FALSE(ranked[2].calibrated());
}

TEST(Collect, ChunksOfOneSeriesAreJoinedWithoutTheNodeLabel) {
  NodeWindow window;
  collect(window, {.labels = {{"__name__", "m"}, {"instance", "n:1"}}, .samples = {{1, 1}}},
          "instance");
  collect(window, {.labels = {{"__name__", "m"}, {"instance", "n:1"}}, .samples = {{2, 2}}},
          "instance");
  ASSERT_EQ(window.size(), 1u);
  EXPECT_EQ(window.begin()->first, "m");
  EXPECT_EQ(window.begin()->second.samples.size(), 2u);
}

TEST(Duration, FlagsUseTheSharedParserAndMayAllowZero) {
  EXPECT_DOUBLE_EQ(*parse_duration_flag("90", "--x", false), 90);
  EXPECT_DOUBLE_EQ(*parse_duration_flag("1.5h", "--x", false), 5400);
  EXPECT_DOUBLE_EQ(*parse_duration_flag("1w", "--x", false), 604800);
  for (const char* zero : {"0", "0s", "0m", "0.0h", "00"})
    EXPECT_DOUBLE_EQ(*parse_duration_flag(zero, "--gap", true), 0) << zero;
  for (const char* bad : {"", "m", "15x", "-5m", "ten", "0", "0s", "0.", "1e400"}) {
    auto d = parse_duration_flag(bad, "--baseline", false);
    ASSERT_FALSE(d) << bad;
    EXPECT_THAT(d.error().message, HasSubstr("--baseline '" + std::string(bad) + "'"));
  }
  for (const char* bad : {"0.0.0", "0x", "-0", ".0"})
    EXPECT_FALSE(parse_duration_flag(bad, "--gap", true)) << bad;
}

TEST(Render, TimesAndLeads) {
  EXPECT_EQ(format_unix_time_rfc3339(1769860800), "2026-01-31T12:00:00Z");
  EXPECT_EQ(format_unix_time_rfc3339(NAN), "n/a");
  EXPECT_EQ(signed_duration(390), "+6m30s");
  EXPECT_EQ(signed_duration(-45), "-45s");
  EXPECT_EQ(signed_duration(3725), "+1h02m05s");
}

TEST(Render, JsonCarriesTheRankingAndDominance) {
  std::vector<std::string> queries;
  const auto source = memory_source(&queries);
  auto result =
      attribute_events(source, options(), {{.node = "n1", .time_unix_s = kFailure, .type = "79"}});
  ASSERT_TRUE(result);
  const auto j = nlohmann::json::parse(
      render_json(*result, {.prometheus_url = "http://p:9090", .options = options()}));
  EXPECT_EQ(j["prometheus"], "http://p:9090");
  ASSERT_EQ(j["events"].size(), 1u);
  EXPECT_EQ(j["events"][0]["node"], "n1");
  EXPECT_EQ(j["events"][0]["time"], format_unix_time_rfc3339(kFailure));
  ASSERT_EQ(j["events"][0]["top"].size(), 3u);  // top_k
  EXPECT_EQ(j["events"][0]["top"][0]["metric"], "planted");
  EXPECT_EQ(j["events"][0]["top"][0]["rank"], 1);
  EXPECT_EQ(j["dominance"]["max_rank1_metric"], "planted");
  EXPECT_EQ(j["dominance"]["max_rank1_share"], 1.0);
  EXPECT_TRUE(j["dominance"]["kendall_w"].is_null());  // one failure
  EXPECT_EQ(j["metrics"][0]["metric"], "planted");
  const std::string table =
      render_table(*result, {.prometheus_url = "http://p:9090", .options = options()});
  EXPECT_THAT(table, HasSubstr("planted{gpu=\"3\"}"));
  const std::string page =
      render_html(*result, {.prometheus_url = "http://p:9090", .options = options()});
  EXPECT_THAT(page, HasSubstr("planted"));
}

// A --node-label the series lack (or a node Prometheus does not scrape):
// failures found, none scored. The command exits 1 with this message.
TEST(NothingScored, NamesTheFailuresNodesAndLabel) {
  MetricSource empty;
  empty.query_range = [](const std::string&, const TimeRange&, double,
                         const ChunkCallback&) -> Expected<void> { return {}; };
  empty.metric_types = [] {
    return Expected<std::map<std::string, std::string>>(std::map<std::string, std::string>{});
  };
  auto result = attribute_events(empty, options(),
                                 {{.node = "n2", .time_unix_s = kFailure, .type = "79"},
                                  {.node = "n1", .time_unix_s = kFailure + 7200, .type = "48"}});
  ASSERT_TRUE(result) << result.error().message;
  const auto why = nothing_scored(*result, "hostname");
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("none of the 2 failures could be scored"));
  EXPECT_THAT(*why, HasSubstr("hostname=\"<node>\""));
  EXPECT_THAT(*why, HasSubstr("nodes n1, n2"));
  EXPECT_FALSE(nothing_scored(Attribution{}, "instance"));  // no failures: another error
  std::vector<std::string> queries;
  auto scored = attribute_events(memory_source(&queries), options(),
                                 {{.node = "n1", .time_unix_s = kFailure, .type = "79"}});
  ASSERT_TRUE(scored);
  EXPECT_FALSE(nothing_scored(*scored, "instance"));
}

}  // namespace
}  // namespace ckpt::fleet::attribution
