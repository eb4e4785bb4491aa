#include "probes/kernel_hz.h"

#include <sys/utsname.h>

#include <gtest/gtest.h>

namespace ckpt {
namespace {

TEST(KernelHz, TheConfigsLineAndNothingElse) {
  EXPECT_EQ(kernel_hz_from_config("# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"),
            250u);
  EXPECT_EQ(kernel_hz_from_config("CONFIG_HZ=1000"), 1000u) << "the last line, no newline";
  EXPECT_EQ(kernel_hz_from_config("CONFIG_HZ_1000=y\n"), std::nullopt);
  EXPECT_EQ(kernel_hz_from_config("CONFIG_HZ=0\n"), std::nullopt);
  EXPECT_EQ(kernel_hz_from_config("CONFIG_HZ=25x\n"), std::nullopt);
  EXPECT_EQ(kernel_hz_from_config(""), std::nullopt);
}

// Every kernel this project runs on says its HZ (Debian's: /boot/config-*,
// this CI host: /proc/config.gz).
TEST(KernelHz, ThisKernelsHz) {
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  auto hz = kernel_hz(u.release);
  ASSERT_TRUE(hz) << hz.error().message;
  EXPECT_TRUE(*hz == 100 || *hz == 250 || *hz == 300 || *hz == 1000) << *hz;
}

}  // namespace
}  // namespace ckpt
