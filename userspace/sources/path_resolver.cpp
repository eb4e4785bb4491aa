#include "sources/path_resolver.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "common/renamed_below.h"

namespace ckpt {
namespace {

std::string read_link(const std::string& link) {
  char buf[4096];
  ssize_t n = readlink(link.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

bool parse_hex(std::string_view text, unsigned& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

// One /proc/PID/maps line: "start-end perms offset MAJ:MIN inode   path".
// The path is the rest of the line after the inode, leading spaces cut;
// the kernel appends " (deleted)" to a mapping of an unlinked file.
std::string mapping_path_if(const std::string& line, const FileId& file) {
  std::istringstream in(line);
  std::string range;
  std::string perms;
  std::string offset;
  std::string dev;
  uint64_t inode = 0;
  if (!(in >> range >> perms >> offset >> dev >> inode)) return {};
  if (inode != file.ino) return {};
  const size_t colon = dev.find(':');
  unsigned major = 0;
  unsigned minor = 0;
  if (colon == std::string::npos || !parse_hex(std::string_view(dev).substr(0, colon), major) ||
      !parse_hex(std::string_view(dev).substr(colon + 1), minor) ||
      makedev(major, minor) != file.dev)
    return {};
  std::string path;
  std::getline(in, path);
  const size_t first = path.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  path.erase(0, first);
  if (path.front() != '/') return {};  // [heap], [vdso], ...
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.ends_with(kDeleted)) path.resize(path.size() - kDeleted.size());
  return path;
}

}  // namespace

std::string normalize_path(const std::string& path) {
  if (path.empty() || path.front() != '/') return path;
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(pos, slash - pos);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    pos = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

std::string PathResolver::cwd_of(uint32_t tgid) {
  auto it = cwd_.find(tgid);
  if (it != cwd_.end() && it->second.traced) return it->second.path;
  std::string cwd = read_link(fmt::format("{}/{}/cwd", proc_, tgid));
  if (!cwd.empty()) {
    cwd_[tgid] = Cwd{cwd, false};
    return cwd;
  }
  return it == cwd_.end() ? std::string() : it->second.path;
}

std::string PathResolver::fd_dir(uint32_t tgid, int fd) const {
  // The directory as the traced open that returned the fd named it: /proc
  // shows the fd as it is when the record is read, and a process walking a
  // tree one openat(dirfd, name) at a time (rsync's receiver) has closed
  // and reused the number since, or is gone.
  if (auto t = fds_.find(tgid); t != fds_.end())
    if (auto f = t->second.find(fd); f != t->second.end()) return f->second;
  return read_link(fmt::format("{}/{}/fd/{}", proc_, tgid, fd));  // opened before we looked
}

std::string PathResolver::resolve(uint32_t tgid, int dirfd, const std::string& path) {
  if (path.empty() || path.front() == '/') return normalize_path(path);
  std::string base = dirfd == AT_FDCWD ? cwd_of(tgid) : fd_dir(tgid, dirfd);
  if (base.empty()) return path;  // the process is gone: keep what it said
  return normalize_path(base + "/" + path);
}

void PathResolver::changed_dir(uint32_t tgid, const std::string& dir) {
  if (dir.empty() || dir.front() != '/') {
    cwd_.erase(tgid);
    return;
  }
  cwd_[tgid] = Cwd{normalize_path(dir), true};
}

std::string PathResolver::verified_fd_path(uint32_t tgid, int fd, const FileId& file) const {
  const std::string link = fmt::format("{}/{}/fd/{}", proc_, tgid, fd);
  std::string p = read_link(link);
  if (p.empty() || p.front() != '/') return {};
  // stat() follows the magic link to the file itself: it must be the one
  // the kernel reported, or the fd was closed and reused since.
  struct stat st {};
  if (file.known() &&
      (stat(link.c_str(), &st) != 0 || st.st_dev != file.dev || st.st_ino != file.ino))
    return {};
  constexpr std::string_view kDeleted = " (deleted)";
  if (p.ends_with(kDeleted)) p.resize(p.size() - kDeleted.size());
  return p;
}

std::string PathResolver::path_of(uint32_t tgid, int fd, const FileId& file) {
  if (auto it = files_.find(file); it != files_.end()) return it->second;
  // Opened before we attached, or its open record was lost.
  std::string p = verified_fd_path(tgid, fd, file);
  if (!p.empty() && file.known()) remember(file, p);
  return p;
}

std::string PathResolver::mapped_path(uint32_t tgid, const FileId& file) {
  if (!file.known()) return {};
  if (auto it = files_.find(file); it != files_.end()) return it->second;
  std::ifstream maps(fmt::format("{}/{}/maps", proc_, tgid));
  std::string line;
  while (std::getline(maps, line)) {
    std::string p = mapping_path_if(line, file);
    if (p.empty()) continue;
    remember(file, p);
    return p;
  }
  return {};
}

void PathResolver::remember(const FileId& file, const std::string& path) {
  // Only absolute names: a relative one would pin a wrong name on the file.
  if (!file.known() || path.empty() || path.front() != '/') return;
  // Bounded for long runs: a node exporter sees millions of files.
  if (files_.size() > 500'000) {
    files_.clear();
    ids_.clear();
  }
  auto [it, inserted] = files_.try_emplace(file, path);
  if (!inserted) {
    ids_.erase(it->second);
    it->second = path;
  }
  ids_[path] = file;
}

std::optional<FileId> PathResolver::renamed(const std::string& old_path,
                                            const std::string& new_path) {
  std::optional<FileId> id;
  if (auto it = ids_.find(old_path); it != ids_.end()) {
    id = it->second;
    remember(*id, new_path);
  }
  // The rename's record does not say whether it named a directory: what
  // lies below the old name, if anything, moves with it.
  rename_below(old_path, new_path);
  return id;
}

void PathResolver::rename_below(const std::string& old_dir, const std::string& new_dir) {
  if (old_dir.empty() || old_dir.front() != '/' || new_dir.empty() || new_dir.front() != '/')
    return;
  const std::string from = old_dir.back() == '/' ? old_dir : old_dir + "/";
  std::vector<std::pair<FileId, std::string>> moved;
  // The names below `from` are one range of the ordered index.
  for (auto it = ids_.lower_bound(from); it != ids_.end() && it->first.starts_with(from); ++it)
    if (auto path = renamed_below(it->first, old_dir, new_dir))
      moved.emplace_back(it->second, std::move(*path));
  for (const auto& [file, path] : moved) remember(file, path);
  for (auto& [tgid, fds] : fds_)
    for (auto& [fd, path] : fds)
      if (auto renamed = renamed_below(path, old_dir, new_dir)) path = std::move(*renamed);
  for (auto& [tgid, cwd] : cwd_)
    if (auto renamed = renamed_below(cwd.path, old_dir, new_dir)) cwd.path = std::move(*renamed);
}

void PathResolver::opened(uint32_t tgid, int fd, const std::string& path) {
  if (fd < 0 || path.empty() || path.front() != '/') return;
  fds_[tgid][fd] = path;
}

void PathResolver::forked(uint32_t parent, uint32_t child) {
  if (auto it = cwd_.find(parent); it != cwd_.end()) cwd_[child] = it->second;
  // A child starts with its parent's fds.
  if (auto it = fds_.find(parent); it != fds_.end()) fds_[child] = it->second;
}

}  // namespace ckpt
