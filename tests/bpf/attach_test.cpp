// `ckptscope attach` to a job that is already running, by pid and by cgroup.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.h"
#include "probes/kernel_features.h"

namespace ckpt::test {
namespace {

// Starts `sh -c 'sleep DELAY; WORKLOAD...'` in the background; returns its pid.
pid_t start_delayed_job(const ScratchDir& dir, const std::string& delay) {
  std::string cmd =
      "sleep " + delay + "; " +
      join({kWorkload, "--dir", dir / "ckpt", "--shards", "3", "--shard-size", "1M",
            "--checkpoints", "1", "--gap-ms", "1200", "--ground-truth", dir / "truth.json"});
  std::string launch = join({"/bin/sh", "-c", cmd}) + " >/dev/null 2>&1 & echo $!";
  FILE* p = popen(launch.c_str(), "r");
  int pid = 0;
  if (p) {
    if (fscanf(p, "%d", &pid) != 1) pid = 0;
    pclose(p);
  }
  return pid;
}

TEST(AttachTest, FollowsAPidAndItsChildrenUntilTheyAreGone) {
  REQUIRE_ROOT();
  ScratchDir dir;
  pid_t job = start_delayed_job(dir, "1");
  ASSERT_GT(job, 0);
  auto start = std::chrono::steady_clock::now();
  auto r =
      run({kCkptscope, "attach", "--pid", std::to_string(job), "--trace", dir / "trace.db"}, dir);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(took, std::chrono::seconds(30)) << "stopped when the job ended";
  auto truth = read_json(dir / "truth.json");
  Trace t = read_trace_or_fail(dir / "trace.db");
  EXPECT_EQ(t.job.mode, "attach");
  ASSERT_EQ(t.checkpoints.size(), 2u) << r.err;
  EXPECT_EQ(t.checkpoints[0].bytes, truth["checkpoints"][0]["bytes"].get<uint64_t>());
  EXPECT_EQ(t.checkpoints[1].bytes, truth["checkpoints"][1]["bytes"].get<uint64_t>());
  EXPECT_EQ(t.checkpoints[0].files, 3u);
}

TEST(AttachTest, StopsAtDuration) {
  REQUIRE_ROOT();
  ScratchDir dir;
  std::string launch = "sleep 30 >/dev/null 2>&1 & echo $!";
  FILE* p = popen(launch.c_str(), "r");
  int pid = 0;
  ASSERT_EQ(fscanf(p, "%d", &pid), 1);
  pclose(p);
  auto start = std::chrono::steady_clock::now();
  auto r = run({kCkptscope, "attach", "--pid", std::to_string(pid), "--duration", "1", "--trace",
                dir / "trace.db", "--quiet"},
               dir);
  auto took = std::chrono::steady_clock::now() - start;
  kill(pid, SIGKILL);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_TRUE(read_trace_or_fail(dir / "trace.db").job.traced);
}

// A relative --checkpoint-dir names a directory of the job's: it is taken
// from the process's working directory, not attach's own.
TEST(AttachTest, ARelativeCheckpointDirIsTakenFromTheJobsWorkingDirectory) {
  REQUIRE_ROOT();
  ScratchDir dir;
  std::filesystem::create_directories(dir / "job");
  std::string launch = "cd " + quote(dir / "job") + " && exec sleep 30 >/dev/null 2>&1 & echo $!";
  FILE* p = popen(launch.c_str(), "r");
  int pid = 0;
  ASSERT_EQ(fscanf(p, "%d", &pid), 1);
  pclose(p);
  // The pid is the background subshell's, which changes directory only when
  // it gets to run: attaching before that would read the launcher's.
  const std::filesystem::path job_cwd = std::filesystem::path(dir / "job");
  const std::string cwd_link = "/proc/" + std::to_string(pid) + "/cwd";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::error_code ec;
  while (std::filesystem::read_symlink(cwd_link, ec) != job_cwd &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(std::filesystem::read_symlink(cwd_link, ec), job_cwd)
      << "the job never reached its directory";
  auto r = run({kCkptscope, "attach", "--pid", std::to_string(pid), "--duration", "0.5",
                "--checkpoint-dir", "./mine", "--trace", dir / "trace.db", "--quiet"},
               dir);
  kill(pid, SIGKILL);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string config = read_trace_or_fail(dir / "trace.db").job.config_json;
  EXPECT_THAT(config, ::testing::HasSubstr("\"" + (dir / "job/mine") + "\"")) << config;
  EXPECT_THAT(config, ::testing::Not(::testing::HasSubstr("\"" + (dir / "mine") + "\"")));
}

TEST(AttachTest, FollowsACgroup) {
  REQUIRE_ROOT();
  KernelFeatures f = KernelFeatures::probe();
  // Read independently of the probe: a probe that misses the mount fails here.
  const std::string cgroup2 = cgroup2_mount_point();
  ASSERT_NE(cgroup2, "") << "no cgroup2 mount in /proc/self/mountinfo: mount one "
                            "(mount -t cgroup2 none /sys/fs/cgroup/unified)";
  ASSERT_TRUE(f.cgroup_v2);
  ASSERT_EQ(f.cgroup_v2_root, cgroup2);
  ScratchDir dir;
  std::string cg = f.cgroup_v2_root + "/ckptscope-test-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(cg.c_str(), 0755), 0) << std::strerror(errno);
  // The job joins the cgroup itself, then checkpoints.
  std::string cmd = "echo $$ > " + quote(cg + "/cgroup.procs") + "; sleep 1; " +
                    join({kWorkload, "--dir", dir / "ckpt", "--shards", "2", "--shard-size", "1M",
                          "--checkpoints", "1", "--mode", "save"});
  std::string launch = join({"/bin/sh", "-c", cmd}) + " >/dev/null 2>&1 & echo $!";
  FILE* p = popen(launch.c_str(), "r");
  int pid = 0;
  ASSERT_EQ(fscanf(p, "%d", &pid), 1);
  pclose(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto r = run(
      {kCkptscope, "attach", "--cgroup", cg, "--trace", dir / "trace.db", "--duration", "20"}, dir);
  rmdir(cg.c_str());
  ASSERT_EQ(r.code, 0) << r.err;
  Trace t = read_trace_or_fail(dir / "trace.db");
  ASSERT_EQ(t.checkpoints.size(), 1u) << r.err;
  EXPECT_EQ(t.checkpoints[0].bytes, 2u << 20);
}

TEST(AttachTest, BadTargetsAreClearErrors) {
  ScratchDir dir;
  auto none = run({kCkptscope, "attach", "--trace", dir / "t.db"}, dir);
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.err, ::testing::HasSubstr("--pid PID or --cgroup PATH"));
  auto gone = run({kCkptscope, "attach", "--pid", "999999999", "--trace", dir / "t.db"}, dir);
  EXPECT_EQ(gone.code, 2);
  EXPECT_THAT(gone.err, ::testing::HasSubstr("no such process"));
  auto notcg =
      run({kCkptscope, "attach", "--cgroup", dir.path().string(), "--trace", dir / "t.db"}, dir);
  EXPECT_EQ(notcg.code, 2);
  EXPECT_THAT(notcg.err, ::testing::HasSubstr("not a cgroup"));
}

}  // namespace
}  // namespace ckpt::test
