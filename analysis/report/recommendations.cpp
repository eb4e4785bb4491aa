// The recommendation rule base. Each rule reads the stitched figures of each
// node's checkpoints (or the job's), and fires with the evidence that made it
// fire: one line per checkpoint and node, with the numbers. Thresholds are
// named here and documented, with their reasons, in docs/report.md; the
// order here is the order a report lists them in.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "analysis/above_max_note.h"
#include "analysis/format.h"
#include "analysis/report/report_internal.h"
#include "analysis/unrecognised_notice.h"
#include "model/vocabulary.h"

namespace ckpt::report {
namespace {

// pageable_staging: the copy out of (or into) GPU memory below half its maximum.
constexpr double kGpuCopyLowFraction = 0.5;
// serialization_bound: on-CPU serialization for half the checkpoint or more.
constexpr double kSerializeShare = 0.5;
// metadata_bound: metadata calls busy for half the checkpoint with small files.
constexpr double kMetadataShare = 0.5;
constexpr uint64_t kSmallFileBytes = 1ull << 20;
// rpc_slot_starvation: a quarter of RPC waiting spent without a request slot.
constexpr double kSlotWaitShare = 0.25;
// transport_saturated: queue wait at least twice the round trip.
constexpr double kQueueOverRtt = 2.0;
constexpr double kTransportBusyFraction = 0.5;
// small_writes / small_reads: many calls averaging under 64 KiB.
constexpr uint64_t kSmallCallBytes = 64 * 1024;
constexpr uint64_t kManyCalls = 64;
// transport_loss: retransmitted segments per segment sent (1448-byte MSS).
constexpr double kRetransmitShare = 0.001;
constexpr uint64_t kMinRetransmits = 10;
constexpr double kSegmentBytes = 1448;
// single_writer: one thread moved a checkpoint this large.
constexpr uint64_t kSingleWriterBytes = 16ull << 20;
// load/save below the storage maximum (cluster-wide).
constexpr double kBelowMaxFraction = 0.5;
// stragglers: the slowest node this much slower than the median, and by this much.
constexpr double kStragglerRatio = 1.5;
constexpr uint64_t kStragglerMinNs = 100'000'000;
// checkpoint_cost_high: a tenth of the job's wall time blocked in checkpoints.
constexpr double kCostShare = 0.10;

using Evidence = std::vector<EvidenceItem>;

struct Rule {
  std::string_view id;
  std::string_view title;
  std::string_view advice;
  std::function<Evidence(const Report&)> fire;
};

const std::string& node_name(const Report& r, const NodeCheckpoint& nc) {
  return r.nodes[nc.node].node;
}

// Calls `f` for every node's part of every checkpoint.
void each_node_checkpoint(
    const Report& r, const std::function<void(const CheckpointReport&, const NodeCheckpoint&)>& f) {
  for (const auto& cp : r.checkpoints)
    for (const auto& nc : cp.nodes) f(cp, nc);
}

std::string stage_figures(const StageRecord& s) {
  std::string out = fmt::format("{} {} in {} busy ({})", s.name, format_bytes(s.bytes),
                                format_duration(s.busy_ns), format_bandwidth(s.bandwidth_Bps()));
  if (auto f = s.fraction_of_max())
    out += fmt::format(", {} of {} ({}{})", format_percent(*f), format_bandwidth(*s.max_Bps),
                       s.max_source,
                       calibration_fault(s) ? "; a calibration warning: the maximum is wrong" : "");
  return out;
}

double share(uint64_t part, uint64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

Evidence pageable_staging(const Report& r) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    const StageRecord* s = find_stage(*nc.record, kStageGpuCopy);
    if (!s || s->busy_ns == 0) return;
    auto f = s->fraction_of_max();
    bool slow = f && *f < kGpuCopyLowFraction;
    if (slow || nc.record->bottleneck == kStageGpuCopy)
      ev.push_back({cp.index, node_name(r, nc),
                    fmt::format("{}: {}{}", checkpoint_label(cp), stage_figures(*s),
                                nc.record->bottleneck == kStageGpuCopy ? "; the bottleneck" : "")});
  });
  return ev;
}

