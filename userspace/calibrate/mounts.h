// The mount table as /proc/PID/mountinfo gives it (proc(5)), for two
// questions: which mount a directory being calibrated is on, and which
// mounts a traced file's device number belongs to. A file's st_dev is the
// mount's major:minor field, the anonymous 0:N of NFS and tmpfs included.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace ckpt {

struct MountEntry {
  uint64_t dev = 0;           // makedev(major, minor)
  std::string mount_point;    // unescaped (\040 is a space)
  std::string fs_type;        // "ext4", "nfs4", "tmpfs"
  std::string source;         // "/dev/nvme0n1p2", "10.0.0.5:/export"
  std::string super_options;  // "rw,vers=4.2,...,addr=10.0.0.5,clientaddr=10.0.0.7"

  [[nodiscard]] bool is_nfs() const { return fs_type == "nfs" || fs_type == "nfs4"; }
  // One super option's value ("addr" -> "10.0.0.5"); "" when absent.
  [[nodiscard]] std::string super_option(std::string_view key) const;
};

// "259:2" for a device number.
std::string device_text(uint64_t dev);

// Every well-formed line of `text`; a malformed line is an error naming its
// number (the kernel writes this file, so anything else is a wrong file).
Expected<std::vector<MountEntry>> parse_mountinfo(std::string_view text, std::string_view origin);
Expected<std::vector<MountEntry>> read_mountinfo(const std::string& path = "/proc/self/mountinfo");

// The mount `path` is on: among the mounts with the path's st_dev, the
// deepest mount point above its real path (bind mounts share a device);
// when no mount has that device (a btrfs subvolume), the deepest mount point
// above it. An error names the path when it cannot be resolved.
Expected<MountEntry> mount_of_path(const std::vector<MountEntry>& mounts, const std::string& path);

}  // namespace ckpt
