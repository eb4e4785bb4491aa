#include "analysis/fleet/records/slurm_state.h"

#include <array>
#include <string>

namespace ckpt::fleet::records {

std::string base_slurm_state(std::string_view state) {
  while (!state.empty() && state.front() == ' ') state.remove_prefix(1);
  std::string base(state.substr(0, state.find(' ')));
  for (auto& c : base)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  // Some releases abbreviate in narrow columns ("CANCELLED+").
  while (!base.empty() && base.back() == '+') base.pop_back();
  return base;
}

bool slurm_outcome(std::string_view base_state, Outcome& outcome) {
  // A REQUEUED record (sacct -D) is a run that ended and was queued again.
  static constexpr std::array<std::string_view, 11> kFailures = {
      "FAILED",   "NODE_FAIL", "TIMEOUT",  "OUT_OF_MEMORY", "PREEMPTED",   "BOOT_FAIL",
      "DEADLINE", "REVOKED",   "REQUEUED", "REQUEUE_FED",   "REQUEUE_HOLD"};
  static constexpr std::array<std::string_view, 7> kUnfinished = {
      "PENDING", "RUNNING", "SUSPENDED", "RESIZING", "COMPLETING", "CONFIGURING", "STOPPED"};
  if (base_state == "COMPLETED") {
    outcome = Outcome::success;
    return true;
  }
  if (base_state == "CANCELLED") {
    outcome = Outcome::cancelled;
    return true;
  }
  for (auto s : kFailures)
    if (base_state == s) {
      outcome = Outcome::failure;
      return true;
    }
  for (auto s : kUnfinished)
    if (base_state == s) {
      outcome = Outcome::unfinished;
      return true;
    }
  return false;
}

}  // namespace ckpt::fleet::records
