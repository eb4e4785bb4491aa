// Runs the built ckptscope-workload binary and checks its files, exit
// statuses and ground truth: the figures profiler tests compare against.
//
// Built into workload_tests by tools/workload/CMakeLists.txt. tests/CMakeLists.txt
// globs every unit/*_test.cpp into unit_tests too, which neither builds nor
// knows the workload binary, so the body compiles only where
// CKPTSCOPE_WORKLOAD_TESTS is defined.
#ifdef CKPTSCOPE_WORKLOAD_TESTS

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/machine_checks.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                        "/ckptscope-workload-test-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << templ << ": " << std::strerror(errno);
    }
    // Resolved, since the workload reports resolved absolute paths.
    char resolved[PATH_MAX];
    path_ = ::realpath(templ.c_str(), resolved) != nullptr ? resolved : templ;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;

  [[nodiscard]] bool exited() const { return WIFEXITED(status); }
  [[nodiscard]] int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  [[nodiscard]] int signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
};

// A started ckptscope-workload with stdout/stderr going to files in dir.
class Process {
 public:
  Process(const std::vector<std::string>& args, const std::string& dir) {
    static int counter = 0;
    const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(counter++);
    out_path_ = dir + "/.stdout-" + tag;
    err_path_ = dir + "/.stderr-" + tag;
    std::vector<std::string> argv_text = {CKPTSCOPE_WORKLOAD_BIN};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (pid_ < 0) ADD_FAILURE() << "fork: " << std::strerror(errno);
  }
  ~Process() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }

  [[nodiscard]] pid_t pid() const { return pid_; }

  // Waits up to timeout; kills the process (and fails the test) past it.
  Outcome wait(std::chrono::seconds timeout = std::chrono::seconds(120)) {
    Outcome outcome;
    const auto deadline = Clock::now() + timeout;
    while (pid_ > 0) {
      const pid_t done = ::waitpid(pid_, &outcome.status, WNOHANG);
      if (done == pid_) break;
      if (done < 0 && errno != EINTR) {
        ADD_FAILURE() << "waitpid: " << std::strerror(errno);
        break;
      }
      if (Clock::now() > deadline) {
        ADD_FAILURE() << "ckptscope-workload did not finish in time; killing it";
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &outcome.status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    waited_ = true;
    outcome.out = slurp(out_path_);
    outcome.err = slurp(err_path_);
    return outcome;
  }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  std::string out_path_;
  std::string err_path_;
};

Outcome run(const std::vector<std::string>& args, const TempDir& dir) {
  return Process(args, dir.path()).wait();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

json load_json(const std::string& path) {
  const std::string text = slurp(path);
  auto j = json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not JSON: " << text;
  return j;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

const std::vector<uint64_t> kOddSizes = {1000001, 4097, 65536};
constexpr uint64_t kBlock = 65536;

TEST(WorkloadRunTest, SavesAndLoadsOddShardsWithExactGroundTruth) {
  TempDir tmp;
  const std::string root = tmp / "ckpts";
  const std::string truth = tmp / "truth.json";
  const Outcome r = run({"--dir", root, "--shard-sizes", "1000001,4097,64K", "--checkpoints", "2",
                         "--block-size", "64K", "--gap-ms", "0", "--ground-truth", truth},
                        tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  EXPECT_TRUE(contains(r.out, "save checkpoint-1: 3 files, 1069634 bytes")) << r.out;

  uint64_t per_checkpoint = 0;
  for (const uint64_t size : kOddSizes) per_checkpoint += size;
  for (int k = 1; k <= 2; ++k) {
    for (size_t i = 0; i < kOddSizes.size(); ++i) {
      const std::string file =
          root + "/checkpoint-" + std::to_string(k) + "/shard-" + std::to_string(i) + ".pt";
      ASSERT_TRUE(fs::exists(file)) << file;
      EXPECT_EQ(fs::file_size(file), kOddSizes[i]) << file;
    }
  }

  const json gt = load_json(truth);
  EXPECT_EQ(gt["schema"], "ckptscope-workload-ground-truth/1");
  EXPECT_TRUE(gt["ok"].get<bool>());
  EXPECT_EQ(gt["processes"], 1);
  EXPECT_EQ(gt["threads"], 1);
  ASSERT_EQ(gt["worker_pids"].size(), 1u);
  EXPECT_EQ(gt["worker_pids"][0], gt["pid"]);
  EXPECT_EQ(gt["config"]["dir"], root);
  EXPECT_EQ(gt["config"]["shard_sizes"], json(kOddSizes));
  ASSERT_EQ(gt["checkpoints"].size(), 4u);
  const std::vector<std::string> directions = {"save", "save", "load", "load"};
  const std::vector<int> numbers = {1, 2, 1, 2};
  for (size_t c = 0; c < 4; ++c) {
    const json& cp = gt["checkpoints"][c];
    const bool save = directions[c] == "save";
    EXPECT_EQ(cp["index"], c + 1);
    EXPECT_EQ(cp["direction"], directions[c]);
    EXPECT_EQ(cp["checkpoint"], numbers[c]);
    EXPECT_EQ(cp["dir"], root + "/checkpoint-" + std::to_string(numbers[c]));
    EXPECT_EQ(cp["bytes"], per_checkpoint);
    EXPECT_EQ(cp["tcp_bytes_sent"], 0);
    EXPECT_TRUE(cp["failures"].empty());
    EXPECT_LE(cp["start_ns"].get<uint64_t>(), cp["end_ns"].get<uint64_t>());
    if (c > 0) {
      EXPECT_GE(cp["start_ns"].get<uint64_t>(), gt["checkpoints"][c - 1]["end_ns"].get<uint64_t>());
    }
    ASSERT_EQ(cp["files"].size(), kOddSizes.size());
    for (size_t i = 0; i < kOddSizes.size(); ++i) {
      const json& f = cp["files"][i];
      EXPECT_EQ(f["shard"], i);
      EXPECT_EQ(f["path"], cp["dir"].get<std::string>() + "/shard-" + std::to_string(i) + ".pt");
      EXPECT_EQ(f["pid"], gt["pid"]);
      EXPECT_EQ(f[save ? "bytes_written" : "bytes_read"], kOddSizes[i]);
      // Regular files on a local filesystem take whole blocks, so the call
      // count is exact: one per block, the last one short.
      EXPECT_EQ(f[save ? "write_calls" : "read_calls"], ceil_div(kOddSizes[i], kBlock));
      EXPECT_TRUE(f["complete"].get<bool>());
      EXPECT_FALSE(f["o_direct"].get<bool>());
      EXPECT_LE(cp["start_ns"].get<uint64_t>(), f["start_ns"].get<uint64_t>());
      EXPECT_LE(f["end_ns"].get<uint64_t>(), cp["end_ns"].get<uint64_t>());
      // A load reads back exactly what the save of that checkpoint wrote.
      if (!save) {
        EXPECT_EQ(f["checksum"], gt["checkpoints"][c - 2]["files"][i]["checksum"]);
      }
    }
  }
  // Different checkpoints hold different bytes, so a stale file cannot pass.
  EXPECT_NE(gt["checkpoints"][0]["files"][0]["checksum"],
            gt["checkpoints"][1]["files"][0]["checksum"]);

  const json& totals = gt["totals"];
  EXPECT_EQ(totals["bytes_written"], 2 * per_checkpoint);
  EXPECT_EQ(totals["bytes_read"], 2 * per_checkpoint);
  EXPECT_EQ(totals["files_written"], 6);
  EXPECT_EQ(totals["files_read"], 6);
  EXPECT_EQ(totals["write_calls"], 2 * (16 + 1 + 1));
  EXPECT_EQ(totals["read_calls"], 2 * (16 + 1 + 1));
  EXPECT_EQ(totals["fsync_calls"], 0);
  EXPECT_EQ(totals["tcp_bytes_sent"], 0);
  EXPECT_EQ(totals["checkpoints_saved"], 2);
  EXPECT_EQ(totals["checkpoints_loaded"], 2);
}

TEST(WorkloadRunTest, LoadFailsLoudlyOnCorruptOrShortShards) {
  TempDir tmp;
  const std::string root = tmp / "ckpts";
  const std::vector<std::string> common = {"--dir",         root, "--shard-sizes", "100000,5000",
                                           "--checkpoints", "1",  "--gap-ms",      "0",
                                           "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  ASSERT_EQ(run(with({"--mode", "save"}), tmp).code(), 0);
  ASSERT_EQ(run(with({"--mode", "load"}), tmp).code(), 0);
  // A different seed means different expected bytes: verification must fail.
  const Outcome seeded = run(with({"--mode", "load", "--seed", "2"}), tmp);
  EXPECT_EQ(seeded.code(), 1);
  EXPECT_TRUE(contains(seeded.err, "content differs from what was saved at byte 0")) << seeded.err;

  const std::string shard = root + "/checkpoint-1/shard-1.pt";
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(4321);
    const char c = static_cast<char>(f.get());
    f.seekp(4321);
    f.put(static_cast<char>(c ^ 0x40));
  }
  const Outcome flipped = run(with({"--mode", "load"}), tmp);
  EXPECT_EQ(flipped.code(), 1);
  EXPECT_TRUE(contains(flipped.err, "ckptscope-workload: verify " + shard +
                                        ": content differs from what was saved at byte 4321"))
      << flipped.err;

  fs::resize_file(shard, 4999);
  const Outcome short_file = run(with({"--mode", "load"}), tmp);
  EXPECT_EQ(short_file.code(), 1);
  EXPECT_TRUE(contains(short_file.err, "file has 4999 bytes, the checkpoint saved 5000"))
      << short_file.err;

  fs::remove(shard);
  const Outcome missing = run(with({"--mode", "load"}), tmp);
  EXPECT_EQ(missing.code(), 1);
  EXPECT_TRUE(contains(missing.err, "open " + shard + ": No such file or directory"))
      << missing.err;
}

TEST(WorkloadRunTest, FormatsFsyncAndRenameCommit) {
  TempDir tmp;
  const std::string root = tmp / "ckpts";
  const std::string truth = tmp / "truth.json";
  Outcome r = run({"--dir", root, "--shards", "2", "--shard-size", "12345", "--checkpoints", "1",
                   "--gap-ms", "0", "--format", "safetensors", "--fsync", "--rename-commit",
                   "--mode", "save", "--ground-truth", truth},
                  tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  for (int i = 0; i < 2; ++i) {
    const std::string file = root + "/checkpoint-1/shard-" + std::to_string(i) + ".safetensors";
    EXPECT_EQ(fs::file_size(file), 12345u);
    EXPECT_FALSE(fs::exists(file + ".tmp"));
  }
  const json gt = load_json(truth);
  const json& f = gt["checkpoints"][0]["files"][1];
  EXPECT_EQ(f["path"], root + "/checkpoint-1/shard-1.safetensors");
  EXPECT_EQ(f["tmp_path"], root + "/checkpoint-1/shard-1.safetensors.tmp");
  EXPECT_EQ(f["fsync_calls"], 1);
  EXPECT_EQ(gt["totals"]["fsync_calls"], 2);

  r = run({"--dir", root, "--shards", "2", "--shard-size", "4K", "--checkpoints", "1", "--gap-ms",
           "0", "--format", "distcp", "--quiet"},
          tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  EXPECT_TRUE(fs::exists(root + "/checkpoint-1/__0_0.distcp"));
  EXPECT_TRUE(fs::exists(root + "/checkpoint-1/__1_0.distcp"));
}

TEST(WorkloadRunTest, ProcessesAndThreadsSplitShards) {
  TempDir tmp;
  const std::string root = tmp / "ckpts";
  const std::string truth = tmp / "truth.json";
  const Outcome r = run({"--dir", root, "--shards", "5", "--shard-size", "300001", "--checkpoints",
                         "2", "--block-size", "32K", "--gap-ms", "50", "--processes", "2",
                         "--threads", "2", "--ground-truth", truth},
                        tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  const json gt = load_json(truth);
  EXPECT_EQ(gt["processes"], 2);
  EXPECT_EQ(gt["threads"], 2);
  const auto workers = gt["worker_pids"].get<std::vector<int>>();
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_NE(workers[0], workers[1]);
  EXPECT_NE(workers[0], gt["pid"].get<int>());
  ASSERT_EQ(gt["checkpoints"].size(), 4u);
  for (const json& cp : gt["checkpoints"]) {
    ASSERT_EQ(cp["files"].size(), 5u);
    EXPECT_EQ(cp["bytes"], 5 * 300001);
    for (size_t i = 0; i < 5; ++i) {
      const json& f = cp["files"][i];
      EXPECT_EQ(f["shard"], i);
      EXPECT_EQ(f["pid"], workers[i % 2]) << "shard " << i << " goes to process i % P";
      EXPECT_EQ(f[cp["direction"] == "save" ? "write_calls" : "read_calls"],
                ceil_div(300001, 32768));
    }
    // Process 0 has shards 0, 2, 4 over two threads: shards 0 and 4 share one.
    EXPECT_EQ(cp["files"][0]["tid"], cp["files"][4]["tid"]);
    EXPECT_NE(cp["files"][0]["tid"], cp["files"][2]["tid"]);
  }
  // The parent starts a checkpoint only after all workers finished the last.
  for (size_t c = 1; c < 4; ++c) {
    EXPECT_GE(gt["checkpoints"][c]["start_ns"].get<uint64_t>(),
              gt["checkpoints"][c - 1]["end_ns"].get<uint64_t>() + 50'000'000);
  }
  EXPECT_EQ(gt["totals"]["bytes_written"], 2 * 5 * 300001);
  EXPECT_EQ(gt["totals"]["bytes_read"], 2 * 5 * 300001);
  EXPECT_EQ(gt["totals"]["files_written"], 10);
}

TEST(WorkloadRunTest, ODirectWithUnalignedTail) {
  TempDir tmp;
  // Decided by the test's own O_DIRECT write, not by the workload's error.
  if (const std::string why = ckpt::test::odirect_refusal(tmp.path()); !why.empty())
    GTEST_SKIP() << why;
  const std::string root = tmp / "ckpts";
  const std::string truth = tmp / "truth.json";
  const Outcome r =
      run({"--dir", root, "--shard-sizes", "1000001,8192", "--checkpoints", "1", "--block-size",
           "64K", "--gap-ms", "0", "--o-direct", "--ground-truth", truth},
          tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  const json gt = load_json(truth);
  for (const json& cp : gt["checkpoints"]) {
    EXPECT_TRUE(cp["files"][0]["o_direct"].get<bool>());
    EXPECT_EQ(cp["files"][0][cp["direction"] == "save" ? "bytes_written" : "bytes_read"], 1000001);
  }
  EXPECT_EQ(fs::file_size(root + "/checkpoint-1/shard-0.pt"), 1000001u);
}

TEST(WorkloadRunTest, UsageErrorsExit2NamingTheFlag) {
  TempDir tmp;
  const std::string dir = tmp / "ckpts";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--dir", dir, "--shards", "0"}, "ckptscope-workload: --shards: must be at least 1"},
      {{"--dir", dir, "--shard-size", "12X"}, "ckptscope-workload: --shard-size: "},
      {{"--dir", dir, "--block-size", "64KB"}, "ckptscope-workload: --block-size: "},
      {{"--dir", dir, "--o-direct", "--block-size", "1000"}, "ckptscope-workload: --block-size: "},
      {{"--dir", dir, "--mode", "sideways"}, "ckptscope-workload: --mode: "},
      {{"--dir", dir, "--exit-signal", "NOPE"}, "ckptscope-workload: --exit-signal: "},
      {{"--dir", dir, "--checkpoints", ""}, "ckptscope-workload: --checkpoints: empty value"},
      {{"--shards", "2"}, "ckptscope-workload: --dir: required"},
      {{"--dir", dir, "--no-such-flag"}, "ckptscope-workload: "},
      {{"sink"}, "ckptscope-workload: --listen: required"},
      {{"sink", "--listen", "127.0.0.1"}, "ckptscope-workload: --listen: "},
  };
  for (const auto& [args, prefix] : cases) {
    const Outcome r = run(args, tmp);
    EXPECT_EQ(r.code(), 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << "want '" << prefix << "', got '" << r.err << "'";
  }
  EXPECT_FALSE(fs::exists(dir)) << "a usage error must not touch the disk";
  const Outcome help = run({"--help"}, tmp);
  EXPECT_EQ(help.code(), 0);
  EXPECT_TRUE(contains(help.out, "--shard-sizes"));
}

TEST(WorkloadRunTest, NoSpaceLeftExits1) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount tmpfs";
  TempDir tmp;
  const std::string mnt = tmp / "small";
  ASSERT_TRUE(fs::create_directory(mnt));
  ASSERT_EQ(::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m"), 0)
      << "root cannot mount a tmpfs: " << std::strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() {
      if (::umount(path.c_str()) != 0) ::umount2(path.c_str(), MNT_DETACH);
    }
  } unmount{mnt};

  const std::string truth = tmp / "truth.json";
  const Outcome r =
      run({"--dir", mnt + "/ckpts", "--shards", "1", "--shard-size", "4M", "--checkpoints", "2",
           "--mode", "save", "--gap-ms", "0", "--ground-truth", truth},
          tmp);
  EXPECT_EQ(r.code(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "ckptscope-workload: write " + mnt +
                                  "/ckpts/checkpoint-1/shard-0.pt: No space left on device"))
      << r.err;
  const json gt = load_json(truth);
  EXPECT_FALSE(gt["ok"].get<bool>());
  ASSERT_EQ(gt["failures"].size(), 1u);
  EXPECT_EQ(gt["failures"][0]["op"], "write");
  EXPECT_EQ(gt["failures"][0]["errno"], ENOSPC);
  // The run stops at the failed checkpoint; its figures count what the
  // kernel took before refusing, and that is what is on the disk.
  ASSERT_EQ(gt["checkpoints"].size(), 1u);
  const json& f = gt["checkpoints"][0]["files"][0];
  EXPECT_FALSE(f["complete"].get<bool>());
  EXPECT_LE(f["bytes_written"].get<uint64_t>(), 1u << 20);
  EXPECT_EQ(f["bytes_written"].get<uint64_t>(),
            fs::file_size(mnt + "/ckpts/checkpoint-1/shard-0.pt"));
}

// Starts a sink on an ephemeral port and returns it with its address.
std::pair<std::unique_ptr<Process>, std::string> start_sink(const TempDir& tmp,
                                                            std::vector<std::string> extra) {
  const std::string ready = tmp / "sink.ready";
  std::vector<std::string> args = {"sink", "--listen", "127.0.0.1:0", "--ready-file", ready};
  args.insert(args.end(), extra.begin(), extra.end());
  auto sink = std::make_unique<Process>(args, tmp.path());
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (!fs::exists(ready) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string address = slurp(ready);
  if (!address.empty() && address.back() == '\n') address.pop_back();
  EXPECT_FALSE(address.empty()) << "the sink never wrote its ready file";
  return {std::move(sink), address};
}

TEST(WorkloadRunTest, TcpOnlyBytesMatchTheSink) {
  TempDir tmp;
  const uint64_t expected = 2 * (1000001 + 4097 + 65536 + 7);
  auto [sink, address] = start_sink(tmp, {"--expect-bytes", std::to_string(expected)});
  ASSERT_FALSE(address.empty());
  const std::string truth = tmp / "truth.json";
  const Outcome r = run({"--tcp-sink", address, "--tcp-only", "--shard-sizes", "1000001,4097,64K,7",
                         "--checkpoints", "2", "--processes", "2", "--threads", "2", "--block-size",
                         "10000", "--gap-ms", "0", "--serialize-ms", "5", "--ground-truth", truth},
                        tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  const Outcome s = sink->wait(std::chrono::seconds(30));
  EXPECT_EQ(s.code(), 0) << s.err;
  EXPECT_EQ(s.out, "{\"bytes_received\":" + std::to_string(expected) + "}\n");

  const json gt = load_json(truth);
  EXPECT_EQ(gt["totals"]["tcp_bytes_sent"], expected);
  EXPECT_EQ(gt["totals"]["files_written"], 0);
  EXPECT_EQ(gt["totals"]["bytes_written"], 0);
  EXPECT_EQ(gt["config"]["dir"], nullptr);
  ASSERT_EQ(gt["checkpoints"].size(), 2u);
  for (const json& cp : gt["checkpoints"]) {
    EXPECT_EQ(cp["direction"], "save");
    EXPECT_EQ(cp["dir"], nullptr);
    EXPECT_TRUE(cp["files"].empty());
    ASSERT_EQ(cp["streams"].size(), 4u);
    EXPECT_EQ(cp["tcp_bytes_sent"], expected / 2);
    EXPECT_EQ(cp["streams"][0]["bytes_sent"], 1000001);
    EXPECT_GE(cp["streams"][0]["send_calls"].get<uint64_t>(), ceil_div(1000001, 10000));
  }
}

TEST(WorkloadRunTest, TcpAlongsideFiles) {
  TempDir tmp;
  auto [sink, address] = start_sink(tmp, {});
  ASSERT_FALSE(address.empty());
  const std::string truth = tmp / "truth.json";
  const Outcome r =
      run({"--dir", tmp / "ckpts", "--tcp-sink", address, "--shards", "3", "--shard-size", "200000",
           "--checkpoints", "1", "--gap-ms", "0", "--ground-truth", truth},
          tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  const Outcome s = sink->wait(std::chrono::seconds(30));
  EXPECT_EQ(s.code(), 0) << s.err;
  // Only saves stream; the load phase reads files.
  EXPECT_EQ(s.out, "{\"bytes_received\":600000}\n");
  const json gt = load_json(truth);
  EXPECT_EQ(gt["totals"]["tcp_bytes_sent"], 600000);
  EXPECT_EQ(gt["totals"]["bytes_written"], 600000);
  EXPECT_EQ(gt["totals"]["bytes_read"], 600000);
}

TEST(WorkloadRunTest, SinkStopsOnSigterm) {
  TempDir tmp;
  auto [sink, address] = start_sink(tmp, {"--expect-bytes", "0"});
  ASSERT_FALSE(address.empty());
  ASSERT_EQ(::kill(sink->pid(), SIGTERM), 0);
  const Outcome s = sink->wait(std::chrono::seconds(10));
  EXPECT_EQ(s.code(), 0) << s.err;
  EXPECT_EQ(s.out, "{\"bytes_received\":0}\n");
}

TEST(WorkloadRunTest, ConnectFailureExits1) {
  TempDir tmp;
  // Bind-and-close leaves a port nobody listens on.
  auto [sink, address] = start_sink(tmp, {});
  ASSERT_FALSE(address.empty());
  ::kill(sink->pid(), SIGTERM);
  sink->wait(std::chrono::seconds(10));
  const Outcome r = run({"--tcp-sink", address, "--tcp-only", "--shards", "1", "--shard-size", "4K",
                         "--checkpoints", "1", "--gap-ms", "0"},
                        tmp);
  EXPECT_EQ(r.code(), 1);
  EXPECT_TRUE(contains(r.err, "connect tcp " + address + ": Connection refused")) << r.err;
}

TEST(WorkloadRunTest, ExitCodeSignalAndSleep) {
  TempDir tmp;
  const std::vector<std::string> work = {"--dir",        tmp / "ckpts", "--shards",      "1",
                                         "--shard-size", "4K",          "--checkpoints", "1",
                                         "--gap-ms",     "0",           "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = work;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  EXPECT_EQ(run(with({}), tmp).code(), 0);
  EXPECT_EQ(run(with({"--exit-code", "7"}), tmp).code(), 7);
  EXPECT_EQ(run(with({"--exit-code", "0"}), tmp).code(), 0);
  const std::vector<std::pair<std::string, int>> signals = {
      {"TERM", SIGTERM}, {"9", SIGKILL}, {"SIGSEGV", SIGSEGV}, {"int", SIGINT}};
  for (const auto& [name, number] : signals) {
    const Outcome r = run(with({"--exit-signal", name}), tmp);
    EXPECT_FALSE(r.exited()) << name << ": " << r.err;
    EXPECT_EQ(r.signal(), number) << name;
  }
  // The work still happened and was recorded before the signal.
  const std::string truth = tmp / "truth.json";
  EXPECT_EQ(run(with({"--exit-signal", "KILL", "--ground-truth", truth}), tmp).signal(), SIGKILL);
  EXPECT_TRUE(load_json(truth)["ok"].get<bool>());

  const auto start = Clock::now();
  EXPECT_EQ(run(with({"--sleep-ms", "300", "--exit-code", "3"}), tmp).code(), 3);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(300));
}

TEST(WorkloadRunTest, SerializeBurnsCpuBeforeEachShard) {
  TempDir tmp;
  const std::string truth = tmp / "truth.json";
  const Outcome r =
      run({"--dir", tmp / "ckpts", "--shards", "2", "--shard-size", "64K", "--checkpoints", "1",
           "--mode", "save", "--serialize-ms", "40", "--ground-truth", truth},
          tmp);
  ASSERT_EQ(r.code(), 0) << r.err;
  const json gt = load_json(truth);
  const json& cp = gt["checkpoints"][0];
  for (const json& f : cp["files"]) EXPECT_GE(f["serialize_cpu_ns"].get<uint64_t>(), 40'000'000u);
  EXPECT_GE(cp["end_ns"].get<uint64_t>() - cp["start_ns"].get<uint64_t>(), 80'000'000u);
}

}  // namespace

#endif  // CKPTSCOPE_WORKLOAD_TESTS
