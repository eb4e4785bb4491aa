// A rules file (`classify --rules`, `eval-classifier --extra`): parsed,
// compiled, and run over a few lines that the built-in rules classify, so a
// rule base that loads is also exercised.
#include "analysis/classifier/classifier.h"
#include "analysis/classifier/rule_base.h"
#include "tests/fuzz/fuzz_input.h"

CKPT_FUZZ_TARGET {
  auto rules = ckpt::classify::parse_rule_base(ckpt::fuzz::as_text(data, size), "fuzz");
  if (!rules) return 0;
  auto classifier = ckpt::classify::Classifier::create(std::move(*rules));
  if (!classifier) return 0;
  (void)classifier->classify_text(
      "torch.cuda.OutOfMemoryError: CUDA out of memory.\n"
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
      "OSError: [Errno 28] No space left on device\n"
      "NCCL WARN Call to ibv_poll_cq failed\n");
  return 0;
}
