// /proc/self/mountstats as the exporter and `run` read it.
#include "sources/mountstats.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  auto mounts = ckpt::parse_mountstats(ckpt::fuzz::as_text(data, size));
  (void)mounts;
  return 0;
}
