#include "sources/path_resolver.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace ckpt {
namespace {

TEST(NormalizePathTest, Cases) {
  EXPECT_EQ(normalize_path("/a//b/./c/../d"), "/a/b/d");
  EXPECT_EQ(normalize_path("/.."), "/");
  EXPECT_EQ(normalize_path("rel/x"), "rel/x");
}

TEST(PathResolverTest, RelativeToCwdAndDirfd) {
  PathResolver r;
  const uint32_t self = static_cast<uint32_t>(getpid());
  std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(r.resolve(self, AT_FDCWD, "ckpt/a.pt"), cwd + "/ckpt/a.pt");
  EXPECT_EQ(r.resolve(self, AT_FDCWD, "/abs/./b.pt"), "/abs/b.pt");
  int dirfd = open("/tmp", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dirfd, 0);
  EXPECT_EQ(r.resolve(self, dirfd, "x/../y.pt"), "/tmp/y.pt");
  close(dirfd);
}

TEST(PathResolverTest, OpenFileWithoutOpenRecordResolvesThroughProc) {
  PathResolver r;
  char tmpl[] = "/tmp/ckpt-resolver-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  struct stat st {};
  fstat(fd, &st);
  FileId id{st.st_dev, st.st_ino};
  EXPECT_EQ(r.path_of(static_cast<uint32_t>(getpid()), fd, id), tmpl);
  close(fd);
  unlink(tmpl);
  // Remembered: the fd is gone but the file's identity still has its name.
  EXPECT_EQ(r.path_of(static_cast<uint32_t>(getpid()), fd, id), tmpl);
}

TEST(PathResolverTest, DeadProcessKeepsLastKnownCwd) {
  PathResolver r;
  const uint32_t self = static_cast<uint32_t>(getpid());
  (void)r.resolve(self, AT_FDCWD, "warm");  // caches our cwd
  r.forked(self, 999999);
  std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(r.resolve(999999, AT_FDCWD, "a.pt"), cwd + "/a.pt");
  EXPECT_EQ(r.resolve(999998, AT_FDCWD, "a.pt"), "a.pt") << "unknown: kept as given";
}

}  // namespace
}  // namespace ckpt
