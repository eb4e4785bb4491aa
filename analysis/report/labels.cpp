#include <fmt/format.h>

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

std::string exit_text(const NodeInfo& node) {
  if (node.exit_signal) return fmt::format("killed by signal {}", *node.exit_signal);
  if (node.exit_code) return fmt::format("exit {}", *node.exit_code);
  return "still running or unknown";
}

}  // namespace ckpt::report
