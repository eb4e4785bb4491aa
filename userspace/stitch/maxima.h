// Each stage's maximum bandwidth and where it came from: the config file
// first, then what `ckptscope calibrate` measured (the mount for storage,
// the node's memory copy for serialize), then what the machine says about
// itself (sysfs), else unknown.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/calibrated_maxima.h"
#include "config/config.h"
#include "model/events.h"
#include "model/records.h"

namespace ckpt {

struct StageMax {
  std::optional<double> Bps;
  std::string source = "unknown";
};

class MaximaProvider {
 public:
  virtual ~MaximaProvider() = default;
  // storage (and the NFS stages): the storage the files live on, for the
  // direction of the checkpoint.
  virtual StageMax storage(Direction direction, const std::vector<FileId>& files) = 0;
  // serialize: the CPU copying the checkpoint's bytes, on `threads` threads
  // (those that did its I/O).
  virtual StageMax serialize(size_t threads) = 0;
  // host_io: the file calls copying to or from the page cache on `threads`
  // threads; the memory copy where nothing better is known.
  virtual StageMax page_cache(Direction /*direction*/, size_t threads) {
    return serialize(threads);
  }
  // transport: the link a storage connection leaves by ("addr:port" local end).
  virtual StageMax transport(const std::string& local_endpoint) = 0;
  // gpu_copy: the link between host and the GPUs at these PCI addresses.
  virtual StageMax gpu_copy(Direction /*direction*/, const std::vector<std::string>& /*pci*/) {
    return {};
  }
};

// Config values, then the calibrations (storage: the mount the files are on;
// serialize: the node's memory copy), then sysfs discovery: PCIe link of the
// block device's controller for storage, NIC speed for transport.
class SystemMaxima : public MaximaProvider {
 public:
  explicit SystemMaxima(ConfiguredMaxima configured, std::string sysfs_root = "/sys",
                        std::shared_ptr<CalibratedMaxima> calibrated = nullptr)
      : configured_(configured),
        sysfs_(std::move(sysfs_root)),
        calibrated_(std::move(calibrated)) {}

  StageMax storage(Direction direction, const std::vector<FileId>& files) override;
  // The page-cache copy `ckptscope calibrate --memory` measured (read(2) and
  // write(2) of a cached file), else the memory copy as serialize has it.
  StageMax page_cache(Direction direction, size_t threads) override;
  // maxima.serialize_bandwidth, else the memory-copy calibration: one
  // thread's copy rate times `threads`, at most all CPUs' together.
  StageMax serialize(size_t threads) override;
  StageMax transport(const std::string& local_endpoint) override;
  // maxima.gpu_{d2h,h2d}_bandwidth (`ckptscope calibrate` measures them),
  // else the GPU's own PCIe link (current_link_speed x width in sysfs).
  StageMax gpu_copy(Direction direction, const std::vector<std::string>& pci) override;

  // Exposed for tests: the PCIe link bandwidth above a sysfs device path.
  std::optional<StageMax> pcie_link_above(const std::string& device_path) const;
  std::optional<StageMax> nic_speed(const std::string& ifname) const;

 private:
  std::optional<StageMax> block_device_max(uint64_t dev);

  ConfiguredMaxima configured_;
  std::string sysfs_;
  std::shared_ptr<CalibratedMaxima> calibrated_;  // null: no calibrations read
};

// PCIe: GT/s per lane x lanes x line-code efficiency (8b/10b up to 5 GT/s,
// 128b/130b from 8 GT/s; PCIe 6's FLIT mode is taken as 242/256) / 8 bits.
std::optional<double> pcie_bytes_per_second(const std::string& link_speed,
                                            const std::string& width);

}  // namespace ckpt
