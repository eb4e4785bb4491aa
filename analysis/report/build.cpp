// build_report: aligns the nodes' traces on the wall clock, groups their
// checkpoints into the job's checkpoints, and derives what the renderings
// show. Every rule here is in docs/report.md.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/above_max_note.h"
#include "analysis/format.h"
#include "analysis/report/report.h"
#include "analysis/report/report_internal.h"
#include "json/json_io.h"
#include "model/vocabulary.h"

namespace ckpt::report {
namespace {

uint64_t to_wall(const JobRecord& job, uint64_t mono_ns) {
  const auto offset =
      static_cast<int64_t>(job.start_wall_ns) - static_cast<int64_t>(job.start_mono_ns);
  return static_cast<uint64_t>(static_cast<int64_t>(mono_ns) + offset);
}

// Sums `bytes` into `by_via` under `via`, keeping the first-seen order
// (every node lists its interfaces in the same order).
void add_via(std::vector<std::pair<std::string, uint64_t>>& by_via, const std::string& via,
             uint64_t bytes) {
  for (auto& [name, sum] : by_via) {
    if (name != via) continue;
    sum += bytes;
    return;
  }
  by_via.emplace_back(via, bytes);
}

NodeInfo node_info(const NodeTrace& t) {
  const JobRecord& job = t.trace.job;
  NodeInfo n;
  n.node = job.node.empty() ? t.path : job.node;
  n.trace_path = t.path;
  n.kernel = job.kernel;
  n.ckptscope_version = job.ckptscope_version;
  n.start_wall_ns = job.start_wall_ns;
  n.end_wall_ns =
      job.end_mono_ns >= job.start_mono_ns ? to_wall(job, job.end_mono_ns) : job.start_wall_ns;
  n.wall_offset_ns =
      static_cast<int64_t>(job.start_wall_ns) - static_cast<int64_t>(job.start_mono_ns);
  n.exit_code = job.exit_code;
  n.exit_signal = job.exit_signal;
  n.traced = job.traced;
  n.trace_warning = job.trace_warning;
  n.probe_mode = job.probe_mode;
  n.failure = job.failure;
  n.drop_counts = t.trace.drops;
  for (const auto& d : t.trace.drops) n.drops += d.count;
  n.unrecognised_io = t.trace.unrecognised_io;
  return n;
}

// Threads that moved the checkpoint's data, and whether a main thread
// (tid == tgid) was among them: the job waited for the save.
void classify_mode(NodeCheckpoint& nc, const std::vector<const IoCallRecord*>& data_calls) {
  std::set<uint32_t> threads;
  bool main_thread = false;
  for (const IoCallRecord* c : data_calls) {
    threads.insert(c->tid);
    main_thread = main_thread || c->tid == c->tgid;
  }
  nc.writer_threads = static_cast<uint32_t>(threads.size());
  if (threads.empty()) {
    nc.synchronous = true;
    nc.mode_basis = "no data calls kept: assumed synchronous";
  } else if (main_thread) {
    nc.synchronous = true;
    nc.mode_basis = "a process's main thread moved data: the job waited";
  } else {
    nc.synchronous = false;
    nc.mode_basis = fmt::format("only background threads ({}) moved data", threads.size());
  }
}

std::optional<uint64_t> stage_busy(const CheckpointRecord& c, std::string_view name) {
  for (const auto& s : c.stages)
    if (s.name == name) return s.busy_ns;
  return std::nullopt;
}

// Synchronous: the whole window. Asynchronous: the training loop still
// waits for the copy out of GPU memory (and nothing else we measure).
uint64_t blocked(const NodeCheckpoint& nc) {
  if (nc.synchronous) return nc.duration_ns();
  return stage_busy(*nc.record, kStageGpuCopy).value_or(0);
}

uint64_t median(std::vector<uint64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Lower median: with two nodes, the faster one is the reference.
  return v[(v.size() - 1) / 2];
}

void group_checkpoints(Report& r, const ReportOptions& options) {
  struct Item {
    NodeCheckpoint nc;
    Direction direction;
  };
  std::vector<Item> items;
  for (size_t n = 0; n < r.traces.size(); ++n) {
    const Trace& t = r.traces[n].trace;
    auto& calls = r.index[n].data_calls;
    for (const auto& c : t.checkpoints) {
      NodeCheckpoint nc;
      nc.node = n;
      nc.record = &c;
      nc.start_wall_ns = to_wall(t.job, c.start_ns);
      nc.end_wall_ns = std::max(nc.start_wall_ns, to_wall(t.job, c.end_ns));
      auto it = calls.find(c.id);
      classify_mode(nc, it == calls.end() ? std::vector<const IoCallRecord*>{} : it->second);
      nc.blocked_ns = blocked(nc);
      items.push_back({std::move(nc), c.direction});
    }
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.nc.start_wall_ns < b.nc.start_wall_ns;
  });

