// The cross-check of an NFS mount's mountstats counters (the kernel's own)
// against what the eBPF probes saw for the same RPC client, per op. Both the
// JSON summary and the table use it, so they never disagree on "agrees".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/records.h"

namespace ckpt {

// Two counts agree when they differ by at most this fraction of the larger.
inline constexpr double kNfsAgreeFraction = 0.01;

struct NfsOpCrosscheck {
  std::string op;
  uint64_t mountstats_ops = 0;
  uint64_t ebpf_ops = 0;
  double ops_diff_fraction = 0;
  uint64_t mountstats_bytes = 0;  // bytes_sent + bytes_received
  uint64_t ebpf_bytes = 0;        // bytes_sent + bytes_received
  double bytes_diff_fraction = 0;
  bool agree = true;  // both fractions <= kNfsAgreeFraction
};

// |a - b| / max(a, b); 0 when both are 0.
double diff_fraction(uint64_t a, uint64_t b);

// One entry per op that mountstats counted (ops > 0) or eBPF reported, in
// that order: mountstats' ops first, in their order, then the ops only eBPF
// reported. An op named twice on one side is summed. nullopt when the eBPF
// probes did not run for the mount (ebpf_ops absent).
std::optional<std::vector<NfsOpCrosscheck>> nfs_crosscheck(const NfsMountRecord& mount);

}  // namespace ckpt
