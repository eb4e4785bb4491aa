// the generic sessions CSV, as `fleet exclusions` and `fleet retries` read it.
#include "analysis/fleet/records/sessions_csv.h"
#include "tests/fuzz/fleet_records.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  ckpt::fuzz::read_and_render(ckpt::fuzz::as_text(data, size),
                              ckpt::fleet::records::read_sessions_csv);
  return 0;
}
