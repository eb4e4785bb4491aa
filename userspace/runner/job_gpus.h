// Which GPUs a job can use, by PCI address, from what it is given before it
// starts: CUDA_VISIBLE_DEVICES, else NVIDIA_VISIBLE_DEVICES (the container
// runtime's), else every GPU the driver lists. Resolved against the NVIDIA
// driver's list of GPUs, <root>/<DDDD:BB:DD.F>/information ("GPU UUID:"
// lines; /proc/driver/nvidia/gpus outside tests). A pid-less Xid is the
// job's only on one of these (runner/kernel_events.h); the CUPTI library's
// device records add the GPUs the job really opened.
//
// - An index N is the Nth GPU in PCI bus order: CUDA_DEVICE_ORDER=PCI_BUS_ID,
//   and CUDA's default order too on a node of one GPU model.
// - "GPU-<uuid>" (or a unique prefix of it, as CUDA takes) is that GPU;
//   "MIG-GPU-<uuid>/..." its parent GPU.
// - Anything else (a MIG-<uuid> instance, an index past the last GPU) is
//   unresolved and named in `unresolved`; CUDA stops reading the list at the
//   first entry it cannot use, and so does this.
// - NVIDIA_VISIBLE_DEVICES counts in the host's numbering; in a container
//   the driver lists only those GPUs, so indices naming as many GPUs as are
//   listed are all of them.
// - "all" (NVIDIA_VISIBLE_DEVICES) or nothing set: every GPU listed;
//   "", "none", "void": none.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ckpt {

struct JobGpus {
  std::vector<std::string> pci;         // "0000:3b:00.0", in the order named
  std::vector<std::string> unresolved;  // entries that name no listed GPU
  std::string source;                   // "CUDA_VISIBLE_DEVICES=0,1", "all GPUs (no ..._DEVICES)"
};

struct DriverGpu {
  std::string pci;   // "0000:3b:00.0"
  std::string uuid;  // "GPU-...", lower case; "" when unknown
};
// The driver's GPUs in PCI bus order; empty when there is no such directory.
std::vector<DriverGpu> list_driver_gpus(const std::string& root = "/proc/driver/nvidia/gpus");

using EnvGet = std::function<std::optional<std::string>(const std::string&)>;
JobGpus resolve_job_gpus(const EnvGet& env, const std::vector<DriverGpu>& gpus);

}  // namespace ckpt
