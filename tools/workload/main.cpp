// ckptscope-workload: a synthetic checkpoint job with exact ground truth.
// It saves and loads sharded checkpoints the way training frameworks do
// (plain write/read in blocks, optional fsync, O_DIRECT, tmp+rename commit,
// several processes and threads, TCP traffic to a storage sink) and records
// every byte and call, so the profiler's figures can be checked exactly.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "tools/workload/ground_truth.h"
#include "tools/workload/options.h"
#include "tools/workload/results.h"
#include "tools/workload/sys.h"
#include "tools/workload/tcp.h"
#include "tools/workload/worker.h"

namespace ckpt::workload {
namespace {

constexpr int kExitIo = 1;
constexpr int kExitUsage = 2;

int usage_error(const std::string& message) {
  fmt::print(stderr, "ckptscope-workload: {}\n", message);
  return kExitUsage;
}

// The absolute checkpoint root, resolved through symlinks because the
// kernel, and hence the profiler, reports resolved paths.
Expected<std::string> prepare_root(const Options& options) {
  if (options.tcp_only) return std::string();
  if (options.saves()) {
    if (auto made = make_dirs(options.dir); !made) return made.error();
  }
  char* resolved = ::realpath(options.dir.c_str(), nullptr);
  if (resolved == nullptr) {
    return make_error(fmt::format("realpath {}: {}", options.dir, errno_text(errno)));
  }
  std::string root(resolved);
  std::free(resolved);
  return root;
}

std::string human_bytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ULL << 30)) return fmt::format("{:.2f} GiB", b / (1ULL << 30));
  if (bytes >= (1ULL << 20)) return fmt::format("{:.2f} MiB", b / (1ULL << 20));
  if (bytes >= (1ULL << 10)) return fmt::format("{:.2f} KiB", b / (1ULL << 10));
  return fmt::format("{} B", bytes);
}

std::string rate(uint64_t bytes, uint64_t ns) {
  if (ns == 0) return "-";
  return human_bytes(
             static_cast<uint64_t>(static_cast<double>(bytes) * 1e9 / static_cast<double>(ns))) +
         "/s";
}

// Printed after all work, never between checkpoints, so the quiet gaps the
// profiler splits checkpoints on stay free of our own output.
void print_summary(const RunResult& run) {
  for (const auto& step : run.steps) {
    uint64_t bytes = 0;
    uint64_t tcp = 0;
    for (const auto& f : step.files) bytes += f.bytes;
    for (const auto& s : step.streams) tcp += s.bytes_sent;
    const uint64_t ns = step.end_ns - step.start_ns;
    std::string line = fmt::format("{} checkpoint-{}:", to_string(step.phase), step.checkpoint);
    if (!step.files.empty()) {
      line += fmt::format(" {} files, {} bytes ({})", step.files.size(), bytes, human_bytes(bytes));
    }
    if (!step.streams.empty()) {
      line += fmt::format("{} {} bytes over tcp", step.files.empty() ? "" : ",", tcp);
    }
    line += fmt::format(" in {:.1f} ms, {}", static_cast<double>(ns) / 1e6,
                        rate(step.files.empty() ? tcp : bytes, ns));
    if (!step.failures.empty()) line += " (failed)";
    fmt::print("{}\n", line);
  }
}

[[noreturn]] void die_by_signal(int sig) {
  // Sanitizers and inherited dispositions may catch or ignore sig; the
  // caller asked to die by it, so restore the default and unblock it.
  if (std::signal(sig, SIG_DFL) == SIG_ERR && sig != SIGKILL) {
    fmt::print(stderr, "ckptscope-workload: signal {}: {}\n", signal_name(sig), errno_text(errno));
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  if (sigprocmask(SIG_UNBLOCK, &set, nullptr) != 0) {
    fmt::print(stderr, "ckptscope-workload: sigprocmask: {}\n", errno_text(errno));
  }
  // The death is the point, a core file is not: SEGV/ABRT tests would
  // otherwise litter the working directory (or a crash collector) with cores.
  const rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) {
    fmt::print(stderr, "ckptscope-workload: setrlimit RLIMIT_CORE: {}\n", errno_text(errno));
  }
  if (std::raise(sig) != 0) {
    fmt::print(stderr, "ckptscope-workload: raise {}: {}\n", signal_name(sig), errno_text(errno));
  }
  // Only reached if the signal somehow did not end the process.
  fmt::print(stderr, "ckptscope-workload: --exit-signal: {} did not end the process\n",
             signal_name(sig));
  std::_Exit(kExitIo);
}

int run(const Options& options) {
  // A sink or reader that went away must be an error we report, not a
  // SIGPIPE that kills us with nothing said.
  if (std::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    fmt::print(stderr, "ckptscope-workload: signal SIGPIPE: {}\n", errno_text(errno));
    return kExitIo;
  }
  auto root = prepare_root(options);
  if (!root) {
    fmt::print(stderr, "ckptscope-workload: {}\n", root.error().message);
    return kExitIo;
  }

  const RunResult result = run_workload(options, *root);

  if (!options.quiet) {
    print_summary(result);
    // A closed stdout only loses the summary; the exit status must still be
    // the run's (exit-code passthrough tests rely on it).
    if (std::fflush(stdout) != 0) {
      fmt::print(stderr, "ckptscope-workload: warning: stdout: {}\n", errno_text(errno));
    }
  }
  for (const auto& failure : result.all_failures()) {
    fmt::print(stderr, "ckptscope-workload: {}\n", failure.message());
  }

  int code = 0;
  if (!result.ok()) code = result.usage_error() ? kExitUsage : kExitIo;
  if (!options.ground_truth.empty()) {
    const auto document = ground_truth_document(options, *root, result);
    if (auto written = write_ground_truth(options.ground_truth, document); !written) {
      fmt::print(stderr, "ckptscope-workload: --ground-truth: {}\n", written.error().message);
      code = kExitIo;
    }
  }
  sleep_ms(options.sleep_ms);
  if (code != 0) return code;
  if (options.exit_signal) {
    std::fflush(nullptr);
    die_by_signal(*options.exit_signal);
  }
  return options.exit_code.value_or(0);
}

