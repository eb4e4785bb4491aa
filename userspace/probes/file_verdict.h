// A file's identity between kernel and user space, and the key of
// bpf/jobio.bpf.c's `file_verdicts` map: user space holds glibc's dev_t
// (makedev(major, minor), what stat(2) says), the kernel its own encoding,
// major << 20 | minor (MKDEV), in every record and map.
#pragma once

#include <cstdint>

#include "model/events.h"

namespace ckpt {

// The kernel's internal dev_t (MAJOR << 20 | MINOR) as user space's st_dev.
uint64_t kernel_dev_to_user(uint64_t kdev);
// Its inverse.
uint64_t user_dev_to_kernel(uint64_t user_dev);

struct FileVerdictKey {  // struct ckpt_file_key's layout
  uint64_t dev = 0;      // kernel encoding
  uint64_t ino = 0;
};

FileVerdictKey file_verdict_key(const FileId& file);
// enum ckpt_file_verdict for a decision.
uint8_t file_verdict_value(bool is_checkpoint);

}  // namespace ckpt
