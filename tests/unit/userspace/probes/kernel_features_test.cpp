// nfs_tracing_available on fake sysfs trees: modules absent, loaded without
// BTF, loaded with BTF, built in. KernelFeatures::probe asked not to try
// trampolines.
#include "probes/kernel_features.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class NfsModulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ckpt-sysfs-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "kernel/btf");
    std::ofstream(root_ / "kernel/btf/vmlinux") << "";
  }
  void TearDown() override { fs::remove_all(root_); }
  void module(const std::string& name, bool loadable, bool btf) {
    fs::create_directories(root_ / "module" / name);
    if (loadable) std::ofstream(root_ / "module" / name / "initstate") << "live\n";
    if (btf) std::ofstream(root_ / "kernel/btf" / name) << "";
  }
  fs::path root_;
};

TEST_F(NfsModulesTest, NoModulesMeansNoNfsYet) {
  auto r = nfs_tracing_available(root_.string());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("sunrpc module is not loaded"));
}

TEST_F(NfsModulesTest, ModulesWithoutBtfAreNamed) {
  module("sunrpc", true, true);
  module("nfs", true, false);
  auto r = nfs_tracing_available(root_.string());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("nfs module has no BTF"));
  EXPECT_THAT(r.error().message, HasSubstr("mountstats"));
}

TEST_F(NfsModulesTest, LoadedWithBtfOrBuiltInIsAvailable) {
  module("sunrpc", true, true);
  module("nfs", true, true);
  EXPECT_TRUE(nfs_tracing_available(root_.string()));
  fs::remove_all(root_ / "module");
  module("sunrpc", false, false);  // built in: its types are in vmlinux
  module("nfs", false, false);
  EXPECT_TRUE(nfs_tracing_available(root_.string()));
}

// --probe-mode syscall: no fentry program is tried (attaching one patches
// vfs_read's call site, twice), and the note says so; the rest is probed.
TEST(KernelFeaturesTest, SkippedTrampolinesAreNotTriedAndSaySo) {
  const KernelFeatures f = KernelFeatures::probe(KernelFeatures::Trampolines::kSkip);
  EXPECT_FALSE(f.trampolines);
  EXPECT_FALSE(f.release.empty());
  // Whether the kernel has BTF, from the file itself, not from the probe.
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    GTEST_SKIP() << "the kernel has no BTF (/sys/kernel/btf/vmlinux): the BTF facts are not read";
  EXPECT_TRUE(f.btf_vmlinux);
  EXPECT_THAT(f.trampoline_note, HasSubstr("fentry not tried: the syscall probes"));
  EXPECT_FALSE(f.btf_tracepoints.empty());  // the BTF was still read
}

}  // namespace
}  // namespace ckpt
