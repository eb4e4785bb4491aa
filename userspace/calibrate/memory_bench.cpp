#include "calibrate/memory_bench.h"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/clock.h"

namespace ckpt {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMinBytes = 1ull << 20;

// An anonymous mapping, unmapped when the scope ends.
struct Mapping {
  void* at = MAP_FAILED;
  size_t size = 0;
  explicit Mapping(size_t bytes) : size(bytes) {
    at = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() { release(); }
  void release() {
    if (at != MAP_FAILED) munmap(at, size);
    at = MAP_FAILED;
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  [[nodiscard]] char* bytes() const { return static_cast<char*>(at); }
};

unsigned cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

// Every page of both halves written once (the source with a pattern that is
// not zero, so no page is the shared zero page).
void touch(char* src, char* dst, uint64_t bytes, unsigned seed) {
  for (uint64_t off = 0; off < bytes; off += kPage) {
    const size_t n = static_cast<size_t>(std::min(kPage, bytes - off));
    std::memset(src + off, static_cast<int>(((off / kPage) ^ seed) | 1u) & 0xff, n);
    std::memset(dst + off, 0, n);
  }
}

double rate(uint64_t bytes, uint64_t ns) {
  return static_cast<double>(bytes) * 1e9 / static_cast<double>(std::max<uint64_t>(1, ns));
}

constexpr size_t kCallBytes = 1u << 20;  // a job's typical call

// The copies a read(2) from and a write(2) into the page cache make
// (copy_to_user, copy_from_user), without the file system's own work: the
// whole of a `bytes` mapping to or from a kCallBytes buffer reused call after
// call, as a job's buffer is, so only the page cache's side streams through
// memory. The kernel reaches the page cache through its direct map, in huge
// pages, so the mapping asks for huge pages too (MADV_HUGEPAGE, before any is
// touched): in 4 KiB pages the TLB misses alone halve the figure, and a
// cached load read 1.4x faster than the "maximum" (12.2 GiB/s against
// 17.4 GiB/s of 1 MiB reads on ext4's large folios, this project's CI host).
// rounds + 1 passes each, round 0 untimed; the best round is kept.
Expected<void> measure_page_cache(MemoryBenchResult& r, uint64_t bytes, unsigned rounds) {
  Mapping mapping(static_cast<size_t>(bytes));
  if (mapping.at == MAP_FAILED)
    return make_error(fmt::format("cannot map {} MiB: {}", bytes >> 20, std::strerror(errno)));
  // Advice only: without transparent huge pages the figure is lower, never wrong.
  (void)madvise(mapping.at, mapping.size, MADV_HUGEPAGE);
  char* big = mapping.bytes();
  std::memset(big, 1, mapping.size);
  std::vector<char> buffer(kCallBytes, 1);
  auto pass = [&](bool write) {
    const uint64_t t0 = monotonic_ns();
    for (uint64_t off = 0; off < bytes; off += kCallBytes) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kCallBytes, bytes - off));
      if (write)
        std::memcpy(big + off, buffer.data(), n);
      else
        std::memcpy(buffer.data(), big + off, n);
    }
    return monotonic_ns() - t0;
  };
  for (unsigned round = 0; round <= rounds; ++round) {
    const uint64_t read_ns = pass(false);
    const uint64_t write_ns = pass(true);
    if (round == 0) continue;
    r.page_cache_read_rounds.push_back(rate(bytes, read_ns));
    r.page_cache_write_rounds.push_back(rate(bytes, write_ns));
  }
  r.page_cache_write_Bps =
      *std::max_element(r.page_cache_write_rounds.begin(), r.page_cache_write_rounds.end());
  r.page_cache_read_Bps =
      *std::max_element(r.page_cache_read_rounds.begin(), r.page_cache_read_rounds.end());
  return {};
}

}  // namespace

Expected<uint64_t> meminfo_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return make_error("/proc/meminfo has no MemAvailable line");
}

