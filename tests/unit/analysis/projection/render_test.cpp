// The renderings: the JSON contract's keys (docs/projection.md), the same
// figures in the table, Markdown and HTML, and outside text escaped.
#include <gtest/gtest.h>

#include "analysis/projection/projection.h"
#include "node_runs.h"

namespace ckpt::projection {
namespace {

using test::kMiB;
using test::kSec;
using test::NodeRun;

Projection projected(const std::string& job_name) {
  NodeRun a;
  a.node = "a|<b>";
  a.rpcs = 96;
  std::vector<report::NodeTrace> traces{test::node_trace(a)};
  traces[0].trace.job.name = job_name;
  auto r = report::build_report(std::move(traces), {});
  if (!r) throw std::runtime_error(r.error().message);
  ProjectionOptions o;
  o.nodes = {1, 8};
  o.storage_write_max_Bps = 192.0 * kMiB;
  auto p = project(*r, o);
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(*p);
}

TEST(ProjectionRender, TheJsonHasEveryContractKey) {
  nlohmann::json j = projection_json(projected("train"));
  for (const char* k : {"job", "traces", "nodes", "directions"}) EXPECT_TRUE(j.contains(k)) << k;
  const auto& d = j["directions"][0];
  for (const char* k :
       {"direction", "supported", "why", "notes", "bytes_per_node", "in_flight_per_node",
        "shared_max_Bps", "shared_max_source", "service_ms", "node_delay_ms", "shared_stage",
        "crossover", "forecasts", "measured", "samples"})
    EXPECT_TRUE(d.contains(k)) << k;
  EXPECT_EQ(d["direction"], "save");
  EXPECT_TRUE(d["why"].is_null());
  for (const char* k : {"nodes", "low", "high", "on_grid", "measured"})
    EXPECT_TRUE(d["crossover"].contains(k)) << k;
  const auto& f = d["forecasts"][1];
  EXPECT_EQ(f["nodes"], 8);
  for (const char* k : {"duration_s", "aggregate_Bps", "fraction_of_max", "rpc_execute_ms",
                        "rpc_wait_ms", "rpc_wait_rise_ms", "efficiency", "shared_utilisation"}) {
    ASSERT_TRUE(f.contains(k)) << k;
    for (const char* r : {"value", "low", "high"}) EXPECT_TRUE(f[k].contains(r)) << k << "." << r;
  }
  EXPECT_EQ(f["side"], "shared");
  EXPECT_EQ(f["bottleneck"], "rpc_rtt");
  EXPECT_EQ(f["stages"][0]["stage"], "rpc_rtt");
  const auto& m = d["measured"][0];
  for (const char* k : {"nodes", "checkpoints", "duration_s", "aggregate_Bps", "rpcs",
                        "rpc_execute_ms", "rpc_queue_ms", "rpc_rtt_ms", "rpc_wait_ms",
                        "rpc_wait_rise_ms", "efficiency", "side", "bottleneck"})
    EXPECT_TRUE(m.contains(k)) << k;
  EXPECT_EQ(d["samples"][0]["node"], "a|<b>");
  EXPECT_EQ(d["samples"][0]["rpcs"], 96);
}

TEST(ProjectionRender, TheTableShowsEachForecastAndTheCrossover) {
  std::string t = projection_table(projected("train"));
  EXPECT_NE(t.find("scale projection of train"), std::string::npos) << t;
  EXPECT_NE(t.find("save: 96.0 MiB per node, 16.0 RPCs in flight"), std::string::npos) << t;
  EXPECT_NE(t.find("(--storage-write-max)"), std::string::npos) << t;
  EXPECT_NE(t.find("  8  4.10 s"), std::string::npos) << t;
  EXPECT_NE(t.find("the shared side holds it back from N="), std::string::npos) << t;
  EXPECT_NE(t.find("measured: not at the scales traced"), std::string::npos) << t;
}

TEST(ProjectionRender, OutsideTextIsEscaped) {
  Projection p = projected("job<script>|x");
  std::string page = projection_html_page(p);
  EXPECT_EQ(page.find("<script>"), std::string::npos);
  EXPECT_NE(page.find("job&lt;script&gt;|x"), std::string::npos);
  p.directions[0].notes.push_back("a | b\nc");
  std::string md = projection_markdown(p);
  EXPECT_NE(md.find("a \\| b c"), std::string::npos) << md;
  p.directions[0].notes.back() = "left out: <b>";
  EXPECT_NE(projection_html_section(p).find("left out: &lt;b&gt;"), std::string::npos);
}

TEST(ProjectionRender, AnUnsupportedDirectionSaysWhy) {
  Projection p = projected("train");
  p.directions[0].supported = false;
  p.directions[0].why = "no NFS WRITE RPC carried these checkpoints' pages";
  std::string t = projection_table(p);
  EXPECT_NE(t.find("save: no forecast: no NFS WRITE RPC"), std::string::npos) << t;
  EXPECT_TRUE(projection_json(p)["directions"][0]["why"].is_string());
}

}  // namespace
}  // namespace ckpt::projection
