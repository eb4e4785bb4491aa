#include "analysis/fleet/records/wall_time.h"

#include "analysis/fleet/common/csv.h"
#include "analysis/fleet/common/wall_time.h"

namespace ckpt::fleet::records {

Expected<std::optional<double>> parse_wall_time(std::string_view text) {
  text = trim(text);
  if (text.empty() || text == "Unknown" || text == "None" || text == "N/A")
    return std::optional<double>{};
  auto unix_s = parse_iso8601_unix_s(text);
  if (!unix_s) return unix_s.error();
  return std::optional<double>{*unix_s};
}

}  // namespace ckpt::fleet::records
