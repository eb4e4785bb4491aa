// parse_time (prometheus_client.h): the time forms Prometheus's own API
// accepts (RFC 3339, Unix seconds) plus Grafana-style "now-6h". The forms
// themselves are the fleet commands' shared parsers (analysis/fleet/common/
// wall_time.h), so a time or a duration means the same in every command.
#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analysis/fleet/common/wall_time.h"
#include "analysis/fleet/prometheus/prometheus_client.h"

namespace ckpt::fleet {
namespace {

Error bad_time(std::string_view text, const std::string& why) {
  return make_error(fmt::format(
      "bad time \"{}\"{}: use RFC 3339 (2026-01-31T12:00:00Z, offsets allowed, no zone = UTC), "
      "Unix seconds (1769860800, 1769860800.5 or 1.7698608e9), or now / now-6h (now-DURATION or "
      "now+DURATION, "
      "with DURATION as --step takes it: 90, 90s, 15m, 1h, 1d, 1w)",
      text, why.empty() ? "" : " (" + why + ")"));
}

}  // namespace

Expected<double> parse_time(const std::string& text, double now_s) {
  const std::string_view view = text;
  if (view == "now") return now_s;
  if (view.substr(0, 3) == "now") {
    const std::string_view rest = view.substr(3);
    if (rest.empty() || (rest[0] != '-' && rest[0] != '+')) return bad_time(text, "");
    auto seconds = parse_duration_s(rest.substr(1));
    if (!seconds) return bad_time(text, seconds.error().message);
    const double at = rest[0] == '-' ? now_s - *seconds : now_s + *seconds;
    if (!std::isfinite(at)) return bad_time(text, "out of range");
    return at;
  }
  // "YYYY-" starts a date; anything else that starts with a digit is Unix
  // seconds (so "12e3" is 12000, as parse_unix_s reads it).
  if (view.size() > 4 && view[4] == '-') {
    auto at = parse_iso8601_unix_s(view);
    if (!at) return bad_time(text, at.error().message);
    return *at;
  }
  if (!view.empty() && view[0] >= '0' && view[0] <= '9') {
    auto at = parse_unix_s(view);
    if (!at) return bad_time(text, at.error().message);
    return *at;
  }
  return bad_time(text, "");
}

}  // namespace ckpt::fleet
