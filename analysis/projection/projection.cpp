// project(): the samples calibrated one by one, then the model run forward
// to each N (docs/projection.md).
#include "analysis/projection/projection.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/format.h"
#include "analysis/projection/mva.h"
#include "analysis/projection/observations.h"
#include "analysis/projection/shares.h"
#include "analysis/projection/spread.h"
#include "model/vocabulary.h"

namespace ckpt::projection {
namespace {

// Stages whose time is the RPCs' (they stretch as the node's RPC window
// does); the others are the node's own and stay as measured.
bool stretches(std::string_view stage) {
  return stage == kStageHostIo || stage == kStageNfsClient || stage == kStageRpcQueue ||
         stage == kStageRpcRtt || stage == kStageTransport;
}

// One sample's calibrated model: its node's delay per RPC, fitted so that
// the network at its own scale moves its RPCs in its window.
class SampleModel {
 public:
  SampleModel(const Sample& s, double service_s)
      : s_(&s),
        service_s_(service_s),
        window_s_(static_cast<double>(s.rpc_window_ns) / kNsPerS),
        duration_s_(static_cast<double>(s.duration_ns) / kNsPerS),
        calibration_(calibrate_delay(
            static_cast<double>(s.scale) * s.in_flight,
            static_cast<double>(s.scale) * static_cast<double>(s.rpcs) / window_s_, service_s)),
        ladder_(calibration_.delay_s, service_s) {}

  struct At {
    double duration_s = 0;
    double window_s = 0;
    double execute_s = 0;
    double utilisation = 0;
  };

  At at(double nodes) {
    const MvaPoint p = ladder_.at(nodes * s_->in_flight);
    At a;
    const double per_node = p.throughput / nodes;
    a.window_s = per_node > 0 ? static_cast<double>(s_->rpcs) / per_node : window_s_;
    // The RPCs' window stretches; the rest of the checkpoint is the node's
    // own (its CPU, its page cache) and stays. (The window may reach past
    // the checkpoint's calls, e.g. readahead: so not duration - window + ...
    // clamped at 0, which would not give the measurement back.)
    // Never below the shared side's time for all N nodes' payload.
    a.duration_s = std::max(duration_s_ + (a.window_s - window_s_),
                            nodes * static_cast<double>(s_->rpcs) * service_s_);
    a.execute_s = p.cycle_s;
    a.utilisation = std::min(1.0, p.utilisation);
    return a;
  }

  // The smallest N whose efficiency is below kSharedSideEfficiency.
  std::optional<uint32_t> crossover() {
    const double one = at(1).duration_s;
    for (uint32_t n = 1; n <= kMaxCrossoverNodes; ++n)
      if (one / at(n).duration_s < kSharedSideEfficiency) return n;
    return std::nullopt;
  }

  [[nodiscard]] const Sample& sample() const { return *s_; }
  [[nodiscard]] double window_s() const { return window_s_; }
  [[nodiscard]] double delay_s() const { return calibration_.delay_s; }
  [[nodiscard]] bool reachable() const { return calibration_.reachable; }
  [[nodiscard]] double service_s() const { return service_s_; }

