#include "sources/path_resolver.h"

#include <fcntl.h>
#include <sys/mman.h>
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

TEST(PathResolverTest, AMappedFileIsFoundInProcMapsByDeviceAndInode) {
  PathResolver r;
  const uint32_t self = static_cast<uint32_t>(getpid());
  char tmpl[] = "/tmp/ckpt-mapped-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8192), 0);
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  void* map = mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  close(fd);  // only the mapping names the file now
  const FileId id{st.st_dev, st.st_ino};
  EXPECT_EQ(r.mapped_path(self, FileId{st.st_dev, st.st_ino + 1}), "") << "another inode";
  EXPECT_EQ(r.mapped_path(self, FileId{st.st_dev + 1, st.st_ino}), "") << "another device";
  EXPECT_EQ(r.mapped_path(self, id), tmpl);
  unlink(tmpl);
  // Unlinked: the kernel appends " (deleted)"; the name is what it was.
  EXPECT_EQ(PathResolver().mapped_path(self, id), tmpl);
  munmap(map, 8192);
  // Remembered once found.
  EXPECT_EQ(r.path_of(self, -1, id), tmpl);
  EXPECT_EQ(PathResolver().mapped_path(self, id), "") << "no mapping left";
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

// A traced chdir outranks /proc, which shows where the process is when the
// record is read, not when the call was made; a child inherits it; a
// directory renamed takes the working directories below it along.
TEST(PathResolverTest, ATracedChdirOutranksProc) {
  PathResolver r;
  const uint32_t self = static_cast<uint32_t>(getpid());
  r.changed_dir(self, "/mnt/nfs/ckpt/./step_1");
  EXPECT_EQ(r.resolve(self, AT_FDCWD, "a.pt"), "/mnt/nfs/ckpt/step_1/a.pt")
      << "not our real cwd, " << std::filesystem::current_path();
  r.forked(self, 999999);
  EXPECT_EQ(r.resolve(999999, AT_FDCWD, "b.pt"), "/mnt/nfs/ckpt/step_1/b.pt");
  r.renamed("/mnt/nfs/ckpt", "/mnt/nfs/ckpt-old");
  EXPECT_EQ(r.resolve(999999, AT_FDCWD, "b.pt"), "/mnt/nfs/ckpt-old/step_1/b.pt");
  r.changed_dir(self, "");  // fchdir of an fd we cannot name: back to /proc
  EXPECT_EQ(r.resolve(self, AT_FDCWD, "a.pt"), std::filesystem::current_path().string() + "/a.pt");
}

// cp -r: the destination directory opened, then each file relative to its
// fd, by a process gone before /proc is read.
TEST(PathResolverTest, ADeadProcessesDirfdResolvesThroughItsOpen) {
  PathResolver r("/nonexistent-proc");
  r.opened(4242, 4, "/mnt/nfs/ckpt/step_1");
  EXPECT_EQ(r.resolve(4242, 4, "shard-0.pt"), "/mnt/nfs/ckpt/step_1/shard-0.pt");
  EXPECT_EQ(r.resolve(4242, 5, "shard-0.pt"), "shard-0.pt") << "an fd no open returned";
  r.opened(4242, 4, "/mnt/nfs/ckpt/step_2");  // the fd number reused by a newer open
  EXPECT_EQ(r.resolve(4242, 4, "shard-1.pt"), "/mnt/nfs/ckpt/step_2/shard-1.pt");
  r.forked(4242, 4343);
  EXPECT_EQ(r.resolve(4343, 4, "x.pt"), "/mnt/nfs/ckpt/step_2/x.pt") << "inherited by a child";
  r.exited(4242);
  EXPECT_EQ(r.resolve(4242, 4, "shard-1.pt"), "shard-1.pt");
}

// rsync's receiver walks to its destination one openat(dirfd, name) at a
// time, closing and reusing fd numbers: by the time a record is read, /proc
// shows the number as something else (here: our own stdin). The traced open
// that returned the fd names it; /proc only for an fd no open we saw returned.
TEST(PathResolverTest, ATracedOpenOfAnFdOutranksWhatProcShowsNow) {
  PathResolver r;
  const uint32_t self = static_cast<uint32_t>(getpid());
  r.opened(self, 0, "/mnt/nfs/ckpt/step_2");
  EXPECT_EQ(r.resolve(self, 0, "shard-0.pt"), "/mnt/nfs/ckpt/step_2/shard-0.pt");
  EXPECT_EQ(r.fd_dir(self, 0), "/mnt/nfs/ckpt/step_2");
  const int dir = open("/", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  EXPECT_EQ(r.resolve(self, dir, "etc"), "/etc") << "no open of it seen: /proc";
  close(dir);
}

// A staging directory renamed into a checkpoint's (Orbax, Hugging Face):
// the files and directories known below it are told under the new name.
TEST(PathResolverTest, ADirectoryRenameRenamesWhatIsKnownBelowIt) {
  PathResolver r("/nonexistent-proc");
  const FileId weights{7, 100};
  const FileId deeper{7, 101};
  const FileId beside{7, 102};
  r.remember(weights, "/job/out/tmp_save/weights.bin");
  r.remember(deeper, "/job/out/tmp_save/sub/optim.bin");
  r.remember(beside, "/job/out/tmp_save2/weights.bin");
  r.opened(4242, 5, "/job/out/tmp_save/sub");
  EXPECT_FALSE(r.renamed("/job/out/tmp_save", "/job/out/step_100"))
      << "the directory itself was never opened: no identity";
  EXPECT_EQ(r.path_of(4242, 9, weights), "/job/out/step_100/weights.bin");
  EXPECT_EQ(r.path_of(4242, 9, deeper), "/job/out/step_100/sub/optim.bin");
  EXPECT_EQ(r.path_of(4242, 9, beside), "/job/out/tmp_save2/weights.bin")
      << "a name that only begins the same is no child";
  EXPECT_EQ(r.resolve(4242, 5, "x.bin"), "/job/out/step_100/sub/x.bin") << "an open dirfd too";
  // The new names are the files' names now: a later rename of the file itself finds it.
  EXPECT_EQ(r.renamed("/job/out/step_100/weights.bin", "/job/out/step_100/model.bin"), weights);
  EXPECT_EQ(r.path_of(4242, 9, weights), "/job/out/step_100/model.bin");
}

}  // namespace
}  // namespace ckpt
