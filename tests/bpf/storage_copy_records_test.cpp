// Copies the storage makes itself (bpf/jobio_storage_copies.bpf.h): a reflink
// through ioctl(FICLONE) and ioctl(FICLONERANGE) on an XFS file system (a
// loop device here; GNU cp tries FICLONE before anything else) is one copy
// record with via CKPT_VIA_REFLINK and the bytes cloned; one the file system
// refuses (ext4: EOPNOTSUPP) is a record with the error, which user space
// does not call a failure; any other ioctl is none of ours. The NFS 4.2 COPY
// (CKPT_VIA_SERVER_COPY) runs in the tests/vm guests (scenario file-layer).
// In every probe mode this kernel allows.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jobio.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "tests/bpf/harness.h"
#include "tests/bpf/self_trace.h"

namespace ckpt::test {
namespace {

// An XFS file system (reflink=1, mkfs.xfs's default) on a loop device over a
// sparse file in `dir`, mounted at dir/xfs; unmounted (the loop device goes
// with it, autoclear) when done. mkfs.xfs comes with xfsprogs
// (scripts/install-deps.sh): without it the test fails, saying so.
class XfsMount {
 public:
  explicit XfsMount(const ScratchDir& dir) : image_(dir / "xfs.img"), mount_(dir / "xfs") {
    std::filesystem::create_directory(mount_);
    {
      const int fd = open(image_.c_str(), O_CREAT | O_WRONLY, 0600);
      if (fd < 0 || ftruncate(fd, 512L << 20) != 0) error_ = "cannot make " + image_;
      if (fd >= 0) close(fd);
    }
    if (!error_.empty()) return;
    auto mkfs = run({"mkfs.xfs", "-q", "-m", "reflink=1", image_}, dir);
    if (mkfs.code != 0) {
      error_ = "mkfs.xfs failed (install xfsprogs: scripts/install-deps.sh): " + mkfs.err;
      return;
    }
    auto mounted = run({"mount", "-o", "loop", image_, mount_}, dir);
    if (mounted.code != 0) {
      error_ = "mount -o loop of an XFS image failed: " + mounted.err;
      return;
    }
    mounted_ = true;
  }
  ~XfsMount() {
    if (mounted_) umount2(mount_.c_str(), MNT_DETACH);
  }
  XfsMount(const XfsMount&) = delete;
  XfsMount& operator=(const XfsMount&) = delete;

  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::string operator/(const std::string& name) const { return mount_ + "/" + name; }

 private:
  std::string image_;
  std::string mount_;
  std::string error_;
  bool mounted_ = false;
};

class StorageCopyRecords : public ::testing::TestWithParam<RequestedProbeMode> {
 protected:
  void SetUp() override {
    if (const std::string why = cannot_trace_here(GetParam()); !why.empty()) GTEST_SKIP() << why;
    auto started = trace_this_process(GetParam(), [this](const void* d, size_t n) { add(d, n); });
    ASSERT_TRUE(started) << started.error().message;
    probes_ = std::move(*started);
  }

  void add(const void* data, size_t size) {
    ckpt_record_header h{};
    ASSERT_GE(size, sizeof(h));
    std::memcpy(&h, data, sizeof(h));
    if (h.kind == CKPT_REC_COPY && h.tgid == static_cast<uint32_t>(getpid())) {
      ASSERT_EQ(size, sizeof(ckpt_copy_record));
      copies_.push_back(*static_cast<const ckpt_copy_record*>(data));
    }
  }

  // The copy records whose destination is `dst`.
  std::vector<ckpt_copy_record> copies_into(const std::string& dst) const {
    const FileIdentity d = identity_of(dst);
    std::vector<ckpt_copy_record> out;
    for (const auto& c : copies_)
      if (c.dst_dev == d.kernel_dev && c.dst_ino == d.ino) out.push_back(c);
    return out;
  }

  static void write_file(const std::string& path, size_t size) {
    std::vector<char> buf(size, 'r');
    const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(write(fd, buf.data(), buf.size()), static_cast<ssize_t>(buf.size()));
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }

  ScratchDir dir_;
  std::vector<ckpt_copy_record> copies_;
  std::unique_ptr<ProbeManager> probes_;
};

TEST_P(StorageCopyRecords, AReflinkIsOneCopyOfTheBytesItCloned) {
  XfsMount xfs(dir_);
  ASSERT_EQ(xfs.error(), "");
  const std::string src = xfs / "shard-0.pt";
  const std::string whole = xfs / "whole.pt";
  const std::string part = xfs / "part.pt";
  constexpr size_t kSize = (8 << 20) + 123;
  write_file(src, kSize);
  const int in = open(src.c_str(), O_RDONLY);
  const int out = open(whole.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  const int out2 = open(part.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_TRUE(in >= 0 && out >= 0 && out2 >= 0);
  ASSERT_EQ(ioctl(out, FICLONE, in), 0) << std::strerror(errno);
  file_clone_range range{};
  range.src_fd = in;
  range.src_offset = 1 << 20;
  range.src_length = 2 << 20;
  ASSERT_EQ(ioctl(out2, FICLONERANGE, &range), 0) << std::strerror(errno);
  int unread = 0;
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  ASSERT_EQ(ioctl(pipe_fds[0], FIONREAD, &unread), 0);  // no clone: no record
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  close(in);
  close(out);
  close(out2);
  drain(*probes_);

  const FileIdentity s = identity_of(src);
  auto whole_copies = copies_into(whole);
  ASSERT_EQ(whole_copies.size(), 1u);
  EXPECT_EQ(whole_copies[0].via, CKPT_VIA_REFLINK);
  EXPECT_EQ(whole_copies[0].ret, static_cast<int64_t>(kSize)) << "the whole source";
  EXPECT_EQ(whole_copies[0].src_ino, s.ino);
  EXPECT_EQ(whole_copies[0].src_dev, s.kernel_dev);
  auto part_copies = copies_into(part);
  ASSERT_EQ(part_copies.size(), 1u);
  EXPECT_EQ(part_copies[0].via, CKPT_VIA_REFLINK);
  EXPECT_EQ(part_copies[0].ret, 2 << 20) << "the range asked for";
  EXPECT_EQ(copies_.size(), 2u) << "FIONREAD is no copy";
  for (const auto& d : probes_->drops()) EXPECT_EQ(d.count, 0u) << d.source << "." << d.cause;
}

// ext4 shares no extents: GNU cp's first try fails with EOPNOTSUPP, and the
// record says so (user space does not make it a failure).
TEST_P(StorageCopyRecords, AReflinkTheFileSystemRefusesCarriesItsError) {
  const std::string src = dir_ / "shard-0.pt";
  const std::string dst = dir_ / "copy.pt";
  write_file(src, 1 << 20);
  const int in = open(src.c_str(), O_RDONLY);
  const int out = open(dst.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_TRUE(in >= 0 && out >= 0);
  const int refused = ioctl(out, FICLONE, in);
  const int err = errno;
  close(in);
  close(out);
  if (refused == 0) GTEST_SKIP() << dir_.path() << " shares extents: nothing refused here";
  drain(*probes_);
  auto copies = copies_into(dst);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].via, CKPT_VIA_REFLINK);
  EXPECT_EQ(copies[0].ret, -err);
}

INSTANTIATE_TEST_SUITE_P(Modes, StorageCopyRecords, kBothModes, mode_name);

}  // namespace
}  // namespace ckpt::test
