#include "stitch/exclusive.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "stitch/storage_stage.h"

namespace ckpt {
namespace {

using FileSets = std::unordered_map<FileId, IntervalSet, FileIdHash>;

IntervalSet all_of(const std::vector<StageSpan>& spans) {
  std::vector<Interval> iv;
  iv.reserve(spans.size());
  for (const auto& s : spans) iv.emplace_back(s.start_ns, s.end_ns);
  return interval_set(std::move(iv));
}

FileSets by_file(const std::vector<StageSpan>& spans) {
  std::unordered_map<FileId, std::vector<Interval>, FileIdHash> iv;
  for (const auto& s : spans) iv[s.file].emplace_back(s.start_ns, s.end_ns);
  FileSets out;
  for (auto& [file, v] : iv) out.emplace(file, interval_set(std::move(v)));
  return out;
}

const IntervalSet& of_file(const FileSets& sets, const FileId& file) {
  static const IntervalSet kNone;
  auto it = sets.find(file);
  return it == sets.end() ? kNone : it->second;
}

}  // namespace

void StageSpans::add(std::string_view stage, std::vector<StageSpan> spans, uint64_t lo,
                     uint64_t hi) {
  auto& out = spans_[std::string(stage)];
  for (auto& s : spans) {
    s.start_ns = std::max(s.start_ns, lo);
    s.end_ns = std::min(s.end_ns, hi);
    if (s.end_ns > s.start_ns) out.push_back(s);
  }
}

const std::vector<StageSpan>& StageSpans::of(std::string_view stage) const {
  static const std::vector<StageSpan> kNone;
  auto it = spans_.find(stage);
  return it == spans_.end() ? kNone : it->second;
}

void set_exclusive_times(std::vector<StageRecord>& stages, const StageSpans& spans) {
  // Below every file that goes over the network: the transport, shared by
  // all of them. Below that nothing is measured: its own time is its busy time.
  const IntervalSet transport = all_of(spans.of(kStageTransport));
  // The RPC layer: a queued RPC waits for the slots and the connection the
  // RPCs on the wire hold, whichever file they carry; the round trip waits
  // on the transport.
  const IntervalSet rtt_all = all_of(spans.of(kStageRpcRtt));
  const uint64_t rtt_own = set_length(set_minus(rtt_all, transport));
  const uint64_t queue_own =
      set_length(set_minus(set_minus(all_of(spans.of(kStageRpcQueue)), rtt_all), transport));

  // Per file: a call waits on that file's page I/O, which waits on that
  // file's RPCs; and, for a file that goes over the network, on the transport.
  const FileSets host = by_file(spans.of(kStageHostIo));
  const FileSets storage = by_file(spans.of(kStageStorage));
  const FileSets client = by_file(spans.of(kStageNfsClient));
  const FileSets queue = by_file(spans.of(kStageRpcQueue));
  const FileSets rtt = by_file(spans.of(kStageRpcRtt));
  // A file on a block device is local. Without NFS figures another file is
  // not known to go over the network, nor known not to: the transport is
  // taken to carry it (a FUSE or object-store client's connections to its
  // storage endpoint).
  const bool no_nfs = client.empty() && queue.empty() && rtt.empty();
  auto file_networked = [&](const FileId& f) {
    if (client.count(f) > 0 || queue.count(f) > 0 || rtt.count(f) > 0) return true;
    return no_nfs && !on_block_device(f);
  };
  // A directory (FileId{}: its fsync, a mkdir) is on the network when any
  // of the files is.
  bool any_networked = !no_nfs;
  for (std::string_view stage : {kStageHostIo, kStageMetadata})
    for (const auto& span : spans.of(stage))
      if (!any_networked && span.file != FileId{} && file_networked(span.file))
        any_networked = true;
  auto networked = [&](const FileId& f) {
    return f == FileId{} ? any_networked : file_networked(f);
  };
  std::vector<Interval> host_own_iv;
  std::vector<Interval> client_own_iv;
  std::vector<Interval> metadata_own_iv;
  auto below_client = [&](const FileId& f, const IntervalSet& set) {
    IntervalSet own = set_minus(set, set_union(of_file(queue, f), of_file(rtt, f)));
    return networked(f) ? set_minus(own, transport) : own;
  };
  for (const auto& [file, set] : client) {
    IntervalSet own = below_client(file, set);
    client_own_iv.insert(client_own_iv.end(), own.begin(), own.end());
  }
  // A call waits on what the storage does for its file: the device's reads
  // and writeback on a local file; on an NFS file the storage stage is the
  // client's own spans, so its time is the client's, never twice.
  std::vector<Interval> storage_own_iv;
  for (const auto& [file, set] : storage) {
    IntervalSet own = set_minus(set, of_file(client, file));
    storage_own_iv.insert(storage_own_iv.end(), own.begin(), own.end());
  }
  for (const auto& [file, set] : host) {
    // The storage's work for a local file: on it, or on its device.
    IntervalSet own =
        set_minus(set_minus(set, of_file(storage, file)), of_file(storage, device_key(file.dev)));
    own = below_client(file, set_minus(own, of_file(client, file)));
    host_own_iv.insert(host_own_iv.end(), own.begin(), own.end());
  }
  // A metadata call on a file over the network is an RPC of its own (OPEN,
  // RENAME, GETATTR: not page I/O), queued on the same transport.
  for (const auto& [file, set] : by_file(spans.of(kStageMetadata))) {
    IntervalSet own = networked(file) ? set_minus(set, transport) : set;
    metadata_own_iv.insert(metadata_own_iv.end(), own.begin(), own.end());
  }
  // Files in parallel count once, as in busy_ns.
  const uint64_t host_own = set_length(interval_set(std::move(host_own_iv)));
  const uint64_t client_own = set_length(interval_set(std::move(client_own_iv)));
  const uint64_t metadata_own = set_length(interval_set(std::move(metadata_own_iv)));
  const uint64_t storage_own = set_length(interval_set(std::move(storage_own_iv)));

  for (auto& s : stages) {
    uint64_t own = s.busy_ns;
    if (s.name == kStageHostIo) own = host_own;
    if (s.name == kStageNfsClient) own = client_own;
    if (s.name == kStageMetadata) own = metadata_own;
    if (s.name == kStageStorage) own = storage_own;
    if (s.name == kStageRpcQueue) own = queue_own;
    if (s.name == kStageRpcRtt) own = rtt_own;
    // A connection busy with none of this checkpoint's files on it (a save
    // to local disk while the job reads its dataset over NFS) holds up
    // nothing of the checkpoint.
    if (s.name == kStageTransport && !any_networked) own = 0;
    s.exclusive_ns = std::min(own, s.busy_ns);
  }
}

}  // namespace ckpt
