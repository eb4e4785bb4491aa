#include "exporters/perfetto/perfetto_export.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ckpt {

namespace {

using nlohmann::json;

// The checkpoints and their stages live in a process of their own, beside
// the job's real processes and threads.
constexpr int kJobPid = 999'999'999;  // above any pid_max: never a real process
constexpr int kCheckpointTid = 1;
constexpr int kStageTidBase = 10;  // + index in kAllStages

double us(uint64_t ns, uint64_t origin) {
  return ns >= origin ? static_cast<double>(ns - origin) / 1000.0
                      : -static_cast<double>(origin - ns) / 1000.0;
}

int stage_tid(std::string_view stage) {
  for (size_t i = 0; i < std::size(kAllStages); ++i)
    if (kAllStages[i] == stage) return kStageTidBase + static_cast<int>(i);
  return kStageTidBase + static_cast<int>(std::size(kAllStages));
}

bool is_metadata(const std::string& op) {
  return op == "open" || op == "rename" || op == "mkdir" || op == "unlink" || op == "stat";
}

json meta(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

json complete(const std::string& name, const char* cat, int pid, int tid, double ts, double dur,
              json args) {
  return {{"ph", "X"},
          {"name", name},
          {"cat", cat},
          {"pid", pid},
          {"tid", tid},
          {"ts", ts},
          {"dur", std::max(0.0, dur)},
          {"args", std::move(args)}};
}

// A failure as a global instant on the checkpoints track.
json failure_instant(const FailureRecord& f, uint64_t origin) {
  json args = {{"evidence", f.evidence}};
  if (f.checkpoint_id) args["checkpoint"] = *f.checkpoint_id;
  return {{"ph", "i"},
          {"s", "g"},
          {"name", f.kind},
          {"cat", "failure"},
          {"pid", kJobPid},
          {"tid", kCheckpointTid},
          {"ts", us(f.time_ns, origin)},
          {"args", std::move(args)}};
}

}  // namespace

json perfetto_trace(const Trace& trace) {
  const uint64_t origin = trace.job.start_mono_ns;
  json events = json::array();
  const std::string node = trace.job.node.empty() ? "node" : trace.job.node;
  events.push_back(meta("process_name", kJobPid, 0, "checkpoints on " + node));
  events.push_back(meta("thread_name", kJobPid, kCheckpointTid, "checkpoints"));
  for (size_t i = 0; i < std::size(kAllStages); ++i)
    events.push_back(meta("thread_name", kJobPid, kStageTidBase + static_cast<int>(i),
                          "stage " + std::string(kAllStages[i])));

  for (const auto& c : trace.checkpoints) {
    std::string name = fmt::format("{} #{}", to_string(c.direction), c.id);
    events.push_back(complete(name, "checkpoint", kJobPid, kCheckpointTid, us(c.start_ns, origin),
                              us(c.end_ns, origin) - us(c.start_ns, origin),
                              {{"bytes", c.bytes},
                               {"files", c.files},
                               {"bottleneck", c.bottleneck},
                               {"failures", c.failures.size()}}));
    // Stages without per-call intervals in the trace (serialize, NFS, RPC,
    // transport) are shown over the checkpoint with their totals: busy time
    // is in the name, not drawn as if it were one interval.
    for (const auto& s : c.stages) {
      if (s.name == kStageHostIo || s.name == kStageMetadata) continue;  // drawn per call below
      json args = {
          {"bytes", s.bytes}, {"busy_ns", s.busy_ns}, {"bandwidth_Bps", s.bandwidth_Bps()}};
      if (auto f = s.fraction_of_max()) args["fraction_of_max"] = *f;
      if (s.max_Bps) args["max_Bps"] = *s.max_Bps;
      events.push_back(complete(
          fmt::format("{} {}: {:.1f} ms busy", name, s.name, static_cast<double>(s.busy_ns) / 1e6),
          "stage-total", kJobPid, stage_tid(s.name), us(c.start_ns, origin),
          us(c.end_ns, origin) - us(c.start_ns, origin), std::move(args)));
    }
    for (const auto& f : c.failures) events.push_back(failure_instant(f, origin));
  }
  for (const auto& f : trace.failures) events.push_back(failure_instant(f, origin));

  // Every traced call: on its stage's track (checkpoint calls) and on its
  // own process and thread, under their real ids.
  std::set<std::pair<uint32_t, uint32_t>> threads;
  for (const auto& call : trace.io_calls) {
    json args = {{"path", call.path}, {"bytes", call.bytes}, {"ret", call.ret}};
    if (call.checkpoint_id) args["checkpoint"] = *call.checkpoint_id;
    const double ts = us(call.start_ns, origin);
    const double dur = us(call.end_ns, origin) - ts;
    if (call.checkpoint_id)
      events.push_back(complete(call.op, "stage-call", kJobPid,
                                stage_tid(is_metadata(call.op) ? kStageMetadata : kStageHostIo), ts,
                                dur, args));
    events.push_back(complete(call.op, "call", static_cast<int>(call.tgid),
                              static_cast<int>(call.tid), ts, dur, std::move(args)));
    threads.emplace(call.tgid, call.tid);
  }
  std::set<uint32_t> processes;
  for (const auto& [tgid, tid] : threads) {
    if (processes.insert(tgid).second)
      events.push_back(
          meta("process_name", static_cast<int>(tgid), 0, fmt::format("process {}", tgid)));
    events.push_back(meta("thread_name", static_cast<int>(tgid), static_cast<int>(tid),
                          fmt::format("thread {}", tid)));
  }

  // TCP toward the storage: bytes in flight and the send backlog, per connection.
  std::map<uint64_t, std::string> remote;
  for (const auto& conn : trace.connections) remote[conn.cookie] = conn.remote;
  for (const auto& sample : trace.tcp_samples) {
    auto it = remote.find(sample.cookie);
    std::string who = it == remote.end() ? fmt::format("socket {:x}", sample.cookie) : it->second;
    events.push_back(
        {{"ph", "C"},
         {"name", "tcp " + who},
         {"pid", kJobPid},
         {"tid", 0},
         {"ts", us(sample.time_ns, origin)},
         {"args", {{"in_flight_bytes", sample.in_flight}, {"backlog_bytes", sample.backlog}}}});
  }

  json command = json::array();
  for (const auto& a : trace.job.command) command.push_back(a);
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"generator", "ckptscope " + trace.job.ckptscope_version},
            {"node", trace.job.node},
            {"command", command},
            {"start_wall_ns", trace.job.start_wall_ns},
            {"time_origin", "microseconds since the job started (CLOCK_MONOTONIC)"}}}};
}

