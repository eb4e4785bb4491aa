// A checkpoint is never cut while one of its calls is in flight
// (docs/stitching.md, "Calls in flight"), on this kernel, through the whole
// live path: the probes, JobIoSource, the stitcher. This process is the job:
// a thread loads a checkpoint shard in 1 MiB reads, and its last read is
// held inside the kernel for several seconds, longer than the quiet gap,
// first off the CPU (its destination page missing, served through a
// userfaultfd), then on it (its pages served one at a time, so it copies
// between faults), then woken with its CPU held by a real-time thread
// (/proc/TID/syscall says "running" then). The load is one checkpoint of
// every byte.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/clock.h"
#include "config/config.h"
#include "probes/kernel_features.h"
#include "probes/probe_manager.h"
#include "sources/call_return.h"
#include "sources/jobio_source.h"
#include "stitch/stitcher.h"
#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

constexpr size_t kMiB = 1 << 20;
constexpr size_t kPage = 4096;

class NoMaxima : public MaximaProvider {
 public:
  StageMax storage(Direction, const std::vector<FileId>&) override { return {}; }
  StageMax serialize(size_t) override { return {}; }
  StageMax transport(const std::string&) override { return {}; }
};

bool pin_to_cpu(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof(one), &one) == 0;
}

// The live path of `run`, for this process: its probes feed JobIoSource,
// which feeds a stitcher with the default config, and the stitcher's
// verdicts go back to the kernel.
class CallsInFlight : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!is_root()) GTEST_SKIP() << "needs root to load eBPF programs";
    config_ = Config::defaults();
    stitcher_ = std::make_unique<Stitcher>(config_, std::make_shared<NoMaxima>(),
                                           StageAvailability{true, false, false, false});
    source_ = std::make_unique<JobIoSource>(*stitcher_, resolver_);
    ProbeOptions options;
    options.tcp = false;
    options.nfs = false;
    options.self_tgid = 0;  // this test is the job
    auto started = ProbeManager::start(
        options, KernelFeatures::probe(),
        [this](const void* d, size_t n) { source_->on_record(d, n); }, [](const void*, size_t) {},
        [](const void*, size_t) {});
    ASSERT_TRUE(started) << started.error().message;
    probes_ = std::move(*started);
    stitcher_->set_verdict_listener([this](const FileId& file, bool is_checkpoint) {
      probes_->set_file_verdict(file, is_checkpoint);
    });
    stitcher_->set_call_returned_query(call_returned_query(probes_->probe_mode()));
    ASSERT_TRUE(probes_->trace_tgid(static_cast<uint32_t>(getpid())));
  }

  // What a collector does between its polls, for `ms` milliseconds.
  void pump_for(int ms) {
    const uint64_t until = monotonic_ns() + static_cast<uint64_t>(ms) * 1'000'000;
    do {
      (void)probes_->poll(20);
      stitcher_->advance(monotonic_ns());
      for (auto& c : stitcher_->take_checkpoints()) closed_.push_back(std::move(c));
    } while (monotonic_ns() < until);
  }

  Config config_;
  PathResolver resolver_;
  std::unique_ptr<Stitcher> stitcher_;
  std::unique_ptr<JobIoSource> source_;
  std::unique_ptr<ProbeManager> probes_;
  std::vector<CheckpointRecord> closed_;
  ScratchDir dir_;
};

