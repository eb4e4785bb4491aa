// Inputs read whole, never past their limit (files/input_file.h, issue 36).
#include "files/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/sigpipe_block.h"
#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using test::ScratchDir;
using ::testing::HasSubstr;

constexpr InputLimit kSmall{1000, "a test input is small", true};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(InputFile, AFileAtTheLimitIsReadWhole) {
  ScratchDir dir;
  const std::string path = dir / "at.json";
  const std::string text(kSmall.bytes, 'x');
  write_file(path, text);
  auto read = read_file_bounded(path, kSmall, "--config");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, text);
}

TEST(InputFile, OneByteOverTheLimitIsRefusedNamingFlagFileLimitAndWhy) {
  ScratchDir dir;
  const std::string path = dir / "over.json";
  write_file(path, std::string(kSmall.bytes + 1, 'x'));
  auto read = read_file_bounded(path, kSmall, "--config");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message,
            "--config " + path + ": larger than 1000 bytes; a test input is small");
}

TEST(InputFile, AnEmptyFileIsEmptyText) {
  ScratchDir dir;
  write_file(dir / "empty", "");
  auto read = read_file_bounded(dir / "empty", kSmall, "");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, "");
}

TEST(InputFile, DevZeroIsRefusedAtOnceAsNotText) {
  auto read = read_file_bounded("/dev/zero", kSmall, "--sacct-json");
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message,
              HasSubstr("--sacct-json /dev/zero: not a text file (a NUL "
                        "byte at byte 0); is it a device such as /dev/zero?"));
}

TEST(InputFile, DevZeroWhereNulIsAllowedStopsAtTheLimit) {
  const InputLimit binary{1u << 20, "a log", false};
  auto read = read_file_bounded("/dev/zero", binary, "--torchelastic");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "--torchelastic /dev/zero: larger than 1 MiB; a log");
}

TEST(InputFile, ANulLaterInAFileIsNamedByItsOffset) {
  ScratchDir dir;
  write_file(dir / "nul.csv", std::string("node,time\n") + std::string(1, '\0') + "x");
  auto read = read_file_bounded(dir / "nul.csv", kSmall, "--sessions");
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("not a text file (a NUL byte at byte 10)"));
}

TEST(InputFile, AMissingFileAndADirectorySayWhat) {
  ScratchDir dir;
  auto missing = read_file_bounded(dir / "nope.json", kSmall, "--rules");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "--rules " + (dir / "nope.json") + ": cannot read it: No such file or directory");
  auto directory = read_file_bounded(dir.path().string(), kSmall, "model");
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().message, HasSubstr("is a directory, not a file"));
}

// A FIFO has no size to check: it is read up to the limit and no further,
// whatever the writer has left.
TEST(InputFile, AFifoIsReadUpToTheLimitAndNoFurther) {
  ScratchDir dir;
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread endless([&] {
    SigpipeBlock no_sigpipe;
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string chunk(4096, 'y');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  });
  auto read = read_file_bounded(fifo, InputLimit{64 * 1024, "", true}, "--sessions");
  endless.join();  // the reader is gone: its writes fail with EPIPE
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "--sessions " + fifo + ": larger than 64 KiB");

  std::thread small([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string text = "a,b\n1,2\n";
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
  });
  auto whole = read_file_bounded(fifo, kSmall, "--sessions");
  small.join();
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(*whole, "a,b\n1,2\n");
}

TEST(InputFile, ADescriptorIsReadToItsEndUnderTheLimit) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const std::string text = "{\"request\": 1}";
  ASSERT_EQ(::write(pipe_fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(pipe_fds[1]);
  auto read = read_fd_bounded(pipe_fds[0], "<stdin>", kSmall, "request");
  ::close(pipe_fds[0]);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, text);

  ASSERT_EQ(::pipe(pipe_fds), 0);
  const std::string big(kSmall.bytes + 10, 'z');
  ASSERT_EQ(::write(pipe_fds[1], big.data(), big.size()), static_cast<ssize_t>(big.size()));
  ::close(pipe_fds[1]);
  auto over = read_fd_bounded(pipe_fds[0], "-", kSmall, "classify");
  ::close(pipe_fds[0]);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message, "classify -: larger than 1000 bytes; a test input is small");
}

TEST(InputFile, AProcFileOfSizeZeroIsReadToItsEnd) {
  auto read = read_file_bounded("/proc/self/status", InputLimit{1u << 20, "", true}, "");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_THAT(*read, HasSubstr("Name:"));
}

TEST(InputFile, LimitsAreWrittenInTheirLargestWholeUnit) {
  EXPECT_EQ(limit_text(16u << 20), "16 MiB");
  EXPECT_EQ(limit_text(1u << 30), "1 GiB");
  EXPECT_EQ(limit_text(64 * 1024), "64 KiB");
  EXPECT_EQ(limit_text(1000), "1000 bytes");
  EXPECT_EQ(limit_text((1u << 20) + 1), "1048577 bytes");
}

}  // namespace
}  // namespace ckpt
