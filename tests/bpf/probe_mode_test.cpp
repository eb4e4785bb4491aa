// The probe mode on this kernel, as root (issue 18): the feature probe's
// answer about trampolines, --probe-mode file_layer refused before the job
// where the kernel cannot, syscall and auto running the job traced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "harness.h"
#include "probes/kernel_features.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;

TEST(ProbeMode, TheFeatureProbeSaysWhetherFentryAttachesAndWhyNot) {
  REQUIRE_ROOT();
  const KernelFeatures f = KernelFeatures::probe();
  // The BTF facts the selection reads, read from this kernel.
  EXPECT_TRUE(f.btf_functions.contains("vfs_read"));
  EXPECT_TRUE(f.btf_tracepoints.contains("sched_switch"));
  EXPECT_TRUE(f.io_uring_complete_params == 4 || f.io_uring_complete_params == 8)
      << f.io_uring_complete_params;
  // The probe's answer against an independent check's (tests/machine_checks.h).
  const std::string refusal = fentry_refusal();
  EXPECT_EQ(f.trampolines, refusal.empty()) << refusal;
  if (refusal.empty()) {
    EXPECT_EQ(f.trampoline_note, "");
    GTEST_SKIP() << "the kernel allows fentry: its refusal cannot be checked here";
  }
  // This project's host (6.18) refuses fentry with EPERM even as root.
  EXPECT_THAT(f.trampoline_note, HasSubstr("EPERM (Operation not permitted)")) << f.release;
  EXPECT_THAT(f.trampoline_note, HasSubstr("vfs_read"));
}

TEST(ProbeMode, FileLayerWhereTheKernelCannotIsAnErrorBeforeTheJob) {
  REQUIRE_ROOT();
  if (fentry_refusal().empty())
    GTEST_SKIP() << "the kernel allows fentry: its refusal cannot be checked here";
  ScratchDir dir;
  auto r = run({kCkptscope, "run", "--trace", dir / "t.db", "--log-dir", dir / "logs",
                "--probe-mode", "file_layer", "--", "touch", dir / "ran"},
               dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--probe-mode file_layer: the file-layer probes cannot run here"));
  EXPECT_THAT(r.err, HasSubstr("EPERM"));
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
}

TEST(ProbeMode, SyscallAndAutoRunTheJobTracedAndSayTheMode) {
  REQUIRE_ROOT();
  const bool fentry = KernelFeatures::probe().trampolines;
  for (const char* mode : {"syscall", "auto"}) {
    ScratchDir dir;
    auto r = run({kCkptscope, "run", "--no-exporter", "--trace", dir / "t.db", "--log-dir",
                  dir / "logs", "--probe-mode", mode, "--", "true"},
                 dir);
    EXPECT_EQ(r.code, 0) << mode << ": " << r.err;
    const std::string expected =
        std::string(mode) == "syscall" || !fentry ? "syscall" : "file_layer";
    EXPECT_THAT(r.err, HasSubstr("note: probe mode " + expected + ":")) << mode << ": " << r.err;
    Trace t = read_trace_or_fail(dir / "t.db");
    EXPECT_TRUE(t.job.traced) << mode << ": " << t.job.trace_warning;
  }
}

}  // namespace
}  // namespace ckpt::test
