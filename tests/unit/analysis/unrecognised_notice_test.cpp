// The unrecognised-I/O notice in the summary: the JSON section (null at and
// below the threshold, the largest files with their bytes and flags above
// it) and the table's lines, which must say the files, the bytes and the
// flags that would include them.
#include "analysis/unrecognised_notice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include <sstream>

#include "analysis/summary.h"

namespace ckpt {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kMiB = 1 << 20;

// No checkpoint, 32 MiB written to out/model_state.dat and 2 MiB read from a
// file whose path was never known.
Trace nanogpt_like() {
  Trace t;
  t.job.command = {"python", "train.py"};
  t.job.traced = true;
  UnrecognisedIoRecord& io = t.unrecognised_io.emplace();
  io.bytes_written = 32 * kMiB;
  io.bytes_read = 2 * kMiB;
  io.files = 2;
  io.notice_bytes = 16 * kMiB;
  io.largest = {
      {"/job/out/model_state.dat", makedev(8, 1), 77, 0, 32 * kMiB, "model_state.dat", ""},
      {"", makedev(8, 1), 78, 2 * kMiB, 0, "", ""},
  };
  return t;
}

TEST(UnrecognisedNoticeJson, AboveTheThresholdNamesTheFilesTheirBytesAndTheFlags) {
  const json j = summary_json(nanogpt_like())["unrecognised_io"];
  ASSERT_TRUE(j.is_object()) << j;
  EXPECT_EQ(j["total_bytes"], 34 * kMiB);
  EXPECT_EQ(j["bytes_written"], 32 * kMiB);
  EXPECT_EQ(j["bytes_read"], 2 * kMiB);
  EXPECT_EQ(j["file_count"], 2);
  EXPECT_EQ(j["notice_bytes"], 16 * kMiB);
  ASSERT_EQ(j["files"].size(), 2u);
  const json& f = j["files"][0];
  EXPECT_EQ(f["path"], "/job/out/model_state.dat");
  EXPECT_EQ(f["dev"], "8:1");
  EXPECT_EQ(f["ino"], 77);
  EXPECT_EQ(f["bytes_written"], 32 * kMiB);
  EXPECT_EQ(f["bytes_read"], 0);
  EXPECT_EQ(f["checkpoint_glob"], "model_state.dat");
  EXPECT_TRUE(f["checkpoint_dir"].is_null());
  EXPECT_TRUE(j["files"][1]["path"].is_null()) << "unknown path: null, dev and ino name it";
  EXPECT_TRUE(j["files"][1]["checkpoint_glob"].is_null());
  const std::string hint = j["hint"];
  for (const char* key :
       {"--checkpoint-glob", "--checkpoint-dir", "checkpoint.name_globs", "checkpoint.dir_globs",
        "checkpoint.exclude_globs", "checkpoint.unrecognised_notice_mib"})
    EXPECT_THAT(hint, HasSubstr(key));
}

TEST(UnrecognisedNoticeJson, NullAtTheThresholdAndWhenNotCounted) {
  Trace t = nanogpt_like();
  t.unrecognised_io->notice_bytes = t.unrecognised_io->bytes();
  EXPECT_TRUE(summary_json(t)["unrecognised_io"].is_null()) << "the notice is for more than it";
  t.unrecognised_io->notice_bytes -= 1;
  EXPECT_TRUE(summary_json(t)["unrecognised_io"].is_object());
  t.unrecognised_io.reset();
  EXPECT_TRUE(summary_json(t)["unrecognised_io"].is_null());
}

TEST(UnrecognisedNoticeTable, SaysTheFilesTheirBytesAndTheFlagsAfterNoCheckpoints) {
  Trace t = nanogpt_like();
  t.unrecognised_io->largest[0].checkpoint_glob = "model_state_*.dat";
  t.unrecognised_io->largest.push_back(
      {"/job/runs/exp1/model.pt", makedev(8, 1), 79, 0, kMiB, "model.pt", "exp*"});
  const std::string table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("\ncheckpoints: none detected\n\nunrecognised I/O: 34.0 MiB "
                               "through 2 files that no checkpoint pattern recognised\n"
                               "       bytes    written       read  file\n"));
  EXPECT_THAT(table, HasSubstr("\n    32.0 MiB   32.0 MiB        0 B  /job/out/model_state.dat\n"
                               "      include with --checkpoint-glob 'model_state_*.dat'\n"));
  EXPECT_THAT(table, HasSubstr("\n    2.00 MiB        0 B   2.00 MiB  dev 8:1 inode 78\n"
                               "    1.00 MiB"))
      << "no flag line for a file without a path";
  EXPECT_THAT(table, HasSubstr("      include with --checkpoint-glob model.pt or --checkpoint-dir "
                               "'exp*'\n"));
  EXPECT_THAT(table, HasSubstr("  If these are checkpoints, include them: run or attach with"));
  EXPECT_THAT(table, HasSubstr("checkpoint.name_globs"));
  // The hint wraps at 100 columns; only a path or the flags may be longer.
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    const bool copied_whole =
        line.find("/job/") != std::string::npos || line.find("include with") != std::string::npos;
    if (!copied_whole) {
      EXPECT_LE(line.size(), 100u) << line;
    }
  }
}

TEST(UnrecognisedNoticeTable, NothingBelowTheThresholdOrWhenNotCounted) {
  Trace t = nanogpt_like();
  t.unrecognised_io->notice_bytes = 64 * kMiB;
  EXPECT_THAT(summary_table(t), Not(HasSubstr("unrecognised")));
  t.unrecognised_io.reset();
  EXPECT_THAT(summary_table(t), Not(HasSubstr("unrecognised")));
}

TEST(UnrecognisedNoticeText, FlagsAndNames) {
  UnrecognisedFileRecord f{"/a/b.pt", makedev(253, 2), 5, 0, 1, "b.pt", "/a"};
  EXPECT_EQ(include_flags(f), "--checkpoint-glob b.pt or --checkpoint-dir /a");
  f.checkpoint_dir.clear();
  EXPECT_EQ(include_flags(f), "--checkpoint-glob b.pt");
  f.checkpoint_glob.clear();
  EXPECT_EQ(include_flags(f), "");
  EXPECT_EQ(unrecognised_file_name(f), "/a/b.pt");
  f.path.clear();
  EXPECT_EQ(unrecognised_file_name(f), "dev 253:2 inode 5");
}

}  // namespace
}  // namespace ckpt