  std::vector<CheckpointReport>& groups = r.checkpoints;
  groups.reserve(items.size());
  // The groups an item can still join, in the order they were made. Items
  // come in start order and a group starts with its first item, so a group
  // that ended (with the slack) before this item started can take none
  // after it either: it leaves the list for good. Each item then looks at
  // the groups open around it, not at every group (issue 36: that scan made
  // a report of 40,000 checkpoints quadratic).
  std::vector<size_t> open;
  for (auto& item : items) {
    std::erase_if(open, [&](size_t g) {
      return item.nc.start_wall_ns > groups[g].end_wall_ns + kGroupSlackNs;
    });
    // The overlapping group (same direction, this node not yet in it) whose
    // start is nearest.
    CheckpointReport* home = nullptr;
    uint64_t nearest = UINT64_MAX;
    for (size_t index : open) {
      CheckpointReport& g = groups[index];
      if (g.direction != item.direction) continue;
      bool has_node = std::any_of(g.nodes.begin(), g.nodes.end(),
                                  [&](const NodeCheckpoint& x) { return x.node == item.nc.node; });
      if (has_node) continue;
      if (item.nc.start_wall_ns > g.end_wall_ns + kGroupSlackNs ||
          item.nc.end_wall_ns + kGroupSlackNs < g.start_wall_ns)
        continue;
      uint64_t distance = item.nc.start_wall_ns > g.start_wall_ns
                              ? item.nc.start_wall_ns - g.start_wall_ns
                              : g.start_wall_ns - item.nc.start_wall_ns;
      if (distance < nearest) {
        nearest = distance;
        home = &g;
      }
    }
    if (!home) {
      open.push_back(groups.size());
      groups.emplace_back();
      home = &groups.back();
      home->direction = item.direction;
      home->start_wall_ns = item.nc.start_wall_ns;
      home->end_wall_ns = item.nc.end_wall_ns;
    }
    home->start_wall_ns = std::min(home->start_wall_ns, item.nc.start_wall_ns);
    home->end_wall_ns = std::max(home->end_wall_ns, item.nc.end_wall_ns);
    home->nodes.push_back(std::move(item.nc));
  }

  // Storage maxima: the options, else the first trace whose config has them,
  // else for a checkpoint of one node the calibration of its mount that the
  // trace recorded (host_io's maximum). Nodes calibrate alone, so several
  // nodes' calibrations of shared storage do not add up to the storage's.
  // The configs' maxima, read once (each is a JSON parse), not per checkpoint.
  using Maximum = std::pair<std::optional<double>, std::string>;
  auto from_config = [&](const char* key) -> Maximum {
    for (size_t n = 0; n < r.traces.size(); ++n)
      if (auto v = trace_config_number(r.traces[n].trace.job.config_json, "storage", key))
        return {v, fmt::format("config:storage.{} ({})", key, r.nodes[n].node)};
    return {std::nullopt, ""};
  };
  const Maximum config_write = from_config("write_bandwidth");
  const Maximum config_read = from_config("read_bandwidth");
  auto storage_max = [&](const CheckpointReport& g) -> Maximum {
    const Direction d = g.direction;
    const auto& opt =
        d == Direction::Save ? options.storage_write_max_Bps : options.storage_read_max_Bps;
    if (opt) return {opt, d == Direction::Save ? "--storage-write-max" : "--storage-read-max"};
    if (const Maximum& c = d == Direction::Save ? config_write : config_read; c.first) return c;
    // The storage stage's maximum; host_io's in traces from before it.
    if (g.nodes.size() == 1) {
      const CheckpointRecord& rec = *g.nodes[0].record;
      const StageRecord* s = find_stage(rec, kStageStorage);
      if (!s) s = find_stage(rec, kStageHostIo);
      if (s && s->max_Bps && s->max_source.rfind("calibrated ", 0) == 0)
        return {s->max_Bps, fmt::format("{} ({})", s->max_source, r.nodes[g.nodes[0].node].node)};
    }
    return {std::nullopt, "unknown"};
  };

