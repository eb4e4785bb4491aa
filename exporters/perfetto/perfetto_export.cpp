#include "exporters/perfetto/perfetto_export.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace ckpt {

namespace {

using nlohmann::json;

// The checkpoints and their stages live in a process of their own, beside
// the job's real processes and threads.
constexpr int kJobPid = 999'999'999;  // above any pid_max: never a real process
constexpr int kCheckpointTid = 1;
constexpr int kStageTidBase = 10;  // + index in kAllStages
// Extra lanes of a track whose slices overlap (see Lanes): lane k >= 1 of the
// track with tid T is tid kLaneTidBase + T * kMaxLanes + k, above any pid_max
// (2^22) like kJobPid, since Perfetto takes thread ids to be system-wide.
constexpr int kLaneTidBase = 100'000'000;
constexpr int kMaxLanes = 1'000'000;

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

// Slices on one track must nest: the format forbids partial overlap, and
// Perfetto drops or misdraws such slices. Calls of several threads on one
// stage, or RPCs in flight together, do overlap: a track gets as many lanes
// as it has slices at once, each lane a thread of its own named after the
// track ("stage rpc_queue (2)"), lane 0 the track itself.
class Lanes {
 public:
  void add(int tid, uint64_t start_ns, uint64_t end_ns, json event) {
    slices_[tid].push_back(Slice{start_ns, std::max(start_ns, end_ns), std::move(event)});
  }

