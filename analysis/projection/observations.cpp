#include "analysis/projection/observations.h"

#include "analysis/projection/spread.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include "model/vocabulary.h"

namespace ckpt::projection {
namespace {

constexpr double kNsPerMs = 1e6;

// READ/WRITE RPCs that carried this checkpoint's pages and succeeded: the
// traffic the shared side serves. COMMIT and metadata RPCs are the node's.
std::vector<const RpcCallRecord*> data_rpcs(const report::Report& r,
                                            const report::NodeCheckpoint& nc, Direction d) {
  std::vector<const RpcCallRecord*> out;
  const auto& by_cp = r.index[nc.node].checkpoint_io_rpcs;
  auto it = by_cp.find(nc.record->id);
  if (it == by_cp.end()) return out;
  // A WRITE's or READ's status is its byte count: failed ones are negative.
  for (const RpcCallRecord* rpc : it->second)
    if ((d == Direction::Save ? rpc->op == kRpcWrite : is_read_rpc(rpc->op)) &&
        rpc->payload_bytes > 0 && rpc->status >= 0 && rpc->end_ns > rpc->start_ns)
      out.push_back(rpc);
  return out;
}

struct RpcMeans {
  uint64_t count = 0;
  double execute_ns = 0;
  double queue_ns = 0;
  double rtt_ns = 0;
  void add(const RpcCallRecord& rpc) {
    ++count;
    execute_ns += static_cast<double>(rpc.execute_ns);
    queue_ns += static_cast<double>(rpc.queue_ns);
    rtt_ns += static_cast<double>(rpc.rtt_ns);
  }
  [[nodiscard]] double mean_ms(double sum) const {
    return count ? sum / static_cast<double>(count) / kNsPerMs : 0;
  }
};

// Node `node`'s part of `c` (its nodes are sorted by node, build_report).
const report::NodeCheckpoint* part_of(const report::CheckpointReport& c, size_t node) {
  auto it =
      std::lower_bound(c.nodes.begin(), c.nodes.end(), node,
                       [](const report::NodeCheckpoint& nc, size_t n) { return nc.node < n; });
  return it == c.nodes.end() || it->node != node ? nullptr : &*it;
}

// The quiet gap node `node`'s trace was stitched with, from its recorded
// configuration (`checkpoint.quiet_gap_ms`); nullopt when the trace does not
// say (then no piece is inferred from it: guessing the default could merge two
// checkpoints of a trace stitched with a shorter gap).
std::optional<uint64_t> quiet_gap_ns(const report::Report& r, size_t node) {
  auto ms = report::trace_config_number(r.traces[node].trace.job.config_json, "checkpoint",
                                        "quiet_gap_ms");
  if (!ms || *ms <= 0) return std::nullopt;
  return static_cast<uint64_t>(*ms * kNsPerMs);
}

// Whether `c` is a piece of `other` (find_pieces): every node of `c` is in
// `other`, and either `other` has more nodes and overlaps it within the
// grouping's slack, or on each of those nodes `c` is the checkpoint the
// stitcher closed right after `other` (the next record id: none of the other
// direction between them) and began before `other` had been quiet for the
// node's gap. By the stitcher's own rule its first call then belonged to
// `other`, which was closed while that call was in flight. Two checkpoints of
// one node a quiet gap apart are two checkpoints.
bool is_piece_of(const std::vector<std::optional<uint64_t>>& gaps, uint64_t max_gap_ns,
                 const report::CheckpointReport& c, const report::CheckpointReport& other) {
  if (&other == &c || other.direction != c.direction || other.nodes.size() < c.nodes.size())
    return false;
  const bool wider = other.nodes.size() > c.nodes.size() &&
                     c.start_wall_ns <= other.end_wall_ns + report::kGroupSlackNs &&
                     other.start_wall_ns <= c.end_wall_ns + report::kGroupSlackNs;
  bool cut_short = c.start_wall_ns <= other.end_wall_ns + max_gap_ns;
  if (!wider && !cut_short) return false;
  for (const auto& nc : c.nodes) {
    const report::NodeCheckpoint* mine = part_of(other, nc.node);
    if (mine == nullptr) return false;
    cut_short = cut_short && gaps[nc.node] && nc.record->id == mine->record->id + 1 &&
                nc.start_wall_ns <= mine->end_wall_ns + *gaps[nc.node];
  }
  return wider || cut_short;
}

// The positions of r.checkpoints in start order, with a tree of the latest
// end below each range of them: which checkpoints overlap a window, in
// O(log n) a checkpoint found instead of a scan of all of them (issue 36: the
// scan made pieces_by_position quadratic, 60 s at 40,000 checkpoints).
class OverlapIndex {
 public:
  explicit OverlapIndex(const std::vector<report::CheckpointReport>& cps) : cps_(cps) {
    order_.resize(cps.size());
    for (size_t i = 0; i < cps.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      return cps[a].start_wall_ns < cps[b].start_wall_ns;
    });
    size_ = 1;
    while (size_ < order_.size()) size_ *= 2;
    max_end_.assign(2 * size_, 0);
    for (size_t k = 0; k < order_.size(); ++k) max_end_[size_ + k] = cps[order_[k]].end_wall_ns;
    for (size_t k = size_ - 1; k > 0; --k)
      max_end_[k] = std::max(max_end_[2 * k], max_end_[2 * k + 1]);
  }

