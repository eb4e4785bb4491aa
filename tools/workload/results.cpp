#include "tools/workload/results.h"

#include <fmt/format.h>

#include "tools/workload/sys.h"

namespace ckpt::workload {

std::string IoFailure::message() const {
  const std::string why = err != 0 ? errno_text(err) : detail;
  if (path.empty()) return fmt::format("{}: {}", op, why);
  return fmt::format("{} {}: {}", op, path, why);
}

bool RunResult::ok() const { return all_failures().empty(); }

bool RunResult::usage_error() const {
  for (const auto& failure : all_failures()) {
    if (failure.usage) return true;
  }
  return false;
}

std::vector<IoFailure> RunResult::all_failures() const {
  std::vector<IoFailure> out;
  for (const auto& step : steps) out.insert(out.end(), step.failures.begin(), step.failures.end());
  out.insert(out.end(), failures.begin(), failures.end());
  return out;
}

}  // namespace ckpt::workload
