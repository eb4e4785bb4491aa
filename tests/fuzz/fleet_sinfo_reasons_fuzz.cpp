// sinfo -R, as `fleet exclusions` and `fleet retries` read it.
#include "analysis/fleet/records/sinfo_reasons.h"
#include "tests/fuzz/fleet_records.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  ckpt::fuzz::read_and_render(ckpt::fuzz::as_text(data, size),
                              ckpt::fleet::records::read_sinfo_reasons);
  return 0;
}
