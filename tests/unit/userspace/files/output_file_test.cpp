// Files ckptscope writes as root on a shared node (files/output_file.h):
// never through a final symbolic link, never over a device, a directory, a
// FIFO; whole-file replacements through a temporary no one can plant.
#include "files/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What is in a directory, by name.
std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    victim_ = dir_ / "victim.txt";
    std::ofstream(victim_) << "secret\n";
    chmod(victim_.c_str(), 0600);
    link_ = dir_ / "out.log";
    fs::create_symlink(victim_, link_);
  }
  test::ScratchDir dir_;
  std::string victim_;
  std::string link_;
};

TEST_F(OutputFile, AFinalSymbolicLinkIsNeverFollowed) {
  auto checked = check_output_path(link_, "--log");
  ASSERT_FALSE(checked);
  EXPECT_THAT(checked.error().message, HasSubstr("--log " + link_ + ": a symbolic link"));
  for (auto mode : {OutputMode::kTruncate, OutputMode::kAppend, OutputMode::kCreateNew}) {
    auto opened = open_output_file(link_, "--log", mode);
    ASSERT_FALSE(opened);
    EXPECT_THAT(opened.error().message, HasSubstr(link_));
  }
  auto replaced = replace_file_contents(link_, "mine\n", "report -o");
  ASSERT_FALSE(replaced);
  EXPECT_THAT(replaced.error().message, HasSubstr("a symbolic link"));
  auto replacement = ReplacementFile::create(link_, "--trace");
  EXPECT_FALSE(replacement);
  EXPECT_EQ(slurp(victim_), "secret\n") << "the file the link points to was written";
  EXPECT_TRUE(fs::is_symlink(link_)) << "the link was replaced";
  // A dangling link too (a name planted ahead of time).
  const std::string dangling = dir_ / "planted.log";
  fs::create_symlink(dir_ / "not-yet", dangling);
  EXPECT_FALSE(open_output_file(dangling, "--log", OutputMode::kTruncate));
  EXPECT_FALSE(fs::exists(dir_ / "not-yet")) << "created through a dangling link";
}

TEST_F(OutputFile, DevicesDirectoriesAndFifosAreRefusedUntouched) {
  for (const char* device : {"/dev/null", "/dev/full"}) {
    struct stat before {};
    ASSERT_EQ(stat(device, &before), 0);
    auto replaced = replace_file_contents(device, "x", "-o");
    ASSERT_FALSE(replaced) << device;
    EXPECT_THAT(replaced.error().message, HasSubstr("a character device, not a regular file"));
    EXPECT_FALSE(open_output_file(device, "--trace", OutputMode::kTruncate)) << device;
    struct stat after {};
    ASSERT_EQ(stat(device, &after), 0);
    EXPECT_TRUE(S_ISCHR(after.st_mode)) << device << " was replaced";
    EXPECT_EQ(after.st_rdev, before.st_rdev);
  }
  const std::string sub = dir_ / "emptydir";
  fs::create_directory(sub);
  auto into_dir = replace_file_contents(sub, "x", "--trace");
  ASSERT_FALSE(into_dir);
  EXPECT_THAT(into_dir.error().message, HasSubstr("a directory"));
  EXPECT_TRUE(fs::is_directory(sub));
  const std::string fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // No reader: the open must neither block nor succeed.
  auto opened = open_output_file(fifo, "--log", OutputMode::kAppend);
  ASSERT_FALSE(opened);
  EXPECT_THAT(opened.error().message, HasSubstr("a FIFO"));
  EXPECT_FALSE(check_output_path(fifo, "--log"));
}