  // Calls `f(position)` for every checkpoint that starts at or before
  // `start_at_most` and ends at or after `end_at_least`.
  template <typename F>
  void each_overlapping(uint64_t start_at_most, uint64_t end_at_least, F&& f) const {
    const auto past =
        std::upper_bound(order_.begin(), order_.end(), start_at_most,
                         [&](uint64_t t, size_t i) { return t < cps_[i].start_wall_ns; });
    const auto limit = static_cast<size_t>(past - order_.begin());
    for (size_t from = 0; from < limit;) {
      const auto k = first_ending_after(1, 0, size_, from, limit, end_at_least);
      if (!k) break;
      f(order_[*k]);
      from = *k + 1;
    }
  }

 private:
  // The first leaf in [from, limit) of node `node` (covering [lo, hi)) whose
  // end is at least `t`.
  std::optional<size_t> first_ending_after(size_t node, size_t lo, size_t hi, size_t from,
                                           size_t limit, uint64_t t) const {
    if (hi <= from || lo >= limit || max_end_[node] < t) return std::nullopt;
    if (hi - lo == 1) return lo;
    const size_t mid = lo + (hi - lo) / 2;
    if (auto left = first_ending_after(2 * node, lo, mid, from, limit, t)) return left;
    return first_ending_after(2 * node + 1, mid, hi, from, limit, t);
  }

