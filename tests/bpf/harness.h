// Helpers for the real-kernel tests: run the built binaries as a user
// would, in a scratch directory, and read back what they wrote.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "exporters/sqlite/trace_store.h"
#include "tests/bpf/fentry_check.h"
#include "tests/machine_checks.h"
#include "tests/scratch_dir.h"

namespace ckpt::test {

inline const std::string kCkptscope = CKPTSCOPE_BIN;
inline const std::string kWorkload = WORKLOAD_BIN;

inline bool is_root() { return geteuid() == 0; }

#define REQUIRE_ROOT() \
  if (!::ckpt::test::is_root()) GTEST_SKIP() << "needs root to load eBPF programs"

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + quote(a);
  return out;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int code = -1;  // shell-style: 128+N for signal N
  std::string out;
  std::string err;
};

// Runs argv with stdout/stderr captured into files in `dir`.
inline RunResult run(const std::vector<std::string>& argv, const ScratchDir& dir,
                     const std::string& prefix = "") {
  const std::string out = dir / "stdout.txt";
  const std::string err = dir / "stderr.txt";
  std::string cmd = prefix + join(argv) + " >" + quote(out) + " 2>" + quote(err);
  int status = std::system(cmd.c_str());
  RunResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// The workload saving (then loading) one checkpoint of 2 x 1 MiB in `dir`:
// a small job whose bytes are known.
inline std::vector<std::string> small_checkpoint_job(const ScratchDir& dir) {
  return {kWorkload,      "--dir", dir / "ckpt",    "--shards", "2",
          "--shard-size", "1M",    "--checkpoints", "1",        "--fsync"};
}

// `ckptscope run` of small_checkpoint_job as node `node`, its trace at
// dir/t.db and its log at dir/job.log.
inline RunResult run_small_traced_job(const ScratchDir& dir, const std::string& node) {
  std::vector<std::string> argv = {kCkptscope, "run",        "--quiet", "--node-name",   node,
                                   "--trace",  dir / "t.db", "--log",   dir / "job.log", "--"};
  for (auto& a : small_checkpoint_job(dir)) argv.push_back(a);
  return run(argv, dir);
}

inline Trace read_trace_or_fail(const std::string& path) {
  auto t = read_trace(path);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return t ? *t : Trace{};
}

inline nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(slurp(path));
}

}  // namespace ckpt::test
