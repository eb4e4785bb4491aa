// TorchElastic agent logs, as `fleet exclusions` and `fleet retries` read it.
#include "analysis/fleet/records/torchelastic_log.h"
#include "tests/fuzz/fleet_records.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  ckpt::fuzz::read_and_render(ckpt::fuzz::as_text(data, size),
                              ckpt::fleet::records::read_torchelastic_log);
  return 0;
}
