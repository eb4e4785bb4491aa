// How `project` and `report` grow with the number of checkpoints (issue 36):
// both must scale as n log n, not n^2, in time and memory. The traces are
// tests/scale_trace.h's (one node, a small NFS checkpoint a second) at 10k,
// 20k and 40k checkpoints; each command is the real binary, started once
// per run, its wall time and peak RSS from wait4(). Runs alternate: every
// round runs each case once, in an order rotated by one each round;
// medians are quoted (bench/README.md). The figure that matters is the
// ratio between sizes: twice the checkpoints should cost about twice
// (2.0 is linear, 4.0 quadratic). The target: at most 2.5 from 20k to 40k,
// in time and in memory above the binary's own floor (printed).
//
// --baseline PATH adds another build's binary to the same rotation (issue
// 36: the build before the fix), so both are measured in the same machine
// state, and prints each size's time and memory against it.
//
//   scale_bench [--ckptscope PATH] [--baseline PATH] [--counts 10000,20000,40000] [--runs 3]
//               [--dir DIR] [--keep]
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench/child_run.h"
#include "exporters/sqlite/trace_store.h"
#include "tests/scale_trace.h"

#ifndef CKPT_BENCH_CKPTSCOPE
#define CKPT_BENCH_CKPTSCOPE "ckptscope"
#endif

