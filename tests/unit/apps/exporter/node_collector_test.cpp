// The exporter's routing, with known answers: processes to workloads by
// their cgroup (a fake /proc), a stitcher per workload (two jobs
// checkpointing at once stay two checkpoints), the node's NFS events to
// every workload but node-level failures counted once, forks, cgroup moves,
// idle workloads retired with their drops kept.
#include "apps/exporter/node_collector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kT0 = 1'000'000 * kMs;  // a monotonic time well past boot

// "name{labels} value" lines of the exposition, by "name{labels}".
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

class NodeCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MetricsOptions mo;
    mo.version = "test";
    mo.kernel = "test";
    metrics_ = std::make_unique<CheckpointMetrics>(mo);
    NodeCollectorOptions o;
    o.namer.proc_root = scratch_.path().string();
    o.namer.pod_log_root = scratch_ / "pods";
    o.workload_idle_ns = 60'000 * kMs;
    config_ = Config::defaults();
    node_ = NodeCollector::without_probes(config_, o, *metrics_);
    in_cgroup(100, "/system.slice/slurmstepd.scope/job_42/step_0/user/task_0");
    in_cgroup(200, "/system.slice/slurmstepd.scope/job_43/step_0/user/task_0");
    in_cgroup(300, "/user.slice/user-1000.slice/session-1.scope");
  }

  void in_cgroup(uint32_t tgid, const std::string& path) {
    std::filesystem::create_directories(scratch_ / std::to_string(tgid));
    std::ofstream(scratch_ / (std::to_string(tgid) + "/cgroup")) << "0::" << path << "\n";
  }
  void gone(uint32_t tgid) { std::filesystem::remove_all(scratch_ / std::to_string(tgid)); }

  void write(uint32_t tgid, const std::string& path, uint64_t ino, uint64_t t0, uint64_t t1,
             int64_t bytes) {
    IoEvent e;
    e.tgid = tgid;
    e.tid = tgid;
    e.op = IoOp::Write;
    e.start_ns = t0;
    e.end_ns = t1;
    e.path = path;
    e.file = FileId{8, ino};
    e.ret = bytes;
    e.requested = static_cast<uint64_t>(bytes);
    e.cpu_window_start_ns = t0;
    sink().on_event(std::move(e));
  }
  void proc(ProcEvent::Kind kind, uint32_t tgid, uint32_t child = 0, uint64_t t = kT0) {
    ProcEvent e;
    e.kind = kind;
    e.tgid = tgid;
    e.tid = tgid;
    e.child_tgid = child;
    e.time_ns = t;
    sink().on_event(std::move(e));
  }
  void rpc_timeout(uint64_t t) {
    RpcEvent e;
    e.kind = RpcEvent::Kind::Timeout;
    e.time_ns = t;
    e.start_ns = t - 60'000 * kMs;
    e.execute_ns = 60'000 * kMs;
    e.op = "WRITE";
    e.server = "10.0.0.9:2049";
    e.timeouts = 1;
    e.xid = 7;
    sink().on_event(std::move(e));
  }
  EventSink& sink() { return *node_; }
  std::map<std::string, double> now() { return samples(metrics_->exposition()); }
  double bytes(const std::string& workload, const char* direction = "save") {
    return now()[std::string("ckptscope_checkpoint_bytes_total{direction=\"") + direction +
                 "\",stage=\"host_io\",workload=\"" + workload + "\"}"];
  }
  double checkpoints(const std::string& workload, const char* direction = "save") {
    return now()[std::string("ckptscope_checkpoints_total{direction=\"") + direction +
                 "\",outcome=\"ok\",workload=\"" + workload + "\"}"];
  }

  test::ScratchDir scratch_;
  Config config_;
  std::unique_ptr<CheckpointMetrics> metrics_;
  std::unique_ptr<NodeCollector> node_;
};

