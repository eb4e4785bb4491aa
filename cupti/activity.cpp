#include "activity.h"

#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>

namespace ckpt::cupti {

uint64_t ClockConversion::to_monotonic(uint64_t cupti_ns) const {
  // cupti_activity.h: "A value of 0 for both the start and end timestamps
  // indicates that timestamp information could not be collected". A zero
  // stays zero (no time known), whatever the clock.
  if (mode != CKPT_GPU_CLOCK_OFFSET || cupti_ns == 0) return cupti_ns;
  const int64_t shifted = static_cast<int64_t>(cupti_ns) + offset_ns;
  return shifted > 0 ? static_cast<uint64_t>(shifted) : 0;
}

uint32_t translate_copy_kind(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return CKPT_GPU_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return CKPT_GPU_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return CKPT_GPU_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return CKPT_GPU_COPY_HTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return CKPT_GPU_COPY_PTOP;
    // Copies to or from CUDA arrays (textures): not a checkpoint's path.
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return CKPT_GPU_COPY_OTHER;
    default:
      return CKPT_GPU_COPY_UNKNOWN;
  }
}

uint32_t translate_memory_kind(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return CKPT_GPU_MEM_PAGEABLE;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return CKPT_GPU_MEM_PINNED;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return CKPT_GPU_MEM_DEVICE;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return CKPT_GPU_MEM_MANAGED;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return CKPT_GPU_MEM_ARRAY;
    default:
      return CKPT_GPU_MEM_UNKNOWN;
  }
}

ckpt_gpu_copy_record translate_memcpy(const CUpti_ActivityMemcpy6& a,
                                      const ClockConversion& clock) {
  ckpt_gpu_copy_record r{};
  r.start_ns = clock.to_monotonic(a.start);
  r.end_ns = clock.to_monotonic(a.end);
  r.bytes = a.bytes;
  // cupti_activity.h: copyCount is the number of copies a
  // cudaMemcpyBatchAsync record stands for, "for other memcpy operations,
  // this field will be 1". A driver that leaves it 0 means one copy.
  r.copy_count = a.copyCount == 0 ? 1 : a.copyCount;
  r.copy_kind = translate_copy_kind(a.copyKind);
  r.src_kind = translate_memory_kind(a.srcKind);
  r.dst_kind = translate_memory_kind(a.dstKind);
  r.flags = (a.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? CKPT_GPU_COPY_ASYNC : 0;
  r.device_id = a.deviceId;
  r.src_device = a.deviceId;
  r.dst_device = a.deviceId;
  r.context_id = a.contextId;
  r.stream_id = a.streamId;
  r.correlation_id = a.correlationId;
  return r;
}

ckpt_gpu_copy_record translate_peer_copy(const CUpti_ActivityMemcpyPtoP4& a,
                                         const ClockConversion& clock) {
  ckpt_gpu_copy_record r{};
  r.start_ns = clock.to_monotonic(a.start);
  r.end_ns = clock.to_monotonic(a.end);
  r.bytes = a.bytes;
  r.copy_count = 1;  // CUpti_ActivityMemcpyPtoP4 has no copyCount: one copy per record
  r.copy_kind = translate_copy_kind(a.copyKind);
  r.src_kind = translate_memory_kind(a.srcKind);
  r.dst_kind = translate_memory_kind(a.dstKind);
  r.flags = (a.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? CKPT_GPU_COPY_ASYNC : 0;
  r.device_id = a.deviceId;
  r.src_device = a.srcDeviceId;
  r.dst_device = a.dstDeviceId;
  r.context_id = a.contextId;
  r.stream_id = a.streamId;
  r.correlation_id = a.correlationId;
  return r;
}

std::string format_gpu_uuid(const uint8_t u[16]) {
  char s[64];
  std::snprintf(s, sizeof(s),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  return s;
}

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "DDDD:BB:DD.F" (hex), as the driver names its directories.
std::optional<PciAddress> parse_pci(const std::string& text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4)
    return std::nullopt;
  return PciAddress{domain, bus, device};
}

}  // namespace

std::optional<PciAddress> pci_from_procfs(const uint8_t uuid[16], const std::string& root) {
  const std::string want = lower(format_gpu_uuid(uuid));
  DIR* dir = ::opendir(root.c_str());
  if (!dir) return std::nullopt;
  std::optional<PciAddress> found;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = root;
    path.append("/").append(name).append("/information");
    std::ifstream in(path);
    if (!in) continue;
    std::string line, gpu_uuid, bus_location;
    while (std::getline(in, line)) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = trim(std::string_view(line).substr(0, colon));
      const std::string value = trim(std::string_view(line).substr(colon + 1));
      if (key == "GPU UUID") gpu_uuid = lower(value);
      if (key == "Bus Location") bus_location = value;
    }
    if (gpu_uuid != want) continue;
    found = parse_pci(bus_location.empty() ? name : bus_location);
    if (!found) found = parse_pci(name);
    break;
  }
  ::closedir(dir);
  return found;
}

