// A checkpoint-shaped CUDA program with exact ground truth, for the gpu_copy
// stage on a GPU machine (tests/gpu/run_gpu_checks.sh runs it under
// `ckptscope run`).
//
//   checkpoint_like --dir DIR --truth FILE [--sizes-mib 16,48,96,160] [--gap-ms 3500]
//
// 1. N device tensors of known sizes, filled by a kernel (no copy).
// 2. Save DIR/checkpoint-1: per tensor, cudaMemcpy into pageable memory
//    (torch.save's path), write it to shard-i.pt, fsync.
// 3. Save DIR/checkpoint-2: the same through pinned memory (cudaMallocHost,
//    cudaMemcpyAsync + stream sync: PyTorch's async DCP path).
// 4. Load checkpoint-1: per file, read into pageable memory, cudaMemcpy to
//    a new device buffer. 5. Load checkpoint-2 through pinned memory.
// 6. After the last load (and a quiet gap), a kernel checks every loaded
//    tensor against the pattern; one small D2H copy fetches the mismatch
//    counts. That copy belongs to no checkpoint and the truth says so.
// Phases are separated by --gap-ms (more than the stitcher's quiet gap
// plus the library's 500 ms flush), so each is one checkpoint.
//
// The truth (JSON): every copy's bytes, host memory kind and the
// CLOCK_MONOTONIC interval of its API call (the GPU's copy lies inside it),
// every file, and the first write / last I/O times of each phase.
//
//   checkpoint_like --bench [--count 20] [--size-mib 1024] [--memory pinned|pageable|both]
//
// times large device-to-host copies (bench/gpu_copy_overhead.sh) and prints
// one JSON line per memory kind.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    const cudaError_t err_ = (call);                                          \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "checkpoint_like: %s failed: %s (%s:%d)\n", #call, \
                   cudaGetErrorString(err_), __FILE__, __LINE__);             \
      std::exit(2);                                                           \
    }                                                                         \
  } while (0)

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "checkpoint_like: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(2);
}

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The value of word `i` of tensor `t`: the same on the GPU and the CPU.
__host__ __device__ inline uint32_t pattern(uint32_t t, uint64_t i) {
  uint64_t x = (static_cast<uint64_t>(t) << 40) ^ (i * 0x9E3779B97F4A7C15ull);
  x ^= x >> 29;
  return static_cast<uint32_t>(x * 0xBF58476D1CE4E5B9ull >> 32);
}

__global__ void fill(uint32_t* p, uint64_t words, uint32_t t) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    p[i] = pattern(t, i);
}

__global__ void check(const uint32_t* p, uint64_t words, uint32_t t, unsigned long long* bad) {
  unsigned long long mine = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    mine += p[i] != pattern(t, i);
  if (mine) atomicAdd(bad, mine);
}

struct Copy {
  uint64_t bytes = 0;
  std::string direction;  // "dtoh" / "htod"
  std::string memory;     // "pageable" / "pinned"
  bool async = false;
  uint64_t begin_ns = 0;  // the API call (and, for async, the stream sync) ...
  uint64_t end_ns = 0;    // ... the GPU's copy lies inside
};

struct Phase {
  int index = 0;
  std::string direction;  // "save" / "load"
  std::string dir;
  std::string memory;
  std::vector<std::string> files;
  std::vector<Copy> copies;
  uint64_t first_io_begin_ns = 0;  // first write (save) or read (load)
  uint64_t last_io_end_ns = 0;
  uint64_t file_bytes = 0;
};

void write_all(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("write " + path);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void read_all(int fd, char* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) die("read " + path);
    p += r;
    n -= static_cast<size_t>(r);
  }
}

// One host buffer per tensor, of the kind the phase uses. Pageable memory is
// touched first so the copy does not time page faults.
char* host_buffer(size_t bytes, bool pinned) {
  char* p = nullptr;
  if (pinned) {
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), bytes));
  } else {
    p = static_cast<char*>(std::malloc(bytes));
    if (!p) die("malloc");
  }
  std::memset(p, 0, bytes);
  return p;
}
void free_host(char* p, bool pinned) {
  if (pinned)
    CUDA_CHECK(cudaFreeHost(p));
  else
    std::free(p);
}

