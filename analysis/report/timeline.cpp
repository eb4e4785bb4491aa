// One checkpoint's series over its window, on the wall clock so that nodes
// line up: checkpoint bandwidth (each data call's bytes spread over its own
// interval, and each READ/WRITE RPC's payload from its transmission to its
// reply), the RPC queue time of the checkpoint's I/O RPCs (by the time
// they were sent), and the TCP backlog toward the storage (a step function
// between samples). Rising together, the last two are the signature of a
// saturated transport.
#include <algorithm>
#include <cmath>

#include "analysis/report/report_internal.h"

namespace ckpt::report {
namespace {

int64_t wall_offset(const JobRecord& job) {
  return static_cast<int64_t>(job.start_wall_ns) - static_cast<int64_t>(job.start_mono_ns);
}

}  // namespace

Timeline build_timeline(const Report& report, const CheckpointReport& cp, size_t bins) {
  Timeline tl;
  bins = std::max<size_t>(bins, 1);
  tl.start_wall_ns = cp.start_wall_ns;
  const uint64_t span = std::max<uint64_t>(cp.duration_ns(), 1);
  tl.bin_ns = std::max<uint64_t>((span + bins - 1) / bins, 1);
  const size_t n = static_cast<size_t>((span + tl.bin_ns - 1) / tl.bin_ns);
  std::vector<double> bytes(n, 0.0);
  std::vector<double> queue_sum(n, 0.0);
  std::vector<uint64_t> queue_count(n, 0);
  std::vector<double> backlog(n, 0.0);
  std::vector<bool> backlog_seen(n, false);
  const auto t0 = static_cast<int64_t>(cp.start_wall_ns);
  const auto bin_ns = static_cast<int64_t>(tl.bin_ns);
  const auto end = static_cast<int64_t>(n) * bin_ns;  // relative to t0
  auto bin_of = [&](int64_t rel) -> std::optional<size_t> {
    if (rel < 0 || rel >= end) return std::nullopt;
    return static_cast<size_t>(rel / bin_ns);
  };
  // `n` bytes moved over [s, e): into the bins it spans, in proportion to
  // the overlap (all of it into one bin when the interval is empty).
  auto spread = [&](std::vector<double>& into, int64_t s, int64_t e, uint64_t n) {
    if (e <= s) {
      if (auto b = bin_of(s)) into[*b] += static_cast<double>(n);
      return;
    }
    const double per_ns = static_cast<double>(n) / static_cast<double>(e - s);
    for (int64_t from = std::max<int64_t>(s, 0); from < std::min(e, end);) {
      const auto b = static_cast<size_t>(from / bin_ns);
      const int64_t to = std::min({e, end, static_cast<int64_t>(b + 1) * bin_ns});
      into[b] += per_ns * static_cast<double>(to - from);
      from = to;
    }
  };
  std::vector<double> nfs_bytes(n, 0.0);
  bool has_nfs_bytes = false;

  for (const NodeCheckpoint& nc : cp.nodes) {
    const Trace& trace = report.traces[nc.node].trace;
    const int64_t off = wall_offset(trace.job) - t0;
    const uint64_t id = nc.record->id;

    const TraceIndex& index = report.index[nc.node];
    static const std::vector<const IoCallRecord*> kNoCalls;
    static const std::vector<const RpcCallRecord*> kNoRpcs;
    auto calls = index.data_calls.find(id);
    for (const IoCallRecord* call : calls == index.data_calls.end() ? kNoCalls : calls->second) {
      const IoCallRecord& c = *call;
      const int64_t s = static_cast<int64_t>(c.start_ns) + off;
      const int64_t e = std::max(static_cast<int64_t>(c.end_ns) + off, s);
      spread(bytes, s, e, c.bytes);
    }

    auto rpcs = index.checkpoint_io_rpcs.find(id);
    for (const RpcCallRecord* r : rpcs == index.checkpoint_io_rpcs.end() ? kNoRpcs : rpcs->second) {
      const RpcCallRecord& rpc = *r;
      tl.has_rpc = true;
      const int64_t sent = static_cast<int64_t>(rpc.start_ns + rpc.queue_ns) + off;
      if (rpc.payload_bytes > 0) {
        has_nfs_bytes = true;
        spread(nfs_bytes, sent, std::max(static_cast<int64_t>(rpc.end_ns) + off, sent),
               rpc.payload_bytes);
      }
      if (auto b = bin_of(sent)) {
        queue_sum[*b] += static_cast<double>(rpc.queue_ns) / 1e6;
        ++queue_count[*b];
      }
    }

    // Each connection's backlog holds from one sample to the next; a bin
    // takes the largest value any of its samples (or the carried one) had.
    // From the last sample at or before the window on, by binary search.
    for (const auto& samples : index.connections) {
      auto first_in = std::lower_bound(samples.begin(), samples.end(),
                                       static_cast<int64_t>(t0) - (wall_offset(trace.job)),
                                       [](const TcpSampleRecord* s, int64_t mono) {
                                         return static_cast<int64_t>(s->time_ns) < mono;
                                       });
      size_t i = static_cast<size_t>(first_in - samples.begin());
      if (i > 0) --i;
      std::vector<double> conn(n, -1.0);
      for (; i < samples.size(); ++i) {
        const int64_t s = static_cast<int64_t>(samples[i]->time_ns) + off;
        if (s >= end) break;
        const int64_t e =
            i + 1 < samples.size() ? static_cast<int64_t>(samples[i + 1]->time_ns) + off : s + 1;
        if (e <= 0) continue;
        const auto first = static_cast<size_t>(std::max<int64_t>(s, 0) / bin_ns);
        const auto last = static_cast<size_t>((std::min(e, end) - 1) / bin_ns);
        for (size_t b = first; b <= last && b < n; ++b)
          conn[b] = std::max(conn[b], static_cast<double>(samples[i]->backlog));
      }
      for (size_t b = 0; b < n; ++b)
        if (conn[b] >= 0) {
          backlog[b] += conn[b];
          backlog_seen[b] = true;
          tl.has_tcp = true;
        }
    }
  }

  tl.bandwidth_Bps.resize(n);
  tl.rpc_queue_ms.resize(n);
  tl.tcp_backlog_bytes.resize(n);
  if (has_nfs_bytes) tl.nfs_bandwidth_Bps.resize(n);
  for (size_t b = 0; b < n; ++b) {
    tl.bandwidth_Bps[b] = bytes[b] * 1e9 / static_cast<double>(tl.bin_ns);
    if (has_nfs_bytes)
      tl.nfs_bandwidth_Bps[b] = nfs_bytes[b] * 1e9 / static_cast<double>(tl.bin_ns);
    if (queue_count[b] > 0) tl.rpc_queue_ms[b] = queue_sum[b] / static_cast<double>(queue_count[b]);
    if (backlog_seen[b]) tl.tcp_backlog_bytes[b] = backlog[b];
  }
  return tl;
}

const Timeline& timeline_of(const Report& report, const CheckpointReport& cp, Timeline& scratch) {
  if (report.timelines_kept) return cp.timeline;
  scratch = build_timeline(report, cp, report.timeline_bins);
  return scratch;
}

std::vector<size_t> failures_per_checkpoint(const Report& report) {
  std::vector<size_t> out(report.checkpoints.size() + 1, 0);
  for (const auto& f : report.failures)
    if (f.checkpoint && *f.checkpoint < out.size()) ++out[*f.checkpoint];
  return out;
}

}  // namespace ckpt::report
