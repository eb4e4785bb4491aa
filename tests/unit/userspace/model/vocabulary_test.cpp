// The shared vocabulary: every failure kind once, spelled as the outputs have
// always spelled it, documented, and the kinds the code emits all in it.
#include "model/vocabulary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runner/kernel_events.h"

namespace ckpt {
namespace {

std::string read_file(const std::string& relative) {
  std::ifstream in(std::string(CKPTSCOPE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << relative << " is missing";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::set<std::string> all_kinds() {
  return {std::begin(kAllFailureKinds), std::end(kAllFailureKinds)};
}

TEST(Vocabulary, FailureKindsAreUniqueAndNonEmpty) {
  EXPECT_EQ(all_kinds().size(), std::size(kAllFailureKinds));
  for (std::string_view k : kAllFailureKinds) {
    EXPECT_FALSE(k.empty());
    EXPECT_TRUE(is_failure_kind(k)) << k;
  }
  EXPECT_FALSE(is_failure_kind("no_such_kind"));
  EXPECT_FALSE(is_failure_kind(""));
}

// The strings are the trace's, the metrics' labels and the alert rules':
// renaming one is a breaking change, so the spelling is pinned here.
TEST(Vocabulary, FailureKindsKeepTheirSpelling) {
  EXPECT_THAT(std::vector<std::string>(std::begin(kAllFailureKinds), std::end(kAllFailureKinds)),
              ::testing::ElementsAre(
                  "enospc", "edquot", "estale", "eio", "erofs", "etimedout", "io_error", "stall",
                  "partial_save", "tcp_reset", "tcp_retransmit_storm", "tcp_zero_window",
                  "nfs_server_not_responding", "rpc_enospc", "rpc_edquot", "rpc_estale", "rpc_eio",
                  "rpc_erofs", "rpc_etimedout", "rpc_error", "gpu_xid", "oom_kill",
                  "kernel_nfs_not_responding", "log_anomaly", "node_gpu_xid", "job_log_incomplete",
                  "nvswitch_error", "machine_check", "pcie_aer_uncorrectable",
                  "memory_ecc_uncorrectable", "nic_link_down", "nic_health",
                  "storage_server_timeout", "filesystem_error", "disk_io_error",
                  "nvme_controller_error", "hung_task", "cpu_lockup", "rcu_stall", "kernel_oops"));
  EXPECT_THAT(std::vector<std::string>(std::begin(kAllStages), std::end(kAllStages)),
              ::testing::ElementsAre("gpu_copy", "serialize", "host_io", "metadata", "storage",
                                     "nfs_client", "rpc_queue", "rpc_rtt", "transport"));
}

TEST(Vocabulary, RpcKindsAreTheErrnoKindsWithTheirPrefix) {
  ASSERT_EQ(std::size(kRpcFailureKinds), std::size(kErrnoFailureKinds));
  for (size_t i = 0; i < std::size(kErrnoFailureKinds); ++i) {
    const std::string rpc = rpc_failure_kind(kErrnoFailureKinds[i]);
    EXPECT_EQ(rpc, kRpcFailureKinds[i]);
    EXPECT_EQ(rpc, "rpc_" + std::string(kErrnoFailureKinds[i]));
    EXPECT_TRUE(is_failure_kind(rpc)) << rpc;
    EXPECT_TRUE(is_failure_kind(kErrnoFailureKinds[i])) << kErrnoFailureKinds[i];
  }
  EXPECT_FALSE(is_rpc_failure_of("rpc_eio", "estale"));
  EXPECT_FALSE(is_rpc_failure_of("eio", "eio"));
}

// What the kernel-log faults become: each a kind of the vocabulary.
TEST(Vocabulary, KernelFaultFailuresAreInTheList) {
  const char* lines[] = {
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
      "nfs: server nfs01 not responding, still trying",
      "nfs: server nfs01 OK",
      "Out of memory: Killed process 40822 (python) total-vm:8923144kB, anon-rss:511920kB",
  };
  std::set<std::string> seen;
  for (const char* line : lines) {
    KernelFaultRecord r;
    r.record.text = line;
    auto f = match_kernel_fault(line);
    ASSERT_TRUE(f) << line;
    r.fault = *f;
    const FailureRecord failure = to_failure_record(r);
    EXPECT_TRUE(is_failure_kind(failure.kind)) << failure.kind;
    seen.insert(failure.kind);
  }
  EXPECT_EQ(seen, (std::set<std::string>{std::string(kFailureGpuXid), std::string(kFailureOomKill),
                                         std::string(kFailureKernelNfsNotResponding)}));
}

// The kinds the docs' failure tables name (docs/stitching.md "Failures", the
// kernel-log table of docs/failures.md) are the vocabulary's, and every kind
// of the vocabulary is documented for users somewhere.
TEST(Vocabulary, DocumentedKindsAreTheVocabulary) {
  const std::string stitching = read_file("docs/stitching.md");
  const size_t begin = stitching.find("## Failures");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = stitching.find("\n## ", begin + 1);
  const std::string table = stitching.substr(begin, end - begin);
  std::set<std::string> documented;
  const std::regex row(R"(\n\| ([^|]+) \|)");
  const std::regex word("`([a-z_]+)`");
  for (std::sregex_iterator r(table.begin(), table.end(), row), none; r != none; ++r) {
    const std::string cell = (*r)[1];
    for (std::sregex_iterator w(cell.begin(), cell.end(), word); w != none; ++w)
      documented.insert((*w)[1]);
  }
  const std::string failures = read_file("docs/failures.md");
  for (const char* kernel_kind : {"`gpu_xid`", "`kernel_nfs_not_responding`", "`oom_kill`"}) {
    ASSERT_NE(failures.find(kernel_kind), std::string::npos) << kernel_kind;
    documented.insert(std::string(kernel_kind).substr(1, std::strlen(kernel_kind) - 2));
  }
  for (const std::string& k : documented) EXPECT_TRUE(is_failure_kind(k)) << k;

  const std::string everywhere =
      stitching + failures + read_file("docs/logwatch.md") + read_file("deploy/metrics.md");
  for (std::string_view k : kAllFailureKinds)
    EXPECT_NE(everywhere.find("`" + std::string(k) + "`"), std::string::npos)
        << k << " is documented nowhere";
}

}  // namespace
}  // namespace ckpt
