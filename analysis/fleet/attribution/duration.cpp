#include "analysis/fleet/attribution/duration.h"

#include <string_view>

#include <fmt/format.h>

#include "analysis/fleet/common/wall_time.h"

namespace ckpt::fleet::attribution {
namespace {

// "0", "0.0", "00s", "0m": zero in any unit.
bool is_zero(std::string_view text) {
  if (!text.empty() && std::string_view("smhdw").find(text.back()) != std::string_view::npos)
    text.remove_suffix(1);
  if (text.empty() || text.front() != '0') return false;
  const size_t dot = text.find('.');
  if (dot != std::string_view::npos && text.find('.', dot + 1) != std::string_view::npos)
    return false;
  return text.find_first_not_of("0.") == std::string_view::npos;
}

}  // namespace

Expected<double> parse_duration_flag(const std::string& text, const std::string& flag,
                                     bool allow_zero) {
  if (allow_zero && is_zero(text)) return 0.0;
  auto seconds = parse_duration_s(text);
  if (!seconds) return make_error(fmt::format("{} '{}': {}", flag, text, seconds.error().message));
  return seconds;
}

}  // namespace ckpt::fleet::attribution
