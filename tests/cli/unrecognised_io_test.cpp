// Issue 19, never silent: `ckptscope run` of a job that writes 32 MiB to a
// file no checkpoint pattern recognises (out/model_state.dat) says so in the
// summary JSON, the table, and later from the trace in `summary` and
// `report`: the file, its bytes and the flag that would include it. And that
// flag does include it: run with it, the file is a checkpoint and the notice
// is gone. Root: the job is traced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kMiB = 1 << 20;

// The job: 32 writes of 1 MiB into DIR/out/model_state.dat, by dd.
std::vector<std::string> traced_job(const ScratchDir& dir, std::vector<std::string> flags) {
  std::vector<std::string> argv = {kCkptscope,   "run",       "--json",     "--trace",
                                   dir / "t.db", "--log-dir", dir / "logs", "--no-exporter"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const std::string& a : {std::string("--"), std::string("sh"), std::string("-c"),
                               "mkdir -p " + quote(dir / "out") +
                                   " && dd if=/dev/zero of=" + quote(dir / "out/model_state.dat") +
                                   " bs=1M count=32 status=none"})
    argv.push_back(a);
  return argv;
}

TEST(UnrecognisedIo, TheSummaryTableAndReportNameTheFileItsBytesAndTheFlag) {
  if (!is_root()) GTEST_SKIP() << "needs root to load eBPF programs";
  ScratchDir dir;
  const std::string file = dir / "out/model_state.dat";
  auto r = run(traced_job(dir, {}), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(std::filesystem::file_size(file), 32 * kMiB);
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["checkpoints"].size(), 0u) << "model_state.dat is no checkpoint by default";
  const auto& io = summary["unrecognised_io"];
  ASSERT_TRUE(io.is_object()) << summary.dump(2);
  // dd's own reads of regular files (none but what exclude_globs rules out)
  // may add a little; the file is what it wrote, to the byte.
  EXPECT_GE(io["total_bytes"].get<uint64_t>(), 32 * kMiB);
  ASSERT_GE(io["files"].size(), 1u);
  const auto& f = io["files"][0];
  EXPECT_EQ(f["path"], file);
  EXPECT_EQ(f["bytes_written"], 32 * kMiB);
  EXPECT_EQ(f["bytes_read"], 0);
  EXPECT_EQ(f["checkpoint_glob"], "model_state.dat");
  EXPECT_THAT(io["hint"].get<std::string>(), HasSubstr("--checkpoint-glob"));
  EXPECT_THAT(io["hint"].get<std::string>(), HasSubstr("--checkpoint-dir"));
  EXPECT_THAT(io["hint"].get<std::string>(), HasSubstr("checkpoint.name_globs"));

  // The table on stderr, after "none detected".
  EXPECT_THAT(r.err, HasSubstr("checkpoints: none detected\n\nunrecognised I/O: "));
  EXPECT_THAT(r.err, HasSubstr("    32.0 MiB   32.0 MiB        0 B  " + file +
                               "\n"
                               "      include with --checkpoint-glob model_state.dat\n"));

  // Later, from the trace: the same notice.
  auto later = run({kCkptscope, "summary", dir / "t.db", "--json"}, dir);
  ASSERT_EQ(later.code, 0) << later.err;
  EXPECT_EQ(nlohmann::json::parse(later.out)["unrecognised_io"], io);
  auto table = run({kCkptscope, "summary", dir / "t.db"}, dir);
  EXPECT_THAT(table.out, HasSubstr("    32.0 MiB   32.0 MiB        0 B  " + file + "\n"));
  auto report = run({kCkptscope, "report", dir / "t.db", "-o", dir / "r.md"}, dir);
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string md = slurp(dir / "r.md");
  EXPECT_THAT(md, HasSubstr("(`unrecognised_io`)"));
  EXPECT_THAT(md, HasSubstr(file + ": 32.0 MiB written, 0 B read; include with "
                                   "--checkpoint-glob model_state.dat"));
  EXPECT_THAT(md, HasSubstr("The job moved"));
}

TEST(UnrecognisedIo, TheFlagItNamesMakesTheFileACheckpoint) {
  if (!is_root()) GTEST_SKIP() << "needs root to load eBPF programs";
  ScratchDir dir;
  auto r = run(traced_job(dir, {"--checkpoint-glob", "model_state.dat"}), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  ASSERT_EQ(summary["checkpoints"].size(), 1u) << summary.dump(2);
  EXPECT_EQ(summary["checkpoints"][0]["bytes"], 32 * kMiB);
  EXPECT_TRUE(summary["unrecognised_io"].is_null()) << summary["unrecognised_io"].dump(2);
  EXPECT_THAT(r.err, Not(HasSubstr("unrecognised I/O")));
}

}  // namespace
}  // namespace ckpt::test