Copy do_copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, bool pinned,
             cudaStream_t stream) {
  Copy c;
  c.bytes = bytes;
  c.direction = kind == cudaMemcpyDeviceToHost ? "dtoh" : "htod";
  c.memory = pinned ? "pinned" : "pageable";
  c.async = pinned;
  c.begin_ns = mono_ns();
  if (pinned) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
  }
  c.end_ns = mono_ns();
  return c;
}

Phase save(int index, const std::string& root, const std::vector<uint32_t*>& tensors,
           const std::vector<size_t>& sizes, bool pinned, cudaStream_t stream) {
  Phase ph;
  ph.index = index;
  ph.direction = "save";
  ph.memory = pinned ? "pinned" : "pageable";
  ph.dir = root + "/checkpoint-" + std::to_string(index);
  if (mkdir(ph.dir.c_str(), 0755) != 0 && errno != EEXIST) die("mkdir " + ph.dir);
  std::vector<char*> host;
  for (size_t s : sizes) host.push_back(host_buffer(s, pinned));
  for (size_t i = 0; i < tensors.size(); ++i) {
    ph.copies.push_back(
        do_copy(host[i], tensors[i], sizes[i], cudaMemcpyDeviceToHost, pinned, stream));
    const std::string path = ph.dir + "/shard-" + std::to_string(i) + ".pt";
    const uint64_t t0 = mono_ns();
    if (!ph.first_io_begin_ns) ph.first_io_begin_ns = t0;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die("open " + path);
    write_all(fd, host[i], sizes[i], path);
    if (fsync(fd) != 0) die("fsync " + path);
    close(fd);
    ph.last_io_end_ns = mono_ns();
    ph.files.push_back(path);
    ph.file_bytes += sizes[i];
  }
  for (char* h : host) free_host(h, pinned);
  return ph;
}

Phase load(int index, const std::string& root, std::vector<uint32_t*>& loaded,
           const std::vector<size_t>& sizes, bool pinned, cudaStream_t stream) {
  Phase ph;
  ph.index = index;
  ph.direction = "load";
  ph.memory = pinned ? "pinned" : "pageable";
  ph.dir = root + "/checkpoint-" + std::to_string(index);
  std::vector<char*> host;
  for (size_t s : sizes) host.push_back(host_buffer(s, pinned));
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string path = ph.dir + "/shard-" + std::to_string(i) + ".pt";
    const uint64_t t0 = mono_ns();
    if (!ph.first_io_begin_ns) ph.first_io_begin_ns = t0;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("open " + path);
    read_all(fd, host[i], sizes[i], path);
    close(fd);
    ph.last_io_end_ns = mono_ns();
    ph.files.push_back(path);
    ph.file_bytes += sizes[i];
    uint32_t* dev = nullptr;
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dev), sizes[i]));
    ph.copies.push_back(do_copy(dev, host[i], sizes[i], cudaMemcpyHostToDevice, pinned, stream));
    loaded.push_back(dev);
  }
  for (char* h : host) free_host(h, pinned);
  return ph;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

