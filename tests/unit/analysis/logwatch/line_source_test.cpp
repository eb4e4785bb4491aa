#include "analysis/logwatch/line_source.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

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
  FdLineSource source(fds[0], true, false, nullptr);
  auto lines = read_all(source);
  writer.join();
  std::vector<std::string> want = {"first line", "second", "third without newline"};
  EXPECT_EQ(lines, want);
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
  FdLineSource source(fds[0], true, false, nullptr);
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

}  // namespace
}  // namespace ckpt::logwatch
