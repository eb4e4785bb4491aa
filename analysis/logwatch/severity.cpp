#include "analysis/logwatch/severity.h"

#include <charconv>

namespace ckpt::logwatch {

namespace {

constexpr std::array<std::string_view, 8> kNames = {"emerg",   "alert",  "crit", "err",
                                                    "warning", "notice", "info", "debug"};

// Word prefixes and phrases that make a line without a level an error or a
// warning (severity_from_words).
constexpr std::array<std::string_view, 13> kErrorWordStarts = {
    "error",   "fail",      "fatal",    "panic", "critical",  "abort",  "corrupt",
    "timeout", "unreachab", "segfault", "oops",  "exception", "refused"};
constexpr std::array<std::string_view, 3> kErrorPhrases = {"timed out", "not responding",
                                                           "call trace"};
constexpr std::string_view kWarningWordStart = "warn";

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `text` at `at` starts with `word` (lower case), ignoring case.
bool starts_at(std::string_view text, std::size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (lower(text[at + i]) != word[i]) return false;
  return true;
}

}  // namespace

Severity severity_from_words(std::string_view message) {
  bool warning = false;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (!is_letter(message[i]) || (i > 0 && is_letter(message[i - 1]))) continue;
    for (std::string_view w : kErrorWordStarts)
      if (starts_at(message, i, w)) return Severity{3};
    for (std::string_view p : kErrorPhrases)
      if (starts_at(message, i, p)) return Severity{3};
    if (!warning && starts_at(message, i, kWarningWordStart)) warning = true;
  }
  return warning ? Severity{4} : Severity{6};
}

std::string_view to_string(AlarmRank rank) {
  switch (rank) {
    case AlarmRank::kKnownFault:
      return "known_fault";
    case AlarmRank::kError:
      return "error";
    case AlarmRank::kBenign:
      break;
  }
  return "benign";
}

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