std::string phase_json(const Phase& p) {
  std::ostringstream o;
  uint64_t bytes = 0;
  for (const Copy& c : p.copies) bytes += c.bytes;
  o << "{\"index\": " << p.index << ", \"direction\": " << json_string(p.direction)
    << ", \"dir\": " << json_string(p.dir) << ", \"memory\": " << json_string(p.memory)
    << ", \"copy_bytes\": " << bytes << ", \"copy_count\": " << p.copies.size()
    << ", \"file_bytes\": " << p.file_bytes << ", \"first_io_begin_ns\": " << p.first_io_begin_ns
    << ", \"last_io_end_ns\": " << p.last_io_end_ns << ", \"files\": [";
  for (size_t i = 0; i < p.files.size(); ++i) o << (i ? ", " : "") << json_string(p.files[i]);
  o << "], \"copies\": [";
  for (size_t i = 0; i < p.copies.size(); ++i) {
    const Copy& c = p.copies[i];
    o << (i ? ", " : "") << "{\"bytes\": " << c.bytes
      << ", \"direction\": " << json_string(c.direction)
      << ", \"memory\": " << json_string(c.memory)
      << ", \"async\": " << (c.async ? "true" : "false") << ", \"begin_ns\": " << c.begin_ns
      << ", \"end_ns\": " << c.end_ns << "}";
  }
  o << "]}";
  return o.str();
}

std::vector<size_t> parse_sizes_mib(const std::string& text) {
  std::vector<size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end || v == 0) {
      std::fprintf(stderr, "checkpoint_like: --sizes-mib: \"%s\" is not a positive number\n",
                   item.c_str());
      std::exit(2);
    }
    out.push_back(static_cast<size_t>(v) << 20);
  }
  return out;
}

int run_checkpoints(const std::string& dir, const std::string& truth_path,
                    const std::vector<size_t>& sizes, int gap_ms) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) die("mkdir " + dir);
  const uint64_t run_start = mono_ns();
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<uint32_t*> tensors;
  for (size_t t = 0; t < sizes.size(); ++t) {
    uint32_t* p = nullptr;
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), sizes[t]));
    fill<<<1024, 256>>>(p, sizes[t] / 4, static_cast<uint32_t>(t));
    CUDA_CHECK(cudaGetLastError());
    tensors.push_back(p);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto gap = [&] { std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms)); };

  gap();
  std::vector<Phase> phases;
  phases.push_back(save(1, dir, tensors, sizes, /*pinned=*/false, stream));
  gap();
  phases.push_back(save(2, dir, tensors, sizes, /*pinned=*/true, stream));
  gap();
  std::vector<uint32_t*> loaded1, loaded2;
  phases.push_back(load(1, dir, loaded1, sizes, /*pinned=*/false, stream));
  gap();
  phases.push_back(load(2, dir, loaded2, sizes, /*pinned=*/true, stream));
  gap();

  // Verification: one kernel per loaded tensor, one small D2H copy.
  unsigned long long* bad = nullptr;
  const size_t n = 2 * sizes.size();
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&bad), n * sizeof(*bad)));
  CUDA_CHECK(cudaMemset(bad, 0, n * sizeof(*bad)));
  for (size_t t = 0; t < sizes.size(); ++t) {
    check<<<1024, 256>>>(loaded1[t], sizes[t] / 4, static_cast<uint32_t>(t), bad + t);
    check<<<1024, 256>>>(loaded2[t], sizes[t] / 4, static_cast<uint32_t>(t),
                         bad + sizes.size() + t);
  }
  CUDA_CHECK(cudaGetLastError());
  std::vector<unsigned long long> mismatches(n);
  const uint64_t verify_begin = mono_ns();
  CUDA_CHECK(cudaMemcpy(mismatches.data(), bad, n * sizeof(*bad), cudaMemcpyDeviceToHost));
  const uint64_t verify_end = mono_ns();
  unsigned long long total_bad = 0;
  for (unsigned long long m : mismatches) total_bad += m;
  const uint64_t run_end = mono_ns();

  std::ostringstream o;
  o << "{\"program\": \"checkpoint_like\", \"pid\": " << getpid()
    << ", \"run_start_ns\": " << run_start << ", \"run_end_ns\": " << run_end
    << ", \"gap_ms\": " << gap_ms << ", \"contents_ok\": " << (total_bad == 0 ? "true" : "false")
    << ", \"mismatched_words\": " << total_bad << ", \"tensor_bytes\": [";
  for (size_t t = 0; t < sizes.size(); ++t) o << (t ? ", " : "") << sizes[t];
  o << "], \"checkpoints\": [";
  for (size_t i = 0; i < phases.size(); ++i) o << (i ? ", " : "") << phase_json(phases[i]);
  o << "], \"outside_checkpoints\": [{\"bytes\": " << n * sizeof(unsigned long long)
    << ", \"direction\": \"dtoh\", \"memory\": \"pageable\", \"begin_ns\": " << verify_begin
    << ", \"end_ns\": " << verify_end << "}]}\n";
  FILE* f = std::fopen(truth_path.c_str(), "w");
  if (!f) die("open " + truth_path);
  std::fputs(o.str().c_str(), f);
  std::fclose(f);

  for (uint32_t* p : tensors) CUDA_CHECK(cudaFree(p));
  for (uint32_t* p : loaded1) CUDA_CHECK(cudaFree(p));
  for (uint32_t* p : loaded2) CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaFree(bad));
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (total_bad) {
    std::fprintf(stderr, "checkpoint_like: %llu words differ after the round trip\n", total_bad);
    return 1;
  }
  return 0;
}

