#include "stitch/maxima.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/endpoint.h"

namespace ckpt {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// The interface that owns a local address (a connection's source address).
std::optional<std::string> interface_of(const std::string& addr) {
  unsigned char want[16] = {};
  int family = AF_INET;
  if (inet_pton(AF_INET, addr.c_str(), want) != 1) {
    if (inet_pton(AF_INET6, addr.c_str(), want) != 1) return std::nullopt;
    family = AF_INET6;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* it = list; it && !found; it = it->ifa_next) {
    if (!it->ifa_addr || it->ifa_addr->sa_family != family) continue;
    const void* a =
        family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(it->ifa_addr)->sin6_addr);
    if (std::memcmp(a, want, family == AF_INET ? 4 : 16) == 0) found = it->ifa_name;
  }
  freeifaddrs(list);
  return found;
}

}  // namespace

std::optional<double> pcie_bytes_per_second(const std::string& link_speed,
                                            const std::string& width) {
  // link_speed reads like "16.0 GT/s PCIe" (older kernels: "8 GT/s"); width "16".
  double gts = 0;
  int lanes = 0;
  try {
    gts = std::stod(link_speed);
    lanes = std::stoi(width);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (gts <= 0 || lanes <= 0) return std::nullopt;
  double efficiency = gts <= 5.0 ? 8.0 / 10.0 : gts < 64.0 ? 128.0 / 130.0 : 242.0 / 256.0;
  return gts * 1e9 * lanes * efficiency / 8.0;
}

std::optional<StageMax> SystemMaxima::pcie_link_above(const std::string& device_path) const {
  std::error_code ec;
  fs::path p = fs::canonical(device_path, ec);
  if (ec) return std::nullopt;
  for (; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    auto speed = read_first_line(p / "current_link_speed");
    auto width = read_first_line(p / "current_link_width");
    if (speed && width) {
      if (auto bps = pcie_bytes_per_second(*speed, *width))
        return StageMax{*bps, fmt::format("sysfs:{} (PCIe {} x{})",
                                          (p / "current_link_speed").string(), *speed, *width)};
    }
  }
  return std::nullopt;
}

std::optional<StageMax> SystemMaxima::nic_speed(const std::string& ifname) const {
  fs::path p = fs::path(sysfs_) / "class/net" / ifname / "speed";
  auto line = read_first_line(p);  // Mbit/s; reading fails (EINVAL) on lo and down links
  if (!line) return std::nullopt;
  try {
    long mbit = std::stol(*line);
    if (mbit <= 0) return std::nullopt;
    return StageMax{static_cast<double>(mbit) * 1e6 / 8.0, fmt::format("sysfs:{}", p.string())};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<StageMax> SystemMaxima::block_device_max(uint64_t dev) {
  fs::path block = fs::path(sysfs_) / "dev/block" / fmt::format("{}:{}", major(dev), minor(dev));
  std::error_code ec;
  if (!fs::exists(block, ec)) return std::nullopt;
  // Walk up from the block device itself: a partition has no device/ link,
  // but its parents in /sys/devices lead to the controller's PCIe link.
  return pcie_link_above(block.string());
}

StageMax SystemMaxima::storage(Direction direction, const std::vector<FileId>& files) {
  const auto& configured =
      direction == Direction::Save ? configured_.storage_write_Bps : configured_.storage_read_Bps;
  if (configured)
    return StageMax{configured, direction == Direction::Save ? "config:storage.write_bandwidth"
                                                             : "config:storage.read_bandwidth"};
  // A checkpoint's files are on one mount as a rule; the first file whose
  // mount was measured speaks for them.
  if (calibrated_)
    for (const auto& f : files)
      if (auto c = calibrated_->for_device(f.dev))
        return StageMax{direction == Direction::Save ? c->write_Bps : c->read_Bps, c->max_source()};
  for (const auto& f : files)
    if (auto m = block_device_max(f.dev)) return *m;
  return StageMax{};
}

StageMax SystemMaxima::serialize(size_t threads) {
  if (configured_.serialize_Bps)
    return StageMax{configured_.serialize_Bps, "config:maxima.serialize_bandwidth"};
  if (calibrated_)
    if (auto m = calibrated_->memory())
      return StageMax{m->ceiling_Bps(threads), m->max_source(threads)};
  return StageMax{};
}

StageMax SystemMaxima::page_cache(Direction direction, size_t threads) {
  const bool write = direction == Direction::Save;
  if (calibrated_)
    if (auto m = calibrated_->memory())
      if (auto bps = m->page_cache_ceiling_Bps(write, threads))
        return StageMax{*bps, m->page_cache_source(write, threads)};
  return serialize(threads);
}

StageMax SystemMaxima::transport(const std::string& local_endpoint) {
  if (configured_.transport_Bps)
    return StageMax{configured_.transport_Bps, "config:maxima.transport_bandwidth"};
  if (auto ifname = interface_of(endpoint_host(local_endpoint)))
    if (auto m = nic_speed(*ifname)) return *m;
  return StageMax{};
}

StageMax SystemMaxima::gpu_copy(Direction direction, const std::vector<std::string>& pci) {
  // Every GPU has a link of its own, and a job's GPUs copy at once (one
  // rank per GPU): the stage's maximum is the sum over the GPUs it used.
  const size_t gpus = std::max<size_t>(1, pci.size());
  const bool save = direction == Direction::Save;
  const auto& configured = save ? configured_.gpu_d2h_Bps : configured_.gpu_h2d_Bps;
  if (configured)
    return StageMax{*configured * static_cast<double>(gpus),
                    fmt::format("config:maxima.{} x {} GPU(s)",
                                save ? "gpu_d2h_bandwidth" : "gpu_h2d_bandwidth", gpus)};
  double sum = 0;
  std::string first;
  for (const auto& address : pci) {
    auto m = pcie_link_above((fs::path(sysfs_) / "bus/pci/devices" / address).string());
    if (!m || !m->Bps) return StageMax{};  // one GPU's link unknown: the sum is too
    sum += *m->Bps;
    if (first.empty()) first = m->source;
  }
  if (pci.empty()) return StageMax{};
  return StageMax{sum, pci.size() == 1
                           ? first
                           : fmt::format("{} GPUs' PCIe links, first {}", pci.size(), first)};
}

}  // namespace ckpt