Evidence serialization_bound(const Report& r) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    const StageRecord* s = find_stage(*nc.record, kStageSerialize);
    if (!s) return;
    double part = share(s->busy_ns, nc.duration_ns());
    if (nc.record->bottleneck == kStageSerialize || part >= kSerializeShare)
      ev.push_back(
          {cp.index, node_name(r, nc),
           fmt::format("{}: {}, {} of the checkpoint's {}", checkpoint_label(cp), stage_figures(*s),
                       format_percent(part), format_duration(nc.duration_ns()))});
  });
  return ev;
}

Evidence metadata_bound(const Report& r) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    const StageRecord* s = find_stage(*nc.record, kStageMetadata);
    if (!s) return;
    const CheckpointRecord& c = *nc.record;
    double part = share(s->busy_ns, nc.duration_ns());
    uint64_t per_file = c.files > 0 ? c.bytes / c.files : 0;
    bool small_files = c.files > 1 && per_file < kSmallFileBytes && part >= kMetadataShare;
    if (c.bottleneck == kStageMetadata || small_files)
      ev.push_back(
          {cp.index, node_name(r, nc),
           fmt::format("{}: metadata calls busy {} ({} of the checkpoint) for {} files of {} on "
                       "average{}",
                       checkpoint_label(cp), format_duration(s->busy_ns), format_percent(part),
                       c.files, format_bytes(per_file),
                       c.bottleneck == kStageMetadata ? "; the bottleneck" : "")});
  });
  return ev;
}

uint64_t queue_wait(const NfsCheckpointRecord& nfs, std::string_view queue) {
  uint64_t ns = 0;
  for (const auto& [name, v] : nfs.wait_by_queue_ns)
    if (name == queue) ns += v;
  return ns;
}

uint64_t all_waits(const NfsCheckpointRecord& nfs) {
  uint64_t ns = 0;
  for (const auto& [name, v] : nfs.wait_by_queue_ns) ns += v;
  return ns;
}

Evidence rpc_slot_starvation(const Report& r) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    if (!nc.record->nfs || nc.record->nfs->queue_wait.count == 0) return;
    const NfsCheckpointRecord& nfs = *nc.record->nfs;
    double slot = share(queue_wait(nfs, "backlog"), all_waits(nfs));
    if (slot >= kSlotWaitShare && nfs.queue_wait.p50_ns >= nfs.rtt.p50_ns)
      ev.push_back(
          {cp.index, node_name(r, nc),
           fmt::format("{}: {} of RPC waiting was for a request slot (backlog queue); queue "
                       "wait p50 {} against a round trip of {}",
                       checkpoint_label(cp), format_percent(slot),
                       format_duration(nfs.queue_wait.p50_ns), format_duration(nfs.rtt.p50_ns))});
  });
  return ev;
}

Evidence transport_saturated(const Report& r) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    const CheckpointRecord& c = *nc.record;
    if (!c.nfs || c.nfs->queue_wait.count == 0) return;
    const NfsCheckpointRecord& nfs = *c.nfs;
    const StageRecord* t = find_stage(c, kStageTransport);
    if (!t) return;
    bool queued = static_cast<double>(nfs.queue_wait.p50_ns) >=
                  kQueueOverRtt * static_cast<double>(nfs.rtt.p50_ns);
    bool sending = queue_wait(nfs, "sending") >= queue_wait(nfs, "backlog");
    auto f = t->fraction_of_max();
    bool full = c.bottleneck == kStageTransport || (f && *f >= kTransportBusyFraction);
    if (!(queued && sending && full)) return;
    std::string backlog =
        nfs.tcp_backlog_mean
            ? fmt::format(", TCP backlog {} on average ({} at most)",
                          format_bytes(static_cast<uint64_t>(*nfs.tcp_backlog_mean)),
                          format_bytes(nfs.tcp_backlog_max.value_or(0)))
            : "";
    ev.push_back(
        {cp.index, node_name(r, nc),
         fmt::format("{}: RPC queue wait p50 {} against a round trip of {}, mostly waiting to be "
                     "sent{}; {}",
                     checkpoint_label(cp), format_duration(nfs.queue_wait.p50_ns),
                     format_duration(nfs.rtt.p50_ns), backlog, stage_figures(*t))});
  });
  return ev;
}

