#include "apps/exporter/verdict_gate.h"

namespace ckpt {

void VerdictGate::client_touched(const FileId& file) {
  if (overflowed_ || !file.known()) return;
  if (protected_.size() >= max_protected_ && !protected_.contains(file)) {
    overflowed_ = true;  // from now on every OTHER is withheld: no set needed
    protected_.clear();
    return;
  }
  protected_.insert(file);
}

void VerdictGate::clients_gone() {
  protected_.clear();
  overflowed_ = false;
}

bool VerdictGate::allows(const FileId& file, bool is_checkpoint) {
  if (is_checkpoint) return true;
  if (overflowed_ || protected_.contains(file)) {
    ++withheld_;
    return false;
  }
  return true;
}

}  // namespace ckpt
