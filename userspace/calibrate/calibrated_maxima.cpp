#include "calibrate/calibrated_maxima.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ckpt {

CalibratedMaxima::CalibratedMaxima(std::vector<std::string> files, std::string mountinfo, Warn warn)
    : paths_(std::move(files)),
      files_(paths_.size()),
      mountinfo_(std::move(mountinfo)),
      warn_(std::move(warn)) {
  // Read now, so that a bad file is said when the trace starts, not at the
  // first checkpoint.
  std::lock_guard lock(mu_);
  refresh_files();
}

std::shared_ptr<CalibratedMaxima> CalibratedMaxima::for_this_process(Warn warn,
                                                                     std::string mountinfo) {
  return std::make_shared<CalibratedMaxima>(maxima_files_for_reading(maxima_file_inputs()),
                                            std::move(mountinfo), std::move(warn));
}

bool CalibratedMaxima::refresh_files() {
  bool changed = false;
  for (size_t i = 0; i < paths_.size(); ++i) {
    Stamp now;
    struct stat st {};
    if (stat(paths_[i].c_str(), &st) == 0) {
      now = Stamp{0, st.st_dev, st.st_ino, st.st_size,
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
    } else {
      now.stat_errno = errno;
    }
    if (now == files_[i].stamp) continue;
    changed = true;
    files_[i] = Loaded{now, {}, {}};
    if (now.stat_errno == ENOENT) continue;  // nothing calibrated there
    auto loaded = load_maxima_file(paths_[i]);
    if (!loaded) {
      if (warn_) warn_(fmt::format("calibrated maxima not used: {}", loaded.error().message));
      continue;
    }
    if (!*loaded) continue;
    for (const auto& s : (*loaded)->skipped)
      if (warn_) warn_("calibrated maxima: " + s);
    files_[i].mounts = std::move((*loaded)->mounts);
    files_[i].memory = std::move((*loaded)->memory);
  }
  return changed;
}

std::optional<StorageCalibration> CalibratedMaxima::lookup(uint64_t dev) {
  // A device not seen before may be a mount made since the table was read.
  auto table = read_mountinfo(mountinfo_);
  if (table) {
    mounts_ = std::move(*table);
    mount_problem_.clear();
  } else if (table.error().message != mount_problem_) {
    mount_problem_ = table.error().message;
    if (warn_) warn_("calibrated maxima: cannot read the mount table: " + mount_problem_);
  }
  bool dev_mounted = false;
  for (const auto& loaded : files_) {
    const StorageCalibration* best = nullptr;
    for (const auto& m : mounts_) {
      if (m.dev != dev) continue;
      dev_mounted = true;
      for (const auto& c : loaded.mounts)
        if (c.mount_point == m.mount_point && c.fs_type == m.fs_type && c.source == m.source &&
            (!best || c.date > best->date))
          best = &c;
    }
    if (best) return *best;
  }
  if (dev_mounted) return std::nullopt;
  // A device no mount line has (a btrfs subvolume's own st_dev): the entry
  // calibrate made for it, by device number, while it stays mounted.
  const std::string text = device_text(dev);
  for (const auto& loaded : files_)
    for (const auto& c : loaded.mounts)
      if (c.device == text)
        for (const auto& m : mounts_)
          if (m.mount_point == c.mount_point && m.fs_type == c.fs_type && m.source == c.source)
            return c;
  return std::nullopt;
}

std::optional<StorageCalibration> CalibratedMaxima::for_device(uint64_t dev) {
  std::lock_guard lock(mu_);
  if (refresh_files()) by_dev_.clear();
  auto it = by_dev_.find(dev);
  if (it == by_dev_.end()) it = by_dev_.emplace(dev, lookup(dev)).first;
  return it->second;
}

std::optional<MemoryCalibration> CalibratedMaxima::memory() {
  std::lock_guard lock(mu_);
  if (refresh_files()) by_dev_.clear();
  for (const auto& loaded : files_)
    if (loaded.memory) return loaded.memory;
  return std::nullopt;
}

}  // namespace ckpt
