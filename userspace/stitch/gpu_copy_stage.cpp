#include "stitch/gpu_copy_stage.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "stitch/intervals.h"

namespace ckpt {
namespace {

// How long an unclaimed GPU copy is kept, and how many at most.
constexpr uint64_t kGpuKeepNs = 60'000'000'000;
constexpr size_t kMaxGpuCopies = 1'000'000;

}  // namespace

void GpuCopyStage::on_gpu_copy(GpuCopyEvent&& ev) {
  if (gpu_copies_.size() >= kMaxGpuCopies) {
    ++gpu_buffer_full_;
    return;
  }
  gpu_copies_.push_back(std::move(ev));
}

void GpuCopyStage::prune(uint64_t horizon_ns) {
  // A save's GPU copies come before its first write, by as much as the
  // copies take (DCP stages every tensor first): kept longer.
  const uint64_t gpu_horizon = horizon_ns > kGpuKeepNs ? horizon_ns - kGpuKeepNs : 0;
  // They arrive roughly in time order (each process flushes its own): from
  // the front, as the NFS buffers are pruned, not a scan every tick.
  while (!gpu_copies_.empty() && gpu_copies_.front().end_ns < gpu_horizon) gpu_copies_.pop_front();
}

DropRecord GpuCopyStage::drops() const {
  return DropRecord{"stitcher", "gpu_buffer_full", gpu_buffer_full_};
}

std::optional<StageRecord> GpuCopyStage::stage(const OpenCheckpoint& c, CheckpointRecord& rec) {
  const bool save = rec.direction == Direction::Save;
  const GpuCopyKind kind = save ? GpuCopyKind::DtoH : GpuCopyKind::HtoD;
  const uint64_t gap = quiet_gap_ns_;
  std::vector<size_t> order;
  for (size_t i = 0; i < gpu_copies_.size(); ++i)
    if (gpu_copies_[i].kind == kind) order.push_back(i);
  std::vector<size_t> claimed;
  if (save) {
    // Inside the checkpoint, then backwards from its first call while the
    // copies keep coming (no pause as long as the quiet gap): torch.save
    // copies each tensor as it pickles it, DCP stages them all first.
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return gpu_copies_[a].end_ns > gpu_copies_[b].end_ns; });
    uint64_t cursor = c.start_ns;
    for (size_t i : order) {
      const GpuCopyEvent& g = gpu_copies_[i];
      if (g.start_ns > c.end_ns) continue;  // after the save: not its own
      if (g.start_ns >= c.start_ns) {
        claimed.push_back(i);
        continue;
      }
      if (g.end_ns + gap < cursor) break;
      claimed.push_back(i);
      cursor = std::min(cursor, g.start_ns);
    }
  } else {
    // Inside the load, then forwards from its last call while they keep
    // coming: the tensors go to the GPU as they are read.
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return gpu_copies_[a].start_ns < gpu_copies_[b].start_ns;
    });
    uint64_t cursor = c.end_ns;
    for (size_t i : order) {
      const GpuCopyEvent& g = gpu_copies_[i];
      if (g.end_ns < c.start_ns) continue;  // before the load: not its own
      if (g.start_ns <= c.end_ns) {
        claimed.push_back(i);
        continue;
      }
      if (g.start_ns > cursor + gap) break;
      claimed.push_back(i);
      cursor = std::max(cursor, g.end_ns);
    }
  }
  StageRecord s;
  s.name = std::string(kStageGpuCopy);
  CheckpointGpuRecord detail;
  std::vector<Interval> iv;
  std::set<std::string> devices;
  uint64_t lo = rec.start_ns, hi = rec.end_ns;
  for (size_t i : claimed) {
    const GpuCopyEvent& g = gpu_copies_[i];
    s.bytes += g.bytes;
    iv.emplace_back(g.start_ns, g.end_ns);
    ++detail.copies;
    detail.copy_count += g.copy_count;
    switch (g.host_memory()) {
      case GpuMemoryKind::Pageable:
        detail.pageable_bytes += g.bytes;
        break;
      case GpuMemoryKind::Pinned:
        detail.pinned_bytes += g.bytes;
        break;
      default:
        detail.other_bytes += g.bytes;
        break;
    }
    if (g.async) ++detail.async_copies;
    devices.insert(g.pci_address.empty() ? fmt::format("device {}", g.device_id) : g.pci_address);
    detail.first_ns = detail.first_ns == 0 ? g.start_ns : std::min(detail.first_ns, g.start_ns);
    detail.last_ns = std::max(detail.last_ns, g.end_ns);
    lo = std::min(lo, g.start_ns);
    hi = std::max(hi, g.end_ns);
  }
  s.busy_ns = union_length(iv, lo, hi);
  detail.devices.assign(devices.begin(), devices.end());
  std::vector<std::string> pci;
  for (const auto& d : detail.devices)
    if (!d.starts_with("device ")) pci.push_back(d);
  auto m = maxima_->gpu_copy(rec.direction, pci);
  s.max_Bps = m.Bps;
  s.max_source = m.source;
  // The copies are the checkpoint's first (save) or last (load) stage: its
  // window covers them.
  rec.start_ns = lo;
  rec.end_ns = hi;
  rec.gpu = std::move(detail);
  // Claimed copies are no other checkpoint's: one pass keeps the rest.
  std::vector<bool> taken(gpu_copies_.size(), false);
  for (size_t i : claimed) taken[i] = true;
  std::deque<GpuCopyEvent> rest;
  for (size_t i = 0; i < gpu_copies_.size(); ++i)
    if (!taken[i]) rest.push_back(std::move(gpu_copies_[i]));
  gpu_copies_ = std::move(rest);
  return s;
}

}  // namespace ckpt
