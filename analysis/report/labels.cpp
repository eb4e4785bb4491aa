#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/above_max_note.h"
#include "analysis/format.h"

#include "analysis/report/report_internal.h"

namespace ckpt::report {

const StageRecord* find_stage(const CheckpointRecord& checkpoint, std::string_view name) {
  for (const auto& s : checkpoint.stages)
    if (s.name == name) return &s;
  return nullptr;
}

std::string checkpoint_label(const CheckpointReport& checkpoint) {
  return fmt::format("{} #{}", to_string(checkpoint.direction), checkpoint.index);
}

std::string storage_fraction_text(const CheckpointReport& checkpoint, std::string_view unknown) {
  if (!checkpoint.fraction_of_storage_max) return std::string(unknown);
  const double f = *checkpoint.fraction_of_storage_max;
  return f > kCalibrationFaultFraction
             ? fmt::format("{} (calibration warning: above the maximum)", format_percent(f))
             : format_percent(f);
}

std::string traced_text(const NodeInfo& node) {
  if (!node.traced) return "no";
  return node.probe_mode.empty() ? "yes" : fmt::format("yes ({})", node.probe_mode);
}

std::string via_text(const CheckpointReport& checkpoint) {
  const auto& by_via = checkpoint.bytes_by_via;
  if (std::all_of(by_via.begin(), by_via.end(), [](const auto& v) { return v.first == "syscall"; }))
    return "";
  std::vector<std::string> parts;
  parts.reserve(by_via.size());
  for (const auto& [via, bytes] : by_via) parts.push_back(via + " " + format_bytes(bytes));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string exit_text(const NodeInfo& node) {
  if (node.exit_signal) return fmt::format("killed by signal {}", *node.exit_signal);
  if (node.exit_code) return fmt::format("exit {}", *node.exit_code);
  return "still running or unknown";
}

}  // namespace ckpt::report
