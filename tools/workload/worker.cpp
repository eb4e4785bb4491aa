#include "tools/workload/worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <thread>

#include "tools/workload/ground_truth.h"
#include "tools/workload/pattern.h"
#include "tools/workload/shard_io.h"
#include "tools/workload/sys.h"
#include "tools/workload/tcp.h"

namespace ckpt::workload {
namespace {

// One process's share of the work: its shards, its threads' buffers and its
// TCP connection, kept across steps so that no step pays for setting up.
class Worker {
 public:
  Worker(const Options& options, std::string root, uint32_t index)
      : options_(options), root_(std::move(root)) {
    for (uint32_t shard = index; shard < options.shards(); shard += options.processes) {
      shards_.push_back(shard);
    }
    // Threads beyond the number of shards would have nothing to do.
    threads_ = std::max<uint32_t>(1, std::min<uint32_t>(options.threads, shards_.size()));
  }

  std::optional<IoFailure> start() {
    for (uint32_t t = 0; t < threads_; ++t) {
      auto io = AlignedBuffer::allocate(options_.block_size);
      std::optional<AlignedBuffer> expected;
      if (options_.loads()) expected = AlignedBuffer::allocate(options_.block_size);
      if (!io || (options_.loads() && !expected)) {
        return IoFailure{fmt::format("allocate {} bytes", options_.block_size), "", ENOMEM, ""};
      }
      buffers_.push_back(ThreadBuffers{std::move(*io), std::move(expected)});
    }
    if (options_.tcp_sink) {
      std::optional<IoFailure> failure;
      stream_ = TcpStream::connect(*options_.tcp_sink, failure);
      if (!stream_) return failure;
    }
    return std::nullopt;
  }

  StepResult run_step(const Step& step) {
    StepResult result;
    result.phase = step.phase;
    result.checkpoint = step.checkpoint;
    if (!options_.tcp_only) result.dir = checkpoint_dir(root_, step.checkpoint);
    result.start_ns = monotonic_ns();
    if (step.phase == Phase::Save && !options_.tcp_only) {
      if (auto failure = make_checkpoint_dir(result.dir)) {
        result.failures.push_back(*failure);
        result.end_ns = monotonic_ns();
        return result;
      }
    }

    std::vector<ShardTask> tasks;
    for (const uint32_t shard : shards_) {
      ShardTask task;
      task.checkpoint = step.checkpoint;
      task.shard = shard;
      task.size = options_.shard_sizes[shard];
      if (!options_.tcp_only) {
        task.path = result.dir + "/" + shard_file_name(options_.format, shard);
      }
      task.key = shard_key(options_.seed, step.checkpoint, shard);
      tasks.push_back(std::move(task));
    }

    struct ThreadOut {
      std::vector<FileResult> files;
      std::vector<StreamResult> streams;
      std::vector<IoFailure> failures;
    };
    std::vector<ThreadOut> outs(threads_);
    std::atomic<bool> cancel{false};
    // Thread t takes this process's shards t, t + T, t + 2T, ...: a fixed
    // assignment, so runs are repeatable and the ground truth's tids line up
    // with shards the same way every time.
    const auto work = [&](uint32_t t) {
      ThreadOut& out = outs[t];
      for (size_t j = t; j < tasks.size(); j += threads_) {
        if (cancel.load(std::memory_order_relaxed)) return;
        FileResult file;
        StreamResult stream;
        std::optional<IoFailure> failure;
        if (step.phase == Phase::Save) {
          failure =
              save_shard(options_, tasks[j], buffers_[t], stream_.get(), cancel, file, stream);
          if (stream_) out.streams.push_back(stream);
        } else {
          failure = load_shard(options_, tasks[j], buffers_[t], cancel, file);
        }
        if (!options_.tcp_only) out.files.push_back(std::move(file));
        if (failure) {
          out.failures.push_back(std::move(*failure));
          cancel.store(true, std::memory_order_relaxed);
          return;
        }
      }
    };

    std::vector<std::thread> helpers;
    for (uint32_t t = 1; t < threads_; ++t) {
      try {
        helpers.emplace_back(work, t);
      } catch (const std::system_error& e) {
        result.failures.push_back(IoFailure{"pthread_create", "", e.code().value(), ""});
        cancel.store(true);
        break;
      }
    }
    // The calling thread is writer 0, so one thread means no extra thread.
    work(0);
    for (auto& helper : helpers) helper.join();
    result.end_ns = monotonic_ns();

    for (auto& out : outs) {
      std::move(out.files.begin(), out.files.end(), std::back_inserter(result.files));
      std::move(out.streams.begin(), out.streams.end(), std::back_inserter(result.streams));
      std::move(out.failures.begin(), out.failures.end(), std::back_inserter(result.failures));
    }
    sort_by_shard(result);
    return result;
  }

