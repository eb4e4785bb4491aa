// `ckptscope calibrate`: the gpu_copy stage's maxima measured rather than
// read off the PCIe link: large pinned copies each way on every GPU, timed.
// The CUDA runtime is opened at run time (dlopen), so a build without the
// CUDA toolkit has the command too, and says plainly when there is nothing
// to calibrate.
#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/cli/commands.h"
#include "apps/cli/session.h"
#include "common/clock.h"
#include "common/expected.h"
#include "files/output_file.h"
#include "json/json_io.h"

namespace ckpt::cli {
namespace {

// The few CUDA runtime calls used, by their C signatures (cuda_runtime_api.h).
struct CudaRuntime {
  void* handle = nullptr;
  int (*get_device_count)(int*) = nullptr;
  int (*set_device)(int) = nullptr;
  int (*malloc_device)(void**, size_t) = nullptr;
  int (*free_device)(void*) = nullptr;
  int (*malloc_host)(void**, size_t) = nullptr;
  int (*free_host)(void*) = nullptr;
  int (*memcpy)(void*, const void*, size_t, int) = nullptr;
  int (*synchronize)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*pci_bus_id)(char*, int, int) = nullptr;

  std::string why(int err) const {
    return fmt::format("{} (cudaError {})", error_string ? error_string(err) : "?", err);
  }
};

constexpr int kHostToDevice = 1;  // cudaMemcpyHostToDevice
constexpr int kDeviceToHost = 2;  // cudaMemcpyDeviceToHost

Expected<CudaRuntime> open_cuda_runtime() {
  CudaRuntime rt;
  std::string tried;
  for (const char* name :
       {"libcudart.so.13", "libcudart.so.12", "libcudart.so",
        "/usr/local/cuda/lib64/libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so"}) {
    rt.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (rt.handle) break;
    tried += std::string(tried.empty() ? "" : ", ") + name;
  }
  if (!rt.handle)
    return make_error("no CUDA runtime library (tried " + tried +
                      "): install the CUDA toolkit, or run where a GPU is");
  auto sym = [&rt](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(rt.handle, name));
    return fn != nullptr;
  };
  if (!(sym(rt.get_device_count, "cudaGetDeviceCount") && sym(rt.set_device, "cudaSetDevice") &&
        sym(rt.malloc_device, "cudaMalloc") && sym(rt.free_device, "cudaFree") &&
        sym(rt.malloc_host, "cudaMallocHost") && sym(rt.free_host, "cudaFreeHost") &&
        sym(rt.memcpy, "cudaMemcpy") && sym(rt.synchronize, "cudaDeviceSynchronize") &&
        sym(rt.error_string, "cudaGetErrorString") && sym(rt.pci_bus_id, "cudaDeviceGetPCIBusId")))
    return make_error("the CUDA runtime library lacks a function calibrate needs");
  return rt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct DeviceFigures {
  int device = 0;
  std::string pci;
  double d2h_Bps = 0;
  double h2d_Bps = 0;
};

Expected<DeviceFigures> calibrate_device(const CudaRuntime& rt, int device, size_t bytes,
                                         int rounds) {
  DeviceFigures f;
  f.device = device;
  if (int e = rt.set_device(device); e != 0) return make_error("cudaSetDevice: " + rt.why(e));
  char bus[32] = {};
  if (rt.pci_bus_id(bus, sizeof(bus), device) == 0) {
    f.pci = bus;
    std::transform(f.pci.begin(), f.pci.end(), f.pci.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  }
  void* dev = nullptr;
  void* host = nullptr;
  if (int e = rt.malloc_device(&dev, bytes); e != 0)
    return make_error(fmt::format("cudaMalloc of {} bytes: {}", bytes, rt.why(e)));
  if (int e = rt.malloc_host(&host, bytes); e != 0) {
    rt.free_device(dev);
    return make_error(fmt::format("cudaMallocHost of {} bytes: {}", bytes, rt.why(e)));
  }
  std::vector<double> d2h, h2d;
  std::string error;
  // One unrecorded round each way first: the first copy pays for mappings.
  for (int r = -1; r < rounds && error.empty(); ++r) {
    for (int kind : {kDeviceToHost, kHostToDevice}) {
      const uint64_t t0 = monotonic_ns();
      int e = kind == kDeviceToHost ? rt.memcpy(host, dev, bytes, kind)
                                    : rt.memcpy(dev, host, bytes, kind);
      if (e == 0) e = rt.synchronize();
      const uint64_t t1 = monotonic_ns();
      if (e != 0) {
        error = "cudaMemcpy: " + rt.why(e);
        break;
      }
      if (r < 0) continue;
      (kind == kDeviceToHost ? d2h : h2d)
          .push_back(static_cast<double>(bytes) * 1e9 / static_cast<double>(t1 - t0));
    }
  }
  rt.free_host(host);
  rt.free_device(dev);
  if (!error.empty()) return make_error(error);
  f.d2h_Bps = median(d2h);
  f.h2d_Bps = median(h2d);
  return f;
}

}  // namespace

int calibrate_command(const CalibrateOptions& options) {
  auto rt = open_cuda_runtime();
  if (!rt) {
    warn("calibrate: " + rt.error().message);
    return 1;
  }
  int count = 0;
  if (int e = rt->get_device_count(&count); e != 0 || count == 0) {
    warn("calibrate: no CUDA device to calibrate" +
         (e != 0 ? ": cudaGetDeviceCount: " + rt->why(e) : std::string()));
    return 1;
  }
  std::vector<DeviceFigures> figures;
  for (int d = 0; d < count; ++d) {
    if (options.device >= 0 && d != options.device) continue;
    auto f = calibrate_device(*rt, d, options.bytes, options.rounds);
    if (!f) {
      warn(fmt::format("calibrate: device {}: {}", d, f.error().message));
      return 1;
    }
    figures.push_back(*f);
    fmt::print(stderr, "device {} ({}): device to host {:.2f} GB/s, host to device {:.2f} GB/s\n",
               d, f->pci.empty() ? "?" : f->pci, f->d2h_Bps / 1e9, f->h2d_Bps / 1e9);
  }
  if (figures.empty()) {
    warn(fmt::format("calibrate: --device {}: no such device ({} found)", options.device, count));
    return 2;
  }
  // The slowest GPU's figures: the maxima are per GPU, one figure for all.
  double d2h = figures[0].d2h_Bps, h2d = figures[0].h2d_Bps;
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& f : figures) {
    d2h = std::min(d2h, f.d2h_Bps);
    h2d = std::min(h2d, f.h2d_Bps);
    devices.push_back(
        {{"device", f.device}, {"pci", f.pci}, {"d2h_Bps", f.d2h_Bps}, {"h2d_Bps", f.h2d_Bps}});
  }
  nlohmann::json out = {
      {"maxima", {{"gpu_d2h_bandwidth", d2h}, {"gpu_h2d_bandwidth", h2d}}},
      {"calibration",
       {{"bytes_per_copy", options.bytes}, {"rounds", options.rounds}, {"devices", devices}}}};
  const int rc = emit_calibration_result(out, options.out_path);
  if (rc == 0 && !options.out_path.empty())
    fmt::print(stderr, "calibrate: wrote {} (merge its \"maxima\" into the config)\n",
               options.out_path);
  return rc;
}

int emit_calibration_result(const nlohmann::json& result, const std::string& out_path) {
  const std::string text = dump_json(result, 2) + "\n";
  if (out_path.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  if (auto written = replace_file_contents(out_path, text, "calibrate -o"); !written) {
    warn("calibrate: " + written.error().message);
    return 1;
  }
  return 0;
}

}  // namespace ckpt::cli
