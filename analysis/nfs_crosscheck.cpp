#include "analysis/nfs_crosscheck.h"

#include <algorithm>
#include <limits>

namespace ckpt {
namespace {

uint64_t add_saturating(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

uint64_t wire_bytes(uint64_t sent, uint64_t received) { return add_saturating(sent, received); }

}  // namespace

double diff_fraction(uint64_t a, uint64_t b) {
  const uint64_t hi = std::max(a, b);
  if (hi == 0) return 0;
  return static_cast<double>(hi - std::min(a, b)) / static_cast<double>(hi);
}

std::optional<std::vector<NfsOpCrosscheck>> nfs_crosscheck(const NfsMountRecord& mount) {
  if (!mount.ebpf_ops) return std::nullopt;
  // Which ops get a row, in order; then each side's sums over its entries.
  std::vector<NfsOpCrosscheck> rows;
  auto add_row = [&](const std::string& op) {
    bool listed =
        std::any_of(rows.begin(), rows.end(), [&](const NfsOpCrosscheck& r) { return r.op == op; });
    if (!listed) rows.push_back(NfsOpCrosscheck{op});
  };
  for (const NfsMountOpRecord& op : mount.ops) {
    if (op.ops > 0) add_row(op.op);
  }
  for (const RpcOpStats& op : *mount.ebpf_ops) add_row(op.op);
  for (NfsOpCrosscheck& r : rows) {
    for (const NfsMountOpRecord& op : mount.ops) {
      if (op.op != r.op) continue;
      r.mountstats_ops = add_saturating(r.mountstats_ops, op.ops);
      r.mountstats_bytes =
          add_saturating(r.mountstats_bytes, wire_bytes(op.bytes_sent, op.bytes_received));
    }
    for (const RpcOpStats& op : *mount.ebpf_ops) {
      if (op.op != r.op) continue;
      r.ebpf_ops = add_saturating(r.ebpf_ops, op.count);
      r.ebpf_bytes = add_saturating(r.ebpf_bytes, wire_bytes(op.bytes_sent, op.bytes_received));
    }
    r.ops_diff_fraction = diff_fraction(r.mountstats_ops, r.ebpf_ops);
    r.bytes_diff_fraction = diff_fraction(r.mountstats_bytes, r.ebpf_bytes);
    r.agree =
        r.ops_diff_fraction <= kNfsAgreeFraction && r.bytes_diff_fraction <= kNfsAgreeFraction;
  }
  return rows;
}

}  // namespace ckpt