int real_main(int argc, char** argv) {
  CLI::App app{
      "Synthetic checkpoint workload with exact ground truth, for testing ckptscope.\n"
      "Saves K checkpoints of N shards under DIR/checkpoint-<k>/, then loads and verifies them.",
      "ckptscope-workload"};
  app.require_subcommand(0, 1);

  // Values are taken as text and validated by resolve_options, so every
  // error reads "--flag: what is wrong" and exits 2.
  RawOptions raw;
  std::vector<std::pair<CLI::Option*, std::string*>> texts;
  const auto text = [&](const std::string& name, std::string& value, const std::string& help,
                        const std::string& type) {
    CLI::Option* option = app.add_option(name, value, help)->type_name(type);
    texts.emplace_back(option, &value);
  };
  text("--dir", raw.dir, "Checkpoint root (created if missing; required unless --tcp-only)", "DIR");
  text("--shards", raw.shards, "Shards per checkpoint [4]", "N");
  text("--shard-size", raw.shard_size, "Bytes per shard: 4096, 64K, 16MiB, 1G ... [16MiB]", "SIZE");
  text("--shard-sizes", raw.shard_sizes, "One size per shard, comma-separated", "S1,S2,...");
  text("--checkpoints", raw.checkpoints, "Checkpoints to save/load [3]", "K");
  text("--mode", raw.mode, "save, load (an earlier save with the same flags) or both [both]",
       "MODE");
  app.add_flag("--fsync", raw.fsync, "fsync each shard before close");
  text("--buffered-checkpoints", raw.buffered_checkpoints,
       "With --fsync: these checkpoints are saved without it", "K1,K2,...");
  text("--cold-checkpoints", raw.cold_checkpoints,
       "Evict these checkpoints' shards from the page cache (between two quiet gaps) before "
       "loading them",
       "K1,K2,...");
  app.add_flag("--o-direct", raw.o_direct, "Open shards with O_DIRECT (block size: 4096 multiple)");
  text("--block-size", raw.block_size, "Bytes per write/read/send call [1MiB]", "SIZE");
  text("--gap-ms", raw.gap_ms, "Quiet time between checkpoints [1500]", "MS");
  text("--serialize-ms", raw.serialize_ms, "CPU time burnt before each shard's writes [0]", "MS");
  text("--processes", raw.processes, "Worker processes; shard i goes to process i % P [1]", "P");
  text("--threads", raw.threads, "Threads per process sharing its shards [1]", "T");
  text("--tcp-sink", raw.tcp_sink, "Also stream every saved shard to this sink", "HOST:PORT");
  app.add_flag("--tcp-only", raw.tcp_only, "Only stream to --tcp-sink, write no files");
  text("--format", raw.format, "Shard file naming: pt, safetensors or distcp [pt]", "FORMAT");
  app.add_flag("--rename-commit", raw.rename_commit,
               "Write shard-<i>.pt.tmp, then rename it to shard-<i>.pt");
  text("--ground-truth", raw.ground_truth, "Write the exact figures of the run here", "FILE.json");
  text("--seed", raw.seed, "Seed of the shard contents [1]", "S");
  text("--exit-code", raw.exit_code, "After all work, exit with this status", "N");
  text("--exit-signal", raw.exit_signal, "After all work, die by this signal (TERM, KILL, 11 ...)",
       "SIG");
  text("--sleep-ms", raw.sleep_ms, "Sleep this long before exiting", "MS");
  app.add_flag("--quiet", raw.quiet, "Print no per-checkpoint summary");

  CLI::App* sink = app.add_subcommand(
      "sink",
      "Accept TCP connections, count and discard their bytes, print {\"bytes_received\":N}");
  RawSinkOptions raw_sink;
  const auto sink_text = [&](const std::string& name, std::string& value, const std::string& help,
                             const std::string& type) {
    CLI::Option* option = sink->add_option(name, value, help)->type_name(type);
    texts.emplace_back(option, &value);
  };
  sink_text("--listen", raw_sink.listen, "Address to listen on; port 0 picks a free one",
            "HOST:PORT");
  sink_text("--expect-bytes", raw_sink.expect_bytes,
            "Exit once this many bytes arrived and all connections closed", "N");
  sink_text("--ready-file", raw_sink.ready_file, "Once listening, write the bound HOST:PORT here",
            "FILE");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return usage_error(fmt::format("{} (see --help)", e.what()));
  }
  for (const auto& [option, value] : texts) {
    if (option->count() > 0 && value->empty()) {
      return usage_error(fmt::format("{}: empty value", option->get_name()));
    }
  }

  if (sink->parsed()) {
    auto options = resolve_sink_options(raw_sink);
    if (!options) return usage_error(options.error().message);
    return run_sink(*options);
  }
  auto options = resolve_options(raw);
  if (!options) return usage_error(options.error().message);
  return run(*options);
}

}  // namespace
}  // namespace ckpt::workload

int main(int argc, char** argv) {
  try {
    return ckpt::workload::real_main(argc, argv);
  } catch (const std::exception& e) {
    // bad_alloc and the like: say so and fail like any other I/O error
    // rather than abort with a core dump the tests would mistake for a crash.
    fmt::print(stderr, "ckptscope-workload: {}\n", e.what());
    return ckpt::workload::kExitIo;
  }
}