  uint64_t index = 0;
  for (auto& g : groups) {
    g.index = ++index;
    std::sort(g.nodes.begin(), g.nodes.end(),
              [](const NodeCheckpoint& a, const NodeCheckpoint& b) { return a.node < b.node; });
    std::vector<uint64_t> durations;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const NodeCheckpoint& nc = g.nodes[i];
      g.bytes += nc.record->bytes;
      g.files += nc.record->files;
      for (const auto& [via, bytes] : nc.record->bytes_by_via) add_via(g.bytes_by_via, via, bytes);
      durations.push_back(nc.duration_ns());
      if (nc.duration_ns() > g.nodes[g.slowest].duration_ns()) g.slowest = i;
    }
    g.median_node_ns = median(durations);
    g.straggler_ratio = g.median_node_ns > 0
                            ? static_cast<double>(g.nodes[g.slowest].duration_ns()) /
                                  static_cast<double>(g.median_node_ns)
                            : 1.0;
    g.aggregate_Bps = g.duration_ns() > 0 ? static_cast<double>(g.bytes) * 1e9 /
                                                static_cast<double>(g.duration_ns())
                                          : 0.0;
    // What reached the storage: a load the page cache served reached none,
    // a buffered save only what its fsyncs wrote back.
    uint64_t reached = 0;
    bool every_node = true;
    for (const NodeCheckpoint& nc : g.nodes) {
      const StageRecord* s = find_stage(*nc.record, kStageStorage);
      every_node = every_node && s != nullptr;
      if (s) reached += s->bytes;
    }
    if (every_node && g.duration_ns() > 0) {
      g.storage_bytes = reached;
      g.storage_Bps = static_cast<double>(reached) * 1e9 / static_cast<double>(g.duration_ns());
    }
    auto [max, source] = storage_max(g);
    g.storage_max_Bps = max;
    g.storage_max_source = source;
    if (max && *max > 0) g.fraction_of_storage_max = g.storage_Bps.value_or(g.aggregate_Bps) / *max;
    if (options.keep_timelines) g.timeline = build_timeline(r, g, options.timeline_bins);
  }
}

TraceIndex index_trace(const Trace& t) {
  TraceIndex x;
  for (const auto& c : t.io_calls)
    if (c.checkpoint_id && (c.op == "read" || c.op == "write" || c.op == "mmap") && c.bytes > 0)
      x.data_calls[*c.checkpoint_id].push_back(&c);
  for (const auto& rpc : t.rpc_calls)
    if (rpc.checkpoint_id && rpc.checkpoint_io)
      x.checkpoint_io_rpcs[*rpc.checkpoint_id].push_back(&rpc);
  std::map<uint64_t, size_t> slot;
  for (const auto& s : t.tcp_samples) {
    auto [it, fresh] = slot.emplace(s.cookie, x.connections.size());
    if (fresh) x.connections.emplace_back();
    x.connections[it->second].push_back(&s);
  }
  for (auto& samples : x.connections)
    std::stable_sort(
        samples.begin(), samples.end(),
        [](const TcpSampleRecord* a, const TcpSampleRecord* b) { return a->time_ns < b->time_ns; });
  return x;
}