std::vector<std::string> validate_trace_events(const json& trace) {
  std::vector<std::string> problems;
  auto problem = [&](size_t i, const std::string& what) {
    problems.push_back(fmt::format("event {}: {}", i, what));
  };
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return {"no traceEvents array"};
  std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> open;  // B/E stacks per track
  const auto& events = trace["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object()) {
      problem(i, "not an object");
      continue;
    }
    if (!e.contains("ph") || !e["ph"].is_string()) {
      problem(i, "no ph");
      continue;
    }
    const std::string ph = e["ph"].get<std::string>();
    for (const char* key : {"pid", "tid"})
      if (!e.contains(key) || !e[key].is_number_integer())
        problem(i, std::string("no integer ") + key);
    if (!e.contains("name") || !e["name"].is_string()) problem(i, "no name");
    if (ph != "M" && (!e.contains("ts") || !e["ts"].is_number())) problem(i, "no numeric ts");
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0)
        problem(i, "X without a non-negative dur");
    } else if (ph == "M") {
      if (!e.contains("args") || !e["args"].contains("name")) problem(i, "M without args.name");
    } else if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty())
        problem(i, "C without values");
      else
        for (const auto& [k, v] : e["args"].items())
          if (!v.is_number()) problem(i, "C value " + k + " is not a number");
    } else if (ph == "i" || ph == "I") {
      if (e.contains("s") && e["s"] != "g" && e["s"] != "p" && e["s"] != "t")
        problem(i, "i with a bad scope");
    } else if (ph == "B" || ph == "E") {
      if (!e.contains("pid") || !e.contains("tid")) continue;
      auto key = std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
      if (ph == "B") {
        open[key].push_back(e.value("name", ""));
      } else if (open[key].empty()) {
        problem(i, "E without a B on its track");
      } else {
        open[key].pop_back();
      }
    } else {
      problem(i, "unknown ph " + ph);
    }
  }
  for (const auto& [key, stack] : open)
    for (const auto& name : stack)
      problems.push_back(
          fmt::format("B \"{}\" on pid {} tid {} never ends", name, key.first, key.second));
  return problems;
}

}  // namespace ckpt