  std::optional<IoFailure> finish() {
    if (!stream_) return std::nullopt;
    return stream_->close();
  }

  static void sort_by_shard(StepResult& result) {
    std::sort(result.files.begin(), result.files.end(),
              [](const FileResult& a, const FileResult& b) { return a.shard < b.shard; });
    std::sort(result.streams.begin(), result.streams.end(),
              [](const StreamResult& a, const StreamResult& b) { return a.shard < b.shard; });
  }

 private:
  // Every process creates the directory it writes into; the others finding
  // it there already is the normal case.
  static std::optional<IoFailure> make_checkpoint_dir(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0755) == 0) return std::nullopt;
    if (errno != EEXIST) return IoFailure{"mkdir", dir, errno, ""};
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return IoFailure{"stat", dir, errno, ""};
    if (!S_ISDIR(st.st_mode)) return IoFailure{"mkdir", dir, ENOTDIR, ""};
    return std::nullopt;
  }

  const Options& options_;
  std::string root_;
  std::vector<uint32_t> shards_;
  uint32_t threads_ = 1;
  std::vector<ThreadBuffers> buffers_;
  std::unique_ptr<TcpStream> stream_;
};

// Before a cold checkpoint's load: a quiet gap, its shards dropped from the
// page cache (clean pages only: a save without fsync may leave dirty ones,
// which stay), and the caller's gap after, so that these opens make a burst
// of their own that moves no data and is no checkpoint.
std::optional<IoFailure> evict_before(const Options& options, const std::string& root,
                                      const Step& step) {
  if (step.phase != Phase::Load || !options.cold_checkpoints.contains(step.checkpoint))
    return std::nullopt;
  sleep_ms(options.gap_ms);
  const std::string dir = checkpoint_dir(root, step.checkpoint);
  for (uint32_t shard = 0; shard < options.shards(); ++shard) {
    if (auto failure = evict_file(dir + "/" + shard_file_name(options.format, shard)))
      return failure;
  }
  return std::nullopt;
}

void run_in_process(const Options& options, const std::string& root, const std::vector<Step>& steps,
                    RunResult& run) {
  run.worker_pids.push_back(static_cast<int32_t>(getpid()));
  Worker worker(options, root, 0);
  if (auto failure = worker.start()) {
    run.failures.push_back(*failure);
    return;
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (auto failure = evict_before(options, root, steps[i])) {
      run.failures.push_back(*failure);
      break;
    }
    if (i > 0) sleep_ms(options.gap_ms);
    run.steps.push_back(worker.run_step(steps[i]));
    if (!run.steps.back().failures.empty()) break;
  }
  if (auto failure = worker.finish()) run.failures.push_back(*failure);
}