namespace {

namespace fs = std::filesystem;
using ckpt::bench::ChildRun;
using ckpt::bench::median;
using ckpt::bench::run_child;

constexpr double kTargetRatio = 2.5;  // 40k/20k; 2.0 is linear, 4.0 quadratic

// Writes the trace of `n` checkpoints in a child process: a forked child's
// peak RSS starts from its parent's, so this process stays small for the
// commands it measures to start from.
bool write_in_child(const std::string& path, size_t n) {
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return false;
  }
  if (pid == 0) {
    if (auto w = ckpt::write_trace(path, ckpt::testing::scale_trace(n)); !w) {
      fmt::print(stderr, "scale_bench: {}\n", w.error().message);
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct Case {
  std::string binary;   // the ckptscope measured
  std::string command;  // "project" or "report"
  size_t checkpoints = 0;
  std::vector<double> wall_s;
  std::vector<double> rss_mib;
};

}  // namespace

int main(int argc, char** argv) {
  std::string ckptscope = CKPT_BENCH_CKPTSCOPE;
  std::string baseline;
  std::vector<size_t> counts = {10'000, 20'000, 40'000};
  int runs = 3;
  std::string dir;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "scale_bench: {} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ckptscope") {
      ckptscope = next();
    } else if (a == "--baseline") {
      baseline = next();
    } else if (a == "--counts") {
      counts.clear();
      const std::string list = next();
      for (size_t at = 0; at < list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        counts.push_back(std::stoul(list.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (a == "--runs") {
      runs = std::max(1, std::stoi(next()));
    } else if (a == "--dir") {
      dir = next();
    } else if (a == "--keep") {
      keep = true;
    } else {
      fmt::print(stderr,
                 "usage: scale_bench [--ckptscope PATH] [--baseline PATH] "
                 "[--counts 10000,20000,40000] [--runs N] [--dir DIR] [--keep]\n");
      return 2;
    }
  }
  if (dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "scale-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      perror("mkdtemp");
      return 1;
    }
    dir = tmpl;
  }
  fs::create_directories(dir);

  std::map<size_t, std::string> traces;
  for (size_t n : counts) {
    const std::string path = fmt::format("{}/scale-{}.db", dir, n);
    const auto t0 = std::chrono::steady_clock::now();
    if (!write_in_child(path, n)) return 1;
    fmt::print("trace of {} checkpoints: {} ({:.1f} MiB, written in {:.1f} s)\n", n, path,
               static_cast<double>(fs::file_size(path)) / (1 << 20),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    traces[n] = path;
  }

  // The binary's floor: a trace of one checkpoint.
  const std::string tiny = dir + "/scale-1.db";
  if (!write_in_child(tiny, 1)) return 1;

  std::vector<std::string> binaries = {ckptscope};
  if (!baseline.empty()) binaries.push_back(baseline);
  std::vector<Case> cases;
  for (const auto& binary : binaries)
    for (const char* command : {"project", "report"})
      for (size_t n : counts) cases.push_back({binary, command, n, {}, {}});
  auto argv_of = [&](const Case& c, const std::string& trace) -> std::vector<std::string> {
    if (c.command == "project")
      return {c.binary,
              "project",
              trace,
              "--nodes",
              "8,64",
              "--storage-write-max",
              "10GB/s",
              "--storage-read-max",
              "20GB/s",
              "-o",
              dir + "/project.txt"};
    return {c.binary, "report", trace, "-o", dir + "/report.html"};
  };
  std::map<std::pair<std::string, std::string>, ChildRun> floor;  // (binary, command)
  for (const auto& binary : binaries)
    for (const char* command : {"project", "report"}) {
      const Case c{binary, command, 1, {}, {}};
      floor[{binary, command}] = run_child(argv_of(c, tiny), dir + "/floor.log");
    }
  for (int round = 0; round < runs; ++round) {
    for (size_t k = 0; k < cases.size(); ++k) {
      Case& c = cases[(k + static_cast<size_t>(round)) % cases.size()];
      const ChildRun r = run_child(argv_of(c, traces[c.checkpoints]), dir + "/run.log");
      if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
        fmt::print(stderr, "scale_bench: {} {} on {} checkpoints failed (status {:#x}); see {}\n",
                   c.binary, c.command, c.checkpoints, r.status, dir + "/run.log");
        return 1;
      }
      c.wall_s.push_back(r.wall_s);
      c.rss_mib.push_back(r.max_rss_mib);
    }
  }

  bool within = true;
  for (const auto& binary : binaries) {
    fmt::print("\nmedians of {} runs, alternated ({}):\n", runs, binary);
    fmt::print("{:<8} {:>12} {:>10} {:>12} {:>12} {:>14}\n", "command", "checkpoints", "time s",
               "time ratio", "peak RSS MiB", "RSS ratio");
    for (const char* command : {"project", "report"}) {
      const double floor_rss = floor[{binary, command}].max_rss_mib;
      const Case* previous = nullptr;
      for (const Case& c : cases) {
        if (c.command != command || c.binary != binary) continue;
        const double t = median(c.wall_s);
        const double rss = median(c.rss_mib);
        std::string t_ratio = "-";
        std::string rss_ratio = "-";
        if (previous != nullptr) {
          const double rt = t / std::max(median(previous->wall_s), 1e-9);
          // Memory above what the binary needs for one checkpoint.
          const double rr =
              (rss - floor_rss) / std::max(median(previous->rss_mib) - floor_rss, 1e-9);
          t_ratio = fmt::format("{:.2f}", rt);
          rss_ratio = fmt::format("{:.2f}", rr);
          if (binary == ckptscope && c.checkpoints == 2 * previous->checkpoints &&
              (rt > kTargetRatio || rr > kTargetRatio))
            within = false;
        }
        fmt::print("{:<8} {:>12} {:>10.2f} {:>12} {:>12.1f} {:>14}\n", command, c.checkpoints, t,
                   t_ratio, rss, rss_ratio);
        previous = &c;
      }
      fmt::print("{:<8} {:>12} {:>10.2f} {:>12} {:>12.1f} {:>14}\n", command, "1 (floor)",
                 floor[{binary, command}].wall_s, "", floor_rss, "");
    }
  }
  if (!baseline.empty()) {
    fmt::print("\n{} over {} (medians; below 1: less):\n", ckptscope, baseline);
    fmt::print("{:<8} {:>12} {:>12} {:>12}\n", "command", "checkpoints", "time", "peak RSS");
    for (const Case& c : cases) {
      if (c.binary != ckptscope) continue;
      for (const Case& b : cases)
        if (b.binary == baseline && b.command == c.command && b.checkpoints == c.checkpoints)
          fmt::print("{:<8} {:>12} {:>12.3f} {:>12.3f}\n", c.command, c.checkpoints,
                     median(c.wall_s) / std::max(median(b.wall_s), 1e-9),
                     median(c.rss_mib) / std::max(median(b.rss_mib), 1e-9));
    }
  }
  fmt::print(
      "\nratio: twice the checkpoints over once (RSS: above the floor); target <= {} "
      "(2.0 linear, 4.0 quadratic): {}\n",
      kTargetRatio, within ? "met" : "MISSED");
  if (!keep) fs::remove_all(dir);
  return within ? 0 : 1;
}
