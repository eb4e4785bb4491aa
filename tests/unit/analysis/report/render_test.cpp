// The three renderings of one report: the JSON contract's keys and values,
// an HTML page that needs nothing from the network and escapes what the
// traces hold, Markdown tables that a stray pipe cannot break.
#include <gtest/gtest.h>

#include "analysis/report/report.h"
#include "json/json_io.h"
#include "trace_builder.h"

namespace ckpt::report {
namespace {

using nlohmann::json;
using test::kMs;
using test::kSec;
using test::kWall0;
using test::must_build;
using test::TraceBuilder;

Report sample() {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  a.trace().job.command = {"python", "train.py", "--tag=<script>alert(1)</script>"};
  auto& c = a.checkpoint(Direction::Save, 10 * kSec, 2 * kSec, 1ull << 30);
  c.bottleneck = "host_io";
  TraceBuilder::stage(c, kStageHostIo, 1ull << 30, 2 * kSec, 1e9).exclusive_ns = 1500 * kMs;
  TraceBuilder::stage(c, kStageSerialize, 1ull << 30, 500 * kMs);  // as from an older trace
  c.failures.push_back({"enospc", c.start_ns + kSec, "write(/ckpt/a|b.pt) = -ENOSPC", 1});
  TraceBuilder b("node|b", 7 * kSec, 0, 100 * kSec);
  b.checkpoint(Direction::Save, 10 * kSec, kSec, 1ull << 30);
  b.trace().job.exit_code = 1;
  JobFailure f;
  f.cls = "cuda_oom";
  f.rule = "cuda_oom";
  f.evidence.push_back({12, "torch.OutOfMemoryError: CUDA out of memory", "/logs/train.log"});
  b.trace().job.failure = f;
  ReportOptions o;
  o.storage_write_max_Bps = 4e9;
  return must_build({a.node_trace(), b.node_trace()}, o);
}

TEST(ReportJson, TheContractsKeysAndValues) {
  json j = report_json(sample());
  EXPECT_EQ(j["report_version"], 1);
  for (const char* key :
       {"job", "checkpoints", "failures", "cost", "verdict", "recommendations", "warnings"})
    EXPECT_TRUE(j.contains(key)) << key;
  const json& job = j["job"];
  EXPECT_EQ(job["name"], "train");
  EXPECT_EQ(job["failed"], true);
  EXPECT_EQ(job["exit_code"], 1);
  EXPECT_EQ(job["failure"]["class"], "cuda_oom");
  EXPECT_EQ(job["failure"]["node"], "node|b");
  EXPECT_EQ(job["failure"]["evidence"][0]["line"], 12);
  EXPECT_EQ(job["start_wall_ns"], kWall0);
  ASSERT_EQ(job["nodes"].size(), 2u);
  EXPECT_EQ(job["nodes"][1]["wall_offset_ns"], static_cast<int64_t>(kWall0 - 7 * kSec));

  ASSERT_EQ(j["checkpoints"].size(), 1u);
  const json& cp = j["checkpoints"][0];
  EXPECT_EQ(cp["direction"], "save");
  EXPECT_EQ(cp["nodes"], 2);
  EXPECT_EQ(cp["bytes"], 2ull << 30);
  EXPECT_EQ(cp["start_offset_ns"], 10 * kSec);
  EXPECT_EQ(cp["duration_ns"], 2 * kSec);
  EXPECT_DOUBLE_EQ(cp["aggregate_bandwidth_Bps"].get<double>(), static_cast<double>(1ull << 30));
  EXPECT_DOUBLE_EQ(cp["fraction_of_storage_max"].get<double>(),
                   static_cast<double>(1ull << 30) / 4e9);
  EXPECT_EQ(cp["slowest_node"], "node-a");
  EXPECT_EQ(cp["bottleneck"], "host_io");
  EXPECT_EQ(cp["stages"][0]["name"], "serialize");
  EXPECT_TRUE(cp["stages"][0]["exclusive_ns"].is_null()) << "not known: null, never 0";
  EXPECT_EQ(cp["stages"][1]["exclusive_ns"], 1500 * kMs);
  EXPECT_DOUBLE_EQ(cp["stages"][1]["fraction_of_max"].get<double>(),
                   static_cast<double>(1ull << 30) / 2e9);
  EXPECT_EQ(cp["absent_stages"].size(), 7u);
  EXPECT_TRUE(cp["storage_bytes"].is_null()) << "no storage stage: not known";
  EXPECT_EQ(cp["per_node"][1]["bottleneck"], nullptr);  // node|b measured no stage
  EXPECT_EQ(cp["per_node"][0]["mode"], "synchronous");
  EXPECT_EQ(cp["failures"], json::array({"enospc"}));
  EXPECT_TRUE(cp["timeline"]["rpc_queue_ms"].is_null());
  EXPECT_EQ(cp["timeline"]["bandwidth_Bps"].size(), 120u);

  EXPECT_EQ(j["failures"][0]["kind"], "enospc");
  EXPECT_EQ(j["failures"][0]["checkpoint"], 1);
  EXPECT_EQ(j["failures"][0]["offset_ns"], 11 * kSec);
  EXPECT_EQ(j["verdict"]["bottleneck"], "host_io");
  EXPECT_EQ(j["cost"]["blocked_ns"], 1500 * kMs);  // (2 s + 1 s) / 2 nodes
  bool storage_full = false;
  for (const auto& rec : j["recommendations"])
    storage_full = storage_full || rec["id"] == "storage_full";
  EXPECT_TRUE(storage_full);
}

TEST(ReportHtml, NeedsNothingFromTheNetworkAndRunsNoScript) {
  std::string html = report_html(sample());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  for (const char* banned : {"http://", "https://", "<script", "<link", "src=", "@import", "url("})
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  EXPECT_NE(html.find("prefers-color-scheme:dark"), std::string::npos);
}

TEST(ReportHtml, HasEverySectionAndChart) {
  std::string html = report_html(sample());
  for (const char* id :
       {"id=\"verdict\"", "id=\"job\"", "id=\"cost\"", "id=\"checkpoints\"", "id=\"timeline\"",
        "id=\"failures\"", "id=\"recommendations\"", "class=\"waterfall\"", "class=\"nodes\"",
        "id=\"checkpoint-1\"", "id=\"rec-storage_full\"", "class=\"overview\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  // Units on every axis.
  EXPECT_NE(html.find("busy time (s)"), std::string::npos);
  // The waterfall: host_io's own time solid inside its busy bar; serialize,
  // without one, one solid bar.
  EXPECT_NE(html.find("<title>host_io: 1.50 s own time</title>"), std::string::npos);
  EXPECT_NE(html.find(">2.00 s (1.50 s own) · "), std::string::npos);
  EXPECT_EQ(html.find("serialize: 500 ms own"), std::string::npos);
  EXPECT_NE(html.find("data (GiB/s)"), std::string::npos);
  EXPECT_NE(html.find("time since the checkpoint started (s)"), std::string::npos);
  EXPECT_NE(html.find("RPC queue time not measured"), std::string::npos);
}

TEST(ReportHtml, EscapesWhatTheTracesHold) {
  std::string html = report_html(sample());
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(ReportMarkdown, TablesSurviveAPipeInAName) {
  std::string md = report_markdown(sample());
  EXPECT_NE(md.find("# Checkpoint report: train"), std::string::npos);
  EXPECT_NE(md.find("| node\\|b |"), std::string::npos);
  EXPECT_NE(md.find("/ckpt/a\\|b.pt"), std::string::npos);
  for (const char* section : {"## Verdict", "## Job", "## Checkpoint cost to training",
                              "## Checkpoints", "## Failures", "## Recommendations", "### save #1"})
    EXPECT_NE(md.find(section), std::string::npos) << section;
  EXPECT_NE(md.find("| **host_io** | 1.00 GiB | 2.00 s | 1.50 s | 512 MiB/s | 954 MiB/s | 53.7% |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| serialize | 1.00 GiB | 500 ms |  | 2.00 GiB/s | unknown |  |"),
            std::string::npos)
      << "an own time not known is a blank cell";
  EXPECT_NE(md.find("host_io moved 1.00 GiB in 2.00 s busy (1.50 s of it its own, 512 MiB/s)"),
            std::string::npos)
      << md;
}

// The file layer's facts: how each node traced its file I/O, and which
// interfaces moved a checkpoint's bytes (all nodes summed).
Report file_layer_sample() {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  a.trace().job.probe_mode = "file_layer";
  auto& ca = a.checkpoint(Direction::Load, 10 * kSec, 2 * kSec, 3ull << 20);
  ca.bytes_by_via = {{"syscall", 1ull << 20}, {"mmap", 2ull << 20}};
  TraceBuilder b("node-b", 7 * kSec, 0, 100 * kSec);
  b.trace().job.probe_mode = "syscall";
  auto& cb = b.checkpoint(Direction::Load, 10 * kSec, kSec, 1ull << 20);
  cb.bytes_by_via = {{"mmap", 1ull << 20}};
  return must_build({a.node_trace(), b.node_trace()}, ReportOptions{});
}

TEST(ReportJson, ProbeModePerNodeAndBytesByVia) {
  json j = report_json(file_layer_sample());
  EXPECT_EQ(j["job"]["nodes"][0]["probe_mode"], "file_layer");
  EXPECT_EQ(j["job"]["nodes"][1]["probe_mode"], "syscall");
  const json& cp = j["checkpoints"][0];
  EXPECT_EQ(cp["bytes_by_via"], json({{"syscall", 1ull << 20}, {"mmap", 3ull << 20}}));
  EXPECT_EQ(cp["per_node"][1]["bytes_by_via"], json({{"mmap", 1ull << 20}}));
  EXPECT_EQ(report_json(sample())["checkpoints"][0]["bytes_by_via"], json::object());
}

TEST(ReportMarkdown, ProbeModeAndViaAreShown) {
  std::string md = report_markdown(file_layer_sample());
  EXPECT_NE(md.find("| yes (file_layer) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| yes (syscall) |"), std::string::npos) << md;
  EXPECT_NE(md.find("Bytes moved through: syscall 1.00 MiB, mmap 3.00 MiB."), std::string::npos)
      << md;
  std::string plain = report_markdown(sample());
  EXPECT_EQ(plain.find("Bytes moved through"), std::string::npos) << "syscalls only: no line";
  std::string html = report_html(file_layer_sample());
  EXPECT_NE(html.find("<p>Bytes moved through: syscall 1.00 MiB, mmap 3.00 MiB.</p>"),
            std::string::npos);
  EXPECT_NE(html.find(">yes (file_layer)<"), std::string::npos);
}

// Issue 36: `report` writes HTML and JSON piece by piece, and builds each
// checkpoint's timeline only when its turn comes. Several checkpoints, on
// two nodes, with a failure: the pieces joined are byte for byte the whole
// renderings, kept timelines or not.
std::vector<NodeTrace> several_checkpoints() {
  TraceBuilder a("node-a", kSec, 0, 200 * kSec);
  TraceBuilder b("node-b", 3 * kSec, 5 * kMs, 200 * kSec);
  for (uint64_t i = 0; i < 6; ++i) {
    const Direction d = i % 3 == 2 ? Direction::Load : Direction::Save;
    auto& ca = a.checkpoint(d, (10 + 20 * i) * kSec, 2 * kSec, 1ull << 28);
    TraceBuilder::stage(ca, kStageHostIo, 1ull << 28, 2 * kSec, 1e9);
    if (i == 3)
      ca.failures.push_back({"enospc", ca.start_ns + kSec, "write(/ckpt/x) = -ENOSPC", 1});
    b.checkpoint(d, (10 + 20 * i) * kSec, (1 + i % 2) * kSec, 1ull << 28);
  }
  return {a.node_trace(), b.node_trace()};
}

TEST(ReportStreaming, ThePiecesJoinedAreTheWholeRenderings) {
  ReportOptions kept;
  kept.storage_write_max_Bps = 4e9;
  ReportOptions built_late = kept;
  built_late.keep_timelines = false;
  const Report whole = must_build(several_checkpoints(), kept);
  const Report late = must_build(several_checkpoints(), built_late);
  ASSERT_GE(whole.checkpoints.size(), 6u);
  for (const auto& cp : late.checkpoints)
    EXPECT_TRUE(cp.timeline.bandwidth_Bps.empty()) << "a timeline kept against keep_timelines";

  const std::string html = report_html(whole);
  EXPECT_EQ(report_html(late), html);
  std::string streamed;
  write_report_html(late, [&](std::string_view piece) { streamed += piece; });
  EXPECT_EQ(streamed, html);

  const json extra = {{"projection", {{"nodes", {8, 64}}, {"note", "a\nb"}}}};
  json with_extra = report_json(whole);
  with_extra["projection"] = extra["projection"];
  EXPECT_EQ(report_json(late), report_json(whole));
  for (const Report* r : {&whole, &late}) {
    streamed.clear();
    write_report_json(*r, extra, [&](std::string_view piece) { streamed += piece; });
    EXPECT_EQ(streamed, dump_json(with_extra, 2) + "\n");
    streamed.clear();
    write_report_json(*r, json::object(), [&](std::string_view piece) { streamed += piece; });
    EXPECT_EQ(streamed, dump_json(report_json(whole), 2) + "\n");
  }
  EXPECT_EQ(report_markdown(late), report_markdown(whole));
}

TEST(ReportStreaming, NoCheckpointStreamsTheSameToo) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  ReportOptions o;
  o.keep_timelines = false;
  const Report r = must_build({a.node_trace()}, o);
  ASSERT_TRUE(r.checkpoints.empty());
  std::string streamed;
  write_report_html(r, [&](std::string_view piece) { streamed += piece; });
  EXPECT_EQ(streamed, report_html(r));
  streamed.clear();
  write_report_json(r, json::object(), [&](std::string_view piece) { streamed += piece; });
  EXPECT_EQ(streamed, dump_json(report_json(r), 2) + "\n");
}

}  // namespace
}  // namespace ckpt::report