Evidence small_calls(const Report& r, Direction d) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    if (cp.direction != d) return;
    uint64_t calls = 0, bytes = 0;
    for (const auto& f : nc.record->file_io) {
      calls += d == Direction::Save ? f.write_calls : f.read_calls;
      bytes += d == Direction::Save ? f.bytes_written : f.bytes_read;
    }
    if (calls >= kManyCalls && bytes / calls < kSmallCallBytes)
      ev.push_back(
          {cp.index, node_name(r, nc),
           fmt::format("{}: {} {} calls of {} on average", checkpoint_label(cp), calls,
                       d == Direction::Save ? "write" : "read", format_bytes(bytes / calls))});
    // The NFS side: WRITE/READ RPCs carrying little each (a small wsize/rsize).
    if (!nc.record->nfs) return;
    const char* op = d == Direction::Save ? "WRITE" : "READ";
    for (const auto& o : nc.record->nfs->rpc_ops) {
      if (o.op != op || o.count < kManyCalls) continue;
      uint64_t payload = (d == Direction::Save ? o.bytes_sent : o.bytes_received) / o.count;
      if (payload < kSmallCallBytes)
        ev.push_back({cp.index, node_name(r, nc),
                      fmt::format("{}: {} {} RPCs of {} on the wire on average",
                                  checkpoint_label(cp), o.count, op, format_bytes(payload))});
    }
  });
  return ev;
}

Evidence transport_loss(const Report& r) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    const CheckpointRecord& c = *nc.record;
    for (const auto& f : c.failures)
      if (f.kind == kFailureTcpRetransmitStorm)
        ev.push_back({cp.index, node_name(r, nc),
                      fmt::format("{}: retransmit storm: {}", checkpoint_label(cp), f.evidence)});
    if (!c.nfs || !c.nfs->tcp_retransmits) return;
    const StageRecord* t = find_stage(c, kStageTransport);
    uint64_t wire = t ? t->bytes : c.bytes;
    double segments = std::max(1.0, static_cast<double>(wire) / kSegmentBytes);
    double rate = static_cast<double>(*c.nfs->tcp_retransmits) / segments;
    if (*c.nfs->tcp_retransmits >= kMinRetransmits && rate >= kRetransmitShare)
      ev.push_back({cp.index, node_name(r, nc),
                    fmt::format("{}: {} TCP retransmits for {} on the wire, {} of segments",
                                checkpoint_label(cp), *c.nfs->tcp_retransmits, format_bytes(wire),
                                format_percent(rate))});
  });
  return ev;
}

bool is_network_stage(std::string_view s) {
  return s == kStageTransport || s == kStageRpcQueue || s == kStageRpcRtt;
}

Evidence single_writer(const Report& r) {
  Evidence ev;
  each_node_checkpoint(r, [&](const CheckpointReport& cp, const NodeCheckpoint& nc) {
    const CheckpointRecord& c = *nc.record;
    if (nc.writer_threads != 1 || c.bytes < kSingleWriterBytes || is_network_stage(c.bottleneck))
      return;
    if (cp.fraction_of_storage_max && *cp.fraction_of_storage_max >= kBelowMaxFraction) return;
    const StageRecord* s = find_stage(c, c.bottleneck);
    ev.push_back(
        {cp.index, node_name(r, nc),
         fmt::format("{}: one thread {} all {} ({} files); bottleneck {}", checkpoint_label(cp),
                     cp.direction == Direction::Save ? "wrote" : "read", format_bytes(c.bytes),
                     c.files, s ? stage_figures(*s) : c.bottleneck)});
  });
  return ev;
}

