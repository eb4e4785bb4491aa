// Kubeflow PyTorchJob JSON (kubectl get -o json), as `fleet exclusions` and `fleet retries` read
// it.
#include "analysis/fleet/records/pytorchjob.h"
#include "tests/fuzz/fleet_records.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  ckpt::fuzz::read_and_render(ckpt::fuzz::as_text(data, size),
                              ckpt::fleet::records::read_pytorchjobs);
  return 0;
}
