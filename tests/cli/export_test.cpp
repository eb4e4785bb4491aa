// `ckptscope export --format perfetto` on real traces, and on bad input.
#include <gtest/gtest.h>

#include <fstream>

#include "exporters/perfetto/perfetto_export.h"
#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

TEST(ExportPerfetto, ARealTraceBecomesAValidTimelineWithEveryByteWritten) {
  if (!is_root()) GTEST_SKIP() << "needs root to load eBPF programs";
  ScratchDir dir;
  auto traced = run_small_traced_job(dir, "node-a");
  ASSERT_EQ(traced.code, 0) << traced.err;
  auto r = run(
      {kCkptscope, "export", dir / "t.db", "--format", "perfetto", "-o", dir / "trace.json"}, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = read_json(dir / "trace.json");
  EXPECT_EQ(j["otherData"]["node"], "node-a");  // --node-name is what the trace records
  auto problems = validate_trace_events(j);
  EXPECT_TRUE(problems.empty()) << problems.front();
  uint64_t written = 0;
  int saves = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("cat", "") == "stage-call" && e["name"] == "write")
      written += e["args"]["bytes"].get<uint64_t>();
    if (e.value("cat", "") == "checkpoint" && e["name"] == "save #1") ++saves;
  }
  EXPECT_EQ(written, 2u << 20);  // the workload wrote 2 x 1 MiB
  EXPECT_EQ(saves, 1);
}

TEST(ExportPerfetto, BadInputIsAClearErrorNeverACrash) {
  ScratchDir dir;
  auto missing = run({kCkptscope, "export", dir / "none.db", "-o", dir / "o.json"}, dir);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("none.db"), std::string::npos) << missing.err;
  std::ofstream(dir / "junk.db") << "this is not a trace";
  auto junk = run({kCkptscope, "export", dir / "junk.db", "-o", dir / "o.json"}, dir);
  EXPECT_EQ(junk.code, 1);
  EXPECT_NE(junk.err.find("junk.db"), std::string::npos) << junk.err;
  auto format =
      run({kCkptscope, "export", dir / "junk.db", "--format", "svg", "-o", dir / "o.json"}, dir);
  EXPECT_EQ(format.code, 2);
  EXPECT_NE(format.err.find("unknown --format 'svg'"), std::string::npos) << format.err;
}

}  // namespace
}  // namespace ckpt::test