std::optional<PciAddress> pci_from_driver(uint32_t device_ordinal) {
  // The driver that loaded us is already mapped; RTLD_NOLOAD never maps one
  // (in a unit test without a driver this finds nothing).
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return std::nullopt;
  using GetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  auto get = reinterpret_cast<GetAttribute>(::dlsym(lib, "cuDeviceGetAttribute"));
  std::optional<PciAddress> r;
  int domain = 0, bus = 0, device = 0;
  const auto dev = static_cast<CUdevice>(device_ordinal);
  if (get && get(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) == CUDA_SUCCESS &&
      get(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) == CUDA_SUCCESS &&
      get(&device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) == CUDA_SUCCESS)
    r = PciAddress{static_cast<uint32_t>(domain), static_cast<uint32_t>(bus),
                   static_cast<uint32_t>(device)};
  ::dlclose(lib);  // drops only the reference RTLD_NOLOAD took
  return r;
}

std::optional<PciAddress> resolve_pci(const CUpti_ActivityDevice5& d) {
  const auto* uuid = reinterpret_cast<const uint8_t*>(d.uuid.bytes);
  if (auto p = pci_from_procfs(uuid, "/proc/driver/nvidia/gpus")) return p;
  return pci_from_driver(d.id);
}

ckpt_gpu_device_record translate_device(const CUpti_ActivityDevice5& a,
                                        const std::optional<PciAddress>& pci) {
  ckpt_gpu_device_record r{};
  r.device_id = a.id;
  r.pci_domain = pci ? pci->domain : kPciUnknown;
  r.pci_bus = pci ? pci->bus : kPciUnknown;
  r.pci_device = pci ? pci->device : kPciUnknown;
  r.global_memory_bytes = a.globalMemorySize;
  // cupti_activity.h says the client frees `name`. It is not freed here: a
  // few bytes per device per process, against a double free inside the
  // job should a CUPTI release own the string after all.
  if (a.name) std::strncpy(r.name, a.name, sizeof(r.name) - 1);
  static_assert(sizeof(r.uuid) == sizeof(a.uuid.bytes));
  std::memcpy(r.uuid, a.uuid.bytes, sizeof(r.uuid));
  return r;
}

ActivityDecoder::ActivityDecoder(const CuptiApi& api, RecordSink& sink)
    : api_(api), sink_(sink), pci_(resolve_pci) {}

void ActivityDecoder::on_buffer(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                size_t valid_size) {
  if (buffer && valid_size > 0) {
    CUpti_Activity* record = nullptr;
    for (;;) {
      // cupti_activity.h: MAX_LIMIT_REACHED is the end of the buffer;
      // INVALID_KIND an incomplete or invalid record, where iterating stops.
      const CUptiResult r =
          CUPTI_CALL_ALLOW(api_.cuptiActivityGetNextRecord(buffer, valid_size, &record),
                           CUPTI_ERROR_MAX_LIMIT_REACHED);
      if (r != CUPTI_SUCCESS) {
        if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) truncated_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_MEMCPY:
          sink_.on_copy(
              translate_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record), clock_));
          copies_.fetch_add(1, std::memory_order_relaxed);
          break;
        case CUPTI_ACTIVITY_KIND_MEMCPY2:
          sink_.on_copy(translate_peer_copy(
              *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record), clock_));
          copies_.fetch_add(1, std::memory_order_relaxed);
          break;
        case CUPTI_ACTIVITY_KIND_DEVICE: {
          const auto& d = *reinterpret_cast<const CUpti_ActivityDevice5*>(record);
          sink_.on_device(translate_device(d, pci_ ? pci_(d) : std::nullopt));
          devices_.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        default:
          unknown_.fetch_add(1, std::memory_order_relaxed);
          break;
      }
    }
  }
  collect_dropped(context, stream_id);
}

void ActivityDecoder::collect_dropped(CUcontext context, uint32_t stream_id) {
  // cupti_activity.h: the count is "reset to zero when this function is
  // called", so each call adds what is new. The completion callback's
  // context and stream are passed as the callback documentation says (NULL
  // and 0 since CUDA 6: buffers are global).
  size_t dropped = 0;
  if (CUPTI_CALL(api_.cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped)) ==
      CUPTI_SUCCESS)
    dropped_.fetch_add(dropped, std::memory_order_relaxed);
}

}  // namespace ckpt::cupti
