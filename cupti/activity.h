// Decoding CUPTI activity records into the wire records of
// cupti/gpu_copy_record.h.
//
// Two layers: pure translations of one CUPTI record into ours (no CUPTI
// call, unit-testable on any machine), and ActivityDecoder, the body of the
// buffer-completion callback, which walks a buffer with
// cuptiActivityGetNextRecord and collects CUPTI's dropped-record count.
//
// Record layouts are those of the CUDA 13 headers this is built with
// (CUpti_ActivityMemcpy6, CUpti_ActivityMemcpyPtoP4, CUpti_ActivityDevice5):
// CUPTI hands out records in the layout of the headers the client was
// compiled against, for the CUPTI library it links (libcupti.so.13).
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cupti_api.h"
#include "gpu_copy_record.h"

namespace ckpt::cupti {

static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "CUDA 13's CUpti_ActivityMemcpy6");
static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96, "CUDA 13's CUpti_ActivityMemcpyPtoP4");
static_assert(sizeof(CUpti_ActivityDevice5) == 184, "CUDA 13's CUpti_ActivityDevice5");

// How CUPTI's timestamps reach CLOCK_MONOTONIC.
struct ClockConversion {
  uint32_t mode = CKPT_GPU_CLOCK_CALLBACK;  // enum ckpt_gpu_clock
  int64_t offset_ns = 0;                    // CKPT_GPU_CLOCK_OFFSET: added to CUPTI's time
  // A CUPTI timestamp on CLOCK_MONOTONIC. CALLBACK mode: CUPTI already asked
  // our callback, untouched.
  [[nodiscard]] uint64_t to_monotonic(uint64_t cupti_ns) const;
};

// CUPTI's enums into ours (anything new or unknown maps to UNKNOWN).
uint32_t translate_copy_kind(uint8_t cupti_copy_kind);      // CUpti_ActivityMemcpyKind
uint32_t translate_memory_kind(uint8_t cupti_memory_kind);  // CUpti_ActivityMemoryKind

// One copy record into ours; the header is left for the channel to fill.
ckpt_gpu_copy_record translate_memcpy(const CUpti_ActivityMemcpy6& a, const ClockConversion& clock);
ckpt_gpu_copy_record translate_peer_copy(const CUpti_ActivityMemcpyPtoP4& a,
                                         const ClockConversion& clock);

// A GPU's PCI address, for /sys/bus/pci/devices/DDDD:BB:DD.0.
struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
};
// What a device record carries when the address is not known: all three
// fields UINT32_MAX (no PCI domain, bus or device number can be that).
inline constexpr uint32_t kPciUnknown = UINT32_MAX;

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi and the driver write it.
std::string format_gpu_uuid(const uint8_t uuid[16]);

// CUpti_ActivityDevice5 has no PCI address, so it is looked up by the
// device's UUID where the NVIDIA driver lists its GPUs:
// <root>/<DDDD:BB:DD.F>/information, with "GPU UUID:" and "Bus Location:"
// lines. `root` is /proc/driver/nvidia/gpus outside tests.
std::optional<PciAddress> pci_from_procfs(const uint8_t uuid[16], const std::string& root);
// Else the CUDA driver's own answer (cuDeviceGetAttribute with
// CU_DEVICE_ATTRIBUTE_PCI_*_ID), from the libcuda.so.1 that loaded this
// library; never loads a driver itself (RTLD_NOLOAD). CUPTI's device id is
// the CUdevice ordinal.
std::optional<PciAddress> pci_from_driver(uint32_t device_ordinal);

// A device record into ours. `name` is CUPTI's string (may be null).
ckpt_gpu_device_record translate_device(const CUpti_ActivityDevice5& a,
                                        const std::optional<PciAddress>& pci);

// Where decoded records go (the Channel in the library).
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void on_copy(const ckpt_gpu_copy_record& r) = 0;
  virtual void on_device(const ckpt_gpu_device_record& r) = 0;
};

class ActivityDecoder {
 public:
  using PciResolver = std::function<std::optional<PciAddress>(const CUpti_ActivityDevice5&)>;

  ActivityDecoder(const CuptiApi& api, RecordSink& sink);

  // Set before any activity kind is enabled (no buffer can complete before).
  void set_clock(ClockConversion clock) { clock_ = clock; }
  [[nodiscard]] const ClockConversion& clock() const { return clock_; }
  void set_pci_resolver(PciResolver r) { pci_ = std::move(r); }

  // The completion callback's work for one buffer: every record in the
  // first `valid_size` bytes decoded and handed to the sink, other kinds
  // counted and skipped, then CUPTI's dropped count for (context, stream)
  // added. Safe to call from several threads at once.
  void on_buffer(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t valid_size);
  // cuptiActivityGetNumDroppedRecords for (context, stream), added to cupti_dropped().
  void collect_dropped(CUcontext context, uint32_t stream_id);

  [[nodiscard]] uint64_t copies() const { return copies_.load(std::memory_order_relaxed); }
  [[nodiscard]] uint64_t devices() const { return devices_.load(std::memory_order_relaxed); }
  [[nodiscard]] uint64_t unknown_records() const {
    return unknown_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] uint64_t cupti_dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Buffers whose walk stopped at a record CUPTI called incomplete or
  // invalid (CUPTI_ERROR_INVALID_KIND): what followed it is lost.
  [[nodiscard]] uint64_t truncated_buffers() const {
    return truncated_.load(std::memory_order_relaxed);
  }

 private:
  const CuptiApi& api_;
  RecordSink& sink_;
  ClockConversion clock_;
  PciResolver pci_;
  std::atomic<uint64_t> copies_{0};
  std::atomic<uint64_t> devices_{0};
  std::atomic<uint64_t> unknown_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> truncated_{0};
};

// The resolver the library uses: procfs by UUID, else the driver.
std::optional<PciAddress> resolve_pci(const CUpti_ActivityDevice5& d);

}  // namespace ckpt::cupti
