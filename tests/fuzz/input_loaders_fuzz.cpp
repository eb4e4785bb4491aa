// Every input ckptscope loads from a file, loaded as the commands load it:
// through the bounded reader (files/input_file.h) and then its parser, from
// a file on disk. The first byte picks the loader, the rest is the file:
//   c  a config (`run --config`)             load_config
//   m  a logwatch model (`--model`)          load_model
//   r  a rule base (`classify --rules`)      load_rule_base
//   l  a labels file (`eval-classifier --extra`)  load_labels
//   e  failure events (`fleet attribute --events`) load_events_file
//   j  sacct --json, t  sacct -P, i  sinfo -R, s  the sessions CSV,
//   k  a TorchElastic log, p  PyTorchJobs    read_inputs (`fleet exclusions`, `retries`)
// The parsers have targets of their own on text; this one covers the step
// from a path to that text, and the errors of each loader on any content.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "analysis/classifier/evaluation.h"
#include "analysis/classifier/rule_base.h"
#include "analysis/fleet/attribution/events.h"
#include "analysis/fleet/records/inputs.h"
#include "analysis/logwatch/model_file.h"
#include "config/config.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// One scratch file for the whole run, rewritten per input.
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string p = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                    "/ckptscope-fuzz-loaders-XXXXXX";
    const int fd = mkstemp(p.data());
    if (fd < 0) std::abort();
    ::close(fd);
    return p;
  }();
  return path;
}

}  // namespace

CKPT_FUZZ_TARGET {
  if (size < 1) return 0;
  const char kind = static_cast<char>(data[0]);
  const std::string_view content = ckpt::fuzz::as_text(data + 1, size - 1);
  const std::string& path = scratch_path();
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) std::abort();
    if (!content.empty() &&
        ::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size()))
      std::abort();
    ::close(fd);
  }
  namespace records = ckpt::fleet::records;
  records::Inputs inputs;
  switch (kind) {
    case 'c':
      (void)ckpt::load_config(path);
      return 0;
    case 'm':
      (void)ckpt::logwatch::load_model(path);
      return 0;
    case 'r':
      (void)ckpt::classify::load_rule_base(path);
      return 0;
    case 'l':
      (void)ckpt::classify::load_labels(path);
      return 0;
    case 'e':
      (void)ckpt::fleet::attribution::load_events_file(path, 0, 4e9);
      return 0;
    case 'j':
      inputs.sacct_json = {path};
      break;
    case 't':
      inputs.sacct_text = {path};
      break;
    case 'i':
      inputs.sinfo = {path};
      break;
    case 's':
      inputs.sessions = {path};
      break;
    case 'k':
      inputs.torchelastic = {path};
      break;
    case 'p':
      inputs.pytorchjob = {path};
      break;
    default:
      return 0;
  }
  (void)records::read_inputs(inputs);
  return 0;
}
