#include "stitch/nfs_stages.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "model/rpc_call_record.h"
#include "model/vocabulary.h"
#include "stitch/errnos.h"
#include "stitch/intervals.h"

namespace ckpt {
namespace {

// NFS page I/O and RPC events buffered for checkpoints still open: one per
// wsize/rsize of data, so about 4 TiB of checkpoint at 1 MiB per RPC.
constexpr size_t kMaxNfsEvents = 4'000'000;
constexpr uint64_t kForgetOutstandingNs = 600'000'000'000ull;

// Adds one finished RPC (an RpcEvent, or one kept as an RpcPoint) to its
// procedure's figures, as mountstats sums them.
template <typename Rpc>
void count_rpc(RpcOpStats& op, const Rpc& r) {
  ++op.count;
  if (r.status < 0) ++op.errors;
  op.major_timeouts += r.timeouts;
  op.transmissions += r.ntrans;
  op.bytes_sent += r.bytes_sent;
  op.bytes_received += r.bytes_recv;
  op.queue_ns += r.queue_ns;
  op.rtt_ns += r.rtt_ns;
  op.execute_ns += r.execute_ns;
}

// RPC errors that mean the storage failed the checkpoint; others (ENOENT on
// a LOOKUP, EEXIST, NFS4ERR_DELAY retries) are counted per op, not flagged.
bool is_storage_rpc_errno(int err) {
  return err == EIO || err == ETIMEDOUT || err == ESTALE || err == ENOSPC || err == EDQUOT ||
         err == EROFS;
}

bool io_op_matches(NfsIoKind kind, std::string_view op) {
  switch (kind) {
    case NfsIoKind::Write:
      return op == kRpcWrite;
    case NfsIoKind::Read:
      return is_read_rpc(op);
    case NfsIoKind::Commit:
      return op == kRpcCommit;
  }
  return false;
}

}  // namespace

uint32_t NfsStages::intern(const std::string& name) {
  auto [it, inserted] = name_ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

void NfsStages::on_nfs_io(const NfsIoEvent& ev) {
  if (ev.started) {
    nfs_outstanding_[ev.id] = NfsOutstanding{ev.file, ev.start_ns, ev.kind};
    return;
  }
  nfs_outstanding_.erase(ev.id);
  if (nfs_io_.size() >= kMaxNfsEvents) {
    ++nfs_buffer_full_;
    return;
  }
  nfs_io_.push_back(ev);
}

void NfsStages::on_rpc(const RpcEvent& ev) {
  if (ev.kind != RpcEvent::Kind::Timeout) {
    RpcOpStats& op = rpc_totals_[{ev.server, ev.vers}][ev.op];
    op.op = ev.op;
    count_rpc(op, ev);
  }
  if (rpcs_.size() >= kMaxNfsEvents) {
    ++nfs_buffer_full_;
    return;
  }
  rpcs_.push_back(RpcPoint{ev.start_ns,
                           ev.time_ns,
                           ev.queue_ns,
                           ev.rtt_ns,
                           ev.execute_ns,
                           ev.bytes_sent,
                           ev.bytes_recv,
                           ev.wait_ns,
                           ev.file,
                           ev.io_offset,
                           ev.io_count,
                           intern(ev.op),
                           intern(ev.server),
                           ev.client_id,
                           ev.xid,
                           ev.ntrans,
                           ev.timeouts,
                           ev.status,
                           ev.vers,
                           ev.kind,
                           ev.io.has_value(),
                           ev.io.value_or(NfsIoKind::Read)});
}

void NfsStages::forget_stale_outstanding(uint64_t now_ns) {
  // The source forgets such I/O after ten minutes, and so does this, or it
  // would hold a checkpoint open for ever.
  for (auto it = nfs_outstanding_.begin(); it != nfs_outstanding_.end();)
    it = it->second.start_ns + kForgetOutstandingNs < now_ns ? nfs_outstanding_.erase(it)
                                                             : std::next(it);
}

bool NfsStages::io_outstanding_on(const std::unordered_set<FileId, FileIdHash>& files) const {
  for (const auto& [id, io] : nfs_outstanding_)
    if (files.count(io.file)) return true;
  return false;
}

std::optional<OutstandingNfsIo> NfsStages::oldest_outstanding_on(
    const std::unordered_set<FileId, FileIdHash>& files) const {
  const NfsOutstanding* oldest = nullptr;
  size_t count = 0;
  for (const auto& [id, io] : nfs_outstanding_) {
    if (!files.count(io.file)) continue;
    ++count;
    if (!oldest || io.start_ns < oldest->start_ns) oldest = &io;
  }
  if (!oldest) return std::nullopt;
  return OutstandingNfsIo{oldest->file, oldest->start_ns, oldest->kind, count};
}

uint64_t NfsStages::first_reply_after(const std::string& server, uint64_t after_ns) const {
  auto id = name_ids_.find(server);
  if (id == name_ids_.end()) return 0;  // never named by a kept RPC
  for (const auto& r : rpcs_)
    if (r.server == id->second && r.kind == RpcEvent::Kind::Done && r.time_ns > after_ns &&
        r.status >= 0)
      return r.time_ns;
  return 0;
}

void NfsStages::prune(uint64_t horizon_ns) {
  while (!nfs_io_.empty() && nfs_io_.front().end_ns < horizon_ns) nfs_io_.pop_front();
  while (!rpcs_.empty() && rpcs_.front().time_ns < horizon_ns) rpcs_.pop_front();
}

void NfsStages::add_stages(const OpenCheckpoint& c, CheckpointRecord& rec,
                           std::vector<FailureRecord>& failures,
                           std::vector<RpcCallRecord>& rpc_rows, const TransportStage& transport,
                           bool transport_measured, StageSpans& spans) {
  // NFS completions for a checkpoint's files come before its close/fsync
  // returns; allow the quiet gap for writeback that trails the last call.
  const uint64_t lo = c.start_ns;
  const uint64_t hi = c.end_ns + quiet_gap_ns_;
  const bool save = rec.direction == Direction::Save;
  auto carries = [&](NfsIoKind k) { return save ? k != NfsIoKind::Read : k == NfsIoKind::Read; };
  auto ours = [&](const FileId& f) { return c.files_touched.count(f) > 0; };

  std::vector<Interval> client_iv;
  std::vector<StageSpan> client_spans;
  uint64_t bytes = 0;
  for (const auto& io : nfs_io_) {
    if (io.end_ns < lo || io.start_ns > hi || !carries(io.kind) || !ours(io.file)) continue;
    client_iv.emplace_back(io.start_ns, io.end_ns);
    client_spans.push_back(StageSpan{io.file, io.start_ns, io.end_ns});
    bytes += io.bytes();
  }

  NfsCheckpointRecord nfs;
  std::set<uint32_t> clients;
  std::set<std::string> servers;
  std::vector<uint64_t> queue_v;
  std::vector<uint64_t> rtt_v;
  std::array<uint64_t, kRpcQueues> waits{};
  std::vector<Interval> queue_iv;
  std::vector<Interval> rtt_iv;
  std::vector<StageSpan> queue_spans;
  std::vector<StageSpan> rtt_spans;
  // The checkpoint's own I/O RPCs: finished page I/O on its files, moving
  // data its way, in its window.
  auto is_checkpoint_io = [&](const RpcPoint& r) {
    return r.kind == RpcEvent::Kind::Done && r.has_io && r.time_ns >= lo && r.start_ns <= hi &&
           carries(r.io) && ours(r.file) && io_op_matches(r.io, names_[r.op]);
  };
  for (const auto& r : rpcs_) {
    if (!is_checkpoint_io(r)) continue;
    ++nfs.io_rpcs;
    clients.insert(r.client_id);
    servers.insert(names_[r.server]);
    queue_v.push_back(r.queue_ns);
    rtt_v.push_back(r.rtt_ns);
    for (size_t q = 0; q < kRpcQueues; ++q) waits[q] += r.wait_ns[q];
    queue_iv.emplace_back(r.start_ns, r.start_ns + r.queue_ns);
    const uint64_t xmit = r.start_ns + r.queue_ns;
    rtt_iv.emplace_back(xmit, xmit + r.rtt_ns);
    queue_spans.push_back(StageSpan{r.file, r.start_ns, xmit});
    rtt_spans.push_back(StageSpan{r.file, xmit, xmit + r.rtt_ns});
  }
  if (client_iv.empty() && nfs.io_rpcs == 0) return;  // nothing of it went over NFS

  // Paths of the checkpoint's files, for evidence.
  std::unordered_map<FileId, std::string, FileIdHash> paths;
  for (const auto& ev : c.calls)
    if (ev.file.known() && !ev.path.empty())
      paths[ev.file] = ev.op == IoOp::Rename && ev.ret == 0 ? ev.path2 : ev.path;

  // Every RPC of those clients in the window, by op; storage errors flagged
  // once per (errno, file or op) with a count.
  struct ErrorGroup {
    uint64_t count = 0;
    uint64_t first_ns = 0;
    std::string evidence;
  };
  std::map<std::pair<std::string, std::string>, ErrorGroup> errors;
  std::map<std::string, RpcOpStats> ops;
  for (const auto& r : rpcs_) {
    if (r.kind == RpcEvent::Kind::Timeout || !clients.count(r.client_id) || r.time_ns < lo ||
        r.start_ns > hi)
      continue;
    const std::string& name = names_[r.op];
    RpcOpStats& op = ops[name];
    op.op = name;
    count_rpc(op, r);
    // The same RPC as a row of its own, for timelines: exactly the RPCs
    // rpc_ops counts, those with checkpoint_io exactly queue_wait's and rtt's.
    const bool io = is_checkpoint_io(r);
    RpcCallRecord row = rpc_call_record(r, name, names_[r.server]);
    row.payload_bytes = io && r.io != NfsIoKind::Commit ? r.io_count : 0;
    row.major_timeouts = r.timeouts;
    row.checkpoint_io = io;
    row.checkpoint_id = rec.id;
    rpc_rows.push_back(std::move(row));
    const int err = -r.status;
    if (r.status >= 0 || !is_storage_rpc_errno(err)) continue;
    const bool has_file = r.has_io && r.file.known();
    std::string target;
    if (has_file) {
      auto p = paths.find(r.file);
      target = p != paths.end() ? p->second : fmt::format("dev {} ino {}", r.file.dev, r.file.ino);
    }
    ErrorGroup& g = errors[{failure_kind_for_errno(err), has_file ? target : name}];
    if (g.count++ == 0 || r.time_ns < g.first_ns) {
      g.first_ns = r.time_ns;
      g.evidence = fmt::format(
          "{}{} to {} failed: -{} ({}) after {:.1f} ms, xid 0x{:08x}", name,
          has_file ? fmt::format(" of {} ({} bytes at offset {})", target, r.io_count, r.io_offset)
                   : std::string(),
          names_[r.server], errno_name(err), std::strerror(err),
          static_cast<double>(r.execute_ns) / 1e6, r.xid);
    }
  }
  for (auto& [key, g] : errors) {
    if (g.count > 1)
      g.evidence += fmt::format(" ({} RPCs failed this way in this checkpoint)", g.count);
    failures.push_back(
        FailureRecord{rpc_failure_kind(key.first), g.first_ns, std::move(g.evidence), rec.id});
  }
  for (auto& [name, op] : ops) nfs.rpc_ops.push_back(std::move(op));
  std::sort(nfs.rpc_ops.begin(), nfs.rpc_ops.end(), [](const RpcOpStats& a, const RpcOpStats& b) {
    return a.count != b.count ? a.count > b.count : a.op < b.op;
  });

  nfs.servers.assign(servers.begin(), servers.end());
  nfs.io_bytes = bytes;
  nfs.queue_wait = duration_stats(queue_v);
  nfs.rtt = duration_stats(rtt_v);
  for (size_t q = 0; q < kRpcQueues; ++q)
    nfs.wait_by_queue_ns.emplace_back(std::string(rpc_queue_name(q)), waits[q]);

  // The transport to those servers meanwhile.
  if (transport_measured) transport.describe_toward(servers, lo, c.end_ns, nfs);

  std::vector<FileId> files(c.files_touched.begin(), c.files_touched.end());
  if (files.size() > 16) files.resize(16);
  const StageMax storage = maxima_->storage(rec.direction, files);
  StageMax link = maxima_->transport("");
  if (auto toward = transport.link_toward(servers)) link = std::move(*toward);

  StageRecord client{std::string(kStageNfsClient), bytes, union_length(client_iv, lo, hi),
                     storage.Bps, storage.source};
  // The queue drains into the transport; the round trip is wire and server.
  StageRecord queue{std::string(kStageRpcQueue), bytes, union_length(queue_iv, lo, hi), link.Bps,
                    link.source};
  StageRecord rtt{std::string(kStageRpcRtt), bytes, union_length(rtt_iv, lo, hi), storage.Bps,
                  storage.source};
  rec.stages.push_back(std::move(client));
  rec.stages.push_back(std::move(queue));
  rec.stages.push_back(std::move(rtt));
  rec.nfs = std::move(nfs);
  spans.add(kStageNfsClient, std::move(client_spans), lo, hi);
  spans.add(kStageRpcQueue, std::move(queue_spans), lo, hi);
  spans.add(kStageRpcRtt, std::move(rtt_spans), lo, hi);
}

std::vector<RpcTotals> NfsStages::totals() const {
  std::vector<RpcTotals> out;
  for (const auto& [key, ops] : rpc_totals_) {
    RpcTotals t{key.first, key.second, {}};
    for (const auto& [name, op] : ops) t.ops.push_back(op);
    out.push_back(std::move(t));
  }
  return out;
}

DropRecord NfsStages::drops() const {
  return DropRecord{"stitcher", "nfs_buffer_full", nfs_buffer_full_};
}

DurationStats duration_stats(std::vector<uint64_t>& values) {
  DurationStats d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = values.size();
  long double sum = 0;
  for (uint64_t v : values) sum += static_cast<long double>(v);
  d.mean_ns = static_cast<uint64_t>(std::llround(static_cast<double>(sum / values.size())));
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(k, 1, values.size()) - 1];
  };
  d.p50_ns = rank(50);
  d.p90_ns = rank(90);
  d.p99_ns = rank(99);
  d.max_ns = values.back();
  return d;
}

}  // namespace ckpt
