#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "notify/notify.h"
#include "test_servers.h"

namespace ckpt::notify {
namespace {

using ::testing::HasSubstr;
using testutil::TempDir;
using testutil::write_file;

std::string numbered_lines(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST(ArtifactPlan, EverythingThatFitsIsAttachedWholeInOrder) {
  TempDir dir;
  write_file(dir / "job.log", "hello\nworld\n");
  write_file(dir / "report.json", "{}");
  std::string binary;
  for (int i = 0; i < 256; ++i) binary += static_cast<char>(i);
  write_file(dir / "out.bin", binary);

  auto plan = plan_attachments(
      {{dir / "job.log", true}, {dir / "report.json", false}, {dir / "out.bin", false}}, 1000);
  ASSERT_EQ(plan.attached.size(), 3u);
  EXPECT_TRUE(plan.left_out.empty());
  EXPECT_EQ(plan.attached[0].name, "job.log");
  EXPECT_EQ(plan.attached[0].data, "hello\nworld\n");
  EXPECT_FALSE(plan.attached[0].tail);
  EXPECT_EQ(plan.attached[1].name, "report.json");
  EXPECT_EQ(plan.attached[2].data, binary);
  EXPECT_EQ(plan.attached[2].file_size, 256u);
  EXPECT_EQ(plan.used, 12u + 2u + 256u);
  EXPECT_EQ(plan.budget, 1000u);
}

TEST(ArtifactPlan, OverBudgetIsListedAndLaterSmallerFilesStillGo) {
  TempDir dir;
  write_file(dir / "a", std::string(600, 'a'));
  write_file(dir / "big", std::string(500, 'b'));
  write_file(dir / "small", std::string(100, 'c'));
  auto plan =
      plan_attachments({{dir / "a", false}, {dir / "big", false}, {dir / "small", false}}, 1000);
  ASSERT_EQ(plan.attached.size(), 2u);
  EXPECT_EQ(plan.attached[0].path, dir / "a");
  EXPECT_EQ(plan.attached[1].path, dir / "small");
  ASSERT_EQ(plan.left_out.size(), 1u);
  EXPECT_EQ(plan.left_out[0].path, dir / "big");
  EXPECT_EQ(plan.left_out[0].size, 500u);
  EXPECT_EQ(plan.left_out[0].reason, "over budget: 500 B > 400 B left");
  EXPECT_EQ(plan.used, 700u);
}

TEST(ArtifactPlan, MissingAndNonRegularFilesAreListed) {
  TempDir dir;
  auto plan = plan_attachments(
      {{dir / "nope.txt", false}, {dir.path(), false}, {"/dev/null", false}, {"", false}}, 1000);
  EXPECT_TRUE(plan.attached.empty());
  ASSERT_EQ(plan.left_out.size(), 3u);  // the empty path is "no such artifact", not a candidate
  EXPECT_EQ(plan.left_out[0].path, dir / "nope.txt");
  EXPECT_EQ(plan.left_out[0].reason, "missing");
  EXPECT_FALSE(plan.left_out[0].size);
  EXPECT_EQ(plan.left_out[1].reason, "not a regular file (a directory)");
  EXPECT_EQ(plan.left_out[2].reason, "not a regular file");
}

TEST(ArtifactPlan, ZeroBudgetListsEverything) {
  TempDir dir;
  write_file(dir / "job.log", "one\ntwo\n");
  write_file(dir / "r.txt", "r");
  auto plan = plan_attachments({{dir / "job.log", true}, {dir / "r.txt", false}}, 0);
  EXPECT_TRUE(plan.attached.empty());
  ASSERT_EQ(plan.left_out.size(), 2u);
  EXPECT_EQ(plan.left_out[0].reason, "over budget: 8 B > 0 B left");
  EXPECT_EQ(plan.left_out[1].reason, "over budget: 1 B > 0 B left");
}

TEST(ArtifactPlan, OversizedLogSendsItsTailCutAtALineBoundary) {
  TempDir dir;
  const std::string log = numbered_lines(1, 1000);  // "line 1\n" ... "line 1000\n"
  write_file(dir / "job.log", log);
  write_file(dir / "report.txt", std::string(20, 'r'));
  const uint64_t budget = 118;
  auto plan = plan_attachments({{dir / "report.txt", false}, {dir / "job.log", true}}, budget);
  ASSERT_EQ(plan.attached.size(), 2u);
  const Attachment& tail = plan.attached[1];
  EXPECT_TRUE(tail.tail);
  EXPECT_EQ(tail.name, "job.log.tail");
  EXPECT_EQ(tail.file_size, log.size());
  EXPECT_LE(tail.data.size(), budget - 20);
  // Whole lines only, ending with the log's last line.
  EXPECT_TRUE(log.ends_with(tail.data));
  EXPECT_TRUE(tail.data.starts_with("line ")) << tail.data;
  EXPECT_EQ(log[log.size() - tail.data.size() - 1], '\n');
  EXPECT_TRUE(tail.data.ends_with("line 1000\n"));
  // 98 bytes left: "line 991\n" .. "line 1000\n" is 9*9+10 = 91 bytes; the cut "ne 990\n" goes.
  EXPECT_EQ(tail.data, numbered_lines(991, 1000));
  // The full log is still listed as left out, saying what was sent instead.
  ASSERT_EQ(plan.left_out.size(), 1u);
  EXPECT_EQ(plan.left_out[0].path, dir / "job.log");
  EXPECT_EQ(plan.left_out[0].size, log.size());
  EXPECT_THAT(plan.left_out[0].reason, HasSubstr("over budget: 8.7 KiB > 98 B left"));
  EXPECT_THAT(plan.left_out[0].reason, HasSubstr("its last 91 B attached as job.log.tail"));
  EXPECT_EQ(plan.used, 20u + 91u);
}

TEST(ArtifactPlan, TailThatStartsExactlyOnALineKeepsItsFirstLine) {
  TempDir dir;
  write_file(dir / "job.log", "aaaa\nbbbb\ncccc\n");
  auto plan = plan_attachments({{dir / "job.log", true}}, 10);
  ASSERT_EQ(plan.attached.size(), 1u);
  EXPECT_EQ(plan.attached[0].data, "bbbb\ncccc\n");
}

TEST(ArtifactPlan, LogWithoutAWholeLineInBudgetSendsNoTailButSaysSo) {
  TempDir dir;
  write_file(dir / "job.log", std::string(5000, 'x'));  // a progress bar, no newline
  auto plan = plan_attachments({{dir / "job.log", true}}, 100);
  EXPECT_TRUE(plan.attached.empty());
  ASSERT_EQ(plan.left_out.size(), 1u);
  EXPECT_THAT(plan.left_out[0].reason, HasSubstr("no whole line of its end fits"));
  EXPECT_EQ(plan.used, 0u);
}

TEST(ArtifactPlan, NamesAreUniqueAndSafe) {
  TempDir dir;
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  write_file(dir / "a/out.txt", "1");
  write_file(dir / "b/out.txt", "2");
  write_file(dir / "we\"ird name.txt", "3");
  auto plan = plan_attachments({{dir / "a/out.txt", false},
                                {dir / "b/out.txt", false},
                                {dir / "a/out.txt", false},  // the same file twice is one file
                                {dir / "we\"ird name.txt", false}},
                               100);
  ASSERT_EQ(plan.attached.size(), 3u);
  EXPECT_EQ(plan.attached[0].name, "out.txt");
  EXPECT_EQ(plan.attached[1].name, "out-2.txt");
  EXPECT_EQ(plan.attached[2].name, "we_ird_name.txt");
  EXPECT_TRUE(plan.left_out.empty());
}

TEST(ArtifactPlan, ReadLogTail) {
  TempDir dir;
  write_file(dir / "job.log", "one\r\ntwo\nthree\nfour\n");
  auto tail = read_log_tail(dir / "job.log", 2);
  ASSERT_TRUE(tail) << tail.error().message;
  EXPECT_EQ(*tail, (std::vector<std::string>{"three", "four"}));
  auto all = read_log_tail(dir / "job.log", 40);
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, (std::vector<std::string>{"one", "two", "three", "four"}));
  write_file(dir / "partial.log", "done\nno newline yet");
  EXPECT_EQ(*read_log_tail(dir / "partial.log", 1), std::vector<std::string>{"no newline yet"});
  auto missing = read_log_tail(dir / "none.log", 5);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("none.log"));
}

TEST(ArtifactPlan, ReadLogTailOfAHugeLogReadsOnlyItsEnd) {
  TempDir dir;
  std::string log = numbered_lines(1, 200'000);  // ~2.3 MiB, more than the 1 MiB read
  write_file(dir / "job.log", log);
  auto tail = read_log_tail(dir / "job.log", 3);
  ASSERT_TRUE(tail);
  EXPECT_EQ(*tail, (std::vector<std::string>{"line 199998", "line 199999", "line 200000"}));
}

}  // namespace
}  // namespace ckpt::notify
