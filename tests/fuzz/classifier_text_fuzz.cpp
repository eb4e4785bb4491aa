// The failure classifier's input: a job's log text, classified with the
// built-in rules as `run` and `classify` do.
#include "analysis/classifier/classifier.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  const auto& classifier = ckpt::classify::Classifier::builtin();
  auto classification = classifier.classify_text(ckpt::fuzz::as_text(data, size));
  ckpt::classify::apply_exit_status(classification, {.code = 1, .signal = std::nullopt});
  return 0;
}
