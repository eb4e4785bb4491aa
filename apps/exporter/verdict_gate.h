// Which of its stitchers' verdicts the exporter may write into the kernel's
// `file_verdicts` map (bpf/jobio.h ckpt_file_verdict). The exporter decides
// with its own config, but a registered `run` or `attach` may use other
// globs: a file the exporter calls no checkpoint's may be one of the
// client's, and a CKPT_VERDICT_OTHER would stop the kernel recording it for
// the client too. So no OTHER verdict is written for a file a record of a
// client-traced process touched; such files stay unknown (candidates), and
// the client gets every record. CHECKPOINT verdicts are always written: they
// only keep records coming.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>

#include "model/events.h"

namespace ckpt {

class VerdictGate {
 public:
  // Past this many protected files no OTHER verdict is written at all
  // until no client traces anything (memory stays bounded, the rule holds).
  explicit VerdictGate(size_t max_protected = 65536) : max_protected_(max_protected) {}

  // A record on `file` came from a process a registered client traces.
  void client_touched(const FileId& file);
  // No registered client traces any process now: nothing needs protecting.
  void clients_gone();
  // Whether the verdict may be written; a withheld one is counted.
  bool allows(const FileId& file, bool is_checkpoint);

  [[nodiscard]] uint64_t withheld() const { return withheld_; }
  [[nodiscard]] size_t protected_files() const { return protected_.size(); }

 private:
  size_t max_protected_;
  std::unordered_set<FileId, FileIdHash> protected_;
  bool overflowed_ = false;
  uint64_t withheld_ = 0;
};

}  // namespace ckpt
