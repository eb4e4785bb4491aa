#include "stitch/pending_files.h"

#include <algorithm>
#include <utility>

#include "common/renamed_below.h"

namespace ckpt {

void PendingFiles::track(const FileId& file, const std::string& path, uint64_t now_ns) {
  File& f = files_[file];
  if (!path.empty()) f.path = path;
  f.last_ns = std::max(f.last_ns, now_ns);
}

bool PendingFiles::hold(IoEvent&& ev) {
  auto it = files_.find(ev.file);
  if (it == files_.end() || held_calls_ >= max_held_calls_) return false;
  it->second.last_ns = std::max(it->second.last_ns, ev.end_ns);
  it->second.calls.push_back(std::move(ev));
  ++held_calls_;
  return true;
}

std::vector<IoEvent> PendingFiles::take(const FileId& file) {
  auto it = files_.find(file);
  if (it == files_.end()) return {};
  std::vector<IoEvent> calls = std::move(it->second.calls);
  held_calls_ -= calls.size();
  files_.erase(it);
  return calls;
}

void PendingFiles::renamed(const FileId& file, const std::string& new_path) {
  if (auto it = files_.find(file); it != files_.end()) it->second.path = new_path;
}

std::vector<FileId> PendingFiles::renamed_dir(const std::string& old_dir,
                                              const std::string& new_dir) {
  std::vector<FileId> moved;
  for (auto& [file, f] : files_) {
    if (auto path = renamed_below(f.path, old_dir, new_dir)) {
      f.path = std::move(*path);
      moved.push_back(file);
    }
  }
  return moved;
}

std::string PendingFiles::path_of(const FileId& file) const {
  auto it = files_.find(file);
  return it == files_.end() ? std::string() : it->second.path;
}

std::vector<FileId> PendingFiles::older_than(uint64_t horizon_ns) const {
  std::vector<FileId> old;
  for (const auto& [file, f] : files_)
    if (horizon_ns == UINT64_MAX || f.last_ns < horizon_ns) old.push_back(file);
  return old;
}

}  // namespace ckpt
