// The unrecognised-I/O notice in the report: the recommendation that names
// each node's largest unrecognised files with the flags that would include
// them (quiet at the threshold), the sentence a verdict without checkpoints
// adds, the JSON per node, and the Markdown and HTML that show it.
#include <gtest/gtest.h>

#include "analysis/report/report.h"
#include "trace_builder.h"

namespace ckpt::report {
namespace {

using nlohmann::json;
using test::kSec;
using test::must_build;
using test::TraceBuilder;

constexpr uint64_t kMiB = 1 << 20;

// node-a, no checkpoint, `bytes` written to out/model_state.dat.
TraceBuilder nanogpt_node(uint64_t bytes, uint64_t notice = 16 * kMiB) {
  TraceBuilder a("node-a", kSec, 0, 100 * kSec);
  UnrecognisedIoRecord& io = a.trace().unrecognised_io.emplace();
  io.bytes_written = bytes;
  io.files = 1;
  io.notice_bytes = notice;
  io.largest = {{"/job/out/model_state.dat", 0x801, 7, 0, bytes, "model_state.dat", ""}};
  return a;
}

const Recommendation* find(const Report& r, const std::string& id) {
  for (const auto& rec : r.recommendations)
    if (rec.id == id) return &rec;
  return nullptr;
}

TEST(ReportUnrecognised, TheRuleNamesEachFileItsBytesAndItsFlag) {
  Report r = must_build({nanogpt_node(32 * kMiB).node_trace()});
  const Recommendation* rec = find(r, "unrecognised_io");
  ASSERT_NE(rec, nullptr);
  ASSERT_EQ(rec->evidence.size(), 2u);
  EXPECT_EQ(rec->evidence[0].node, "node-a");
  EXPECT_EQ(rec->evidence[0].text,
            "32.0 MiB (written 32.0 MiB, read 0 B) through 1 file that no checkpoint pattern "
            "recognised");
  EXPECT_EQ(rec->evidence[1].text,
            "/job/out/model_state.dat: 32.0 MiB written, 0 B read; include with "
            "--checkpoint-glob model_state.dat");
  EXPECT_NE(rec->advice.find("--checkpoint-dir"), std::string::npos);
  EXPECT_NE(rec->advice.find("checkpoint.name_globs"), std::string::npos);
}

TEST(ReportUnrecognised, QuietAtTheThresholdAndWhenTheTraceDoesNotSay) {
  EXPECT_EQ(find(must_build({nanogpt_node(16 * kMiB).node_trace()}), "unrecognised_io"), nullptr);
  EXPECT_NE(find(must_build({nanogpt_node(16 * kMiB + 1).node_trace()}), "unrecognised_io"),
            nullptr);
  // The threshold is the trace's own.
  EXPECT_EQ(find(must_build({nanogpt_node(32 * kMiB, 64 * kMiB).node_trace()}), "unrecognised_io"),
            nullptr);
  TraceBuilder older("node-a", kSec, 0, 100 * kSec);
  Report r = must_build({older.node_trace()});
  EXPECT_EQ(find(r, "unrecognised_io"), nullptr);
  EXPECT_EQ(r.verdict.text.find("through files"), std::string::npos);
  EXPECT_TRUE(report_json(r)["job"]["nodes"][0]["unrecognised_io"].is_null());
}

TEST(ReportUnrecognised, AVerdictWithoutCheckpointsSaysWhatMovedElsewhere) {
  Report r = must_build({nanogpt_node(32 * kMiB).node_trace()});
  EXPECT_NE(r.verdict.text.find("No checkpoint I/O was seen"), std::string::npos);
  EXPECT_NE(r.verdict.text.find("The job moved 32.0 MiB through files no checkpoint pattern "
                                "recognised (the recommendation unrecognised_io names them"),
            std::string::npos)
      << r.verdict.text;
}

TEST(ReportUnrecognised, JsonMarkdownAndHtmlShowIt) {
  Report r = must_build({nanogpt_node(32 * kMiB).node_trace()});
  const json node = report_json(r)["job"]["nodes"][0]["unrecognised_io"];
  ASSERT_TRUE(node.is_object());
  EXPECT_EQ(node["total_bytes"], 32 * kMiB);
  EXPECT_EQ(node["files"][0]["path"], "/job/out/model_state.dat");
  EXPECT_EQ(node["files"][0]["checkpoint_glob"], "model_state.dat");
  for (const std::string& page : {report_markdown(r), report_html(r)}) {
    EXPECT_NE(page.find("/job/out/model_state.dat"), std::string::npos);
    EXPECT_NE(page.find("--checkpoint-glob model_state.dat"), std::string::npos);
    EXPECT_NE(page.find("unrecognised_io"), std::string::npos);
  }
}

}  // namespace
}  // namespace ckpt::report
