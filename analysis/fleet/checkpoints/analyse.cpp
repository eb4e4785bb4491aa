// analyse() (checkpoints.h): the queries, and the rules that turn their
// answers into checkpoints. docs/fleet/checkpoints.md explains each rule.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/fleet/checkpoints/checkpoints.h"
#include "analysis/fleet/checkpoints/step_series.h"
#include "analysis/fleet/common/percentile.h"

namespace ckpt::fleet::checkpoints {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ckptscope's exporter (deploy/metrics.md).
// What reached the storage (the storage stage), the figure the storage's
// maximum is for; exporters from before that stage have only what the job's
// calls moved (host_io), the page cache's share included.
constexpr const char* kCkptStorageBytes = R"(ckptscope_checkpoint_bytes_total{stage="storage"})";
constexpr const char* kCkptBytes = R"(ckptscope_checkpoint_bytes_total{stage="host_io"})";
constexpr const char* kCkptDurationSum = "ckptscope_checkpoint_duration_seconds_sum";
constexpr const char* kCkptDurationCount = "ckptscope_checkpoint_duration_seconds_count";
constexpr const char* kCkptQueueSum = "ckptscope_rpc_queue_seconds_sum";
constexpr const char* kCkptQueueCount = "ckptscope_rpc_queue_seconds_count";
constexpr const char* kCkptBacklog = "avg(ckptscope_rpc_backlog_depth)";
constexpr const char* kCkptTcpBacklog = "sum(ckptscope_tcp_backlog_bytes)";
constexpr const char* kCkptMax = "ckptscope_storage_max_bytes_per_second";
// node_exporter's mountstats collector (collector/mountstats_linux.go).
constexpr const char* kNfsReadBytes = "node_mountstats_nfs_total_read_bytes_total";
constexpr const char* kNfsWriteBytes = "node_mountstats_nfs_total_write_bytes_total";
constexpr const char* kNfsQueueTime = "node_mountstats_nfs_operations_queue_time_seconds_total";
constexpr const char* kNfsRequests = "node_mountstats_nfs_operations_requests_total";
constexpr const char* kNfsBacklog = "node_mountstats_nfs_transport_backlog_queue_total";
constexpr const char* kNfsSending = "node_mountstats_nfs_transport_sending_queue_total";
constexpr const char* kNfsSends = "node_mountstats_nfs_transport_sends_total";

std::string label(const Labels& labels, const std::string& name) {
  auto it = labels.find(name);
  return it == labels.end() ? std::string() : it->second;
}

// Per-step fleet aggregates: everything the report needs, nothing per series.
struct Aggregates {
  explicit Aggregates(size_t n)
      : load_bytes(n),
        save_bytes(n),
        queue_sum(n),
        queue_count(n),
        backlog_num(n),
        backlog_den(n),
        tcp_num(n),
        tcp_den(n) {}
  std::vector<double> load_bytes, save_bytes;
  std::vector<double> queue_sum, queue_count;
  std::vector<double> backlog_num, backlog_den;
  std::vector<double> tcp_num, tcp_den;
};

class Reader {
 public:
  Reader(const PrometheusClient& client, const StepGrid& grid) : client_(client), grid_(grid) {}

  [[nodiscard]] TimeRange range() const { return {grid_.from_s, grid_.time_at(grid_.last)}; }

  Expected<void> counter(const std::string& promql, const CounterIncreases::Sink& sink) const {
    CounterIncreases increases(grid_);
    return client_.query_range(promql, range(), grid_.step_s,
                               [&](const SeriesChunk& chunk) -> Expected<void> {
                                 increases.add(chunk, sink);
                                 return {};
                               });
  }
  Expected<void> counter_sum(const std::string& promql, std::vector<double>& into) const {
    return counter(promql, [&](const Labels&, size_t k, double v) { into[k] += v; });
  }
  // A gauge aggregated by the server: each step's value into num, 1 into den.
  Expected<void> gauge(const std::string& promql, std::vector<double>& num,
                       std::vector<double>& den) const {
    return client_.query_range(
        promql, range(), grid_.step_s, [&](const SeriesChunk& chunk) -> Expected<void> {
          for (const auto& s : chunk.samples) {
            const long long k = grid_.index_of(s.time_s);
            if (k < 0 || k > static_cast<long long>(grid_.last) || !std::isfinite(s.value))
              continue;
            num[k] += s.value;
            den[k] += 1;
          }
          return {};
        });
  }
  Expected<bool> present(const std::vector<std::string>& selectors) const {
    auto found = client_.series(selectors, range());
    if (!found) return found.error();
    return !found->empty();
  }

