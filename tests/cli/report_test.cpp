// `ckptscope report` as a user runs it: on a job it traced (every byte the
// workload wrote is in the report), in each format, and on bad input, which
// gets a clear error and never a crash or a half-written report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

const std::string kThrottle = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/report/throttle.db";

TEST(Report, ATracedJobsReportHasEveryByteTheWorkloadWrote) {
  if (!is_root()) GTEST_SKIP() << "needs root to load eBPF programs";
  ScratchDir dir;
  auto traced = run_small_traced_job(dir, "node-a");
  ASSERT_EQ(traced.code, 0) << traced.err;
  auto r = run({kCkptscope, "report", dir / "t.db", "-o", dir / "report.json"}, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = read_json(dir / "report.json");
  // The workload saved 2 x 1 MiB, then loaded them back.
  ASSERT_EQ(j["checkpoints"].size(), 2u);
  EXPECT_EQ(j["checkpoints"][0]["direction"], "save");
  EXPECT_EQ(j["checkpoints"][0]["bytes"], 2u << 20);
  EXPECT_EQ(j["checkpoints"][1]["direction"], "load");
  EXPECT_EQ(j["checkpoints"][1]["bytes"], 2u << 20);
  EXPECT_EQ(j["checkpoints"][0]["per_node"][0]["writer_threads"], 1);
  EXPECT_EQ(j["job"]["nodes"][0]["node"], "node-a");
  EXPECT_FALSE(std::filesystem::exists(dir / "report.json.tmp"));
}

TEST(Report, TheFormatFollowsTheFlagElseTheExtension) {
  ScratchDir dir;
  ASSERT_EQ(run({kCkptscope, "report", kThrottle, "-o", dir / "r.html"}, dir).code, 0);
  EXPECT_EQ(slurp(dir / "r.html").rfind("<!DOCTYPE html>", 0), 0u);
  ASSERT_EQ(run({kCkptscope, "report", kThrottle, "-o", dir / "r.md"}, dir).code, 0);
  EXPECT_EQ(slurp(dir / "r.md").rfind("# Checkpoint report", 0), 0u);
  ASSERT_EQ(
      run({kCkptscope, "report", kThrottle, "--format", "json", "-o", dir / "r.txt"}, dir).code, 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "r.txt"))["report_version"], 1);
  auto out = run({kCkptscope, "report", kThrottle, "--format", "md"}, dir);
  ASSERT_EQ(out.code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("# Checkpoint report", 0), 0u);
}

TEST(Report, StorageMaximaFromTheCommandLine) {
  ScratchDir dir;
  auto out =
      run({kCkptscope, "report", kThrottle, "--format", "json", "--storage-write-max", "64Mbit/s"},
          dir);
  ASSERT_EQ(out.code, 0) << out.err;
  auto j = nlohmann::json::parse(out.out);
  EXPECT_DOUBLE_EQ(j["checkpoints"][0]["storage_max_Bps"].get<double>(), 8e6);
  EXPECT_EQ(j["checkpoints"][0]["storage_max_source"], "--storage-write-max");
  auto bad = run({kCkptscope, "report", kThrottle, "--storage-read-max", "fast"}, dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--storage-read-max"), std::string::npos) << bad.err;
}

TEST(Report, BadTracesAreAClearErrorNeverACrash) {
  ScratchDir dir;
  auto missing = run({kCkptscope, "report", dir / "none.db", "-o", dir / "r.html"}, dir);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("none.db"), std::string::npos) << missing.err;

  std::ofstream(dir / "junk.db") << "this is not a trace";
  auto junk = run({kCkptscope, "report", dir / "junk.db", "-o", dir / "r.html"}, dir);
  EXPECT_EQ(junk.code, 1);
  EXPECT_NE(junk.err.find("junk.db"), std::string::npos) << junk.err;

  // Cut in the middle, as a copy that ran out of disk.
  std::string whole = slurp(kThrottle);
  std::ofstream(dir / "cut.db", std::ios::binary) << whole.substr(0, whole.size() / 2);
  auto cut = run({kCkptscope, "report", dir / "cut.db", "-o", dir / "r.html"}, dir);
  EXPECT_EQ(cut.code, 1);
  EXPECT_NE(cut.err.find("cut.db"), std::string::npos) << cut.err;

  // A newer ckptscope's trace: PRAGMA user_version lives at byte 60 of the
  // SQLite header (big-endian), https://www.sqlite.org/fileformat2.html.
  std::string newer = whole;
  newer[60] = 0;
  newer[61] = 0;
  newer[62] = 0;
  newer[63] = 99;
  std::ofstream(dir / "newer.db", std::ios::binary) << newer;
  auto future = run({kCkptscope, "report", dir / "newer.db", "-o", dir / "r.html"}, dir);
  EXPECT_EQ(future.code, 1);
  EXPECT_NE(future.err.find("newer.db"), std::string::npos) << future.err;
  EXPECT_NE(future.err.find("99"), std::string::npos) << future.err;

  EXPECT_FALSE(std::filesystem::exists(dir / "r.html"));  // nothing half-written
}

TEST(Report, TwoTracesOfOneNodeAreRefused) {
  ScratchDir dir;
  std::filesystem::copy_file(kThrottle, dir / "again.db");
  auto r = run({kCkptscope, "report", kThrottle, dir / "again.db"}, dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--node-name"), std::string::npos) << r.err;
}

TEST(Report, BadFlagsAndUnwritableOutput) {
  ScratchDir dir;
  auto format = run({kCkptscope, "report", kThrottle, "--format", "pdf"}, dir);
  EXPECT_EQ(format.code, 2);
  EXPECT_NE(format.err.find("unknown --format 'pdf'"), std::string::npos) << format.err;
  auto none = run({kCkptscope, "report"}, dir);
  EXPECT_EQ(none.code, 2);
  auto nowhere = run({kCkptscope, "report", kThrottle, "-o", dir / "no/such/dir/r.html"}, dir);
  EXPECT_EQ(nowhere.code, 1);
  EXPECT_NE(nowhere.err.find("cannot write"), std::string::npos) << nowhere.err;
}

}  // namespace
}  // namespace ckpt::test
