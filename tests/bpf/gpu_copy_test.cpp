// The gpu_copy stage end to end on the collector's side, without a GPU: a
// job that speaks libckptscope_cupti.so's protocol (fake_cupti_job.py sends
// the library's messages and writes and reads real checkpoint files) under
// `ckptscope run`, which names the socket in the job's environment. The
// trace's gpu_copy stage holds exactly the copies' bytes, pageable and
// pinned apart, ordered before host_io on the save. tests/gpu/ runs the same
// checks with the real library on a GPU machine.
#include <gmock/gmock.h>

#include "harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;

const std::string kFakeJob = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/bpf/fake_cupti_job.py";

const StageRecord* stage_of(const CheckpointRecord& c, std::string_view name) {
  for (const auto& s : c.stages)
    if (s.name == name) return &s;
  return nullptr;
}

TEST(GpuCopyTest, TheJobsCopiesAreItsCheckpointsGpuCopyStage) {
  REQUIRE_ROOT();
  ScratchDir dir;
  // Any file stands in for the library: the job reports for it.
  const std::string env = "CKPTSCOPE_CUPTI_LIB=" + kFakeJob + " ";
  auto r =
      run({kCkptscope, "run", "--quiet", "--trace", dir / "t.db", "--log", dir / "job.log", "--",
           "/usr/bin/python3", kFakeJob, dir / "ckpt", "4", "2097152", dir / "truth.json"},
          dir, env);
  ASSERT_EQ(r.code, 0) << r.err;
  Trace t = read_trace_or_fail(dir / "t.db");
  ASSERT_EQ(t.checkpoints.size(), 2u) << r.err;
  const CheckpointRecord& save = t.checkpoints[0];
  const CheckpointRecord& load = t.checkpoints[1];
  ASSERT_EQ(save.direction, Direction::Save);
  ASSERT_EQ(load.direction, Direction::Load);
  const StageRecord* save_gpu = stage_of(save, "gpu_copy");
  const StageRecord* load_gpu = stage_of(load, "gpu_copy");
  ASSERT_NE(save_gpu, nullptr) << t.job.trace_warning;
  ASSERT_NE(load_gpu, nullptr);
  EXPECT_EQ(save_gpu->bytes, 4u * 2097152u);
  EXPECT_EQ(load_gpu->bytes, 4u * 2097152u);
  ASSERT_TRUE(save.gpu && load.gpu);
  EXPECT_EQ(save.gpu->copies, 4u);
  EXPECT_EQ(save.gpu->pageable_bytes, 2u * 2097152u);
  EXPECT_EQ(save.gpu->pinned_bytes, 2u * 2097152u);
  EXPECT_EQ(load.gpu->pinned_bytes, 4u * 2097152u);
  EXPECT_EQ(load.gpu->async_copies, 4u);
  EXPECT_EQ(save.gpu->devices, std::vector<std::string>{"0000:3b:00.0"});
  // Against the job's own record of its copies: the same times, inside the
  // run, the save's first copy before its first write.
  auto truth = read_json(dir / "truth.json");
  uint64_t first_save = UINT64_MAX, last_load = 0;
  for (const auto& c : truth["copies"]) {
    if (c["phase"] == "save") first_save = std::min(first_save, c["start_ns"].get<uint64_t>());
    if (c["phase"] == "load") last_load = std::max(last_load, c["end_ns"].get<uint64_t>());
  }
  EXPECT_EQ(save.gpu->first_ns, first_save);
  // The save's window covers its copies (its mkdir came first here).
  EXPECT_LE(save.start_ns, first_save);
  EXPECT_EQ(load.gpu->last_ns, last_load);
  EXPECT_EQ(load.end_ns, last_load);  // the load ends with its last copy
  EXPECT_GE(save.start_ns, t.job.start_mono_ns);
  EXPECT_LE(load.end_ns, t.job.end_mono_ns);
  ASSERT_FALSE(save.file_io.empty());
  EXPECT_LT(save.gpu->first_ns, save.file_io[0].first_ns);
  for (const auto& d : t.drops) EXPECT_EQ(d.count, 0u) << d.source << "/" << d.cause;
}

TEST(GpuCopyTest, NoGpuLeavesTheJobAloneAndTheStageAbsent) {
  REQUIRE_ROOT();
  ScratchDir dir;
  const std::string env = "CKPTSCOPE_CUPTI_LIB=" + kFakeJob + " ";
  // Without the socket the job exits 3 (it says why): `run` hands that back.
  auto r = run(
      {kCkptscope, "run", "--quiet", "--no-gpu", "--trace", dir / "t.db", "--log", dir / "job.log",
       "--", "/usr/bin/python3", kFakeJob, dir / "ckpt", "1", "4096", dir / "truth.json"},
      dir, env);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(slurp(dir / "job.log"), HasSubstr("no CKPTSCOPE_CUPTI_SOCKET"));
}

TEST(GpuCopyTest, AnotherToolsInjectionIsLeftInPlaceAndSaidSo) {
  REQUIRE_ROOT();
  ScratchDir dir;
  const std::string env = "CKPTSCOPE_CUPTI_LIB=" + kFakeJob +
                          " CUDA_INJECTION64_PATH=/opt/nsight/libToolsInjection64.so ";
  auto r = run({kCkptscope, "run", "--quiet", "--trace", dir / "t.db", "--log", dir / "job.log",
                "--", "/bin/sh", "-c", "echo \"$CUDA_INJECTION64_PATH\""},
               dir, env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(slurp(dir / "job.log"), HasSubstr("/opt/nsight/libToolsInjection64.so"));
  Trace t = read_trace_or_fail(dir / "t.db");
  EXPECT_THAT(t.job.trace_warning, HasSubstr("CUDA_INJECTION64_PATH is already set"));
}

}  // namespace
}  // namespace ckpt::test