void collect_failures(Report& r) {
  // Checkpoint failures belong to the job checkpoint their node's checkpoint joined.
  std::map<std::pair<size_t, uint64_t>, uint64_t> group_of;
  for (const auto& g : r.checkpoints)
    for (const auto& nc : g.nodes) group_of[{nc.node, nc.record->id}] = g.index;
  for (size_t n = 0; n < r.traces.size(); ++n) {
    const Trace& t = r.traces[n].trace;
    auto add = [&](const FailureRecord& f) {
      NodeFailure nf{n, f, to_wall(t.job, f.time_ns), std::nullopt};
      if (f.checkpoint_id) {
        auto it = group_of.find({n, *f.checkpoint_id});
        if (it != group_of.end()) nf.checkpoint = it->second;
      }
      r.failures.push_back(std::move(nf));
    };
    for (const auto& c : t.checkpoints)
      for (const auto& f : c.failures) add(f);
    for (const auto& f : t.failures) add(f);
  }
  std::stable_sort(
      r.failures.begin(), r.failures.end(),
      [](const NodeFailure& a, const NodeFailure& b) { return a.wall_ns < b.wall_ns; });
}

// Per node: the union of its blocked intervals over its wall time; the job
// figure is the mean over nodes (every rank waits), the worst node beside it.
void compute_cost(Report& r) {
  CheckpointCost& cost = r.cost;
  const size_t n_nodes = r.nodes.size();
  std::vector<uint64_t> blocked(n_nodes, 0), saves(n_nodes, 0), loads(n_nodes, 0), wall(n_nodes, 0);
  for (const auto& g : r.checkpoints)
    for (const auto& nc : g.nodes) {
      blocked[nc.node] += nc.blocked_ns;
      (g.direction == Direction::Save ? saves : loads)[nc.node] += nc.blocked_ns;
    }
  uint64_t wall_sum = 0, blocked_sum = 0, save_sum = 0, load_sum = 0;
  size_t with_wall = 0;
  for (size_t n = 0; n < n_nodes; ++n) {
    const JobRecord& job = r.traces[n].trace.job;
    if (job.end_mono_ns > job.start_mono_ns) {
      wall[n] = job.end_mono_ns - job.start_mono_ns;
      ++with_wall;
      wall_sum += wall[n];
      double share = static_cast<double>(blocked[n]) / static_cast<double>(wall[n]);
      if (!cost.worst_node_share || share > *cost.worst_node_share) {
        cost.worst_node_share = share;
        cost.worst_node = r.nodes[n].node;
      }
    }
    blocked_sum += blocked[n];
    save_sum += saves[n];
    load_sum += loads[n];
  }
  if (n_nodes == 0) return;
  cost.blocked_ns = blocked_sum / n_nodes;
  cost.save_blocked_ns = save_sum / n_nodes;
  cost.load_blocked_ns = load_sum / n_nodes;
  if (with_wall == n_nodes) {
    cost.job_wall_ns = wall_sum / n_nodes;
    if (wall_sum > 0) cost.share = static_cast<double>(blocked_sum) / static_cast<double>(wall_sum);
  }
}

// What the nodes moved through files no pattern recognised, when that is
// worth a notice: " The job moved 32.0 MiB through files no checkpoint
// pattern recognised (recommendation unrecognised_io names them)."; "" when not.
std::string unrecognised_sentence(const Report& r) {
  uint64_t bytes = 0;
  for (const auto& n : r.nodes)
    if (n.unrecognised_io && n.unrecognised_io->notice()) bytes += n.unrecognised_io->bytes();
  if (bytes == 0) return "";
  return fmt::format(
      " The job moved {} through files no checkpoint pattern recognised (the recommendation "
      "unrecognised_io names them, with the flags that would include them).",
      format_bytes(bytes));
}