Evidence below_storage_max(const Report& r, Direction d) {
  Evidence ev;
  for (const auto& cp : r.checkpoints) {
    if (cp.direction != d || !cp.fraction_of_storage_max ||
        *cp.fraction_of_storage_max >= kBelowMaxFraction)
      continue;
    // A checkpoint the page cache served entirely asked nothing of the storage.
    if (cp.storage_bytes && *cp.storage_bytes == 0) continue;
    const uint64_t reached = cp.storage_bytes.value_or(cp.bytes);
    ev.push_back(
        {cp.index, "",
         fmt::format("{}: {} nodes together {} ({} {}in {}), {} of the storage's {} ({})",
                     checkpoint_label(cp), cp.nodes.size(),
                     format_bandwidth(cp.storage_Bps.value_or(cp.aggregate_Bps)),
                     format_bytes(reached), cp.storage_bytes ? "reached the storage " : "",
                     format_duration(cp.duration_ns()), format_percent(*cp.fraction_of_storage_max),
                     format_bandwidth(*cp.storage_max_Bps), cp.storage_max_source)});
  }
  return ev;
}

Evidence stragglers(const Report& r) {
  Evidence ev;
  for (const auto& cp : r.checkpoints) {
    if (cp.nodes.size() < 2) continue;
    const NodeCheckpoint& slow = cp.nodes[cp.slowest];
    if (cp.straggler_ratio < kStragglerRatio ||
        slow.duration_ns() < cp.median_node_ns + kStragglerMinNs)
      continue;
    ev.push_back(
        {cp.index, node_name(r, slow),
         fmt::format("{}: {} took {}, {:.1f}x the median node's {}; its bottleneck: {}",
                     checkpoint_label(cp), node_name(r, slow), format_duration(slow.duration_ns()),
                     cp.straggler_ratio, format_duration(cp.median_node_ns),
                     slow.record->bottleneck.empty() ? "none measured" : slow.record->bottleneck)});
  }
  return ev;
}

Evidence checkpoint_cost_high(const Report& r) {
  if (!r.cost.share || *r.cost.share < kCostShare) return {};
  return {
      {std::nullopt, "",
       fmt::format("the job spent {} of its {} blocked in checkpoints ({} saving, {} loading): {}",
                   format_duration(r.cost.blocked_ns), format_duration(r.cost.job_wall_ns),
                   format_duration(r.cost.save_blocked_ns), format_duration(r.cost.load_blocked_ns),
                   format_percent(*r.cost.share))}};
}

// The failures of these kinds, the first kFailuresShown of each kind and
// node in full, the rest counted.
constexpr size_t kFailuresShown = 3;

Evidence failures_of(const Report& r, std::initializer_list<std::string_view> kinds) {
  Evidence ev;
  std::map<std::pair<size_t, std::string>, size_t> seen;
  for (const auto& f : r.failures) {
    if (std::find(kinds.begin(), kinds.end(), f.failure.kind) == kinds.end()) continue;
    if (++seen[{f.node, f.failure.kind}] > kFailuresShown) continue;
    ev.push_back({f.checkpoint, r.nodes[f.node].node,
                  fmt::format("{}: {}", f.failure.kind, f.failure.evidence)});
  }
  for (const auto& [key, count] : seen)
    if (count > kFailuresShown)
      ev.push_back(
          {std::nullopt, r.nodes[key.first].node,
           fmt::format("{} more {} failures (see Failures)", count - kFailuresShown, key.second)});
  return ev;
}