TEST_F(NodeCollectorTest, TwoJobsCheckpointingAtOnceAreTwoCheckpoints) {
  node_->step(kT0);
  // Job 42 writes 4 MiB, job 43 2 MiB, interleaved in time on the same node.
  for (int i = 0; i < 4; ++i) {
    const uint64_t t = kT0 + static_cast<uint64_t>(i) * 10 * kMs;
    write(100, "/ckpt/a/checkpoint-1/shard-0.pt", 11, t, t + 4 * kMs, static_cast<int64_t>(kMiB));
    if (i < 2)
      write(200, "/ckpt/b/checkpoint-1/shard-0.pt", 22, t + 5 * kMs, t + 8 * kMs,
            static_cast<int64_t>(kMiB));
  }
  // Past the quiet gap, both close.
  node_->step(kT0 + 10'000 * kMs);
  EXPECT_EQ(bytes("slurm-42"), 4.0 * kMiB);
  EXPECT_EQ(bytes("slurm-43"), 2.0 * kMiB);
  EXPECT_EQ(checkpoints("slurm-42"), 1);
  EXPECT_EQ(checkpoints("slurm-43"), 1);
  EXPECT_EQ(node_->workloads(), 2u);
}

// The kernel's sums of calls on files ruled out feed only the run's own
// unrecognised-I/O notice: the exporter drops them, makes no workload for
// them, and its checkpoints are what they were.
TEST_F(NodeCollectorTest, SumsOfFilesRuledOutAreDroppedNotRouted) {
  node_->step(kT0);
  write(100, "/ckpt/a/checkpoint-1/shard-0.pt", 11, kT0, kT0 + 4 * kMs, static_cast<int64_t>(kMiB));
  for (uint32_t tgid : {100u, 200u, 999u}) {
    OtherIoEvent e;
    e.tgid = tgid;
    e.tid = tgid;
    e.start_ns = kT0 + kMs;
    e.end_ns = kT0 + 2 * kMs;
    e.file = FileId{8, 12};
    e.path = "/ckpt/a/out/model_state.dat";
    e.bytes_written = 64 * kMiB;
    e.write_calls = 16;
    sink().on_event(std::move(e));
  }
  EXPECT_EQ(node_->workloads(), 1u) << "no workload for a process seen only in such sums";
  node_->step(kT0 + 10'000 * kMs);
  EXPECT_EQ(bytes("slurm-42"), 1.0 * kMiB);
  EXPECT_EQ(checkpoints("slurm-42"), 1);
}

TEST_F(NodeCollectorTest, ProcessInNoJobIsOther) {
  node_->step(kT0);
  write(300, "/home/u/checkpoints/model.pt", 33, kT0, kT0 + kMs, 1000);
  node_->step(kT0 + 10'000 * kMs);
  EXPECT_EQ(bytes("other"), 1000);
  EXPECT_EQ(checkpoints("other"), 1);
}

TEST_F(NodeCollectorTest, ForkedChildGoneBeforeItsCgroupIsReadStaysInTheJob) {
  node_->step(kT0);
  write(100, "/ckpt/checkpoint-1/shard-0.pt", 11, kT0, kT0 + kMs, 100);
  proc(ProcEvent::Kind::Fork, 100, 101);  // 101 has no /proc entry: it is gone
  write(101, "/ckpt/checkpoint-1/shard-1.pt", 12, kT0 + 2 * kMs, kT0 + 3 * kMs, 200);
  node_->step(kT0 + 10'000 * kMs);
  EXPECT_EQ(bytes("slurm-42"), 300);
  EXPECT_EQ(bytes("other"), 0);
}

TEST_F(NodeCollectorTest, ProcessMovedIntoAJobCgroupFollowsItAtOnce) {
  node_->step(kT0);
  // A launcher, seen outside any job, writes its own pid into the job's
  // cgroup.procs, then execs the job (same tgid): Slurm's and container
  // runtimes' way. The write has happened when its event arrives.
  write(300, "/home/u/launcher.log", 98, kT0, kT0 + kMs, 10);
  in_cgroup(300, "/system.slice/slurmstepd.scope/job_44/step_0");
  write(300, "/sys/fs/cgroup/system.slice/job_44/cgroup.procs", 99, kT0 + kMs, kT0 + kMs, 4);
  write(300, "/ckpt/checkpoint-1/shard-0.pt", 11, kT0 + 2 * kMs, kT0 + 3 * kMs, 500);
  node_->step(kT0 + 10'000 * kMs);
  EXPECT_EQ(bytes("slurm-44"), 500);
  EXPECT_EQ(bytes("other"), 0);
}

TEST_F(NodeCollectorTest, NodeLevelFailureFromEveryWorkloadIsCountedOnce) {
  node_->step(kT0);
  // Two workloads exist (each has a stitcher), neither is checkpointing.
  write(100, "/ckpt/a/checkpoint-1/shard-0.pt", 11, kT0, kT0 + kMs, 100);
  write(200, "/ckpt/b/checkpoint-1/shard-0.pt", 22, kT0, kT0 + kMs, 100);
  node_->step(kT0 + 10'000 * kMs);
  rpc_timeout(kT0 + 20'000 * kMs);
  node_->step(kT0 + 21'000 * kMs);
  auto m = now();
  EXPECT_EQ((m["ckptscope_failures_total{kind=\"nfs_server_not_responding\",workload=\"node\"}"]),
            1);
  EXPECT_EQ(
      (m["ckptscope_failures_total{kind=\"nfs_server_not_responding\",workload=\"slurm-42\"}"]), 0);
  EXPECT_EQ((m["ckptscope_rpc_major_timeouts_total{server=\"10.0.0.9:2049\"}"]), 1);
}

TEST_F(NodeCollectorTest, ServerTroubleDuringAJobsCheckpointIsThatJobsFailure) {
  node_->step(kT0);
  write(100, "/ckpt/a/checkpoint-1/shard-0.pt", 11, kT0, kT0 + kMs, 100);
  rpc_timeout(kT0 + 2 * kMs);
  write(100, "/ckpt/a/checkpoint-1/shard-0.pt", 11, kT0 + 3 * kMs, kT0 + 4 * kMs, 100);
  node_->step(kT0 + 10'000 * kMs);
  auto m = now();
  EXPECT_EQ(
      (m["ckptscope_failures_total{kind=\"nfs_server_not_responding\",workload=\"slurm-42\"}"]), 1);
  EXPECT_EQ((m["ckptscope_checkpoints_total{direction=\"save\",outcome=\"failed\",workload="
               "\"slurm-42\"}"]),
            1);
}

TEST_F(NodeCollectorTest, IdleWorkloadWithNoProcessIsRetiredAndItsOpenCheckpointCounted) {
  node_->step(kT0);
  write(100, "/ckpt/a/checkpoint-1/shard-0.pt", 11, kT0, kT0 + kMs, 100);
  proc(ProcEvent::Kind::Exit, 100, 0, kT0 + 2 * kMs);
  write(200, "/ckpt/b/checkpoint-1/shard-0.pt", 22, kT0, kT0 + kMs, 100);
  EXPECT_EQ(node_->workloads(), 2u);
  node_->step(kT0 + 30'000 * kMs);  // before the idle limit
  EXPECT_EQ(node_->workloads(), 2u);
  node_->step(kT0 + 61'000 * kMs);
  // Job 42 has no live process and was idle for a minute: gone. Job 43's
  // process never exited: kept.
  EXPECT_EQ(node_->workloads(), 1u);
  EXPECT_EQ(bytes("slurm-42"), 100);
  // Its series stay (counters never go back).
  EXPECT_EQ(checkpoints("slurm-42"), 1);
}

TEST_F(NodeCollectorTest, WorkloadsPastTheBoundShareOther) {
  MetricsOptions mo;
  mo.max_jobs = 1;
  CheckpointMetrics bounded(mo);
  NodeCollectorOptions o;
  o.namer.proc_root = scratch_.path().string();
  auto node = NodeCollector::without_probes(config_, o, bounded);
  node->step(kT0);
  auto w = [&](uint32_t tgid, uint64_t ino) {
    IoEvent e;
    e.tgid = e.tid = tgid;
    e.op = IoOp::Write;
    e.start_ns = kT0;
    e.end_ns = kT0 + kMs;
    e.path = "/ckpt/checkpoint-1/s" + std::to_string(ino) + ".pt";
    e.file = FileId{8, ino};
    e.ret = 10;
    static_cast<EventSink&>(*node).on_event(std::move(e));
  };
  w(100, 1);
  w(200, 2);
  node->step(kT0 + 10'000 * kMs);
  auto m = samples(bounded.exposition());
  EXPECT_EQ((m["ckptscope_checkpoint_bytes_total{direction=\"save\",stage=\"host_io\",workload="
               "\"slurm-42\"}"]),
            10);
  EXPECT_EQ((m["ckptscope_checkpoint_bytes_total{direction=\"save\",stage=\"host_io\",workload="
               "\"other\"}"]),
            10);
  EXPECT_EQ(node->workloads(), 2u);
}

}  // namespace
}  // namespace ckpt
