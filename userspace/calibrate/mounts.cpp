#include "calibrate/mounts.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "files/input_file.h"

namespace ckpt {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo (fs/seq_file.c mangle_path).
std::string unescape(std::string_view s) {
  const auto oct = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && oct(s[i + 1]) && oct(s[i + 2]) && oct(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_device(std::string_view text, uint64_t& dev) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= text.size()) return false;
  unsigned long major_n = 0, minor_n = 0;
  for (char c : text.substr(0, colon)) {
    if (c < '0' || c > '9') return false;
    major_n = major_n * 10 + static_cast<unsigned long>(c - '0');
  }
  for (char c : text.substr(colon + 1)) {
    if (c < '0' || c > '9') return false;
    minor_n = minor_n * 10 + static_cast<unsigned long>(c - '0');
  }
  if (major_n > 0xfffff || minor_n > 0xfffff) return false;
  dev = makedev(static_cast<unsigned>(major_n), static_cast<unsigned>(minor_n));
  return true;
}

// Whether `mount_point` is `path` or a directory above it.
bool is_under(const std::string& path, const std::string& mount_point) {
  if (mount_point == "/") return true;
  return path == mount_point ||
         (path.size() > mount_point.size() &&
          path.compare(0, mount_point.size(), mount_point) == 0 && path[mount_point.size()] == '/');
}

}  // namespace

std::string MountEntry::super_option(std::string_view key) const {
  std::string_view rest = super_options;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view opt = rest.substr(0, comma);
    if (opt.size() > key.size() && opt.substr(0, key.size()) == key && opt[key.size()] == '=')
      return std::string(opt.substr(key.size() + 1));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return {};
}

std::string device_text(uint64_t dev) { return fmt::format("{}:{}", major(dev), minor(dev)); }

Expected<std::vector<MountEntry>> parse_mountinfo(std::string_view text, std::string_view origin) {
  std::vector<MountEntry> out;
  size_t number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++number;
    if (line.empty()) continue;
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    const auto f = split_spaces(line);
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    MountEntry m;
    if (dash + 2 >= f.size() || !parse_device(f[2], m.dev))
      return make_error(fmt::format("{}: line {} is not a mountinfo line: {}", origin, number,
                                    std::string(line.substr(0, 200))));
    m.mount_point = unescape(f[4]);
    m.fs_type = unescape(f[dash + 1]);
    m.source = unescape(f[dash + 2]);
    if (dash + 3 < f.size()) m.super_options = unescape(f[dash + 3]);
    out.push_back(std::move(m));
  }
  return out;
}

Expected<std::vector<MountEntry>> read_mountinfo(const std::string& path) {
  // A line of some 100-300 bytes per mount: 64 MiB is hundreds of thousands
  // of mounts, more than any node (or container host) has.
  constexpr InputLimit kMountinfoLimit{64u << 20, "a mount table is a line per mount", true};
  auto text = read_file_bounded(path, kMountinfoLimit, "");
  if (!text) return text.error();
  return parse_mountinfo(*text, path);
}

Expected<MountEntry> mount_of_path(const std::vector<MountEntry>& mounts, const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return make_error(fmt::format("{}: {}", path, std::strerror(errno)));
  std::error_code ec;
  const std::string real = std::filesystem::canonical(path, ec).string();
  if (ec) return make_error(fmt::format("{}: {}", path, ec.message()));
  const MountEntry* by_dev = nullptr;
  const MountEntry* by_path = nullptr;
  for (const auto& m : mounts) {
    if (!is_under(real, m.mount_point)) continue;
    // Later lines are mounted later: on the same mount point, the later one
    // covers the earlier.
    if (!by_path || m.mount_point.size() >= by_path->mount_point.size()) by_path = &m;
    if (m.dev == st.st_dev && (!by_dev || m.mount_point.size() >= by_dev->mount_point.size()))
      by_dev = &m;
  }
  if (by_dev) return *by_dev;
  if (by_path) {
    MountEntry m = *by_path;
    m.dev = st.st_dev;  // what the files' st_dev will be
    return m;
  }
  return make_error(fmt::format("{}: no mount in the mount table holds {}", path, real));
}

}  // namespace ckpt
