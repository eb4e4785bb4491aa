// The Perfetto export of a trace with known content: every event valid for
// the trace-event format, and each record where the UI will show it.
#include "exporters/perfetto/perfetto_export.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ckpt {
namespace {

using nlohmann::json;

constexpr uint64_t kStart = 1'000'000'000;  // the job's CLOCK_MONOTONIC start

Trace known_trace() {
  Trace t;
  t.job.node = "node01";
  t.job.command = {"python", "train.py"};
  t.job.start_mono_ns = kStart;
  t.job.start_wall_ns = 1'796'220'000'000'000'000ull;
  t.job.ckptscope_version = "0.1.0";
  CheckpointRecord c;
  c.id = 1;
  c.direction = Direction::Save;
  c.start_ns = kStart + 2'000'000;  // +2 ms
  c.end_ns = kStart + 12'000'000;   // +12 ms
  c.bytes = 8 << 20;
  c.files = 2;
  c.bottleneck = "serialize";
  StageRecord ser;
  ser.name = "serialize";
  ser.bytes = 8 << 20;
  ser.busy_ns = 6'000'000;
  ser.max_Bps = 4e9;
  c.stages.push_back(ser);
  StageRecord host;
  host.name = "host_io";
  host.bytes = 8 << 20;
  host.busy_ns = 3'000'000;
  c.stages.push_back(host);
  c.failures.push_back(FailureRecord{"enospc", kStart + 11'000'000, "write(...) = -ENOSPC", 1});
  t.checkpoints.push_back(c);
  t.io_calls.push_back(IoCallRecord{kStart + 3'000'000, kStart + 4'500'000, 42, 43, "write",
                                    4 << 20, 4 << 20, "/ckpt/step_1/shard_0.pt", 1});
  t.io_calls.push_back(IoCallRecord{kStart + 2'100'000, kStart + 2'150'000, 42, 43, "open", 5, 0,
                                    "/ckpt/step_1/shard_0.pt", 1});
  t.io_calls.push_back(IoCallRecord{kStart + 20'000'000, kStart + 20'001'000, 42, 44, "read", 10,
                                    10, "/data/config.pt", std::nullopt});
  ConnectionRecord conn;
  conn.cookie = 7;
  conn.remote = "10.0.0.5:2049";
  t.connections.push_back(conn);
  TcpSampleRecord s;
  s.time_ns = kStart + 5'000'000;
  s.cookie = 7;
  s.in_flight = 65536;
  s.backlog = 131072;
  t.tcp_samples.push_back(s);
  t.failures.push_back(FailureRecord{"gpu_xid", kStart + 30'000'000, "Xid 79", std::nullopt});
  return t;
}

std::vector<json> events_where(const json& trace, const std::function<bool(const json&)>& keep) {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"])
    if (keep(e)) out.push_back(e);
  return out;
}

TEST(PerfettoExport, EveryEventIsValidTraceEventFormat) {
  json t = perfetto_trace(known_trace());
  auto problems = validate_trace_events(t);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(t["displayTimeUnit"], "ms");
  EXPECT_EQ(t["otherData"]["node"], "node01");
}

TEST(PerfettoExport, TheCheckpointIsATimelineInMicrosecondsFromTheJobsStart) {
  json t = perfetto_trace(known_trace());
  auto ckpt = events_where(t, [](const json& e) { return e.value("cat", "") == "checkpoint"; });
  ASSERT_EQ(ckpt.size(), 1u);
  EXPECT_EQ(ckpt[0]["name"], "save #1");
  EXPECT_DOUBLE_EQ(ckpt[0]["ts"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(ckpt[0]["dur"].get<double>(), 10000.0);
  EXPECT_EQ(ckpt[0]["args"]["bottleneck"], "serialize");
  EXPECT_EQ(ckpt[0]["args"]["bytes"], 8 << 20);
  // The serialize stage on its own track, its busy time in the name.
  auto ser = events_where(t, [](const json& e) {
    return e.value("cat", "") == "stage-total" &&
           e["name"].get<std::string>().find("serialize") != std::string::npos;
  });
  ASSERT_EQ(ser.size(), 1u);
  EXPECT_EQ(ser[0]["name"], "save #1 serialize: 6.0 ms busy");
  EXPECT_DOUBLE_EQ(ser[0]["args"]["fraction_of_max"].get<double>(),
                   (8.0 * 1024 * 1024 / 0.006) / 4e9);
}

TEST(PerfettoExport, CallsAppearOnTheirStageAndOnTheirThread) {
  json t = perfetto_trace(known_trace());
  auto on_stage = events_where(t, [](const json& e) { return e.value("cat", "") == "stage-call"; });
  ASSERT_EQ(on_stage.size(), 2u);  // the read outside any checkpoint is not a stage's
  auto on_thread = events_where(t, [](const json& e) { return e.value("cat", "") == "call"; });
  ASSERT_EQ(on_thread.size(), 3u);
  for (const auto& e : on_thread) EXPECT_EQ(e["pid"], 42);
  auto write = events_where(
      t, [](const json& e) { return e.value("cat", "") == "call" && e["name"] == "write"; });
  ASSERT_EQ(write.size(), 1u);
  EXPECT_EQ(write[0]["tid"], 43);
  EXPECT_DOUBLE_EQ(write[0]["ts"].get<double>(), 3000.0);
  EXPECT_DOUBLE_EQ(write[0]["dur"].get<double>(), 1500.0);
  EXPECT_EQ(write[0]["args"]["bytes"], 4 << 20);
  // write is host_io, open is metadata: different stage tracks.
  EXPECT_NE(on_stage[0]["tid"], on_stage[1]["tid"]);
  auto names = events_where(t, [](const json& e) {
    return e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 42;
  });
  EXPECT_EQ(names.size(), 2u);  // threads 43 and 44
}

TEST(PerfettoExport, TcpBacklogIsACounterAndFailuresAreInstants) {
  json t = perfetto_trace(known_trace());
  auto counters = events_where(t, [](const json& e) { return e["ph"] == "C"; });
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["name"], "tcp 10.0.0.5:2049");
  EXPECT_EQ(counters[0]["args"]["backlog_bytes"], 131072);
  auto failures = events_where(t, [](const json& e) { return e["ph"] == "i"; });
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0]["name"], "enospc");
  EXPECT_EQ(failures[1]["name"], "gpu_xid");
}

