#include "json/json_io.h"

#include <cstdint>

namespace ckpt {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// What a lead byte asks for: how many continuation bytes, and the range
// the first of them must fall in (RFC 3629 section 4 excludes overlong
// forms, surrogates and code points past U+10FFFF that way). need == 0 for
// ASCII; need < 0 for a byte that cannot begin a sequence.
struct Lead {
  int need;
  uint8_t lo;
  uint8_t hi;
};

Lead lead(uint8_t b0) {
  if (b0 < 0x80) return {0, 0, 0};
  if (b0 >= 0xC2 && b0 <= 0xDF) return {1, 0x80, 0xBF};
  if (b0 == 0xE0) return {2, 0xA0, 0xBF};
  if (b0 == 0xED) return {2, 0x80, 0x9F};
  if (b0 >= 0xE1 && b0 <= 0xEF) return {2, 0x80, 0xBF};
  if (b0 == 0xF0) return {3, 0x90, 0xBF};
  if (b0 >= 0xF1 && b0 <= 0xF3) return {3, 0x80, 0xBF};
  if (b0 == 0xF4) return {3, 0x80, 0x8F};
  return {-1, 0, 0};
}

// How many bytes at text[i] are accepted: the whole sequence when valid
// (*valid = true), else the maximal subpart one U+FFFD replaces (Unicode
// 15, section 3.9, "U+FFFD Substitution of Maximal Subparts").
size_t scan(std::string_view text, size_t i, bool* valid) {
  const Lead l = lead(static_cast<uint8_t>(text[i]));
  *valid = l.need >= 0;
  if (l.need <= 0) return 1;
  size_t k = 1;
  for (; k <= static_cast<size_t>(l.need); ++k) {
    if (i + k >= text.size()) break;
    const auto b = static_cast<uint8_t>(text[i + k]);
    const uint8_t lo = k == 1 ? l.lo : 0x80;
    const uint8_t hi = k == 1 ? l.hi : 0xBF;
    if (b < lo || b > hi) break;
  }
  *valid = k == static_cast<size_t>(l.need) + 1;
  return k;
}

}  // namespace

std::string valid_utf8(std::string_view text, bool* replaced) {
  if (replaced) *replaced = false;
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    bool valid = false;
    const size_t n = scan(text, i, &valid);
    if (valid) {
      out.append(text.substr(i, n));
    } else {
      if (replaced) *replaced = true;
      out.append(kReplacement);
    }
    i += n;
  }
  return out;
}

std::string dump_json(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string describe(const nlohmann::json::exception& e) {
  // what() is "[json.exception.type_error.302] (/a/b) type must be ...";
  // the bracketed tag is for nlohmann's own tests, not for a user.
  std::string_view text = e.what();
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find("] ");
    if (close != std::string_view::npos) text.remove_prefix(close + 2);
  }
  std::string out;
  if (!text.empty() && text.front() == '(') {
    const size_t close = text.find(") ");
    if (close != std::string_view::npos) {
      out.append(text.substr(1, close - 1));
      out += ": ";
      text.remove_prefix(close + 2);
    }
  }
  // parse_error's own words begin "parse error at line 3, column 7: ...".
  constexpr std::string_view kParseError = "parse error at ";
  if (text.starts_with(kParseError)) text.remove_prefix(kParseError.size());
  out.append(valid_utf8(text));
  return out;
}

Expected<nlohmann::json> parse_json(std::string_view text, std::string_view origin) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // parse_error and out_of_range.406 ("number overflow parsing '1e400'"),
    // which the parser throws for a number no double can hold.
    return make_error(std::string(origin) + ": not valid JSON: " + describe(e));
  }
}

}  // namespace ckpt
