#include "analysis/logwatch/source_key.h"

#include <algorithm>

#include "analysis/logwatch/blank.h"
#include "common/fnv1a.h"

namespace ckpt::logwatch {

namespace {

// The next whitespace-separated token from `pos`; pos moves past it.
std::string_view next_token(std::string_view s, std::size_t& pos) {
  while (pos < s.size() && is_blank(s[pos])) ++pos;
  const std::size_t begin = pos;
  while (pos < s.size() && !is_blank(s[pos])) ++pos;
  return s.substr(begin, pos - begin);
}

bool has_digit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool has_letter(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); });
}

// `tag` less a trailing `[pid]` and its directory: the program's name.
std::string_view name_of(std::string_view tag) {
  if (!tag.empty() && tag.back() == ']')
    if (auto open = tag.rfind('['); open != std::string_view::npos) tag = tag.substr(0, open);
  if (auto slash = tag.rfind('/'); slash != std::string_view::npos) tag = tag.substr(slash + 1);
  return has_letter(tag) ? tag : std::string_view{};
}

}  // namespace

std::string_view source_of(std::string_view message) {
  std::size_t pos = 0;
  for (int tags = 0; tags < 2; ++tags) {
    std::string_view first = next_token(message, pos);
    if (first.size() < 2) return {};
    std::string_view name;
    if (first.back() == ':') {
      name = name_of(first.substr(0, first.size() - 1));
    } else {
      // `driver DEVICE: ...`: a device names its driver's line when it has a
      // digit (a PCI address, eth0, sda1) and ends the tag.
      std::size_t after = pos;
      std::string_view device = next_token(message, after);
      if (device.size() < 2 || device.back() != ':' || !has_digit(device)) return {};
      name = name_of(first);
    }
    // syslog tags every kernel line `kernel:`; the driver's own tag follows.
    if (name != "kernel") return name;
  }
  return {};
}

std::uint32_t source_key(std::string_view source) {
  if (source.empty()) return 0;
  const std::uint64_t h = fnv1a64(source);
  const auto key = static_cast<std::uint32_t>(h ^ (h >> 32));
  return key == 0 ? 1 : key;
}

}  // namespace ckpt::logwatch