// known_trace with its save's RPCs: an rpc_queue stage over the checkpoint,
// two RPCs in flight together, one later; the last also counted by a second
// checkpoint (a save followed at once by a load).
Trace trace_with_rpcs() {
  Trace t = known_trace();
  StageRecord queue;
  queue.name = "rpc_queue";
  queue.bytes = 8 << 20;
  queue.busy_ns = 3'000'000;
  t.checkpoints[0].stages.push_back(queue);
  auto rpc = [](uint64_t start_ms, uint64_t queue_us, uint64_t rtt_us, std::string op,
                uint64_t checkpoint) {
    RpcCallRecord r;
    r.start_ns = kStart + start_ms * 1'000'000;
    r.queue_ns = queue_us * 1000;
    r.rtt_ns = rtt_us * 1000;
    r.execute_ns = r.queue_ns + r.rtt_ns;
    r.end_ns = r.start_ns + r.execute_ns;
    r.op = std::move(op);
    r.server = "10.0.0.5:2049";
    r.bytes_sent = r.op == "WRITE" ? 1'048'776 : 150;
    r.bytes_received = 120;
    r.payload_bytes = r.op == "WRITE" ? 1 << 20 : 0;
    r.transmissions = 1;
    r.checkpoint_io = r.op != "GETATTR";
    r.checkpoint_id = checkpoint;
    return r;
  };
  t.rpc_calls = {rpc(5, 2000, 3000, "WRITE", 1), rpc(6, 1000, 2000, "WRITE", 1),
                 rpc(20, 500, 250, "GETATTR", 1), rpc(20, 500, 250, "GETATTR", 2)};
  t.rpc_calls[1].status = -5;
  return t;
}