// The stage that held back the most checkpoint time (each checkpoint's
// bottleneck is its slowest node's), with the numbers of its longest checkpoint.
void decide_verdict(Report& r) {
  Verdict& v = r.verdict;
  std::map<std::string, uint64_t> held;
  for (const auto& g : r.checkpoints) {
    v.total_ns += g.duration_ns();
    const std::string& b = g.slowest_record().bottleneck;
    if (!b.empty()) held[b] += g.duration_ns();
  }
  if (r.checkpoints.empty()) {
    bool traced =
        std::any_of(r.nodes.begin(), r.nodes.end(), [](const NodeInfo& n) { return n.traced; });
    v.text = traced ? "No checkpoint I/O was seen: no file matched the checkpoint patterns "
                      "(checkpoint.name_globs, file_globs and dir_globs in the config; "
                      "--checkpoint-glob and --checkpoint-dir for one run)." +
                          unrecognised_sentence(r)
                    : "Nothing was traced (see the warnings): no verdict.";
    return;
  }
  if (held.empty()) {
    v.text = "No stage was measured for any checkpoint: no verdict.";
    return;
  }
  // Most time held; ties go to the stage further down the pipeline, where
  // the earlier ones wait.
  auto rank = [](const std::string& stage) {
    for (size_t i = 0; i < std::size(kAllStages); ++i)
      if (kAllStages[i] == stage) return i;
    return std::size(kAllStages);
  };
  auto best = held.begin();
  for (auto it = held.begin(); it != held.end(); ++it)
    if (it->second > best->second ||
        (it->second == best->second && rank(it->first) > rank(best->first)))
      best = it;
  v.bottleneck = best->first;
  v.held_ns = best->second;
  const CheckpointReport* worst = nullptr;
  for (const auto& g : r.checkpoints) {
    if (g.slowest_record().bottleneck != v.bottleneck) continue;
    v.checkpoints.push_back(g.index);
    if (!worst || g.duration_ns() > worst->duration_ns()) worst = &g;
  }
  v.worst = worst->index;
  const CheckpointRecord& rec = worst->slowest_record();
  const StageRecord* s = find_stage(rec, v.bottleneck);
  std::string numbers;
  if (s) {
    numbers = fmt::format("{} moved {} in {} busy ({}{})", s->name, format_bytes(s->bytes),
                          format_duration(s->busy_ns),
                          s->exclusive_ns
                              ? fmt::format("{} of it its own, ", format_duration(*s->exclusive_ns))
                              : std::string(),
                          format_bandwidth(s->bandwidth_Bps()));
    if (calibration_fault(*s))
      numbers += fmt::format(
          ", {} of its {} maximum ({}): a calibration warning, the maximum is "
          "wrong, not the stage",
          format_percent(*s->fraction_of_max()), format_bandwidth(*s->max_Bps), s->max_source);
    else if (auto f = s->fraction_of_max())
      numbers += fmt::format(", {} of its {} maximum ({})", format_percent(*f),
                             format_bandwidth(*s->max_Bps), s->max_source);
    else
      numbers += ", its maximum unknown";
  }
  std::string nfs;
  if (rec.nfs && rec.nfs->queue_wait.count > 0 &&
      (v.bottleneck == kStageRpcQueue || v.bottleneck == kStageRpcRtt ||
       v.bottleneck == kStageTransport)) {
    nfs = fmt::format("; RPCs waited {} (p50) in the queue against a {} round trip",
                      format_duration(rec.nfs->queue_wait.p50_ns),
                      format_duration(rec.nfs->rtt.p50_ns));
    if (rec.nfs->tcp_backlog_mean)
      nfs += fmt::format(", TCP backlog {} on average",
                         format_bytes(static_cast<uint64_t>(*rec.nfs->tcp_backlog_mean)));
  }
  std::string where =
      worst->nodes.size() > 1
          ? fmt::format(" on {}, its slowest node", r.nodes[worst->nodes[worst->slowest].node].node)
          : "";
  v.text = fmt::format(
      "{} held back {} of {} checkpoints ({} of {} checkpoint time). Longest: {} #{} ({} in {}){}: "
      "{}{}.",
      v.bottleneck, v.checkpoints.size(), r.checkpoints.size(), format_duration(v.held_ns),
      format_duration(v.total_ns), to_string(worst->direction), worst->index,
      format_bytes(worst->bytes), format_duration(worst->duration_ns()), where, numbers, nfs);
}