// unrecognised_io: a node moved more than its trace's threshold
// (checkpoint.unrecognised_notice_mib) through files no pattern recognised.
// One line per node with the totals, then one per file it names.
Evidence unrecognised_io(const Report& r) {
  Evidence ev;
  for (const auto& n : r.nodes) {
    if (!n.unrecognised_io || !n.unrecognised_io->notice()) continue;
    const UnrecognisedIoRecord& io = *n.unrecognised_io;
    ev.push_back({std::nullopt, n.node, unrecognised_headline(io)});
    for (const UnrecognisedFileRecord& f : io.largest) {
      const std::string flags = include_flags(f);
      ev.push_back({std::nullopt, n.node,
                    fmt::format("{}: {} written, {} read{}", unrecognised_file_name(f),
                                format_bytes(f.bytes_written), format_bytes(f.bytes_read),
                                flags.empty() ? "" : "; include with " + flags)});
    }
  }
  return ev;
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> kRules = {
      {"pageable_staging", "GPU copies run below the bus's maximum",
       "Stage checkpoints through pinned (page-locked) host memory, or copy asynchronously "
       "(torch.distributed.checkpoint async_save, a pinned staging buffer reused across saves): "
       "pageable copies go through a bounce buffer at a fraction of PCIe/NVLink-C2C speed.",
       pageable_staging},
      {"serialization_bound", "Saves wait on serialization",
       "Serialize in parallel: more writer threads or processes (DCP thread_count, one writer per "
       "rank), or a format without per-tensor pickling (safetensors, DCP's flat storage).",
       serialization_bound},
      {"metadata_bound", "Saves wait on metadata (creating, renaming, statting files)",
       "Write fewer, larger files (bucket tensors per rank), and let one rank create the "
       "directories before the others write into them; on NFS every create and rename is a "
       "synchronous round trip to the server.",
       metadata_bound},
      {"rpc_slot_starvation", "NFS RPCs wait for a request slot",
       "Raise the RPC slot table (sunrpc.tcp_max_slot_table_entries, the NFSv4.1 session's slots "
       "on "
       "the server) or spread RPCs over more connections with the nconnect mount option.",
       rpc_slot_starvation},
      {"transport_saturated",
       "The connection to the storage is full: RPC queueing and TCP backlog rise together",
       "The TCP connection cannot take more: use nconnect=N (several connections per mount, up to "
       "16), more or faster links to the storage, or spread the ranks' shards across servers.",
       transport_saturated},
      {"small_writes", "Checkpoint data is written in small pieces",
       "Buffer writes to 1 MiB or more (a larger io buffer, writing whole tensors), and mount with "
       "a "
       "large wsize (wsize=1048576): small writes cost a system call and an RPC each.",
       [](const Report& r) { return small_calls(r, Direction::Save); }},
      {"small_reads", "Checkpoint data is read in small pieces",
       "Read in 1 MiB pieces or more and mount with a large rsize (rsize=1048576); memory-map or "
       "read "
       "whole tensors rather than element by element.",
       [](const Report& r) { return small_calls(r, Direction::Load); }},
      {"transport_loss", "TCP retransmits toward the storage",
       "Packets are lost between the node and the storage: check NIC and switch counters (ethtool "
       "-S, "
       "drops, CRC errors), MTU consistency along the path, and congestion on the storage network.",
       transport_loss},
      {"single_writer", "One thread moves each node's whole checkpoint",
       "Parallelize: write the checkpoint as several shards from several threads or processes per "
       "node (DCP thread_count, one file per rank), so one stream's latency does not bound it.",
       single_writer},
      {"load_below_read_max", "Restarts load far below the storage's read maximum",
       "Read in parallel from every node and several threads per node, each rank its own shards, "
       "with "
       "large rsize and readahead; a load that reads everything through one rank cannot use the "
       "storage.",
       [](const Report& r) { return below_storage_max(r, Direction::Load); }},
      {"save_below_write_max", "Saves reach a small part of the storage's write maximum",
       "Write from more nodes and threads at once (every rank its own shards), and look at the "
       "bottleneck stage of each save: the storage is not what limits them.",
       [](const Report& r) { return below_storage_max(r, Direction::Save); }},
      {"stragglers", "A slow node sets the job's checkpoint stall",
       "Every rank waits for the slowest: look at that node's own bottleneck, its link and its "
       "share of the data; balance shards across nodes.",
       stragglers},
      {"checkpoint_cost_high", "Checkpoints cost the job a large share of its time",
       "Checkpoint asynchronously (stage to host memory, write in the background) or less often; "
       "the blocked share is what the job pays for each save.",
       checkpoint_cost_high},
      {"storage_full", "The storage ran out of space or quota",
       "Free space or raise the quota before the next save; keep fewer old checkpoints, and check "
       "free space before a save starts rather than failing halfway.",
       [](const Report& r) {
         return failures_of(r,
                            {kFailureEnospc, kFailureEdquot, kFailureRpcEnospc, kFailureRpcEdquot});
       }},
      {"partial_save", "A process died in the middle of a save",
       "That checkpoint is incomplete: write each checkpoint under a temporary name and rename it "
       "when complete, and never delete the previous one before the new one is verified.",
       [](const Report& r) { return failures_of(r, {kFailurePartialSave}); }},
      {"server_unresponsive", "The NFS server stopped answering",
       "Look at the server (load, its disks, nfsd threads) and the network path at those times; "
       "with "
       "hard mounts the job waits for ever, so alert on these before the job's own timeout.",
       [](const Report& r) {
         return failures_of(r, {kFailureNfsServerNotResponding, kFailureKernelNfsNotResponding,
                                kFailureStall, kFailureTcpReset, kFailureTcpZeroWindow});
       }},
      {"stale_handles", "Files vanished under the job (ESTALE)",
       "Another node removed or replaced files or directories this one had open: let one rank "
       "manage "
       "checkpoint directories, and write to a new name then rename, never delete in place.",
       [](const Report& r) {
         return failures_of(r, {kFailureEstale, kFailureRpcEstale});
       }},
      {"io_errors", "The storage returned I/O errors",
       "EIO from the file system: check the server's and the client's kernel logs around these "
       "times; the checkpoint written then is suspect.",
       [](const Report& r) {
         return failures_of(r, {kFailureEio, kFailureRpcEio, kFailureIoError});
       }},
      {"gpu_faults", "The GPU reported faults (Xid)",
       "A GPU fault, not the storage: drain the node and run the vendor's diagnostics (dcgmi "
       "diag), "
       "and restart the job from its last complete checkpoint elsewhere.",
       [](const Report& r) { return failures_of(r, {kFailureGpuXid}); }},
      {"host_oom", "The kernel's OOM killer killed the job",
       "Host memory ran out: staging buffers for checkpoints (pinned or not) come on top of the "
       "data "
       "loaders'; stage in smaller pieces, reuse one buffer, or give the job's cgroup more memory.",
       [](const Report& r) { return failures_of(r, {kFailureOomKill}); }},
      {"unrecognised_io", "Bulk data moved through files no checkpoint pattern recognised",
       "If these files are checkpoints, ckptscope did not see them as such: run or attach with "
       "--checkpoint-glob GLOB (a file name) or --checkpoint-dir DIR (a directory of generic "
       "names such as *.pt), as each file's line says, or add them to checkpoint.name_globs or "
       "checkpoint.dir_globs in the config. If they are not (a dataset, logs), "
       "checkpoint.exclude_globs or a larger checkpoint.unrecognised_notice_mib quiets this.",
       unrecognised_io},
  };
  return kRules;
}

}  // namespace

std::vector<Recommendation> recommend(const Report& report) {
  std::vector<Recommendation> out;
  for (const Rule& rule : rules()) {
    Evidence ev = rule.fire(report);
    if (ev.empty()) continue;
    out.push_back(
        {std::string(rule.id), std::string(rule.title), std::string(rule.advice), std::move(ev)});
  }
  return out;
}

std::vector<std::string_view> recommendation_ids() {
  std::vector<std::string_view> ids;
  for (const Rule& rule : rules()) ids.push_back(rule.id);
  return ids;
}

}  // namespace ckpt::report