 private:
  const Sample* s_;
  double service_s_;
  double window_s_;
  double duration_s_;
  Calibration calibration_;
  MvaLadder ladder_;
};

std::string direction_flag(Direction d) {
  return d == Direction::Save ? "--storage-write-max" : "--storage-read-max";
}

// The shared maximum the traces' config gives (report's resolution, minus a
// node's own calibration, which is not the shared side's).
std::optional<std::pair<double, std::string>> config_maximum(const report::Report& r, Direction d) {
  for (const auto& cp : r.checkpoints)
    if (cp.direction == d && cp.storage_max_Bps && cp.storage_max_source.rfind("config:", 0) == 0)
      return std::make_pair(*cp.storage_max_Bps, cp.storage_max_source);
  return std::nullopt;
}

// The median job duration the model gives at `nodes` from the samples at
// the smallest scale, each calibrated with `service_s`.
double predicted_median(const std::vector<Sample>& base, double service_s, double nodes) {
  std::vector<double> d;
  d.reserve(base.size());
  for (const auto& s : base) d.push_back(SampleModel(s, service_s).at(nodes).duration_s);
  return median(d);
}

// The service time per RPC that makes the smallest scale's samples predict
// the largest scale's measured median duration; nullopt when the traces do
// not show the shared side (they scale as if it were not there).
std::optional<double> fit_service(const std::vector<Sample>& samples,
                                  const std::vector<Measured>& rows) {
  if (rows.size() < 2) return std::nullopt;
  const Measured& far = rows.back();
  if (far.efficiency >= 0.95) return std::nullopt;
  std::vector<Sample> base;
  for (const auto& s : samples)
    if (s.scale == rows.front().nodes) base.push_back(s);
  if (base.empty()) return std::nullopt;
  // Utilisation cannot pass 1 at the largest scale: D <= 1 / X there.
  double rpcs_far = 0;
  double window_far = 0;
  for (const auto& s : samples)
    if (s.scale == far.nodes) {
      rpcs_far += static_cast<double>(s.rpcs);
      window_far = std::max(window_far, static_cast<double>(s.rpc_window_ns) / kNsPerS);
    }
  if (rpcs_far <= 0 || window_far <= 0) return std::nullopt;
  double lo = 0;
  double hi = window_far / rpcs_far;
  const double target = far.duration_s;
  if (predicted_median(base, hi, far.nodes) < target) return std::nullopt;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (predicted_median(base, mid, far.nodes) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

void project_direction(const report::Report& r, const ProjectionOptions& o,
                       DirectionProjection& dp) {
  const Direction d = dp.direction;
  std::vector<std::string> pieces;
  for (const Piece& p : find_pieces(r, d))
    pieces.push_back(fmt::format("#{} ({}) of #{}", p.index, fmt::join(p.nodes, ", "), p.of));
  if (!pieces.empty())
    dp.notes.push_back(fmt::format(
        "left out, a piece of another checkpoint (its nodes' checkpoints split by a pause longer "
        "than the quiet gap), not one at a smaller scale: {}",
        fmt::join(pieces, "; ")));
  std::vector<Sample> all = collect_samples(r, d);
  std::vector<Sample> with_rpcs;
  std::vector<std::string> without;
  for (auto& s : all) {
    if (s.rpcs > 0 && s.rpc_window_ns > 0 && s.in_flight > 0)
      with_rpcs.push_back(s);
    else
      without.push_back(fmt::format("{} #{}", s.node, s.checkpoint));
  }
  dp.shared_stage = std::string(kStageRpcRtt);
  if (with_rpcs.empty()) {
    dp.why = fmt::format(
        "no NFS {} RPC carried these checkpoints' pages (local storage, or the NFS probes did not "
        "run): the traces show no shared side to project",
        d == Direction::Save ? kRpcWrite : kRpcRead);
    dp.measured = measure_scales(r, d);
    dp.measured_crossover = measured_crossover(dp.measured);
    dp.samples = std::move(all);
    return;
  }
  if (!without.empty())
    dp.notes.push_back(fmt::format("left out, no NFS RPC seen: {}", fmt::join(without, ", ")));
  dp.samples = std::move(with_rpcs);

  std::vector<double> bytes;
  std::vector<double> in_flight;
  std::vector<double> payload;
  for (const auto& s : dp.samples) {
    bytes.push_back(static_cast<double>(s.bytes));
    in_flight.push_back(s.in_flight);
    payload.push_back(s.payload_per_rpc);
  }
  dp.bytes_per_node = static_cast<uint64_t>(median(bytes));
  dp.in_flight_per_node = median(in_flight);
  const double bmin = *std::min_element(bytes.begin(), bytes.end());
  const double bmax = *std::max_element(bytes.begin(), bytes.end());
  if (bmax > 1.1 * bmin)
    dp.notes.push_back(fmt::format(
        "nodes moved from {} to {} per checkpoint: the model assumes one job shape per node, so "
        "the range is wide",
        format_bytes(static_cast<uint64_t>(bmin)), format_bytes(static_cast<uint64_t>(bmax))));

  // The shared side's maximum.
  const auto& flag = d == Direction::Save ? o.storage_write_max_Bps : o.storage_read_max_Bps;
  std::vector<Measured> rows = measure_scales(r, d);
  if (flag) {
    dp.shared_max_Bps = *flag;
    dp.shared_max_source =
        d == Direction::Save ? o.storage_write_max_source : o.storage_read_max_source;
  } else if (auto c = config_maximum(r, d)) {
    dp.shared_max_Bps = c->first;
    dp.shared_max_source = c->second;
  } else if (auto fitted = fit_service(dp.samples, rows)) {
    dp.shared_max_Bps = median(payload) / *fitted;
    dp.shared_max_source =
        fmt::format("fitted from N={} and N={}", rows.front().nodes, rows.back().nodes);
  } else {
    std::set<uint32_t> scales;
    for (const auto& m : rows) scales.insert(m.nodes);
    dp.why = fmt::format(
        "the shared side's maximum is unknown and the traces (N={}) do not show it: they scale "
        "as if it were not there. Give {} (or storage.{}_bandwidth in --config), or add traces "
        "of a larger run",
        fmt::join(scales, ","), direction_flag(d), d == Direction::Save ? "write" : "read");
    dp.measured_crossover = measured_crossover(rows);
    dp.measured = std::move(rows);
    return;
  }
  const double service_s = median(payload) / *dp.shared_max_Bps;
  dp.service_ms = service_s * 1e3;
  charge_service(rows, service_s);
  dp.measured = std::move(rows);
  dp.measured_crossover = measured_crossover(dp.measured);
  const uint32_t base_scale = dp.measured.empty() ? 1 : dp.measured.front().nodes;

  std::vector<SampleModel> models;
  models.reserve(dp.samples.size());
  std::vector<double> delays;
  size_t uneven = 0;
  // Per job checkpoint: its nodes' payload over the span of their RPCs.
  std::map<uint64_t, std::pair<double, std::pair<uint64_t, uint64_t>>> by_checkpoint;
  for (auto& s : dp.samples) {
    models.emplace_back(s, s.payload_per_rpc / *dp.shared_max_Bps);
    s.node_delay_ms = models.back().delay_s() * 1e3;
    s.above_max = !models.back().reachable();
    uneven += s.above_max ? 1 : 0;
    delays.push_back(s.node_delay_ms);
    auto [it, fresh] = by_checkpoint.try_emplace(
        s.checkpoint, 0.0, std::make_pair(s.rpc_start_wall_ns, s.rpc_start_wall_ns));
    it->second.first += static_cast<double>(s.rpc_payload);
    it->second.second.first = std::min(it->second.second.first, s.rpc_start_wall_ns);
    it->second.second.second =
        std::max(it->second.second.second, s.rpc_start_wall_ns + s.rpc_window_ns);
  }
  dp.node_delay_ms = median(delays);
  std::vector<std::string> above;
  for (const auto& [index, totals] : by_checkpoint) {
    const double span_s = static_cast<double>(totals.second.second - totals.second.first) / kNsPerS;
    // 2%: the RPCs' own ends are not the server's.
    if (span_s > 0 && totals.first / span_s > 1.02 * *dp.shared_max_Bps)
      above.push_back(fmt::format("#{} ({})", index, format_bandwidth(totals.first / span_s)));
  }
  if (!above.empty())
    dp.notes.push_back(fmt::format(
        "checkpoint {} moved more than the shared maximum ({}) allows: the maximum is too low, "
        "so the forecast is pessimistic",
        fmt::join(above, ", "), format_bandwidth(*dp.shared_max_Bps)));
  else if (uneven > 0)
    dp.notes.push_back(fmt::format(
        "{} of {} node checkpoints ran faster than an even share of the shared maximum (the "
        "nodes' shares were uneven): their node time is taken as 0",
        uneven, dp.samples.size()));
  if (base_scale > 1)
    dp.notes.push_back(fmt::format(
        "the smallest measured scale is {} nodes: efficiency is relative to the model's one node",
        base_scale));

  std::vector<double> crossings;
  size_t none = 0;
  for (auto& m : models) {
    if (auto c = m.crossover())
      crossings.push_back(*c);
    else
      ++none;
  }
  if (none * 2 < models.size()) {
    Range c = span_of(crossings);
    dp.crossover = static_cast<uint32_t>(std::lround(c.value));
    dp.crossover_low = static_cast<uint32_t>(c.low);
    dp.crossover_high =
        none ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(c.high));
  } else {
    dp.notes.push_back(fmt::format("the shared side does not hold a checkpoint back below {} nodes",
                                   kMaxCrossoverNodes));
  }

  // The stitcher's bottleneck of the sample nearest the median duration.
  std::vector<double> durations;
  for (const auto& s : dp.samples) durations.push_back(static_cast<double>(s.duration_ns));
  const double typical_ns = median(durations);
  const Sample& typical = *std::min_element(
      dp.samples.begin(), dp.samples.end(), [&](const Sample& a, const Sample& b) {
        return std::abs(static_cast<double>(a.duration_ns) - typical_ns) <
               std::abs(static_cast<double>(b.duration_ns) - typical_ns);
      });

  // Each sample's model at one node: the baselines of efficiency and the
  // node's own RPC rate.
  std::vector<double> one_s;
  std::vector<double> own_rate;
  for (auto& m : models) {
    const auto one = m.at(1);
    one_s.push_back(one.duration_s);
    own_rate.push_back(static_cast<double>(m.sample().rpcs) / one.window_s);
  }
  // The wait's rise starts from the wait the traces measured at their
  // smallest scale, the mean the measured rows' rise starts from
  // (projection.h). Taken from each sample's own model at that scale, as it
  // once was, it cancelled the samples' differences in RPCs in flight, which
  // scale a checkpoint's whole wait (docs/projection.md, "Uncertainty").
  const double base_execute_ms = dp.measured.empty() ? 0.0 : dp.measured.front().rpc_execute_ms;
  // By Little's law an RPC's mean execute is the RPCs in flight times the
  // window over the RPCs, so it moves with the in-flight count as much as
  // with the queue. That count is the client's (readahead, dirty pages and
  // slots), an average of a whole number: a checkpoint can settle a whole RPC
  // lower or higher than its samples did, all of its nodes together (the
  // VM's loads: 9.9 to 11.3 READs in flight per node checkpoint over five
  // runs, and one run's four N=4 nodes at 10.0 against its samples' 11.0).
  // The execute's and the wait's ranges hold a new checkpoint's count as far
  // as the samples' own prediction interval, and at least one RPC either way.
  std::vector<double> flights;
  for (const auto& s : dp.samples) flights.push_back(s.in_flight);
  const Range flight_range = prediction_range(flights);
  const double flight_half = std::max({flight_range.high - flight_range.value,
                                       flight_range.value - flight_range.low, kInFlightResolution});
  for (uint32_t n : o.nodes) {
    Forecast f;
    f.nodes = n;
    std::vector<double> dur, agg, frac, wait, exec, eff, util;
    // What the shared side's split among the nodes makes of each sample
    // (shares.h): the ranges hold these too.
    std::vector<double> split_dur, split_agg, split_frac, split_eff;
    std::vector<double> split_exec, split_wait, split_util;
    std::map<std::string, std::vector<double>> stage_busy;
    for (size_t i = 0; i < models.size(); ++i) {
      SampleModel& m = models[i];
      const auto at = m.at(n);
      const double service = m.service_s();
      dur.push_back(at.duration_s);
      const double a =
          static_cast<double>(n) * static_cast<double>(m.sample().bytes) / at.duration_s;
      agg.push_back(a);
      frac.push_back(a / *dp.shared_max_Bps);
      exec.push_back(at.execute_s * 1e3);
      wait.push_back((at.execute_s - service) * 1e3);
      // An execute at this sample's count, and at a count flight_half away.
      const double k = m.sample().in_flight;
      auto add_execute = [&](double e) {
        for (double scale : {1.0, (k - flight_half) / k, (k + flight_half) / k}) {
          const double es = e * std::max(scale, 0.0);
          split_exec.push_back(es * 1e3);
          split_wait.push_back((es - service) * 1e3);
        }
      };
      add_execute(at.execute_s);
      eff.push_back(one_s[i] / at.duration_s);
      util.push_back(at.utilisation);
      {
        const Sample& smp = m.sample();
        const double rpcs = static_cast<double>(smp.rpcs);
        const Shares sh = split_shares(n, rpcs, own_rate[i], 1.0 / service);
        const double measured_s = static_cast<double>(smp.duration_ns) / kNsPerS;
        // A job's duration under a split, and what it makes of this sample's
        // bytes and its own one-node duration.
        auto add_duration = [&](double d) {
          split_dur.push_back(d);
          const double a = static_cast<double>(n) * static_cast<double>(smp.bytes) / d;
          split_agg.push_back(std::min(a, *dp.shared_max_Bps));
          split_frac.push_back(std::min(1.0, a / *dp.shared_max_Bps));
          split_eff.push_back(std::min(1.0, one_s[i] / d));
        };
        auto add = [&](double window_s, bool job_end) {
          const double d = std::max(measured_s + (window_s - m.window_s()),
                                    static_cast<double>(n) * rpcs * service);
          if (job_end) add_duration(d);
          const double e = smp.in_flight * window_s / rpcs;
          add_execute(e);
        };
        add(sh.even_window_s, true);
        if (sh.in_turn_mean_s) add(*sh.in_turn_mean_s, false);
        if (sh.in_turn_last_s) {
          add_duration(measured_s + (*sh.in_turn_last_s - m.window_s()));
          // The wait reaches as far as the duration does: a node whose
          // RPCs end as late as the last node's waited that long (at N=8 in
          // the VM two nodes got less than an even share, the shared link
          // idled in the tail, and the mean wait rose above the even split's).
          add(*sh.in_turn_last_s, false);
        }
        split_util.push_back(
            std::min(1.0, static_cast<double>(n) * rpcs / sh.even_window_s * service));
      }
      const double stretch = at.window_s / m.window_s();
      for (const auto& st : m.sample().stages)
        stage_busy[st.name].push_back(static_cast<double>(st.busy_ns) / kNsPerS *
                                      (stretches(st.name) ? stretch : 1.0));
    }
    f.duration_s = widened(prediction_range(dur), split_dur);
    f.aggregate_Bps = widened(prediction_range(agg, 0, *dp.shared_max_Bps), split_agg);
    f.fraction_of_max = widened(prediction_range(frac, 0, 1), split_frac);
    f.rpc_execute_ms = widened(prediction_range(exec), split_exec);
    f.rpc_wait_ms = widened(prediction_range(wait), split_wait);
    // The same service is charged on both sides: the rise is the execute's.
    f.rpc_wait_rise_ms = {f.rpc_execute_ms.value - base_execute_ms,
                          f.rpc_execute_ms.low - base_execute_ms,
                          f.rpc_execute_ms.high - base_execute_ms};
    f.efficiency = widened(prediction_range(eff, 0, 1), split_eff);
    f.shared_utilisation = widened(prediction_range(util, 0, 1), split_util);
    for (std::string_view name : kAllStages)
      if (auto it = stage_busy.find(std::string(name)); it != stage_busy.end())
        f.stages.push_back({it->first, prediction_range(it->second)});
    const bool shared = f.efficiency.value < kSharedSideEfficiency;
    f.side = shared ? "shared" : "node";
    f.bottleneck = shared ? dp.shared_stage : typical.bottleneck;
    if (shared && !dp.crossover_on_grid) dp.crossover_on_grid = n;
    dp.forecasts.push_back(std::move(f));
  }
  dp.supported = true;
}

}  // namespace

Expected<Projection> project(const report::Report& r, const ProjectionOptions& o) {
  if (o.nodes.empty()) return make_error("project: no node count given (--nodes 8,16,64)");
  for (uint32_t n : o.nodes)
    if (n == 0) return make_error("project: a node count of 0 in --nodes");
  Projection p;
  p.job_name = r.job_name;
  for (const auto& t : r.traces) p.traces.push_back(t.path);
  p.nodes = o.nodes;
  std::sort(p.nodes.begin(), p.nodes.end());
  ProjectionOptions sorted = o;
  sorted.nodes = p.nodes;
  for (Direction d : {Direction::Save, Direction::Load}) {
    const bool seen =
        std::any_of(r.checkpoints.begin(), r.checkpoints.end(),
                    [&](const report::CheckpointReport& c) { return c.direction == d; });
    if (!seen) continue;
    DirectionProjection dp;
    dp.direction = d;
    project_direction(r, sorted, dp);
    p.directions.push_back(std::move(dp));
  }
  if (p.directions.empty())
    return make_error("project: the traces hold no checkpoint (nothing to project from)");
  return p;
}

Expected<std::vector<uint32_t>> parse_node_counts(const std::string& text) {
  std::vector<uint32_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(at, comma - at);
    if (item.empty())
      return make_error(fmt::format("--nodes '{}': an empty item (expected e.g. 8,16,64)", text));
    uint64_t v = 0;
    for (char c : item) {
      if (c < '0' || c > '9' || v > kMaxCrossoverNodes * 100ull)
        return make_error(
            fmt::format("--nodes '{}': '{}' is not a node count (a whole number from 1 to {})",
                        text, item, kMaxCrossoverNodes * 10));
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (v == 0 || v > kMaxCrossoverNodes * 10ull)
      return make_error(
          fmt::format("--nodes '{}': '{}' is not a node count (a whole number from 1 to {})", text,
                      item, kMaxCrossoverNodes * 10));
    out.push_back(static_cast<uint32_t>(v));
    at = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ckpt::projection