void note_warnings(Report& r) {
  // One line per distinct warning, naming every node it applies to (a
  // 60-node job whose nodes all lack the NFS module says so once).
  std::vector<std::pair<std::string, std::vector<std::string>>> seen;
  auto add = [&](const std::string& node, const std::string& text) {
    for (auto& [t, nodes] : seen)
      if (t == text) {
        nodes.push_back(node);
        return;
      }
    seen.emplace_back(text, std::vector<std::string>{node});
  };
  for (const auto& n : r.nodes) {
    if (!n.traced)
      add(n.node, fmt::format("not traced ({})",
                              n.trace_warning.empty() ? "no reason recorded" : n.trace_warning));
    else if (!n.trace_warning.empty())
      add(n.node, n.trace_warning);
    if (n.drops > 0)
      add(n.node, fmt::format("{} events were dropped; its figures undercount", n.drops));
  }
  for (const auto& [text, nodes] : seen)
    r.warnings.push_back(fmt::format("{}: {}", fmt::join(nodes, ", "), text));
  // Traces of one job overlap in time; ones that do not are probably not one job.
  for (size_t i = 1; i < r.nodes.size(); ++i) {
    const NodeInfo& a = r.nodes[0];
    const NodeInfo& b = r.nodes[i];
    if (b.start_wall_ns > a.end_wall_ns || a.start_wall_ns > b.end_wall_ns)
      r.warnings.push_back(fmt::format(
          "{} and {} do not overlap in time: are they traces of one job?", a.node, b.node));
  }
}

}  // namespace

std::optional<double> trace_config_number(const std::string& config_json, std::string_view section,
                                          std::string_view key) {
  if (config_json.empty()) return std::nullopt;
  auto parsed = parse_json(config_json, "the trace's config");
  if (!parsed || !parsed->is_object()) return std::nullopt;
  auto s = parsed->find(section);
  if (s == parsed->end() || !s->is_object()) return std::nullopt;
  auto v = s->find(key);
  if (v == s->end() || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

Expected<Report> build_report(std::vector<NodeTrace> traces, const ReportOptions& options) {
  if (traces.empty()) return make_error("report: no trace given");
  Report r;
  r.traces = std::move(traces);
  std::map<std::string, std::string> seen;
  for (const auto& t : r.traces) {
    NodeInfo n = node_info(t);
    if (auto [it, fresh] = seen.emplace(n.node, t.path); !fresh)
      return make_error(fmt::format(
          "report: {} and {} both record node '{}'; record each node's trace with its own "
          "--node-name",
          it->second, t.path, n.node));
    r.nodes.push_back(std::move(n));
  }
  r.start_wall_ns = r.nodes.front().start_wall_ns;
  r.end_wall_ns = r.nodes.front().end_wall_ns;
  for (const auto& n : r.nodes) {
    r.start_wall_ns = std::min(r.start_wall_ns, n.start_wall_ns);
    r.end_wall_ns = std::max(r.end_wall_ns, n.end_wall_ns);
  }
  for (const auto& t : r.traces) {
    if (r.job_name.empty()) r.job_name = t.trace.job.name;
    if (r.command.empty()) r.command = t.trace.job.command;
  }
  for (const auto& t : r.traces) r.index.push_back(index_trace(t.trace));
  r.timeline_bins = options.timeline_bins;
  r.timelines_kept = options.keep_timelines;
  group_checkpoints(r, options);
  // A job still running when its trace was read has no end: its last
  // checkpoint's end is the least it lasted.
  for (const auto& cp : r.checkpoints) r.end_wall_ns = std::max(r.end_wall_ns, cp.end_wall_ns);
  collect_failures(r);
  compute_cost(r);
  decide_verdict(r);
  r.recommendations = recommend(r);
  note_warnings(r);
  return r;
}

}  // namespace ckpt::report
