// Kernel-log records (/dev/kmsg, or a capture of it): one record as read()
// returns it, a stream of them as a file holds them, and the fault matcher
// on every message.
#include "sources/kernel_log.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  const std::string_view text = ckpt::fuzz::as_text(data, size);
  if (auto record = ckpt::parse_kmsg_record(text)) (void)ckpt::match_kernel_fault(record->text);
  auto stream = ckpt::parse_kmsg_stream(text);
  for (const auto& record : stream.records) (void)ckpt::match_kernel_fault(record.text);
  (void)ckpt::match_kernel_fault(text);
  return 0;
}