TEST(PerfettoExport, RpcsAreSlicesOnTheQueueAndRoundTripStagesInLanes) {
  json t = perfetto_trace(trace_with_rpcs());
  auto problems = validate_trace_events(t);
  EXPECT_TRUE(problems.empty()) << problems.front();
  auto queue = events_where(t, [](const json& e) { return e.value("cat", "") == "rpc-queue"; });
  auto rtt = events_where(t, [](const json& e) { return e.value("cat", "") == "rpc-rtt"; });
  ASSERT_EQ(queue.size(), 3u) << "the RPC both checkpoints count is drawn once";
  ASSERT_EQ(rtt.size(), 3u);
  auto by_ts = [](const json& a, const json& b) {
    return a["ts"] != b["ts"] ? a["ts"] < b["ts"] : a["dur"] > b["dur"];
  };
  std::sort(queue.begin(), queue.end(), by_ts);
  std::sort(rtt.begin(), rtt.end(), by_ts);
  // Queue time from the RPC's start, round trip from its transmission.
  EXPECT_EQ(queue[0]["name"], "WRITE");
  EXPECT_DOUBLE_EQ(queue[0]["ts"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(queue[0]["dur"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(rtt[0]["ts"].get<double>(), 7000.0);
  EXPECT_DOUBLE_EQ(rtt[0]["dur"].get<double>(), 3000.0);
  EXPECT_DOUBLE_EQ(queue[1]["ts"].get<double>(), 6000.0);
  EXPECT_DOUBLE_EQ(rtt[1]["ts"].get<double>(), 7000.0);
  EXPECT_EQ(queue[1]["args"]["status"], -5);
  EXPECT_EQ(queue[1]["args"]["server"], "10.0.0.5:2049");
  EXPECT_EQ(queue[1]["args"]["op"], "WRITE");
  EXPECT_EQ(queue[1]["args"]["bytes_sent"], 1'048'776);
  EXPECT_EQ(queue[1]["args"]["payload_bytes"], 1 << 20);
  EXPECT_EQ(queue[1]["args"]["checkpoint"], 1);
  EXPECT_EQ(queue[2]["args"]["checkpoint_io"], false);

  // The stage's total holds the rpc_queue track from 2 to 12 ms: the two
  // WRITEs in flight together take two more lanes, the GETATTR after it the
  // track again. The round trips overlap too: two lanes.
  auto thread_name = [&](const json& e) {
    auto m = events_where(t, [&](const json& x) {
      return x["ph"] == "M" && x["name"] == "thread_name" && x["pid"] == e["pid"] &&
             x["tid"] == e["tid"];
    });
    return m.size() == 1 ? m[0]["args"]["name"].get<std::string>() : std::string("(none)");
  };
  EXPECT_EQ(thread_name(queue[0]), "stage rpc_queue (2)");
  EXPECT_EQ(thread_name(queue[1]), "stage rpc_queue (3)");
  EXPECT_EQ(thread_name(queue[2]), "stage rpc_queue");
  EXPECT_EQ(thread_name(rtt[0]), "stage rpc_rtt");
  EXPECT_EQ(thread_name(rtt[1]), "stage rpc_rtt (2)");
  EXPECT_EQ(thread_name(rtt[2]), "stage rpc_rtt");
  auto total = events_where(t, [](const json& e) {
    return e.value("cat", "") == "stage-total" &&
           e["name"].get<std::string>().find("rpc_queue") != std::string::npos;
  });
  ASSERT_EQ(total.size(), 1u);
  EXPECT_EQ(thread_name(total[0]), "stage rpc_queue");
}

TEST(PerfettoExport, RpcQueueTimeIsACounter) {
  json t = perfetto_trace(trace_with_rpcs());
  auto counters =
      events_where(t, [](const json& e) { return e["ph"] == "C" && e["name"] == "rpc queue"; });
  ASSERT_EQ(counters.size(), 3u);
  std::sort(counters.begin(), counters.end(),
            [](const json& a, const json& b) { return a["ts"] < b["ts"]; });
  EXPECT_DOUBLE_EQ(counters[0]["ts"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(counters[0]["args"]["ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(counters[1]["args"]["ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(counters[2]["args"]["ms"].get<double>(), 0.5);
}

TEST(PerfettoExport, OverlappingCallsOfThreadsOnAStageTakeLanes) {
  Trace trace = known_trace();
  // A second thread writes while the first does: both on host_io, which
  // cannot hold them on one track.
  trace.io_calls.push_back(IoCallRecord{kStart + 4'000'000, kStart + 6'000'000, 42, 45, "write",
                                        1 << 20, 1 << 20, "/ckpt/step_1/shard_1.pt", 1});
  json t = perfetto_trace(trace);
  auto problems = validate_trace_events(t);
  EXPECT_TRUE(problems.empty()) << problems.front();
  auto writes = events_where(
      t, [](const json& e) { return e.value("cat", "") == "stage-call" && e["name"] == "write"; });
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_NE(writes[0]["tid"], writes[1]["tid"]);
}

TEST(PerfettoValidate, CatchesWhatTheUiWouldReject) {
  EXPECT_FALSE(validate_trace_events(json::object()).empty());
  json bad = {{"traceEvents",
               json::array({
                   {{"ph", "X"}, {"name", "a"}, {"pid", 1}, {"tid", 1}, {"ts", 0}},  // no dur
                   {{"ph", "B"}, {"name", "b"}, {"pid", 1}, {"tid", 2}, {"ts", 0}},  // never ends
                   {{"ph", "E"}, {"name", "c"}, {"pid", 1}, {"tid", 3}, {"ts", 1}},  // no begin
                   {{"ph", "C"},
                    {"name", "d"},
                    {"pid", 1},
                    {"tid", 0},
                    {"ts", 1},
                    {"args", {{"v", "x"}}}},                                        // not a number
                   {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}},  // no args.name
                   {{"ph", "X"}, {"name", "e"}, {"pid", "1"}, {"tid", 1}, {"ts", 0}, {"dur", 1}},
               })}};
  auto problems = validate_trace_events(bad);
  EXPECT_EQ(problems.size(), 6u);
  json good = {{"traceEvents", json::array({
                                   {{"ph", "B"}, {"name", "b"}, {"pid", 1}, {"tid", 2}, {"ts", 0}},
                                   {{"ph", "E"}, {"name", "b"}, {"pid", 1}, {"tid", 2}, {"ts", 5}},
                               })}};
  EXPECT_TRUE(validate_trace_events(good).empty());
}

TEST(PerfettoValidate, SlicesOnATrackMustNest) {
  auto x = [](int tid, double ts, double dur) {
    return json{{"ph", "X"}, {"name", "x"}, {"pid", 1}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
  };
  // Nested, touching, equal, zero-length, and overlapping only across tracks.
  json good = {{"traceEvents", json::array({x(1, 0, 10), x(1, 2, 3), x(1, 5, 5), x(1, 10, 4),
                                            x(1, 10, 4), x(1, 14, 0), x(1, 14, 0), x(2, 1, 20)})}};
  auto problems = validate_trace_events(good);
  EXPECT_TRUE(problems.empty()) << problems.front();
  // One slice starts inside two others and ends after both: named against the innermost.
  json bad = {{"traceEvents", json::array({x(1, 0, 10), x(1, 4, 2), x(1, 5, 10), x(2, 5, 10)})}};
  problems = validate_trace_events(bad);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "event 2: X overlaps event 1 on pid 1 tid 1 without nesting in it");
}

}  // namespace
}  // namespace ckpt
