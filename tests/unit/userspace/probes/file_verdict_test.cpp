// The verdict map's key: user space's dev_t back to the kernel's encoding
// (MKDEV: major << 20 | minor), the inverse of what sources make of a
// record's dev, including minors past 255 (glibc splits their bits).
#include "probes/file_verdict.h"

#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include "jobio.h"
#include "sources/jobio_source.h"

namespace ckpt {
namespace {

TEST(FileVerdict, UserDevBackToTheKernelEncoding) {
  EXPECT_EQ(user_dev_to_kernel(makedev(8, 1)), (8ull << 20) | 1);      // sda1
  EXPECT_EQ(user_dev_to_kernel(makedev(259, 3)), (259ull << 20) | 3);  // nvme0n1p3
  EXPECT_EQ(user_dev_to_kernel(makedev(0, 54)), 54ull);                // overlay, tmpfs
  EXPECT_EQ(user_dev_to_kernel(makedev(0, 70000)), 70000ull);          // a big minor
  EXPECT_EQ(user_dev_to_kernel(makedev(4095, (1u << 20) - 1)), (4095ull << 20) | 0xFFFFF);
}

TEST(FileVerdict, RoundTripsWithTheSourcesDecoding) {
  for (uint64_t kdev :
       {0ull, 54ull, (8ull << 20) | 1, (259ull << 20) | 70000, (4095ull << 20) | 0xFFFFF}) {
    EXPECT_EQ(user_dev_to_kernel(kernel_dev_to_user(kdev)), kdev) << kdev;
  }
  const FileId file{kernel_dev_to_user((253ull << 20) | 300), 123456};
  const FileVerdictKey key = file_verdict_key(file);
  EXPECT_EQ(key.dev, (253ull << 20) | 300);
  EXPECT_EQ(key.ino, 123456u);
}

TEST(FileVerdict, ValuesAreTheContractsEnum) {
  EXPECT_EQ(file_verdict_value(true), CKPT_VERDICT_CHECKPOINT);
  EXPECT_EQ(file_verdict_value(false), CKPT_VERDICT_OTHER);
}

}  // namespace
}  // namespace ckpt