  const std::vector<report::CheckpointReport>& cps_;
  std::vector<size_t> order_;      // positions by start
  size_t size_ = 1;                // leaves: a power of two
  std::vector<uint64_t> max_end_;  // the segment tree, 1-based
};

uint64_t plus_saturated(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t minus_saturated(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// For each of r.checkpoints (by position), the index of the checkpoint it is
// a piece of, if any: the whole one, when that is a piece in turn.
//
// A checkpoint is a piece of the first (by position) `other` that
// is_piece_of accepts. Only two kinds of `other` can be accepted, so only
// they are tried: one wider that overlaps it within the grouping's slack
// (found through the overlap index), and the one that holds, on its first
// node, the record just before its own (found by node and record id).
std::vector<std::optional<uint64_t>> pieces_by_position(const report::Report& r) {
  std::vector<std::optional<uint64_t>> gaps;
  uint64_t max_gap_ns = 0;
  for (size_t n = 0; n < r.nodes.size(); ++n) {
    gaps.push_back(quiet_gap_ns(r, n));
    max_gap_ns = std::max(max_gap_ns, gaps.back().value_or(0));
  }
  const size_t count = r.checkpoints.size();
  std::map<std::pair<size_t, uint64_t>, size_t> holding;  // (node, record id) -> position
  for (size_t j = 0; j < count; ++j)
    for (const auto& nc : r.checkpoints[j].nodes)
      holding.emplace(std::pair{nc.node, nc.record->id}, j);
  const OverlapIndex overlaps(r.checkpoints);
  std::vector<std::optional<size_t>> parent(count);
  for (size_t i = 0; i < count; ++i) {
    const report::CheckpointReport& c = r.checkpoints[i];
    std::optional<size_t> best;
    auto consider = [&](size_t j) {
      if ((!best || j < *best) && is_piece_of(gaps, max_gap_ns, c, r.checkpoints[j])) best = j;
    };
    overlaps.each_overlapping(plus_saturated(c.end_wall_ns, report::kGroupSlackNs),
                              minus_saturated(c.start_wall_ns, report::kGroupSlackNs), consider);
    if (!c.nodes.empty()) {
      // The id before, as is_piece_of compares them (id + 1, modulo 2^64).
      auto it = holding.find({c.nodes.front().node, c.nodes.front().record->id - 1});
      if (it != holding.end()) consider(it->second);
    }
    parent[i] = best;
  }
  // Each step goes to a checkpoint of more nodes, or of the same nodes and
  // earlier records, so chains end; the wholes are resolved once each.
  std::vector<std::optional<size_t>> whole_of(count);
  std::vector<std::optional<uint64_t>> out(count);
  for (size_t i = 0; i < count; ++i) {
    if (!parent[i]) continue;
    std::vector<size_t> path;
    size_t whole = *parent[i];
    for (size_t steps = 0; parent[whole] && !whole_of[whole] && steps < count; ++steps) {
      path.push_back(whole);
      whole = *parent[whole];
    }
    if (whole_of[whole]) whole = *whole_of[whole];
    for (size_t p : path) whole_of[p] = whole;
    whole_of[i] = whole;
    out[i] = r.checkpoints[whole].index;
  }
  return out;
}

}  // namespace

std::vector<Piece> find_pieces(const report::Report& r, Direction d) {
  std::vector<Piece> out;
  const auto pieces = pieces_by_position(r);
  for (size_t i = 0; i < r.checkpoints.size(); ++i) {
    const auto& cp = r.checkpoints[i];
    if (cp.direction != d || !pieces[i]) continue;
    Piece p{cp.index, *pieces[i], {}};
    for (const auto& nc : cp.nodes) p.nodes.push_back(r.nodes[nc.node].node);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Sample> collect_samples(const report::Report& r, Direction d) {
  std::vector<Sample> out;
  const auto pieces = pieces_by_position(r);
  for (size_t i = 0; i < r.checkpoints.size(); ++i) {
    const auto& cp = r.checkpoints[i];
    if (cp.direction != d || pieces[i]) continue;
    for (const auto& nc : cp.nodes) {
      Sample s;
      s.scale = static_cast<uint32_t>(cp.nodes.size());
      s.node = r.nodes[nc.node].node;
      s.checkpoint = cp.index;
      s.bytes = nc.record->bytes;
      s.duration_ns = nc.duration_ns();
      s.stages = nc.record->stages;
      s.bottleneck = nc.record->bottleneck;
      auto rpcs = data_rpcs(r, nc, d);
      if (!rpcs.empty()) {
        uint64_t first = UINT64_MAX;
        uint64_t last = 0;
        RpcMeans m;
        for (const RpcCallRecord* rpc : rpcs) {
          first = std::min(first, rpc->start_ns);
          last = std::max(last, rpc->end_ns);
          s.rpc_payload += rpc->payload_bytes;
          m.add(*rpc);
        }
        s.rpcs = rpcs.size();
        s.rpc_window_ns = last - first;
        s.rpc_start_wall_ns =
            static_cast<uint64_t>(static_cast<int64_t>(first) + r.nodes[nc.node].wall_offset_ns);
        s.payload_per_rpc = static_cast<double>(s.rpc_payload) / static_cast<double>(s.rpcs);
        s.execute_ms = m.mean_ms(m.execute_ns);
        s.queue_ms = m.mean_ms(m.queue_ns);
        s.rtt_ms = m.mean_ms(m.rtt_ns);
        // Little's law over the window: the mean number in flight.
        s.in_flight = s.rpc_window_ns ? m.execute_ns / static_cast<double>(s.rpc_window_ns) : 0;
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<Measured> measure_scales(const report::Report& r, Direction d) {
  std::map<uint32_t, std::vector<const report::CheckpointReport*>> by_scale;
  const auto pieces = pieces_by_position(r);
  for (size_t i = 0; i < r.checkpoints.size(); ++i)
    if (r.checkpoints[i].direction == d && !pieces[i])
      by_scale[static_cast<uint32_t>(r.checkpoints[i].nodes.size())].push_back(&r.checkpoints[i]);
  std::vector<Measured> rows;
  for (const auto& [scale, cps] : by_scale) {
    Measured m;
    m.nodes = scale;
    m.checkpoints = static_cast<uint32_t>(cps.size());
    std::vector<double> durations;
    std::vector<double> aggregates;
    RpcMeans means;
    for (const auto* cp : cps) {
      durations.push_back(static_cast<double>(cp->duration_ns()) / kNsPerS);
      aggregates.push_back(cp->aggregate_Bps);
      for (const auto& nc : cp->nodes)
        for (const RpcCallRecord* rpc : data_rpcs(r, nc, d)) means.add(*rpc);
    }
    m.duration_s = median(durations);
    m.aggregate_Bps = median(aggregates);
    m.rpc_execute_ms = means.mean_ms(means.execute_ns);
    m.rpc_queue_ms = means.mean_ms(means.queue_ns);
    m.rpc_rtt_ms = means.mean_ms(means.rtt_ns);
    m.rpcs = means.count;
    m.rpc_wait_ms = m.rpc_execute_ms;
    // The bottleneck of the checkpoint nearest the median duration.
    const auto* typical =
        *std::min_element(cps.begin(), cps.end(), [&](const auto* a, const auto* b) {
          auto off = [&](const report::CheckpointReport* c) {
            return std::abs(static_cast<double>(c->duration_ns()) / kNsPerS - m.duration_s);
          };
          return off(a) < off(b);
        });
    m.bottleneck = typical->slowest_record().bottleneck;
    rows.push_back(std::move(m));
  }
  if (!rows.empty()) {
    const Measured& base = rows.front();
    for (auto& m : rows) {
      m.efficiency = m.duration_s > 0 ? base.duration_s / m.duration_s : 0;
      m.side = m.efficiency < kSharedSideEfficiency ? "shared" : "node";
    }
  }
  charge_service(rows, 0);
  return rows;
}

void charge_service(std::vector<Measured>& rows, double service_s) {
  for (auto& m : rows) m.rpc_wait_ms = m.rpcs ? m.rpc_execute_ms - service_s * 1e3 : 0;
  for (auto& m : rows) m.rpc_wait_rise_ms = m.rpc_wait_ms - rows.front().rpc_wait_ms;
}

std::optional<uint32_t> measured_crossover(const std::vector<Measured>& rows) {
  for (const auto& m : rows)
    if (m.side == "shared") return m.nodes;
  return std::nullopt;
}

}  // namespace ckpt::projection
