#include "stitch/unrecognised_io.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/renamed_below.h"

namespace ckpt {
namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// `text` as an fnmatch pattern that matches only itself.
std::string literal_glob(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// A glob for `name` that matches its siblings from other steps and ranks:
// every run of digits becomes '*' (`model_state_000100.dat` ->
// `model_state_*.dat`). The name itself when no letter would be left before
// its extension (`00042.bin` as `*.bin` would take every shard of anything).
std::string sibling_glob(const std::string& name) {
  std::string out;
  std::string stem_letters;  // letters before the first '.'
  bool in_digits = false;
  bool in_stem = true;
  for (char c : name) {
    if (c == '.') in_stem = false;
    if (in_stem && is_alpha(c)) stem_letters += c;
    if (is_digit(c)) {
      if (!in_digits) out += '*';
      in_digits = true;
      continue;
    }
    in_digits = false;
    out += literal_glob(std::string(1, c));
  }
  return stem_letters.empty() ? literal_glob(name) : out;
}

// --checkpoint-glob and --checkpoint-dir values that would make `path` a
// checkpoint file (checkpoint_matcher.h): its name's glob always; its
// directory only where its name is a generic one. A directory whose name has
// no letter (`/data/runs/1234`) is given as its path, a prefix.
void suggest(const CheckpointMatcher& matcher, UnrecognisedFileRecord& f) {
  if (f.path.empty()) return;
  const size_t slash = f.path.rfind('/');
  const std::string name = slash == std::string::npos ? f.path : f.path.substr(slash + 1);
  if (name.empty()) return;
  f.checkpoint_glob = sibling_glob(name);
  if (slash == std::string::npos || slash == 0 || f.path.front() != '/' ||
      !matcher.is_generic_name(name))
    return;
  const std::string parent = f.path.substr(0, slash);
  const std::string dir = parent.substr(parent.rfind('/') + 1);
  f.checkpoint_dir =
      std::any_of(dir.begin(), dir.end(), is_alpha) ? sibling_glob(dir) : literal_glob(parent);
}

}  // namespace

void UnrecognisedIo::set_path(Entry& e, const std::string& path) {
  if (path.empty() || path == e.path) return;
  const bool was_counted = !e.excluded;
  e.path = path;
  e.excluded = matcher_.is_excluded(path);
  if (was_counted == !e.excluded) return;
  // A new name moved the file in or out of what counts.
  if (e.excluded) {
    bytes_read_ -= e.moved.bytes_read;
    bytes_written_ -= e.moved.bytes_written;
    --counted_files_;
  } else {
    bytes_read_ += e.moved.bytes_read;
    bytes_written_ += e.moved.bytes_written;
    ++counted_files_;
  }
}

void UnrecognisedIo::add(const FileId& file, const std::string& path, const Moved& moved) {
  if (moved.bytes_read == 0 && moved.bytes_written == 0) return;
  auto [it, fresh] = files_.try_emplace(file);
  Entry& e = it->second;
  if (fresh) ++counted_files_;  // counted until a name excludes it
  set_path(e, path);
  Moved& m = e.moved;
  if (m.bytes_written == 0 && moved.bytes_written > 0) ++all_files_written_;
  all_bytes_written_ += moved.bytes_written;
  m.first_ns = fresh ? moved.first_ns : std::min(m.first_ns, moved.first_ns);
  m.last_ns = std::max(m.last_ns, moved.last_ns);
  m.bytes_read += moved.bytes_read;
  m.bytes_written += moved.bytes_written;
  m.read_calls += moved.read_calls;
  m.write_calls += moved.write_calls;
  if (moved.tgid != 0) {
    m.tgid = moved.tgid;
    m.tid = moved.tid;
  }
  if (!e.excluded) {
    bytes_read_ += moved.bytes_read;
    bytes_written_ += moved.bytes_written;
  }
  if (files_.size() > kMaxFiles) prune();
}

void UnrecognisedIo::renamed(const FileId& file, const std::string& new_path) {
  auto it = files_.find(file);
  if (it != files_.end()) set_path(it->second, new_path);
}

std::vector<FileId> UnrecognisedIo::renamed_dir(const std::string& old_dir,
                                                const std::string& new_dir) {
  std::vector<FileId> moved;
  for (auto& [file, e] : files_) {
    if (auto path = renamed_below(e.path, old_dir, new_dir)) {
      set_path(e, *path);
      moved.push_back(file);
    }
  }
  return moved;
}

std::string UnrecognisedIo::path_of(const FileId& file) const {
  auto it = files_.find(file);
  return it == files_.end() ? std::string() : it->second.path;
}

std::optional<UnrecognisedIo::Moved> UnrecognisedIo::take(const FileId& file) {
  auto it = files_.find(file);
  if (it == files_.end()) return std::nullopt;
  std::optional<Moved> taken;
  if (!it->second.excluded) {
    taken = it->second.moved;
    bytes_read_ -= taken->bytes_read;
    bytes_written_ -= taken->bytes_written;
    --counted_files_;
    // The checkpoint has its writes now.
    all_bytes_written_ -= taken->bytes_written;
    if (taken->bytes_written > 0) --all_files_written_;
  }
  files_.erase(it);
  return taken;
}

void UnrecognisedIo::prune() {
  // Keep the larger half: the notice names the largest files, and a file
  // dropped here that grows again starts from what it moves from now on.
  std::vector<std::pair<uint64_t, FileId>> sizes;
  sizes.reserve(files_.size());
  for (const auto& [file, e] : files_)
    sizes.emplace_back(e.excluded ? 0 : e.moved.bytes_read + e.moved.bytes_written, file);
  const size_t keep = kMaxFiles / 2;
  std::nth_element(sizes.begin(), sizes.begin() + static_cast<ptrdiff_t>(keep), sizes.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = keep; i < sizes.size(); ++i) files_.erase(sizes[i].second);
}

UnrecognisedIoRecord UnrecognisedIo::record() const {
  UnrecognisedIoRecord r;
  r.bytes_read = bytes_read_;
  r.bytes_written = bytes_written_;
  r.files = counted_files_;
  r.notice_bytes = notice_bytes_;
  std::vector<UnrecognisedFileRecord> all;
  for (const auto& [file, e] : files_) {
    if (e.excluded) continue;
    all.push_back(UnrecognisedFileRecord{e.path, file.dev, file.ino, e.moved.bytes_read,
                                         e.moved.bytes_written});
  }
  auto larger = [](const UnrecognisedFileRecord& a, const UnrecognisedFileRecord& b) {
    if (a.bytes() != b.bytes()) return a.bytes() > b.bytes();
    if (a.path != b.path) return a.path < b.path;
    return a.dev != b.dev ? a.dev < b.dev : a.ino < b.ino;
  };
  const size_t n = std::min(all.size(), kUnrecognisedFilesKept);
  std::partial_sort(all.begin(), all.begin() + static_cast<ptrdiff_t>(n), all.end(), larger);
  all.resize(n);
  for (UnrecognisedFileRecord& f : all) suggest(matcher_, f);
  r.largest = std::move(all);
  return r;
}

}  // namespace ckpt
