// What an NVIDIA Xid means for a job: the one list of Xid numbers per
// category. Two consumers read it and must agree:
//   - the kernel-log watcher (sources/kernel_log.cpp) names the category of
//     each Xid line it sees, through xid_category();
//   - the failure-cause rule base (analysis/classifier/rules.json) writes
//     {{xids:CATEGORY}} where its patterns and docs need the numbers, and the
//     rule-base loader expands it from this table (classify::expand_xid_lists).
// A C++ table rather than a data file both read: the watcher needs it as code
// anyway, and the loader expanding placeholders at load time keeps rules.json
// the file that is compiled in, with no generation step, while a user's rule
// file without placeholders loads exactly as before.
//
// Sources: NVIDIA's Xid catalogue (https://docs.nvidia.com/deploy/xid-errors/)
// and its memory-error guide
// (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/, "User Visible
// Statistics"), which lists the Xids that report GPU memory errors: 48
// uncorrectable ECC error (171 DRAM, 172 SRAM split it on newer drivers), 94
// contained and 95 uncontained ECC error, 63 a row remapping (page retirement
// before Ampere) recorded and 64 one that failed to record, 160 memory marked
// for repair. 63/64 count as ECC errors: they happen only because of ECC
// errors, and 64 means the GPU could not fence the bad memory. 92 ("high
// single-bit ECC error rate", older GPUs) is not in that list and stays a
// plain Xid.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace ckpt {

enum class XidCategory : uint8_t {
  GpuLost,      // 79: the GPU has fallen off the bus
  EccError,     // GPU memory errors and the row remapping / page retirement they cause
  NvlinkError,  // 74
  GpuXid,       // any other Xid
};

// The category names: the evidence of a gpu_xid failure and the classifier's
// class names for these causes.
inline constexpr std::string_view kXidCategoryGpuLost = "gpu_lost";
inline constexpr std::string_view kXidCategoryEccError = "ecc_error";
inline constexpr std::string_view kXidCategoryNvlinkError = "nvlink_error";
inline constexpr std::string_view kXidCategoryGpuXid = "gpu_xid";

inline constexpr uint32_t kGpuLostXids[] = {79};
inline constexpr uint32_t kEccErrorXids[] = {48, 63, 64, 94, 95, 160, 171, 172};
inline constexpr uint32_t kNvlinkErrorXids[] = {74};

struct XidCategoryEntry {
  XidCategory category;
  std::string_view name;
  std::span<const uint32_t> xids;  // empty for GpuXid: every Xid not listed elsewhere
};
inline constexpr XidCategoryEntry kXidCategories[] = {
    {XidCategory::GpuLost, kXidCategoryGpuLost, kGpuLostXids},
    {XidCategory::EccError, kXidCategoryEccError, kEccErrorXids},
    {XidCategory::NvlinkError, kXidCategoryNvlinkError, kNvlinkErrorXids},
    {XidCategory::GpuXid, kXidCategoryGpuXid, {}},
};

constexpr XidCategory xid_category(uint32_t xid) {
  for (const XidCategoryEntry& entry : kXidCategories)
    for (uint32_t listed : entry.xids)
      if (listed == xid) return entry.category;
  return XidCategory::GpuXid;
}

// "gpu_lost", "ecc_error", "nvlink_error", "gpu_xid"
constexpr std::string_view to_string(XidCategory category) {
  for (const XidCategoryEntry& entry : kXidCategories)
    if (entry.category == category) return entry.name;
  return "unknown";
}

// The entry called `name`; nullptr when there is none.
constexpr const XidCategoryEntry* find_xid_category(std::string_view name) {
  for (const XidCategoryEntry& entry : kXidCategories)
    if (entry.name == name) return &entry;
  return nullptr;
}

// No Xid is in two categories: the watcher takes the first, the rule base
// the highest precedence, and they would disagree.
static_assert(
    [] {
      for (const XidCategoryEntry& a : kXidCategories)
        for (uint32_t xid : a.xids)
          if (xid_category(xid) != a.category) return false;
      return true;
    }(),
    "an Xid is listed in two categories");

}  // namespace ckpt
