#include "stitch/storage_stage.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <string>
#include <unordered_map>

#include "stitch/intervals.h"

namespace ckpt {
namespace {

// A call's time, as host_io places it.
StageSpan call_span(const IoEvent& ev, const FileId& file) {
  return StageSpan{file, ev.start_ns, ev.busy_end_ns()};
}

const StageRecord* find(const std::vector<StageRecord>& stages, std::string_view name) {
  auto it = std::find_if(stages.begin(), stages.end(),
                         [&](const StageRecord& s) { return s.name == name; });
  return it == stages.end() ? nullptr : &*it;
}

}  // namespace

bool on_block_device(const FileId& file) {
  return file.known() && major(static_cast<dev_t>(file.dev)) != 0;
}

void StorageStage::on_busy(const StorageBusyEvent& ev) {
  if (ev.end_ns > ev.start_ns) busy_[ev.dev].emplace_back(ev.start_ns, ev.end_ns);
}

void StorageStage::prune(uint64_t horizon_ns) {
  for (auto it = busy_.begin(); it != busy_.end();) {
    auto& q = it->second;
    while (!q.empty() && q.front().second < horizon_ns) q.pop_front();
    it = q.empty() ? busy_.erase(it) : std::next(it);
  }
}

std::optional<StageRecord> StorageStage::stage(const OpenCheckpoint& c, Direction d,
                                               const std::vector<StageRecord>& stages,
                                               StageSpans& spans) {
  StageRecord s;
  s.name = std::string(kStageStorage);
  std::vector<StageSpan> by_file;
  std::vector<FileId> files;
  // Per device: the calls that made it move bytes, used where it has no
  // busy interval on record.
  std::unordered_map<uint64_t, std::vector<StageSpan>> moved;
  for (const auto& ev : c.calls) {
    if (!is_data_op(ev.op) || storage_copied(ev.via) || !on_block_device(ev.file)) continue;
    if (files.size() < 16 && std::find(files.begin(), files.end(), ev.file) == files.end())
      files.push_back(ev.file);
    auto& device = moved[ev.file.dev];
    const FileId key = ev.is_directory ? FileId{} : ev.file;
    if (ev.op == IoOp::Fsync) by_file.push_back(call_span(ev, key));
    // A write held back for dirty pages waited on the storage's writeback:
    // its sleep, placed at the call's end (where balance_dirty_pages runs,
    // after the copy).
    if (ev.throttle_ns > 0) {
      const StageSpan span = call_span(ev, key);
      const uint64_t held = std::min(ev.throttle_ns, span.end_ns - span.start_ns);
      by_file.push_back(StageSpan{key, span.end_ns - held, span.end_ns});
    }
    if (ev.storage_bytes == 0) continue;
    s.bytes += ev.storage_bytes;
    if (ev.op != IoOp::Fsync) device.push_back(call_span(ev, key));
  }
  const bool local = !moved.empty();
  for (auto& [dev, calls] : moved) {
    bool busy = false;
    if (auto it = busy_.find(dev); it != busy_.end())
      for (const auto& [lo, hi] : it->second)
        if (hi > c.start_ns && lo < c.end_ns) {
          by_file.push_back(StageSpan{device_key(dev), lo, hi});
          busy = true;
        }
    if (!busy) by_file.insert(by_file.end(), calls.begin(), calls.end());
  }
  // NFS files: the client's page RPCs are what reached the server.
  const StageRecord* client = find(stages, kStageNfsClient);
  const auto& client_spans = spans.of(kStageNfsClient);
  if (!local && !client) return std::nullopt;
  std::vector<Interval> iv;
  iv.reserve(by_file.size() + client_spans.size());
  for (const auto& span : by_file) iv.emplace_back(span.start_ns, span.end_ns);
  if (client) {
    s.bytes += client->bytes;
    for (const auto& span : client_spans) {
      iv.emplace_back(span.start_ns, span.end_ns);
      by_file.push_back(span);
      if (files.size() < 16 && std::find(files.begin(), files.end(), span.file) == files.end())
        files.push_back(span.file);
    }
  }
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns);
  spans.add(kStageStorage, std::move(by_file), c.start_ns, c.end_ns);
  auto m = maxima_->storage(d, files);
  s.max_Bps = m.Bps;
  s.max_source = m.source;
  return s;
}

std::optional<uint64_t> dirty_at_end(const OpenCheckpoint& c) {
  // Per file: dirtied by the writes, less what its calls wrote to the device.
  struct Owed {
    uint64_t dirtied = 0;
    uint64_t written = 0;
  };
  std::unordered_map<FileId, Owed, FileIdHash> by_file;
  bool any = false;
  for (const auto& ev : c.calls) {
    if (!on_block_device(ev.file) || ev.op == IoOp::Read) continue;
    auto& o = by_file[ev.file];
    o.dirtied += ev.dirtied_bytes;
    o.written += ev.storage_bytes;
    any = any || ev.dirtied_bytes > 0;
  }
  if (!any) return std::nullopt;
  uint64_t owed = 0;
  for (const auto& [file, o] : by_file) owed += o.dirtied > o.written ? o.dirtied - o.written : 0;
  return owed;
}

}  // namespace ckpt
