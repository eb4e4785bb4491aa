#include "analysis/logwatch/line_source.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ckpt::logwatch {
namespace {

std::vector<std::string> read_all(LineSource& s) {
  std::vector<std::string> out;
  std::string line;
  for (;;) {
    auto more = s.next(line);
    EXPECT_TRUE(more.has_value());
    if (!more || !*more) break;
    out.push_back(line);
  }
  return out;
}

TEST(LineSource, ReadsLinesFromAPipeAsTheyArrive) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([fd = fds[1]] {
    for (const char* part : {"first li", "ne\nsecond\n", "third without newline"}) {
      ASSERT_GT(::write(fd, part, std::strlen(part)), 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::close(fd);
  });
  FdLineSource source(fds[0], true, nullptr);
  auto lines = read_all(source);
  writer.join();
  std::vector<std::string> want = {"first line", "second", "third without newline"};
  EXPECT_EQ(lines, want);
}

TEST(LineSource, AFileLargerThanTheBufferIsReadToItsEnd) {
  // Lines that end just short of the 64 KiB buffer's end: reading on needs the
  // unread bytes moved down first (a full buffer once read 0 bytes, a false
  // end of file after ~400 Thunderbird lines).
  const std::string path = ::testing::TempDir() + "/logwatch_big_file.log";
  {
    std::ofstream out(path);
    for (int i = 0; i < 5000; ++i) out << "line " << i << std::string(150, 'x') << "\n";
  }
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  FdLineSource source(fd, true, nullptr);
  auto lines = read_all(source);
  ASSERT_EQ(lines.size(), 5000U);
  EXPECT_EQ(lines.back().substr(0, 9), "line 4999");
  std::filesystem::remove(path);
}

TEST(LineSource, CutsOverlongLinesAndCountsThem) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([fd = fds[1]] {
    std::string huge(3 * kMaxLineBytes + 17, 'x');
    std::string text = "short\n" + huge + "\nafter\n" + std::string(100000, 'y');
    std::size_t off = 0;
    while (off < text.size()) {
      ssize_t n = ::write(fd, text.data() + off, text.size() - off);
      ASSERT_GT(n, 0);
      off += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  FdLineSource source(fds[0], true, nullptr);
  auto lines = read_all(source);
  writer.join();
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[0], "short");
  EXPECT_EQ(lines[1], std::string(kMaxLineBytes, 'x'));
  EXPECT_EQ(lines[2], "after");
  EXPECT_EQ(lines[3], std::string(kMaxLineBytes, 'y'));
  EXPECT_EQ(source.truncated(), 2U);
}

// KmsgSource reads through ckpt::KmsgWatcher: a file of records as `cat
// /dev/kmsg` writes them takes its stream path, whose sequence-gap count is
// the one /dev/kmsg's EPIPE path relies on.
TEST(LineSource, KmsgCountsSequenceGapsAsDropsAndGivesTheLevel) {
  char path[] = "/tmp/logwatch_kmsg_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string records =
      "6,10,100,-;first\n"
      "6,11,200,-;second\n SUBSYSTEM=pci\n"
      "3,15,300,-;after a gap of three\n";
  ASSERT_EQ(::write(fd, records.data(), records.size()), static_cast<ssize_t>(records.size()));
  ::close(fd);
  auto source = KmsgSource::open(path, true, nullptr);
  ASSERT_TRUE(source.has_value()) << source.error().message;
  std::vector<std::string> lines;
  std::vector<std::optional<Severity>> levels;
  std::string line;
  for (;;) {
    auto more = (*source)->next(line);
    ASSERT_TRUE(more.has_value()) << more.error().message;
    if (!*more) break;
    lines.push_back(line);
    levels.push_back((*source)->severity());
  }
  ::unlink(path);
  EXPECT_EQ(lines, (std::vector<std::string>{"first", "second", "after a gap of three"}));
  EXPECT_EQ(levels, (std::vector<std::optional<Severity>>{6, 6, 3}));
  EXPECT_EQ((*source)->drops(), 3U);
}

TEST(LineSource, KmsgOpenErrorNamesThePath) {
  auto s = KmsgSource::open("/nonexistent/kmsg", true, nullptr);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("/nonexistent/kmsg"), std::string::npos);
}

TEST(LineSource, OpenNamesAMissingFile) {
  auto s = open_source("/nonexistent/node.log", false, false, nullptr);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("/nonexistent/node.log"), std::string::npos);
}

// --follow as `logwatch` runs it: open_source() on a real file, read on a
// thread of its own while the test writes, truncates and rotates the file.
class Follower {
 public:
  explicit Follower(const std::string& path) {
    auto source = open_source(path, true, false, &stop_, [this](const std::string& m) {
      std::lock_guard lock(mu_);
      notices_.push_back(m);
    });
    if (!source) {
      open_error_ = source.error().message;
      return;
    }
    source_ = std::move(*source);
    thread_ = std::thread([this] { run(); });
  }
  ~Follower() { stop(); }
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  [[nodiscard]] const std::string& open_error() const { return open_error_; }
  // True once `n` lines were read; false after `timeout`.
  bool wait_for_lines(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return lines_.size() >= n; });
  }
  // Long enough for the source to look at the file again (kFollowPoll).
  static void let_it_poll() { std::this_thread::sleep_for(3 * kFollowPoll); }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::vector<std::string> notices() {
    std::lock_guard lock(mu_);
    return notices_;
  }
  std::size_t notices_with(const std::string& needle) {
    std::lock_guard lock(mu_);
    std::size_t n = 0;
    for (const auto& m : notices_) n += m.find(needle) != std::string::npos ? 1 : 0;
    return n;
  }
  [[nodiscard]] const LineSource& source() const { return *source_; }
  std::string read_error() {
    std::lock_guard lock(mu_);
    return read_error_;
  }

 private:
  void run() {
    std::string line;
    for (;;) {
      auto more = source_->next(line);
      std::lock_guard lock(mu_);
      if (!more) read_error_ = more.error().message;
      if (!more || !*more) break;
      lines_.push_back(line);
      changed_.notify_all();
    }
  }

  std::atomic<bool> stop_{false};
  std::unique_ptr<LineSource> source_;
  std::string open_error_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
  std::vector<std::string> notices_;
  std::string read_error_;
  std::thread thread_;
};

class FollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "logwatch_follow_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/node.log";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static void append(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::app) << text << std::flush;
  }
  const FollowedFileSource& followed(const Follower& f) {
    return dynamic_cast<const FollowedFileSource&>(f.source());
  }

  std::string dir_;
  std::string path_;
};

using Lines = std::vector<std::string>;

TEST_F(FollowTest, ReadsAgainFromTheStartAfterATruncation) {
  append(path_, "one\ntwo\n");
  Follower f(path_);
  ASSERT_EQ(f.open_error(), "");
  ASSERT_TRUE(f.wait_for_lines(2));
  std::ofstream(path_, std::ios::trunc).close();  // `> node.log`: the same file, empty
  Follower::let_it_poll();
  append(path_, "three\n");
  ASSERT_TRUE(f.wait_for_lines(3)) << "the line written after the truncation was not read";
  append(path_, "four\n");
  ASSERT_TRUE(f.wait_for_lines(4));
  f.stop();
  EXPECT_EQ(f.lines(), (Lines{"one", "two", "three", "four"}));
  EXPECT_EQ(f.notices_with("truncated"), 1U) << ::testing::PrintToString(f.notices());
  EXPECT_EQ(followed(f).truncations(), 1U);
}

// logrotate's copytruncate: the writer keeps its O_APPEND descriptor, the
// file is copied and truncated in place, the writer goes on at offset 0.
TEST_F(FollowTest, FollowsACopytruncateRotation) {
  const int writer = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ASSERT_GE(writer, 0);
  auto write_line = [writer](const std::string& text) {
    ASSERT_EQ(::write(writer, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  };
  write_line("before rotation 1\nbefore rotation 2\n");
  Follower f(path_);
  ASSERT_TRUE(f.wait_for_lines(2));
  std::filesystem::copy_file(path_, path_ + ".1");
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  Follower::let_it_poll();
  write_line("after\n");
  ASSERT_TRUE(f.wait_for_lines(3)) << "nothing read after the copytruncate";
  f.stop();
  ::close(writer);
  EXPECT_EQ(f.lines(), (Lines{"before rotation 1", "before rotation 2", "after"}));
  EXPECT_EQ(f.notices_with("truncated"), 1U) << ::testing::PrintToString(f.notices());
}

// logrotate's default: rename the file, create a new one. What the writer
// still adds to the renamed file (its last line unterminated) is read before
// the new file, which is read from its start.
TEST_F(FollowTest, FinishesTheRenamedFileThenReadsTheNewOne) {
  append(path_, "old 1\n");
  Follower f(path_);
  ASSERT_TRUE(f.wait_for_lines(1));
  std::filesystem::rename(path_, path_ + ".1");
  append(path_ + ".1", "old 2\nold 3 without newline");
  append(path_, "new 1\n");
  ASSERT_TRUE(f.wait_for_lines(4)) << ::testing::PrintToString(f.lines());
  append(path_, "new 2\n");
  ASSERT_TRUE(f.wait_for_lines(5));
  f.stop();
  EXPECT_EQ(f.lines(), (Lines{"old 1", "old 2", "old 3 without newline", "new 1", "new 2"}));
  EXPECT_EQ(f.notices_with("the old file was read to its end"), 1U)
      << ::testing::PrintToString(f.notices());
  EXPECT_EQ(followed(f).reopens(), 1U);
  EXPECT_EQ(followed(f).truncations(), 0U);
}

TEST_F(FollowTest, WaitsForAFileThatDoesNotExistYet) {
  Follower f(path_);
  ASSERT_EQ(f.open_error(), "") << "a missing file is waited for with --follow";
  Follower::let_it_poll();
  EXPECT_EQ(f.notices_with("does not exist yet"), 1U) << ::testing::PrintToString(f.notices());
  append(path_, "hello\n");
  ASSERT_TRUE(f.wait_for_lines(1));
  f.stop();
  EXPECT_EQ(f.lines(), (Lines{"hello"}));
  EXPECT_EQ(f.notices_with("has appeared"), 1U) << ::testing::PrintToString(f.notices());
  // Without --follow a missing file is still an error (OpenNamesAMissingFile).
}

TEST_F(FollowTest, WaitsForADeletedFileToBeRecreated) {
  append(path_, "first\n");
  Follower f(path_);
  ASSERT_TRUE(f.wait_for_lines(1));
  std::filesystem::remove(path_);
  Follower::let_it_poll();
  Follower::let_it_poll();  // several polls, one notice
  EXPECT_EQ(f.notices_with("No such file or directory"), 1U)
      << ::testing::PrintToString(f.notices());
  append(path_, "second\n");
  ASSERT_TRUE(f.wait_for_lines(2));
  f.stop();
  EXPECT_EQ(f.lines(), (Lines{"first", "second"}));
  EXPECT_EQ(f.notices_with("has appeared again"), 1U) << ::testing::PrintToString(f.notices());
  EXPECT_EQ(followed(f).reopens(), 1U);
  EXPECT_EQ(f.read_error(), "");
}

// Wall-clock bounds: a *Timing suite runs alone (RUN_SERIAL, CMakeLists.txt
// ckpt_unit_tests), never beside other tests under the sanitizers (issue 40).
class FollowTiming : public FollowTest {};

// A stop takes at most two polls (200 ms each) plus 300 ms. Measured alone
// under ASan+UBSan on the 2-core CI machine: 0-200 ms over 20 runs (docs/ci.md).
TEST_F(FollowTiming, StopsPromptlyWhileWaiting) {
  const auto limit = 2 * kFollowPoll + std::chrono::milliseconds(300);
  append(path_, "only line\n");
  Follower f(path_);
  ASSERT_TRUE(f.wait_for_lines(1));
  const auto begin = std::chrono::steady_clock::now();
  f.stop();
  const auto stopped = std::chrono::steady_clock::now() - begin;
  EXPECT_LT(stopped, limit);
  Follower absent(dir_ + "/never.log");
  Follower::let_it_poll();
  const auto waiting = std::chrono::steady_clock::now();
  absent.stop();
  const auto stopped_absent = std::chrono::steady_clock::now() - waiting;
  EXPECT_LT(stopped_absent, limit);
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  std::printf("stops took %lld ms and %lld ms (limit %lld ms)\n",
              static_cast<long long>(duration_cast<milliseconds>(stopped).count()),
              static_cast<long long>(duration_cast<milliseconds>(stopped_absent).count()),
              static_cast<long long>(duration_cast<milliseconds>(limit).count()));
}

TEST_F(FollowTest, APathThatIsNoFileIsAnError) {
  Follower f(dir_);
  EXPECT_NE(f.open_error().find(dir_), std::string::npos) << f.open_error();
  EXPECT_NE(f.open_error().find("Is a directory"), std::string::npos) << f.open_error();
}

}  // namespace
}  // namespace ckpt::logwatch
