#include "exporters/sqlite/json_text.h"

#include <fmt/format.h>

namespace ckpt::json_text {
namespace {

void append_escaped(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(ch)));
        } else {
          out.push_back(ch);  // bytes >= 0x80 pass through: UTF-8 or not
        }
    }
  }
  out.push_back('"');
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A forward-only reader over the text; every accessor fails soft (nullopt or
// false) so malformed input can never read past the end.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool eat(char c) {
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool at_end() {
    skip_ws();
    return pos_ == text_.size();
  }

  std::optional<std::string> string() {
    if (!eat('"')) return std::nullopt;
    std::string out;
    while (pos_ < text_.size()) {
      char ch = text_[pos_++];
      if (ch == '"') return out;
      if (static_cast<unsigned char>(ch) < 0x20) return std::nullopt;  // JSON forbids raw controls
      if (ch != '\\') {
        out.push_back(ch);
        continue;
      }
      if (pos_ >= text_.size()) return std::nullopt;
      char esc = text_[pos_++];
      switch (esc) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          auto cp = code_point();
          if (!cp) return std::nullopt;
          append_utf8(out, *cp);
          break;
        }
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;  // unterminated
  }

  std::optional<uint32_t> u32() {
    auto value = u64();
    if (!value || *value > UINT32_MAX) return std::nullopt;
    return static_cast<uint32_t>(*value);
  }

  // An unsigned decimal that fits 64 bits (no sign, fraction or exponent).
  std::optional<uint64_t> u64() {
    skip_ws();
    uint64_t value = 0;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto digit = static_cast<uint64_t>(text_[pos_++] - '0');
      if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
      value = value * 10 + digit;
    }
    if (pos_ == start) return std::nullopt;
    return value;
  }

 private:
  void skip_ws() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  std::optional<uint32_t> hex4() {
    if (text_.size() - pos_ < 4) return std::nullopt;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return std::nullopt;
      }
    }
    return v;
  }

  // After "\u": one BMP code point, or a surrogate pair "\uD8xx\uDCxx".
  std::optional<uint32_t> code_point() {
    auto hi = hex4();
    if (!hi) return std::nullopt;
    if (*hi >= 0xDC00 && *hi <= 0xDFFF) return std::nullopt;  // lone low surrogate
    if (*hi < 0xD800 || *hi > 0xDBFF) return hi;
    if (text_.size() - pos_ < 2 || text_[pos_] != '\\' || text_[pos_ + 1] != 'u')
      return std::nullopt;
    pos_ += 2;
    auto lo = hex4();
    if (!lo || *lo < 0xDC00 || *lo > 0xDFFF) return std::nullopt;
    return 0x10000 + ((*hi - 0xD800) << 10) + (*lo - 0xDC00);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

template <typename T, typename ParseOne>
std::optional<std::vector<T>> decode_array(std::string_view text, ParseOne parse_one) {
  Cursor c(text);
  if (!c.eat('[')) return std::nullopt;
  std::vector<T> out;
  if (c.eat(']')) {
    if (!c.at_end()) return std::nullopt;
    return out;
  }
  do {
    auto v = parse_one(c);
    if (!v) return std::nullopt;
    out.push_back(std::move(*v));
  } while (c.eat(','));
  if (!c.eat(']') || !c.at_end()) return std::nullopt;
  return out;
}

}  // namespace

std::string encode_strings(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    append_escaped(out, values[i]);
  }
  out.push_back(']');
  return out;
}

std::optional<std::vector<std::string>> decode_strings(std::string_view text) {
  return decode_array<std::string>(text, [](Cursor& c) { return c.string(); });
}

std::string encode_u32s(const std::vector<uint32_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += std::to_string(values[i]);
  }
  out.push_back(']');
  return out;
}

std::optional<std::vector<uint32_t>> decode_u32s(std::string_view text) {
  return decode_array<uint32_t>(text, [](Cursor& c) { return c.u32(); });
}

std::string encode_u64_object(const std::vector<std::pair<std::string, uint64_t>>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    append_escaped(out, values[i].first);
    out.push_back(':');
    out += std::to_string(values[i].second);
  }
  out.push_back('}');
  return out;
}

std::optional<std::vector<std::pair<std::string, uint64_t>>> decode_u64_object(
    std::string_view text) {
  Cursor c(text);
  if (!c.eat('{')) return std::nullopt;
  std::vector<std::pair<std::string, uint64_t>> out;
  if (c.eat('}')) {
    if (!c.at_end()) return std::nullopt;
    return out;
  }
  do {
    auto key = c.string();
    if (!key || !c.eat(':')) return std::nullopt;
    auto value = c.u64();
    if (!value) return std::nullopt;
    out.emplace_back(std::move(*key), *value);
  } while (c.eat(','));
  if (!c.eat('}') || !c.at_end()) return std::nullopt;
  return out;
}

}  // namespace ckpt::json_text