TEST_F(OutputFile, ARegularFileIsEmptiedAppendedOrNeverReused) {
  const std::string file = dir_ / "job.log";
  std::ofstream(file) << "old\n";
  {
    auto fd = open_output_file(file, "--log", OutputMode::kAppend);
    ASSERT_TRUE(fd) << fd.error().message;
    ASSERT_TRUE(write_all(fd->get(), "more\n", file));
  }
  EXPECT_EQ(slurp(file), "old\nmore\n");
  {
    auto fd = open_output_file(file, "--log", OutputMode::kTruncate);
    ASSERT_TRUE(fd) << fd.error().message;
    ASSERT_TRUE(write_all(fd->get(), "new\n", file));
  }
  EXPECT_EQ(slurp(file), "new\n");
  auto again = open_output_file(file, "job log", OutputMode::kCreateNew);
  ASSERT_FALSE(again);
  EXPECT_THAT(again.error().message, HasSubstr("already exists"));
  EXPECT_EQ(slurp(file), "new\n");
  const std::string fresh = dir_ / "fresh.log";
  auto created = open_output_file(fresh, "job log", OutputMode::kCreateNew);
  ASSERT_TRUE(created) << created.error().message;
  struct stat st {};
  ASSERT_EQ(fstat(created->get(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644U);
  EXPECT_TRUE(fcntl(created->get(), F_GETFD) & FD_CLOEXEC);
  EXPECT_FALSE(fcntl(created->get(), F_GETFL) & O_NONBLOCK);
}

// A replacement is whole or nothing, through a temporary with a random name
// (never `PATH.tmp`, which another user could plant), and leaves nothing.
TEST_F(OutputFile, AReplacementGoesThroughATemporaryNoOneCanPlant) {
  const std::string report = dir_ / "report.html";
  // A link planted at the old predictable temporary name is never written.
  fs::create_symlink(victim_, report + ".tmp");
  ASSERT_TRUE(replace_file_contents(report, "<html>1</html>\n", "-o"));
  EXPECT_EQ(slurp(report), "<html>1</html>\n");
  ASSERT_TRUE(replace_file_contents(report, "<html>2</html>\n", "-o"));
  EXPECT_EQ(slurp(report), "<html>2</html>\n");
  EXPECT_EQ(slurp(victim_), "secret\n");
  EXPECT_EQ(names_in(dir_.path()),
            (std::set<std::string>{"victim.txt", "out.log", "report.html", "report.html.tmp"}))
      << "a temporary was left behind";
  struct stat st {};
  ASSERT_EQ(stat(report.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644U);

  // Two temporaries of one path never share a name.
  auto a = ReplacementFile::create(report, "--trace");
  auto b = ReplacementFile::create(report, "--trace");
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->temp_path(), b->temp_path());
  EXPECT_THAT(a->temp_path(), HasSubstr(".report.html.tmp-"));
  EXPECT_TRUE(fs::exists(a->temp_path()));
  const std::string dropped = b->temp_path();
  { ReplacementFile gone = std::move(*b); }
  EXPECT_FALSE(fs::exists(dropped)) << "an uncommitted replacement was left";
  std::ofstream(a->temp_path()) << "trace\n";
  ASSERT_TRUE(a->commit());
  EXPECT_EQ(slurp(report), "trace\n");
  EXPECT_FALSE(a->commit()) << "committed twice";
}

// Replaced only when what is at the path is still a regular file when the
// rename comes: a directory put there meanwhile is refused, and the
// temporary goes.
TEST_F(OutputFile, TheTargetIsCheckedAgainBeforeTheRename) {
  const std::string trace = dir_ / "t.db";
  auto r = ReplacementFile::create(trace, "--trace");
  ASSERT_TRUE(r);
  fs::create_directory(trace);
  auto committed = r->commit();
  ASSERT_FALSE(committed);
  EXPECT_THAT(committed.error().message, HasSubstr("a directory"));
  EXPECT_TRUE(fs::is_directory(trace));
}

TEST(OutputFileKinds, NamedAsLsWould) {
  EXPECT_EQ(file_kind_name(S_IFDIR), "a directory");
  EXPECT_EQ(file_kind_name(S_IFCHR), "a character device");
  EXPECT_EQ(file_kind_name(S_IFBLK), "a block device");
  EXPECT_EQ(file_kind_name(S_IFIFO), "a FIFO");
  EXPECT_EQ(file_kind_name(S_IFSOCK), "a socket");
  EXPECT_EQ(file_kind_name(S_IFLNK), "a symbolic link");
  EXPECT_EQ(file_kind_name(S_IFREG), "a regular file");
  EXPECT_FALSE(check_output_path("", "--log"));
}

}  // namespace
}  // namespace ckpt
