#include "probes/kernel_hz.h"

#include <zlib.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace ckpt {
namespace {

// The whole of a gzip'd file, or nullopt when it cannot be read.
std::optional<std::string> read_gzip(const char* path) {
  gzFile f = gzopen(path, "rb");
  if (!f) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  const bool ok = n == 0;
  gzclose(f);
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace

std::optional<uint32_t> kernel_hz_from_config(std::string_view config) {
  constexpr std::string_view kKey = "CONFIG_HZ=";
  for (size_t at = 0; at < config.size();) {
    const size_t end = std::min(config.find('\n', at), config.size());
    const std::string_view line = config.substr(at, end - at);
    if (line.starts_with(kKey)) {
      const std::string_view value = line.substr(kKey.size());
      uint32_t hz = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), hz);
      if (ec != std::errc() || ptr != value.data() + value.size() || hz == 0) return std::nullopt;
      return hz;
    }
    at = end + 1;
  }
  return std::nullopt;
}

Expected<uint32_t> kernel_hz(const std::string& release) {
  if (auto text = read_gzip("/proc/config.gz"))
    if (auto hz = kernel_hz_from_config(*text)) return *hz;
  const std::string boot = "/boot/config-" + release;
  std::ifstream in(boot);
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    if (auto hz = kernel_hz_from_config(text.str())) return *hz;
  }
  return make_error(
      fmt::format("the kernel's CONFIG_HZ is not known (no /proc/config.gz or {} with it)", boot));
}

}  // namespace ckpt
