// The config file (`run --config`, `exporter --config`): parse_config.
#include "config/config.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  auto config = ckpt::parse_config(std::string(ckpt::fuzz::as_text(data, size)), "fuzz");
  (void)config;
  return 0;
}