  // Moves every slice into `events` with its lane's tid; names the extra
  // lanes after `names` (tid -> track name).
  void emit(json& events, const std::map<int, std::string>& names) {
    for (auto& [tid, slices] : slices_) {
      // By start, the longer first, so that a slice that holds another comes
      // before it; each goes on the lowest lane free at its start.
      std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
      });
      using Busy = std::pair<uint64_t, int>;  // (end, lane)
      std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
      std::set<int> free;
      int lanes = 0;
      for (auto& slice : slices) {
        while (!busy.empty() && busy.top().first <= slice.start_ns) {
          free.insert(busy.top().second);
          busy.pop();
        }
        int lane = 0;
        if (!free.empty()) {
          lane = *free.begin();
          free.erase(free.begin());
        } else {
          lane = lanes < kMaxLanes ? lanes++ : kMaxLanes - 1;  // never that many at once
        }
        busy.emplace(slice.end_ns, lane);
        slice.event["tid"] = lane == 0 ? tid : kLaneTidBase + tid * kMaxLanes + lane;
        events.push_back(std::move(slice.event));
      }
      auto name = names.find(tid);
      const std::string base = name == names.end() ? fmt::format("track {}", tid) : name->second;
      for (int lane = 1; lane < lanes; ++lane)
        events.push_back(meta("thread_name", kJobPid, kLaneTidBase + tid * kMaxLanes + lane,
                              fmt::format("{} ({})", base, lane + 1)));
    }
    slices_.clear();
  }

 private:
  struct Slice {
    uint64_t start_ns;
    uint64_t end_ns;
    json event;
  };
  std::map<int, std::vector<Slice>> slices_;
};

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
  std::map<int, std::string> track_names = {{kCheckpointTid, "checkpoints"}};
  for (size_t i = 0; i < std::size(kAllStages); ++i)
    track_names[kStageTidBase + static_cast<int>(i)] = "stage " + std::string(kAllStages[i]);
  events.push_back(meta("process_name", kJobPid, 0, "checkpoints on " + node));
  for (const auto& [tid, track] : track_names)
    events.push_back(meta("thread_name", kJobPid, tid, track));
  // The checkpoint and stage tracks: laid out at the end, in lanes.
  Lanes lanes;
  auto slice = [&](int tid, const std::string& name, const char* cat, uint64_t start_ns,
                   uint64_t end_ns, json args) {
    const double ts = us(start_ns, origin);
    lanes.add(tid, start_ns, end_ns,
              complete(name, cat, kJobPid, tid, ts, us(end_ns, origin) - ts, std::move(args)));
  };

  for (const auto& c : trace.checkpoints) {
    std::string name = fmt::format("{} #{}", to_string(c.direction), c.id);
    slice(kCheckpointTid, name, "checkpoint", c.start_ns, c.end_ns,
          {{"bytes", c.bytes},
           {"files", c.files},
           {"bottleneck", c.bottleneck},
           {"failures", c.failures.size()}});
    // Stages without per-call intervals in the trace (serialize, nfs_client,
    // transport) are shown over the checkpoint with their totals: busy time
    // is in the name, not drawn as if it were one interval. So are rpc_queue
    // and rpc_rtt, whose RPCs are also drawn one by one below.
    for (const auto& s : c.stages) {
      if (s.name == kStageHostIo || s.name == kStageMetadata) continue;  // drawn per call below
      json args = {
          {"bytes", s.bytes}, {"busy_ns", s.busy_ns}, {"bandwidth_Bps", s.bandwidth_Bps()}};
      if (auto f = s.fraction_of_max()) args["fraction_of_max"] = *f;
      if (s.max_Bps) args["max_Bps"] = *s.max_Bps;
      slice(
          stage_tid(s.name),
          fmt::format("{} {}: {:.1f} ms busy", name, s.name, static_cast<double>(s.busy_ns) / 1e6),
          "stage-total", c.start_ns, c.end_ns, std::move(args));
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
      slice(stage_tid(is_metadata(call.op) ? kStageMetadata : kStageHostIo), call.op, "stage-call",
            call.start_ns, call.end_ns, args);
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

  // Every RPC of the checkpoints' RPC clients: its queue time on the
  // rpc_queue stage, its round trip on rpc_rtt, and the queue time as a
  // counter over time. An RPC two checkpoints count (a save followed at once
  // by a load) is drawn once.
  std::set<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, std::string_view, std::string_view>>
      drawn;
  for (const auto& r : trace.rpc_calls) {
    if (!drawn.emplace(r.start_ns, r.end_ns, r.queue_ns, r.rtt_ns, r.op, r.server).second) continue;
    json args = {{"op", r.op},
                 {"server", r.server},
                 {"bytes_sent", r.bytes_sent},
                 {"bytes_received", r.bytes_received},
                 {"payload_bytes", r.payload_bytes},
                 {"status", r.status},
                 {"transmissions", r.transmissions},
                 {"major_timeouts", r.major_timeouts},
                 {"checkpoint_io", r.checkpoint_io}};
    if (r.checkpoint_id) args["checkpoint"] = *r.checkpoint_id;
    const uint64_t xmit = r.start_ns + r.queue_ns;
    slice(stage_tid(kStageRpcQueue), r.op, "rpc-queue", r.start_ns, xmit, args);
    slice(stage_tid(kStageRpcRtt), r.op, "rpc-rtt", xmit, xmit + r.rtt_ns, std::move(args));
    // Perfetto names a counter track "<name> <arg>": "rpc queue ms".
    events.push_back({{"ph", "C"},
                      {"name", "rpc queue"},
                      {"pid", kJobPid},
                      {"tid", 0},
                      {"ts", us(r.start_ns, origin)},
                      {"args", {{"ms", static_cast<double>(r.queue_ns) / 1e6}}}});
  }
  lanes.emit(events, track_names);

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
  struct Complete {
    double ts;
    double end;
    size_t index;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Complete>> completes;  // X slices per track
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
      else if (e.contains("ts") && e["ts"].is_number() && e.contains("pid") &&
               e["pid"].is_number_integer() && e.contains("tid") && e["tid"].is_number_integer())
        completes[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back(
            {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>(), i});
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
  // X slices on one track must nest: one that starts inside another ends
  // inside it too (the format forbids partial overlap; Perfetto drops such
  // slices). A nanosecond of slack for the microsecond decimals.
  constexpr double kSlackUs = 1e-3;
  for (auto& [key, slices] : completes) {
    std::stable_sort(slices.begin(), slices.end(), [](const Complete& a, const Complete& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
    });
    std::vector<const Complete*> stack;
    for (const auto& x : slices) {
      while (!stack.empty() && stack.back()->end <= x.ts + kSlackUs) stack.pop_back();
      if (!stack.empty() && x.end > stack.back()->end + kSlackUs) {
        problem(x.index, fmt::format("X overlaps event {} on pid {} tid {} without nesting in it",
                                     stack.back()->index, key.first, key.second));
        continue;
      }
      stack.push_back(&x);
    }
  }
  return problems;
}

}  // namespace ckpt
