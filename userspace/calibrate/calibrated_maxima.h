// Which calibration applies to a traced file: its device number is looked up
// in the mount table, and a maxima-file entry for one of the mounts with
// that device (same mount point, type and source) is the one. The files are
// read when this is made and again whenever one changes (a calibration
// while the exporter runs is picked up); a file that cannot be read, or an
// entry that is wrong, is a warning naming the file, said once per change,
// and the lookup goes on without it.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/maxima_file.h"
#include "calibrate/mounts.h"

namespace ckpt {

class CalibratedMaxima {
 public:
  using Warn = std::function<void(const std::string&)>;
  // `files`, first match first (maxima_files_for_reading()); `mountinfo` is
  // the mount table of the processes traced.
  CalibratedMaxima(std::vector<std::string> files, std::string mountinfo, Warn warn);
  // The files this process reads (its euid and environment), its own mounts.
  static std::shared_ptr<CalibratedMaxima> for_this_process(
      Warn warn, std::string mountinfo = "/proc/self/mountinfo");

  // The entry for a file on `dev`; the newest when several mounts of the
  // device have one.
  std::optional<StorageCalibration> for_device(uint64_t dev);
  // The node's memory-copy calibration: the first file's that has one.
  std::optional<MemoryCalibration> memory();

 private:
  struct Stamp {
    int stat_errno = ENOENT;  // 0: the file is there
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  struct Loaded {
    Stamp stamp;
    std::vector<StorageCalibration> mounts;
    std::optional<MemoryCalibration> memory;
  };
  // Re-reads the files that changed; true when any did.
  bool refresh_files();
  std::optional<StorageCalibration> lookup(uint64_t dev);

  std::mutex mu_;
  std::vector<std::string> paths_;
  std::vector<Loaded> files_;
  std::string mountinfo_;
  std::vector<MountEntry> mounts_;
  std::string mount_problem_;  // the last mount-table error said
  std::map<uint64_t, std::optional<StorageCalibration>> by_dev_;
  Warn warn_;
};

}  // namespace ckpt
