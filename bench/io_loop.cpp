// The traced-call microbenchmark's subject: N write(2) calls of a block,
// then N read(2) calls, on one file; prints the mean time per call of each,
// measured inside the process with CLOCK_MONOTONIC.
//
// With SPAN_BYTES, the calls are pwrite(2)/pread(2) cycling over the first
// SPAN_BYTES of the file, written once before the clock starts: every timed
// call copies a block and allocates nothing, so the call's own time varies
// less and what a tracer adds stands out of it (bench/vm/filelayer-overhead.sh).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
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

int fail(const char* what, const std::string& path) {
  std::fprintf(stderr, "io_loop: %s %s: %s\n", what, path.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: io_loop FILE CALLS BLOCK_BYTES [SPAN_BYTES]\n");
    return 2;
  }
  const std::string path = argv[1];
  const long calls = std::atol(argv[2]);
  const size_t block = static_cast<size_t>(std::atol(argv[3]));
  const long span_arg = argc == 5 ? std::atol(argv[4]) : 0;
  if (calls <= 0 || block == 0 || span_arg < 0) {
    std::fprintf(stderr,
                 "io_loop: CALLS and BLOCK_BYTES must be positive, SPAN_BYTES not negative\n");
    return 2;
  }
  const auto span = static_cast<size_t>(span_arg);
  if (argc == 5 && (span < block || span % block != 0)) {
    std::fprintf(stderr, "io_loop: SPAN_BYTES must be a multiple of BLOCK_BYTES\n");
    return 2;
  }
  std::vector<char> buf(block, 'x');
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return fail("open", path);
  const size_t blocks = span / block;
  for (size_t i = 0; i < blocks; ++i)
    if (write(fd, buf.data(), block) != static_cast<ssize_t>(block)) return fail("write", path);
  const auto at = [&](long i) {
    return static_cast<off_t>((static_cast<size_t>(i) % blocks) * block);
  };
  const auto ok = [&](ssize_t n) { return n == static_cast<ssize_t>(block); };
  const uint64_t w0 = now_ns();
  for (long i = 0; i < calls; ++i)
    if (!ok(blocks ? pwrite(fd, buf.data(), block, at(i)) : write(fd, buf.data(), block)))
      return fail("write", path);
  const uint64_t w1 = now_ns();
  if (lseek(fd, 0, SEEK_SET) != 0) return fail("lseek", path);
  const uint64_t r0 = now_ns();
  for (long i = 0; i < calls; ++i)
    if (!ok(blocks ? pread(fd, buf.data(), block, at(i)) : read(fd, buf.data(), block)))
      return fail("read", path);
  const uint64_t r1 = now_ns();
  close(fd);
  unlink(path.c_str());
  std::printf("{\"write_ns_per_call\": %.1f, \"read_ns_per_call\": %.1f}\n",
              static_cast<double>(w1 - w0) / static_cast<double>(calls),
              static_cast<double>(r1 - r0) / static_cast<double>(calls));
  return 0;
}
