// The page-fault microbenchmark's subject (bench/fault_overhead.py): ROUNDS
// times, each of three kinds of fault over MIB MiB, timed inside the process
// with CLOCK_MONOTONIC, one page touched per 4 KiB (the kernel's fault-around
// maps more per fault where it can):
//   anon   a private anonymous mapping, one store per page: the faults every
//          program on the node takes, none a file's;
//   read   a shared read-only mapping of FILE (cached), one load per page;
//   store  a shared writable mapping of FILE, one store per page, then
//          msync: each page dirtied once.
// Prints the mean ns per page of each kind as JSON, the median over rounds.
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fault_loop: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

constexpr size_t kPage = 4096;

// ns per page to touch every page of a fresh mapping of `bytes`.
double touch(size_t bytes, int prot, int flags, int fd, bool store) {
  void* map = mmap(nullptr, bytes, prot, flags, fd, 0);
  if (map == MAP_FAILED) fail("mmap");
  auto* p = static_cast<volatile char*>(map);
  long sum = 0;
  const uint64_t start = now_ns();
  for (size_t off = 0; off < bytes; off += kPage) {
    if (store)
      p[off] = 1;
    else
      sum += p[off];
  }
  const uint64_t took = now_ns() - start;
  if (store && fd >= 0 && msync(map, bytes, MS_SYNC) != 0) fail("msync");
  munmap(map, bytes);
  if (sum < 0) std::puts("");  // keeps the loads
  return static_cast<double>(took) / static_cast<double>(bytes / kPage);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: fault_loop FILE MIB ROUNDS\n");
    return 2;
  }
  const std::string path = argv[1];
  const size_t bytes = std::strtoull(argv[2], nullptr, 10) << 20;
  const int rounds = std::atoi(argv[3]);
  if (bytes == 0 || rounds <= 0) {
    std::fprintf(stderr, "fault_loop: MIB and ROUNDS must be positive\n");
    return 2;
  }
  int fd = open(path.c_str(), O_CREAT | O_RDWR, 0644);
  if (fd < 0) fail("open");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) fail("ftruncate");
  std::vector<double> anon, read, store;
  for (int r = 0; r < rounds; ++r) {
    anon.push_back(touch(bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, true));
    store.push_back(touch(bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, true));
    read.push_back(touch(bytes, PROT_READ, MAP_SHARED, fd, false));
  }
  close(fd);
  std::printf("{\"anon_ns\": %.1f, \"read_ns\": %.1f, \"store_ns\": %.1f}\n", median(anon),
              median(read), median(store));
  return 0;
}