Expected<MemoryBenchResult> measure_memory_copy(const MemoryBenchOptions& o) {
  if (o.bytes < kMinBytes)
    return make_error(fmt::format(
        "{} bytes: at least 1 MiB, and far more than the caches hold (256 MiB by default)",
        o.bytes));
  if (o.rounds == 0 || o.rounds > 100)
    return make_error(fmt::format("{} rounds: from 1 to 100", o.rounds));
  const unsigned threads = o.threads ? o.threads : cpus_allowed();
  if (threads > 4096) return make_error(fmt::format("{} threads: at most 4096", threads));
  const uint64_t bytes = (o.bytes + kPage - 1) / kPage * kPage;
  const uint64_t slice = std::max(kPage, bytes / threads / kPage * kPage);
  const uint64_t all_bytes = slice * threads;
  const uint64_t needed = 2 * std::max(bytes, all_bytes);
  auto available = o.available_bytes ? o.available_bytes() : meminfo_available_bytes();
  if (!available) return available.error();
  if (needed > *available / 2)
    return make_error(fmt::format(
        "copying {} MiB needs {} MiB (a source and a target), more than half of the {} MiB "
        "available: give fewer bytes",
        bytes >> 20, needed >> 20, *available >> 20));

  Mapping src(static_cast<size_t>(std::max(bytes, all_bytes)));
  Mapping dst(src.size);
  if (src.at == MAP_FAILED || dst.at == MAP_FAILED)
    return make_error(fmt::format("cannot map {} MiB: {}", needed >> 20, std::strerror(errno)));
  auto stopped = [&o] { return o.stop && o.stop->load(); };

  MemoryBenchResult r;
  r.threads = threads;
  r.bytes = bytes;
  r.rounds = o.rounds;

  // Every thread at once, each on its own slice. Each faults its slice in
  // itself, so on a machine with several memory nodes its pages are local,
  // as a rank's own buffers are. Round 0 is untimed.
  {
    uint64_t t0 = 0;
    std::barrier sync(static_cast<std::ptrdiff_t>(threads) + 1);
    std::vector<std::thread> workers;
    workers.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        char* s = src.bytes() + t * slice;
        char* d = dst.bytes() + t * slice;
        touch(s, d, slice, t);
        for (unsigned round = 0; round <= o.rounds; ++round) {
          sync.arrive_and_wait();  // start together
          std::memcpy(d, s, slice);
          sync.arrive_and_wait();  // the last one done ends the round
        }
      });
    for (unsigned round = 0; round <= o.rounds; ++round) {
      sync.arrive_and_wait();
      t0 = monotonic_ns();
      sync.arrive_and_wait();
      if (round > 0) r.all_threads_rounds.push_back(rate(all_bytes, monotonic_ns() - t0));
    }
    for (auto& w : workers) w.join();
  }
  if (stopped()) return make_error("stopped");

  // One thread, the whole buffer.
  for (unsigned round = 0; round <= o.rounds; ++round) {
    if (stopped()) return make_error("stopped");
    const uint64_t t0 = monotonic_ns();
    std::memcpy(dst.bytes(), src.bytes(), static_cast<size_t>(bytes));
    const uint64_t t1 = monotonic_ns();
    if (round > 0) r.one_thread_rounds.push_back(rate(bytes, t1 - t0));
  }
  // What was copied is there: the figure is of a copy that happened.
  for (uint64_t off = 0; off < bytes; off += kPage)
    if (dst.bytes()[off] != src.bytes()[off])
      return make_error(fmt::format("the copy differs from its source at byte {}", off));

  r.one_thread_Bps = *std::max_element(r.one_thread_rounds.begin(), r.one_thread_rounds.end());
  r.all_threads_Bps = *std::max_element(r.all_threads_rounds.begin(), r.all_threads_rounds.end());
  if (stopped()) return make_error("stopped");
  // The copy's buffers go first: the page-cache mapping takes as much again.
  src.release();
  dst.release();
  if (auto pc = measure_page_cache(r, bytes, o.rounds); !pc) return pc.error();
  return r;
}

}  // namespace ckpt
