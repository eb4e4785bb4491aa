// The key of bpf/jobio.bpf.c's `file_verdicts` map from user space's file
// identity: user space holds glibc's dev_t (makedev(major, minor), what
// stat(2) says and sources' kernel_dev_to_user makes of a record's dev), the
// kernel keys by its own encoding, major << 20 | minor (MKDEV).
#pragma once

#include <cstdint>

#include "model/events.h"

namespace ckpt {

// The inverse of sources' kernel_dev_to_user.
uint64_t user_dev_to_kernel(uint64_t user_dev);

struct FileVerdictKey {  // struct ckpt_file_key's layout
  uint64_t dev = 0;      // kernel encoding
  uint64_t ino = 0;
};

FileVerdictKey file_verdict_key(const FileId& file);
// enum ckpt_file_verdict for a decision.
uint8_t file_verdict_value(bool is_checkpoint);

}  // namespace ckpt