// Times `count` device-to-host copies of `bytes` (after one warm-up copy).
double bench_seconds(size_t bytes, int count, bool pinned, cudaStream_t stream, void* dev) {
  char* host = host_buffer(bytes, pinned);
  do_copy(host, dev, bytes, cudaMemcpyDeviceToHost, pinned, stream);
  const uint64_t t0 = mono_ns();
  for (int i = 0; i < count; ++i) do_copy(host, dev, bytes, cudaMemcpyDeviceToHost, pinned, stream);
  const uint64_t t1 = mono_ns();
  free_host(host, pinned);
  return static_cast<double>(t1 - t0) / 1e9;
}

int run_bench(int count, size_t bytes, const std::string& memory) {
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  uint32_t* dev = nullptr;
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dev), bytes));
  fill<<<1024, 256>>>(dev, bytes / 4, 7);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (const char* kind : {"pinned", "pageable"}) {
    if (memory != "both" && memory != kind) continue;
    const double s = bench_seconds(bytes, count, std::string(kind) == "pinned", stream, dev);
    std::printf(
        "{\"bench\": \"d2h\", \"memory\": \"%s\", \"count\": %d, \"bytes_each\": %zu, "
        "\"seconds\": %.6f, \"GBps\": %.3f}\n",
        kind, count, bytes, s, static_cast<double>(bytes) * count / s / 1e9);
    std::fflush(stdout);
  }
  CUDA_CHECK(cudaFree(dev));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

void usage() {
  std::fprintf(stderr,
               "usage: checkpoint_like --dir DIR --truth FILE [--sizes-mib 16,48,96,160] "
               "[--gap-ms 3500]\n"
               "       checkpoint_like --bench [--count 20] [--size-mib 1024] "
               "[--memory pinned|pageable|both]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, truth, memory = "both";
  std::vector<size_t> sizes = parse_sizes_mib("16,48,96,160");
  int gap_ms = 3500, count = 20;
  size_t size_mib = 1024;
  bool bench = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--dir")
      dir = value();
    else if (a == "--truth")
      truth = value();
    else if (a == "--sizes-mib")
      sizes = parse_sizes_mib(value());
    else if (a == "--gap-ms")
      gap_ms = std::atoi(value().c_str());
    else if (a == "--bench")
      bench = true;
    else if (a == "--count")
      count = std::atoi(value().c_str());
    else if (a == "--size-mib")
      size_mib = std::strtoul(value().c_str(), nullptr, 10);
    else if (a == "--memory")
      memory = value();
    else
      usage();
  }
  if (bench) {
    if (count <= 0 || size_mib == 0 ||
        (memory != "pinned" && memory != "pageable" && memory != "both"))
      usage();
    return run_bench(count, size_mib << 20, memory);
  }
  if (dir.empty() || truth.empty() || gap_ms < 0) usage();
  return run_checkpoints(dir, truth, sizes, gap_ms);
}
