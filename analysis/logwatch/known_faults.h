// Known node faults (known_faults.json, compiled in): node-log lines that
// are an alarm whatever the detector's model, the line's novelty or the
// alert budget say (docs/logwatch.md, "Known faults"). A healthy node prints
// none of them, and each is what ends training runs: an Xid, an NVSwitch
// SXid, a machine check, an uncorrectable PCIe or memory error, a NIC or IB
// link going down, a storage server gone, a file system or disk failing, a
// hung task, a lockup, an oops.
//
// The catalogue is data: each entry names its failure kind (model/
// vocabulary.h kNodeLogFaultKinds) and severity, and is matched either by the
// kernel-log watcher's own parser (sources/kernel_log.h match_kernel_fault:
// the Xid catalogue, the NFS and OOM formats, read from one place) or by RE2
// patterns, all of them in one RE2::Set pass over the line.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/logwatch/severity.h"
#include "common/expected.h"
#include "model/xid_catalogue.h"
#include "sources/kernel_log.h"

namespace ckpt::logwatch {

struct KnownFault {
  std::string id;
  std::string kind;  // a kNodeLogFaultKinds entry
  Severity severity = 3;
  std::string doc;
  // Matched by the kernel-log watcher's parser (with, for an Xid, its
  // category), or by `patterns` (RE2, unanchored, any one).
  std::optional<KernelFaultKind> kernel_log;
  std::optional<XidCategory> xid_category;
  std::vector<std::string> patterns;
};

class KnownFaults {
 public:
  // Parses and checks: known keys, a known kind and severity, unique ids,
  // either a kernel-log parser (gpu_xid with an xid_category,
  // nfs_server_not_responding, oom_kill) or at least one pattern that
  // compiles under RE2; an error names the entry and the field.
  static Expected<KnownFaults> parse(std::string_view json_text, const std::string& origin);
  // The catalogue compiled into the binary (analysis/logwatch/known_faults.json).
  static const KnownFaults& builtin();

  KnownFaults(KnownFaults&&) noexcept;
  KnownFaults& operator=(KnownFaults&&) noexcept;
  ~KnownFaults();

  // The first entry (in file order) `message` matches; nullptr for none.
  // A leading `kernel:` (syslog, the journal) and a `[seconds]` stamp are
  // taken off first.
  [[nodiscard]] const KnownFault* match(std::string_view message) const;
  [[nodiscard]] const std::vector<KnownFault>& entries() const { return entries_; }

 private:
  KnownFaults();
  struct PatternSet;
  std::vector<KnownFault> entries_;
  std::unique_ptr<PatternSet> set_;  // every entry's patterns, each tagged with its entry
};

// The text of the catalogue compiled in.
std::string_view builtin_known_faults_json();

}  // namespace ckpt::logwatch