TEST_F(CallsInFlight, ALoadWhoseLastReadIsHeldInTheKernelIsOneCheckpoint) {
  ASSERT_GE(sysconf(_SC_NPROCESSORS_ONLN), 2) << "the reader and its pager need a CPU each";
  const uint64_t gap_ms = config_.checkpoint.quiet_gap_ns / 1'000'000;
  std::filesystem::create_directories(dir_ / "checkpoint-1");
  const std::string shard = dir_ / "checkpoint-1/shard-0.pt";
  {
    std::vector<char> data(3 * kMiB, 's');
    const int w = open(shard.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(w, 0);
    ASSERT_EQ(write(w, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    close(w);
  }
  // The save above was traced too: let it close as a checkpoint of its own.
  pump_for(static_cast<int>(gap_ms) + 500);
  closed_.clear();

  int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  ASSERT_GE(uffd, 0) << "userfaultfd: " << std::strerror(errno);
  uffdio_api api{};
  api.api = UFFD_API;
  ASSERT_EQ(ioctl(uffd, UFFDIO_API, &api), 0) << std::strerror(errno);
  void* region = mmap(nullptr, kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  uffdio_register reg{};
  reg.range.start = reinterpret_cast<uint64_t>(region);
  reg.range.len = kMiB;
  reg.mode = UFFDIO_REGISTER_MODE_MISSING;
  ASSERT_EQ(ioctl(uffd, UFFDIO_REGISTER, &reg), 0) << std::strerror(errno);

  cpu_set_t was{};
  ASSERT_EQ(sched_getaffinity(0, sizeof(was), &was), 0);
  ASSERT_TRUE(pin_to_cpu(1)) << std::strerror(errno);
  struct Restore {
    cpu_set_t set;
    int uffd;
    void* region;
    ~Restore() {
      sched_setaffinity(0, sizeof(set), &set);
      munmap(region, kMiB);
      close(uffd);
    }
  } restore{was, uffd, region};

  std::atomic<ssize_t> last_read{-2};
  std::atomic<int> reader_errno{0};
  std::thread reader([&] {
    if (!pin_to_cpu(0)) {
      reader_errno = errno;
      return;
    }
    std::vector<char> buf(kMiB);
    const int fd = open(shard.c_str(), O_RDONLY);
    if (fd < 0 || pread(fd, buf.data(), kMiB, 0) != static_cast<ssize_t>(kMiB) ||
        pread(fd, buf.data(), kMiB, kMiB) != static_cast<ssize_t>(kMiB)) {
      reader_errno = errno;
      return;
    }
    last_read = pread(fd, region, kMiB, 2 * kMiB);
    close(fd);
  });
  // Off the CPU: the last read sleeps on its first missing page.
  pollfd p{uffd, POLLIN, 0};
  int faulted = 0;
  for (int i = 0; i < 250 && faulted == 0 && reader_errno == 0; ++i) {
    pump_for(0);
    faulted = poll(&p, 1, 20);
  }
  if (reader_errno != 0) {
    reader.join();
    FAIL() << "the reader failed before its last read: " << std::strerror(reader_errno);
  }
  ASSERT_EQ(faulted, 1) << "the last read never faulted on its destination";
  const uint64_t held_from = monotonic_ns();
  pump_for(static_cast<int>(2 * gap_ms));
  EXPECT_TRUE(closed_.empty()) << "closed while its last read slept in the kernel";

  // On the CPU: each page served wakes it to copy, until the next one faults.
  std::vector<char> page(kPage, 'u');
  auto serve = [&](size_t offset, size_t len) {
    uffdio_copy copy{};
    copy.dst = reinterpret_cast<uint64_t>(region) + offset;
    copy.src = reinterpret_cast<uint64_t>(page.data());
    copy.len = len;
    return ioctl(uffd, UFFDIO_COPY, &copy) == 0 || errno == EEXIST;
  };
  size_t served = 0;
  for (; served < 30 * kPage; served += kPage) {
    uffd_msg msg{};
    while (read(uffd, &msg, sizeof(msg)) != static_cast<ssize_t>(sizeof(msg))) pump_for(0);
    ASSERT_TRUE(serve(served, kPage)) << std::strerror(errno);
    pump_for(40);
  }
  EXPECT_TRUE(closed_.empty()) << "closed while its last read copied page by page";
  EXPECT_EQ(last_read.load(), -2) << "the last read returned early";

  // Woken, its CPU held: /proc says "running", the read has not returned.
  std::atomic<bool> hog_on{false};
  std::atomic<bool> hog_failed{false};
  std::atomic<bool> stop_hog{false};
  std::thread hog([&] {
    sched_param rt{};
    rt.sched_priority = 1;
    if (!pin_to_cpu(0) || pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) != 0) {
      hog_failed = true;
      return;
    }
    hog_on = true;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!stop_hog && std::chrono::steady_clock::now() < until) {
    }
  });
  while (!hog_on && !hog_failed) usleep(1000);
  if (hog_failed) {
    std::vector<char> rest(kMiB, 'u');
    uffdio_copy copy{};
    copy.dst = reinterpret_cast<uint64_t>(region) + served;
    copy.src = reinterpret_cast<uint64_t>(rest.data());
    copy.len = kMiB - served;
    (void)ioctl(uffd, UFFDIO_COPY, &copy);
    hog.join();
    reader.join();
    FAIL() << "no SCHED_FIFO thread: " << std::strerror(errno);
  }
  {
    std::vector<char> rest(kMiB, 'u');
    uffdio_copy copy{};
    copy.dst = reinterpret_cast<uint64_t>(region) + served;
    copy.src = reinterpret_cast<uint64_t>(rest.data());
    copy.len = kMiB - served;
    ASSERT_EQ(ioctl(uffd, UFFDIO_COPY, &copy), 0) << std::strerror(errno);
  }
  // Half a gap: the kernel lets real-time threads have 950 ms a second
  // (sched_rt_runtime_us), and a quiet gap has long passed: every advance
  // meanwhile would close the load but for its read in flight.
  pump_for(static_cast<int>(gap_ms / 2));
  const ssize_t while_held = last_read.load();
  stop_hog = true;
  hog.join();
  EXPECT_EQ(while_held, -2) << "the last read returned while its CPU was held";
  EXPECT_TRUE(closed_.empty()) << "closed while its last read waited for its CPU";

  reader.join();
  ASSERT_EQ(last_read.load(), static_cast<ssize_t>(kMiB));
  const uint64_t returned_at = monotonic_ns();
  pump_for(static_cast<int>(2 * gap_ms));
  stitcher_->finish();
  for (auto& c : stitcher_->take_checkpoints()) closed_.push_back(std::move(c));
  ASSERT_EQ(closed_.size(), 1u) << "the load was cut";
  EXPECT_EQ(closed_[0].direction, Direction::Load);
  EXPECT_EQ(closed_[0].bytes, 3 * kMiB);
  EXPECT_GE(closed_[0].end_ns, held_from + 3 * config_.checkpoint.quiet_gap_ns)
      << "its last read was not in it";
  EXPECT_LE(closed_[0].end_ns, returned_at);
  EXPECT_TRUE(closed_[0].failures.empty()) << closed_[0].failures[0].evidence;
  for (const auto& d : probes_->drops()) EXPECT_EQ(d.count, 0u) << d.source << "." << d.cause;
}

}  // namespace
}  // namespace ckpt::test
