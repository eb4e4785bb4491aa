#include "analysis/logwatch/severity.h"

#include <charconv>

namespace ckpt::logwatch {

namespace {

constexpr std::array<std::string_view, 8> kNames = {"emerg",   "alert",  "crit", "err",
                                                    "warning", "notice", "info", "debug"};

}  // namespace

std::string_view severity_name(Severity level) {
  return kNames[level > kSeverityDebug ? kSeverityDebug : level];
}

std::optional<Severity> parse_severity(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (text == kNames[i]) return static_cast<Severity>(i);
  if (text == "error") return Severity{3};
  if (text == "warn") return Severity{4};
  if (text == "emergency" || text == "panic") return Severity{0};
  int n = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc() && end == text.data() + text.size() && n >= 0 && n <= kSeverityDebug)
    return static_cast<Severity>(n);
  return std::nullopt;
}

std::optional<Severity> bgl_level(std::string_view level) {
  if (level == "INFO") return Severity{6};
  if (level == "WARNING") return Severity{4};
  if (level == "SEVERE" || level == "ERROR") return Severity{3};
  if (level == "FAILURE" || level == "FATAL") return Severity{2};
  return std::nullopt;
}

}  // namespace ckpt::logwatch
