#include "probes/file_verdict.h"

#include <sys/sysmacros.h>

#include <cstddef>

#include "jobio.h"

namespace ckpt {

static_assert(sizeof(FileVerdictKey) == sizeof(ckpt_file_key));
static_assert(offsetof(FileVerdictKey, dev) == offsetof(ckpt_file_key, dev));
static_assert(offsetof(FileVerdictKey, ino) == offsetof(ckpt_file_key, ino));

uint64_t kernel_dev_to_user(uint64_t kdev) {
  return makedev(static_cast<unsigned>(kdev >> 20), static_cast<unsigned>(kdev & ((1u << 20) - 1)));
}

uint64_t user_dev_to_kernel(uint64_t user_dev) {
  constexpr uint64_t kMinorMask = (1u << 20) - 1;
  return (static_cast<uint64_t>(major(user_dev)) << 20) | (minor(user_dev) & kMinorMask);
}

FileVerdictKey file_verdict_key(const FileId& file) {
  return FileVerdictKey{user_dev_to_kernel(file.dev), file.ino};
}

uint8_t file_verdict_value(bool is_checkpoint) {
  return is_checkpoint ? CKPT_VERDICT_CHECKPOINT : CKPT_VERDICT_OTHER;
}

}  // namespace ckpt
