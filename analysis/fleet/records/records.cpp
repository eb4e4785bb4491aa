#include "analysis/fleet/records/records.h"

namespace ckpt::fleet::records {

const char* trigger_name(Trigger trigger) {
  return trigger == Trigger::automatic ? "auto" : "manual";
}

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::success:
      return "success";
    case Outcome::failure:
      return "failure";
    case Outcome::cancelled:
      return "cancelled";
    case Outcome::unfinished:
      return "unfinished";
  }
  return "failure";
}

}  // namespace ckpt::fleet::records
