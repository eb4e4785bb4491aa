// Files ckptscope reads whole (a config, a rule base, a logwatch model,
// scheduler records, a request on standard input, /proc files), read one
// way: never more than a limit, chosen per input and documented beside it.
// A file given on the command line can be anything: /dev/zero, a FIFO that
// never ends, a 40 GB log given where a config was meant. Read to the end
// without a bound, those made ckptscope allocate until the kernel killed it
// or std::bad_alloc aborted it (issue 36). Here:
//   - at most `limit + 1` bytes are read: one more than the limit says the
//     input is too large, without reading the rest; a regular file larger
//     than the limit is refused from its size, before any read;
//   - with `text`, an input holding a NUL byte is refused at the first
//     chunk (JSON and CSV never hold one: /dev/zero is not mistaken for an
//     input that is merely large);
//   - every error names the input as the user gave it (`what`, the flag,
//     and the path) and, when too large, the limit and why it is that
//     ("--config /dev/zero: larger than 16 MiB; a config file is a few KiB").
// Pipes, character devices and /dev/stdin are read like files, up to the
// limit; "-" means standard input only where a caller passes it to
// read_fd_bounded itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace ckpt {

// How much of an input may be read, and why that much: the sentence after
// the limit in the error ("a config file is a few KiB").
struct InputLimit {
  uint64_t bytes = 0;
  std::string_view why;
  // Refuse a NUL byte (JSON, CSV, command output): no text input holds one.
  bool text = false;
};

// "16 MiB", "1 GiB", "512 KiB", "100 bytes": a limit as errors write it.
std::string limit_text(uint64_t bytes);

// The whole of `path`, at most limit.bytes of it. `what` names the input in
// errors ("--config", "logwatch model", "/proc mountstats"); empty: the path
// alone.
Expected<std::string> read_file_bounded(const std::string& path, const InputLimit& limit,
                                        std::string_view what);

// The whole of an open descriptor (standard input: 0) up to its end, at
// most limit.bytes. `name` is what errors call it ("-", "<stdin>").
Expected<std::string> read_fd_bounded(int fd, const std::string& name, const InputLimit& limit,
                                      std::string_view what);

}  // namespace ckpt