 private:
  const PrometheusClient& client_;
  StepGrid grid_;
};

struct Span {
  double start = 0, end = 0, bytes = 0;
  std::set<std::string> nodes;
};

// ckptscope: each node's checkpoint closes with its bytes; its duration comes
// from the duration histogram's _sum/_count increase in the same step on the
// same node. Spans of one workload and direction that overlap or lie within
// merge_gap_s of each other are one fleet checkpoint.
Expected<std::vector<Checkpoint>> read_ckptscope(const Reader& reader, const StepGrid& grid,
                                                 const Options& options, Aggregates& agg,
                                                 std::vector<std::string>& notes) {
  // Checkpoints are what the jobs' calls moved (host_io); the bandwidth set
  // against the storage's maximum is what reached it (the storage stage),
  // where the exporters have that stage.
  auto storage_stage = reader.present({kCkptStorageBytes});
  if (!storage_stage) return storage_stage.error();
  if (!*storage_stage)
    notes.push_back(fmt::format(
        "no {} in the range (exporters from before the storage stage): the bandwidth is what the "
        "jobs' calls moved ({}), the page cache's share included, so a load the cache served "
        "reads above the storage's maximum",
        kCkptStorageBytes, kCkptBytes));
  using StepKey = std::tuple<std::string, std::string, std::string, size_t>;
  std::map<StepKey, double> reached;  // instance, workload, direction, step
  if (*storage_stage) {
    auto read = reader.counter(kCkptStorageBytes, [&](const Labels& l, size_t k, double v) {
      reached[{label(l, "instance"), label(l, "workload"), label(l, "direction"), k}] += v;
    });
    if (!read) return read.error();
  }
  struct Closed {
    size_t step;
    std::string instance, workload, direction;
    double bytes;
  };
  std::vector<Closed> closed;
  auto ok = reader.counter(kCkptBytes, [&](const Labels& l, size_t k, double v) {
    closed.push_back({k, label(l, "instance"), label(l, "workload"), label(l, "direction"), v});
  });
  if (!ok) return ok.error();
  using Key = std::tuple<std::string, std::string, size_t>;  // instance, direction, step
  std::map<Key, std::pair<double, double>> durations;        // sum, count
  ok = reader.counter(kCkptDurationSum, [&](const Labels& l, size_t k, double v) {
    durations[{label(l, "instance"), label(l, "direction"), k}].first += v;
  });
  if (!ok) return ok.error();
  ok = reader.counter(kCkptDurationCount, [&](const Labels& l, size_t k, double v) {
    durations[{label(l, "instance"), label(l, "direction"), k}].second += v;
  });
  if (!ok) return ok.error();

  size_t without_duration = 0;
  std::map<std::pair<std::string, std::string>, std::vector<Span>> spans;  // workload, direction
  for (const auto& c : closed) {
    if (c.direction != "load" && c.direction != "save") continue;
    double duration = grid.step_s;
    auto it = durations.find({c.instance, c.direction, c.step});
    if (it != durations.end() && it->second.second > 0) {
      // Clamped as spread_bytes clamps it: _count rising while _sum does not
      // gives 0, and the span must still cover its close step.
      duration = span_duration_s(it->second.first / it->second.second);
    } else {
      ++without_duration;
    }
    double to_storage = c.bytes;
    if (*storage_stage) {
      auto r = reached.find({c.instance, c.workload, c.direction, c.step});
      to_storage = r == reached.end() ? 0.0 : r->second;
    }
    spread_bytes(grid, {c.step, to_storage, duration},
                 c.direction == "load" ? agg.load_bytes : agg.save_bytes);
    const double end = grid.time_at(c.step);
    spans[{c.workload, c.direction}].push_back({end - duration, end, c.bytes, {c.instance}});
  }
  if (without_duration > 0)
    notes.push_back(fmt::format(
        "{} node checkpoint(s) had no ckptscope_checkpoint_duration_seconds increase on their node "
        "in their step: their bytes were spread over one step",
        without_duration));

  std::vector<Checkpoint> out;
  for (auto& [key, list] : spans) {
    std::sort(list.begin(), list.end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
    std::vector<Span> merged;
    for (auto& s : list) {
      if (!merged.empty() && s.start <= merged.back().end + options.merge_gap_s) {
        merged.back().end = std::max(merged.back().end, s.end);
        merged.back().bytes += s.bytes;
        merged.back().nodes.insert(s.nodes.begin(), s.nodes.end());
      } else {
        merged.push_back(std::move(s));
      }
    }
    for (const auto& m : merged) {
      Checkpoint c;
      c.workload = key.first;
      c.direction = key.second;
      c.nodes = static_cast<int>(m.nodes.size());
      c.start_unix_s = m.start;
      c.end_unix_s = m.end;
      c.bytes = m.bytes;
      out.push_back(std::move(c));
    }
  }

  if (!(ok = reader.counter_sum(kCkptQueueSum, agg.queue_sum))) return ok.error();
  if (!(ok = reader.counter_sum(kCkptQueueCount, agg.queue_count))) return ok.error();
  if (!(ok = reader.gauge(kCkptBacklog, agg.backlog_num, agg.backlog_den))) return ok.error();
  if (!(ok = reader.gauge(kCkptTcpBacklog, agg.tcp_num, agg.tcp_den))) return ok.error();
  return out;
}

// mountstats: the fleet's NFS bytes per step; a checkpoint is a burst of one
// direction's aggregate bandwidth above burst_fraction of the maximum (of the
// range's peak when the maximum is unknown), bursts merge_gap_s apart or less
// merged.
Expected<std::vector<Checkpoint>> read_mountstats(const Reader& reader, const StepGrid& grid,
                                                  const Options& options,
                                                  const DirectionMax& load_max,
                                                  const DirectionMax& save_max, Aggregates& agg,
                                                  std::vector<std::string>& notes) {
  Expected<void> ok;
  if (!(ok = reader.counter_sum(kNfsReadBytes, agg.load_bytes))) return ok.error();
  if (!(ok = reader.counter_sum(kNfsWriteBytes, agg.save_bytes))) return ok.error();
  if (!(ok = reader.counter_sum(kNfsQueueTime, agg.queue_sum))) return ok.error();
  if (!(ok = reader.counter_sum(kNfsRequests, agg.queue_count))) return ok.error();
  // ckptscope_rpc_backlog_depth's definition: (Δbklog_u + Δsending_u) / Δsends.
  if (!(ok = reader.counter_sum(kNfsBacklog, agg.backlog_num))) return ok.error();
  if (!(ok = reader.counter_sum(kNfsSending, agg.backlog_num))) return ok.error();
  if (!(ok = reader.counter_sum(kNfsSends, agg.backlog_den))) return ok.error();

  std::vector<Checkpoint> out;
  // Clamped before the cast: a --merge-gap of many ranges merges everything.
  const auto gap_steps = static_cast<size_t>(
      std::min(std::floor(options.merge_gap_s / grid.step_s), static_cast<double>(grid.size())));
  for (const auto& [direction, bytes, max] : {std::tuple{"load", &agg.load_bytes, &load_max},
                                              std::tuple{"save", &agg.save_bytes, &save_max}}) {
    const double peak = *std::max_element(bytes->begin(), bytes->end());
    const double reference = max->bytes_per_second ? *max->bytes_per_second * grid.step_s : peak;
    if (!max->bytes_per_second && peak > 0)
      notes.push_back(
          fmt::format("{}: no storage maximum, so bursts are steps above {} of the "
                      "range's peak",
                      direction, options.burst_fraction));
    for (const auto& [first, last] :
         find_bursts(*bytes, options.burst_fraction * reference, gap_steps)) {
      Checkpoint c;
      c.direction = direction;
      c.start_unix_s = grid.time_at(first - 1);
      c.end_unix_s = grid.time_at(last);
      for (size_t k = first; k <= last; ++k) c.bytes += (*bytes)[k];
      out.push_back(std::move(c));
    }
  }
  return out;
}

Expected<DirectionMax> resolve_max(const PrometheusClient& client, const TimeRange& range,
                                   const std::optional<double>& flag,
                                   const std::string& direction) {
  if (flag) return DirectionMax{flag, "flag"};
  const double window = std::max(1.0, std::ceil(range.to_s - range.from_s));
  auto found = client.query(
      fmt::format(R"(max(max_over_time({}{{direction="{}"}}[{}s])))", kCkptMax, direction, window),
      range.to_s);
  if (!found) return found.error();
  for (const auto& s : *found)
    if (!s.samples.empty() && std::isfinite(s.samples[0].value) && s.samples[0].value > 0)
      return DirectionMax{s.samples[0].value, kCkptMax};
  return DirectionMax{std::nullopt, "unknown"};
}

Percentiles percentiles(const std::vector<double>& values) {
  Percentiles p;
  if (values.empty()) return {kNaN, kNaN, kNaN, kNaN, kNaN};
  double sum = 0;
  for (double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  p.p50 = percentile_nearest_rank(values, 0.50);
  p.p90 = percentile_nearest_rank(values, 0.90);
  p.p99 = percentile_nearest_rank(values, 0.99);
  p.max = *std::max_element(values.begin(), values.end());
  return p;
}

double ratio(double num, double den) { return den > 0 ? num / den : kNaN; }

}  // namespace

Expected<Report> analyse(const PrometheusClient& client, const Options& options) {
  if (!(options.range.to_s > options.range.from_s))
    return make_error("the time range is empty: --to must be after --from");
  if (!(options.step_s > 0)) return make_error("--step must be positive");
  if (!(options.merge_gap_s >= 0) || !std::isfinite(options.merge_gap_s))
    return make_error(
        fmt::format("--merge-gap {} s: must be finite and not negative", options.merge_gap_s));
  auto made_grid = make_grid(options.range, options.step_s);
  if (!made_grid) return made_grid.error();
  const StepGrid grid = *made_grid;
  if (grid.last < 1)
    return make_error(
        fmt::format("the range holds one evaluation time at step {} s: make it at "
                    "least two steps long",
                    options.step_s));
  Reader reader(client, grid);
  Report report;
  report.prometheus_url = client.url();
  report.range = reader.range();
  report.step_s = grid.step_s;

  Source source = options.source;
  if (source == Source::kAuto || source == Source::kCkptscope) {
    auto has = reader.present({kCkptBytes});
    if (!has) return has.error();
    if (*has)
      source = Source::kCkptscope;
    else if (source == Source::kCkptscope)
      return make_error(fmt::format("{} has no {} in the range: is ckptscope's exporter scraped?",
                                    client.url(), kCkptBytes));
  }
  if (source == Source::kAuto || source == Source::kMountstats) {
    auto has = reader.present({kNfsReadBytes, kNfsWriteBytes});
    if (!has) return has.error();
    if (!*has)
      return make_error(fmt::format(
          "{} has no {} between {} and {} (Unix s): nothing to analyse", client.url(),
          options.source == Source::kMountstats
              ? fmt::format("node_exporter mountstats byte counters ({}, {})", kNfsReadBytes,
                            kNfsWriteBytes)
              : fmt::format("ckptscope exporter metrics ({}) nor node_exporter mountstats "
                            "metrics ({}, {})",
                            kCkptBytes, kNfsReadBytes, kNfsWriteBytes),
          report.range.from_s, report.range.to_s));
    source = Source::kMountstats;
  }
  report.source = source == Source::kCkptscope ? "ckptscope" : "mountstats";

  auto load_max = resolve_max(client, report.range, options.read_max_bytes_per_second, "load");
  if (!load_max) return load_max.error();
  auto save_max = resolve_max(client, report.range, options.write_max_bytes_per_second, "save");
  if (!save_max) return save_max.error();
  report.load_max = *load_max;
  report.save_max = *save_max;
  for (const auto& [name, max, flag] :
       {std::tuple{"load", &report.load_max, "--storage-read-max"},
        std::tuple{"save", &report.save_max, "--storage-write-max"}})
    if (!max->bytes_per_second)
      report.notes.push_back(
          fmt::format("no storage maximum for {}s ({} not given, no {}{{direction=\"{}\"}}): "
                      "fractions are null",
                      name, flag, kCkptMax, name));

  Aggregates agg(grid.size());
  auto checkpoints = source == Source::kCkptscope
                         ? read_ckptscope(reader, grid, options, agg, report.notes)
                         : read_mountstats(reader, grid, options, report.load_max, report.save_max,
                                           agg, report.notes);
  if (!checkpoints) return checkpoints.error();
  report.checkpoints = std::move(*checkpoints);
  std::sort(report.checkpoints.begin(), report.checkpoints.end(),
            [](const Checkpoint& a, const Checkpoint& b) {
              return std::tie(a.start_unix_s, a.direction) < std::tie(b.start_unix_s, b.direction);
            });
  if (report.checkpoints.empty()) report.notes.push_back("no checkpoint in the range");

  // The timeline, and which steps lie in any checkpoint ("outside" is the rest).
  auto& tl = report.timeline;
  std::vector<bool> in_checkpoint(grid.size(), false);
  for (const auto& c : report.checkpoints) {
    auto [first, last] = steps_overlapping(grid, c.start_unix_s, c.end_unix_s);
    for (size_t k = first; k <= last; ++k) in_checkpoint[k] = true;
  }
  const bool has_tcp = source == Source::kCkptscope;
  for (size_t k = 0; k < grid.size(); ++k) {
    tl.time_unix_s.push_back(grid.time_at(k));
    tl.load_bytes_per_second.push_back(k == 0 ? kNaN : agg.load_bytes[k] / grid.step_s);
    tl.save_bytes_per_second.push_back(k == 0 ? kNaN : agg.save_bytes[k] / grid.step_s);
    tl.rpc_queue_seconds_per_rpc.push_back(ratio(agg.queue_sum[k], agg.queue_count[k]));
    tl.rpc_backlog.push_back(ratio(agg.backlog_num[k], agg.backlog_den[k]));
    tl.tcp_backlog_bytes.push_back(has_tcp ? ratio(agg.tcp_num[k], agg.tcp_den[k]) : kNaN);
  }
  auto outside = [&](const std::vector<double>& num, const std::vector<double>& den) {
    double n = 0, d = 0;
    for (size_t k = 1; k < grid.size(); ++k)
      if (!in_checkpoint[k]) n += num[k], d += den[k];
    return ratio(n, d);
  };
  const double queue_outside = outside(agg.queue_sum, agg.queue_count);
  const double backlog_outside = outside(agg.backlog_num, agg.backlog_den);
  const double tcp_outside = outside(agg.tcp_num, agg.tcp_den);
  for (auto& c : report.checkpoints) {
    auto [first, last] = steps_overlapping(grid, c.start_unix_s, c.end_unix_s);
    const bool load = c.direction == "load";
    const auto& bw = load ? tl.load_bytes_per_second : tl.save_bytes_per_second;
    const auto& max = load ? report.load_max : report.save_max;
    std::vector<double> values(bw.begin() + static_cast<long>(first),
                               bw.begin() + static_cast<long>(last) + 1);
    c.bytes_per_second = percentiles(values);
    if (max.bytes_per_second) {
      for (double& v : values) v /= *max.bytes_per_second;
      c.fraction_of_max = percentiles(values);
    }
    double qs = 0, qc = 0, bn = 0, bd = 0, tn = 0, td = 0;
    for (size_t k = first; k <= last; ++k) {
      qs += agg.queue_sum[k], qc += agg.queue_count[k];
      bn += agg.backlog_num[k], bd += agg.backlog_den[k];
      tn += agg.tcp_num[k], td += agg.tcp_den[k];
    }
    c.rpc_queue_seconds_per_rpc = {ratio(qs, qc), queue_outside};
    c.rpc_backlog = {ratio(bn, bd), backlog_outside};
    if (has_tcp) c.tcp_backlog_bytes = DuringOutside{ratio(tn, td), tcp_outside};
  }
  return report;
}

}  // namespace ckpt::fleet::checkpoints
