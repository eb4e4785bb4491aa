#include "runner/job_gpus.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace ckpt {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    out.push_back(trim(value.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

// One entry of a visible-devices list: the GPU it names, if listed.
std::optional<std::string> resolve_entry(std::string entry, const std::vector<DriverGpu>& gpus) {
  if (entry.empty()) return std::nullopt;
  if (std::all_of(entry.begin(), entry.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    if (entry.size() > 4) return std::nullopt;
    size_t index = std::stoul(entry);
    if (index < gpus.size()) return gpus[index].pci;
    return std::nullopt;
  }
  entry = lower(entry);
  if (entry.rfind("mig-gpu-", 0) == 0) entry = entry.substr(4, entry.find('/') - 4);
  if (entry.rfind("gpu-", 0) != 0) return std::nullopt;  // MIG-<uuid>: the instance's own
  std::optional<std::string> found;
  for (const auto& g : gpus)
    if (!g.uuid.empty() && g.uuid.rfind(entry, 0) == 0) {
      if (found) return std::nullopt;  // an ambiguous prefix names nothing
      found = g.pci;
    }
  return found;
}

}  // namespace

std::vector<DriverGpu> list_driver_gpus(const std::string& root) {
  std::vector<DriverGpu> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    DriverGpu g;
    g.pci = lower(e.path().filename().string());
    std::ifstream in(e.path() / "information");
    std::string line;
    while (std::getline(in, line)) {
      size_t colon = line.find(':');
      if (colon != std::string::npos && trim(line.substr(0, colon)) == "GPU UUID")
        g.uuid = lower(trim(line.substr(colon + 1)));
    }
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const DriverGpu& a, const DriverGpu& b) { return a.pci < b.pci; });
  return out;
}

JobGpus resolve_job_gpus(const EnvGet& env, const std::vector<DriverGpu>& gpus) {
  JobGpus out;
  std::optional<std::string> list;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}) {
    if (auto v = env(name)) {
      list = *v;
      out.source = std::string(name) + "=" + *v;
      break;
    }
  }
  if (!list || lower(trim(*list)) == "all") {
    if (!list) out.source = "all GPUs (no CUDA_VISIBLE_DEVICES or NVIDIA_VISIBLE_DEVICES)";
    for (const auto& g : gpus) out.pci.push_back(g.pci);
    return out;
  }
  std::string value = lower(trim(*list));
  if (value.empty() || value == "none" || value == "void") return out;
  const auto entries = split_list(*list);
  // NVIDIA_VISIBLE_DEVICES is the container runtime's, in the host's
  // numbering; inside the container the driver lists just those GPUs.
  const bool runtime_list = out.source.rfind("NVIDIA_VISIBLE_DEVICES=", 0) == 0;
  if (runtime_list && entries.size() == gpus.size() &&
      std::all_of(entries.begin(), entries.end(), [](const std::string& e) {
        return !e.empty() && std::all_of(e.begin(), e.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
      })) {
    for (const auto& g : gpus) out.pci.push_back(g.pci);
    return out;
  }
  for (const auto& entry : entries) {
    auto pci = resolve_entry(entry, gpus);
    if (!pci) {
      out.unresolved.push_back(entry);
      break;  // CUDA ignores the rest of the list too
    }
    if (std::find(out.pci.begin(), out.pci.end(), *pci) == out.pci.end()) out.pci.push_back(*pci);
  }
  return out;
}

}  // namespace ckpt