// Messages on the child -> parent pipe: one JSON object per line.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  // The next line, or nullopt at end of file or on a read error.
  std::optional<std::string> next() {
    while (true) {
      const size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      char chunk[65536];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

constexpr char kGo = 'g';
constexpr char kQuit = 'q';

bool send_message(int fd, const nlohmann::json& message) {
  return static_cast<bool>(write_all_fd(fd, message.dump() + "\n", "result pipe"));
}

// The child's side: connect, say ready, then run one step per 'g' until 'q'
// (finish and say done) or end of file (the parent gave up: just leave).
int child_main(const Options& options, const std::string& root, uint32_t index,
               const std::vector<Step>& steps, int ctl, int res, pid_t parent) {
  // A parent killed mid-run must not leave children writing on their own.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) return 1;
  Worker worker(options, root, index);
  if (auto failure = worker.start()) {
    send_message(res, {{"type", "failed"}, {"failure", *failure}});
    return 1;
  }
  if (!send_message(res, {{"type", "ready"}})) return 1;
  size_t next = 0;
  while (true) {
    char command = 0;
    const ssize_t n = ::read(ctl, &command, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 1;
    if (n == 0) {
      // The parent stopped the run after a failure elsewhere and reads no
      // more reports, so a failing close has nobody to tell; it already has
      // the failure that ended the run.
      (void)worker.finish();
      return 0;
    }
    if (command == kGo && next < steps.size()) {
      const StepResult result = worker.run_step(steps[next++]);
      if (!send_message(res, {{"type", "step"}, {"step", result}})) return 1;
      if (!result.failures.empty()) return 1;
    } else if (command == kQuit) {
      nlohmann::json failures = nlohmann::json::array();
      if (auto failure = worker.finish()) failures.push_back(*failure);
      if (!send_message(res, {{"type", "done"}, {"failures", failures}})) return 1;
      return failures.empty() ? 0 : 1;
    } else {
      return 1;
    }
  }
}

struct Child {
  pid_t pid = -1;
  int ctl = -1;  // parent writes commands
  int res = -1;  // parent reads results
  std::unique_ptr<LineReader> reader;
  bool reported_failure = false;
};

std::optional<nlohmann::json> read_message(Child& child) {
  auto line = child.reader->next();
  if (!line) return std::nullopt;
  auto message = nlohmann::json::parse(*line, nullptr, false);
  if (message.is_discarded() || !message.is_object()) return std::nullopt;
  return message;
}

bool send_command(const Child& child, char command) {
  while (true) {
    const ssize_t n = ::write(child.ctl, &command, 1);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

IoFailure lost_worker(const Child& child, std::string_view when) {
  return IoFailure{"worker", fmt::format("pid {}", child.pid), 0,
                   fmt::format("ended without reporting {}", when)};
}

void run_forked(const Options& options, const std::string& root, const std::vector<Step>& steps,
                RunResult& run) {
  std::vector<Child> children;
  const pid_t parent = ::getpid();
  bool aborted = false;
  // Anything buffered would otherwise be flushed once per child too.
  std::fflush(nullptr);
  for (uint32_t p = 0; p < options.processes; ++p) {
    int ctl[2];
    int res[2];
    if (::pipe2(ctl, O_CLOEXEC) != 0) {
      run.failures.push_back(IoFailure{"pipe2", "", errno, ""});
      aborted = true;
      break;
    }
    if (::pipe2(res, O_CLOEXEC) != 0) {
      run.failures.push_back(IoFailure{"pipe2", "", errno, ""});
      ::close(ctl[0]);
      ::close(ctl[1]);
      aborted = true;
      break;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      run.failures.push_back(IoFailure{"fork", "", errno, ""});
      for (const int fd : {ctl[0], ctl[1], res[0], res[1]}) ::close(fd);
      aborted = true;
      break;
    }
    if (pid == 0) {
      ::close(ctl[1]);
      ::close(res[0]);
      // Earlier siblings' pipe ends came along with fork; holding their
      // command pipes open would keep them from ever seeing end of file.
      for (const Child& sibling : children) {
        ::close(sibling.ctl);
        ::close(sibling.res);
      }
      int code = 1;
      try {
        code = child_main(options, root, p, steps, ctl[0], res[1], parent);
      } catch (const std::exception& e) {
        fmt::print(stderr, "ckptscope-workload: worker {}: {}\n", ::getpid(), e.what());
      }
      // _exit: the parent's atexit handlers and stdio buffers are not ours.
      ::_exit(code);
    }
    ::close(ctl[0]);
    ::close(res[1]);
    Child child;
    child.pid = pid;
    child.ctl = ctl[1];
    child.res = res[0];
    child.reader = std::make_unique<LineReader>(res[0]);
    children.push_back(std::move(child));
    run.worker_pids.push_back(static_cast<int32_t>(pid));
  }

  // Every worker connects (and allocates) before any checkpoint starts, so
  // the sink sees all connections open before the first one closes.
  for (Child& child : children) {
    if (aborted) break;
    auto message = read_message(child);
    if (!message) {
      run.failures.push_back(lost_worker(child, "that it was ready"));
      aborted = true;
    } else if (message->value("type", "") == "failed") {
      run.failures.push_back(message->at("failure").get<IoFailure>());
      child.reported_failure = true;
      aborted = true;
    }
  }

  for (size_t i = 0; i < steps.size() && !aborted; ++i) {
    if (auto failure = evict_before(options, root, steps[i])) {
      run.failures.push_back(*failure);
      break;
    }
    if (i > 0) sleep_ms(options.gap_ms);
    StepResult merged;
    merged.phase = steps[i].phase;
    merged.checkpoint = steps[i].checkpoint;
    if (!options.tcp_only) merged.dir = checkpoint_dir(root, steps[i].checkpoint);
    merged.start_ns = UINT64_MAX;
    std::vector<bool> started(children.size(), false);
    for (size_t c = 0; c < children.size(); ++c) {
      started[c] = send_command(children[c], kGo);
      if (!started[c]) {
        merged.failures.push_back(IoFailure{
            "write", fmt::format("command pipe of worker pid {}", children[c].pid), errno, ""});
      }
    }
    for (size_t c = 0; c < children.size(); ++c) {
      if (!started[c]) continue;
      auto message = read_message(children[c]);
      if (!message || message->value("type", "") != "step") {
        merged.failures.push_back(
            lost_worker(children[c], fmt::format("checkpoint {}", steps[i].checkpoint)));
        continue;
      }
      StepResult part = message->at("step").get<StepResult>();
      merged.start_ns = std::min(merged.start_ns, part.start_ns);
      merged.end_ns = std::max(merged.end_ns, part.end_ns);
      std::move(part.files.begin(), part.files.end(), std::back_inserter(merged.files));
      std::move(part.streams.begin(), part.streams.end(), std::back_inserter(merged.streams));
      if (!part.failures.empty()) children[c].reported_failure = true;
      std::move(part.failures.begin(), part.failures.end(), std::back_inserter(merged.failures));
    }
    if (merged.start_ns == UINT64_MAX) merged.start_ns = merged.end_ns;
    Worker::sort_by_shard(merged);
    aborted = !merged.failures.empty();
    run.steps.push_back(std::move(merged));
  }

  if (!aborted) {
    for (Child& child : children) {
      auto message = send_command(child, kQuit) ? read_message(child) : std::nullopt;
      if (!message || message->value("type", "") != "done") {
        run.failures.push_back(lost_worker(child, "the end of its work"));
        continue;
      }
      auto failures = message->at("failures").get<std::vector<IoFailure>>();
      if (!failures.empty()) child.reported_failure = true;
      run.failures.insert(run.failures.end(), failures.begin(), failures.end());
    }
  }

  // Closing the command pipes tells workers still waiting for a step that
  // the run is over.
  for (Child& child : children) ::close(child.ctl);
  for (Child& child : children) {
    int status = 0;
    pid_t waited;
    do {
      waited = ::waitpid(child.pid, &status, 0);
    } while (waited < 0 && errno == EINTR);
    ::close(child.res);
    if (waited < 0) {
      run.failures.push_back(IoFailure{"waitpid", fmt::format("pid {}", child.pid), errno, ""});
    } else if (WIFSIGNALED(status)) {
      run.failures.push_back(
          IoFailure{"worker", fmt::format("pid {}", child.pid), 0,
                    fmt::format("killed by signal {}", signal_name(WTERMSIG(status)))});
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !child.reported_failure &&
               run.ok()) {
      run.failures.push_back(IoFailure{"worker", fmt::format("pid {}", child.pid), 0,
                                       fmt::format("exited with status {}", WEXITSTATUS(status))});
    }
  }
}

}  // namespace

std::vector<Step> plan_steps(const Options& options) {
  std::vector<Step> steps;
  if (options.saves()) {
    for (uint32_t k = 1; k <= options.checkpoints; ++k) steps.push_back({Phase::Save, k});
  }
  if (options.loads()) {
    for (uint32_t k = 1; k <= options.checkpoints; ++k) steps.push_back({Phase::Load, k});
  }
  return steps;
}

std::string checkpoint_dir(const std::string& root, uint32_t checkpoint) {
  return fmt::format("{}/checkpoint-{}", root, checkpoint);
}

RunResult run_workload(const Options& options, const std::string& root) {
  RunResult run;
  const std::vector<Step> steps = plan_steps(options);
  run.start_ns = monotonic_ns();
  if (options.processes == 1) {
    run_in_process(options, root, steps, run);
  } else {
    run_forked(options, root, steps, run);
  }
  run.end_ns = monotonic_ns();
  return run;
}

}  // namespace ckpt::workload
