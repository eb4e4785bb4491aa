#include "tools/workload/ground_truth.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "tools/workload/sys.h"

namespace ckpt::workload {
namespace {

// Hex text, not a JSON number: checksums use all 64 bits and JSON readers
// in Python and JavaScript would round them through doubles.
std::string checksum_text(uint64_t checksum) { return fmt::format("{:016x}", checksum); }

uint64_t checksum_value(const std::string& text) { return std::stoull(text, nullptr, 16); }

nlohmann::json file_json(Phase phase, const FileResult& f) {
  nlohmann::json j = {{"shard", f.shard}, {"path", f.path}, {"pid", f.pid}, {"tid", f.tid}};
  if (phase == Phase::Save) {
    j["bytes_written"] = f.bytes;
    j["write_calls"] = f.calls;
    j["fsync_calls"] = f.fsync_calls;
    j["serialize_cpu_ns"] = f.serialize_cpu_ns;
    if (!f.tmp_path.empty()) j["tmp_path"] = f.tmp_path;
  } else {
    j["bytes_read"] = f.bytes;
    j["read_calls"] = f.calls;
  }
  j["checksum"] = checksum_text(f.checksum);
  j["o_direct"] = f.o_direct;
  j["start_ns"] = f.start_ns;
  j["end_ns"] = f.end_ns;
  j["complete"] = f.complete;
  return j;
}

FileResult file_from_json(Phase phase, const nlohmann::json& j) {
  FileResult f;
  f.shard = j.at("shard").get<uint32_t>();
  f.path = j.at("path").get<std::string>();
  f.pid = j.at("pid").get<int32_t>();
  f.tid = j.at("tid").get<int32_t>();
  if (phase == Phase::Save) {
    f.bytes = j.at("bytes_written").get<uint64_t>();
    f.calls = j.at("write_calls").get<uint64_t>();
    f.fsync_calls = j.at("fsync_calls").get<uint64_t>();
    f.serialize_cpu_ns = j.at("serialize_cpu_ns").get<uint64_t>();
    f.tmp_path = j.value("tmp_path", std::string());
  } else {
    f.bytes = j.at("bytes_read").get<uint64_t>();
    f.calls = j.at("read_calls").get<uint64_t>();
  }
  f.checksum = checksum_value(j.at("checksum").get<std::string>());
  f.o_direct = j.at("o_direct").get<bool>();
  f.start_ns = j.at("start_ns").get<uint64_t>();
  f.end_ns = j.at("end_ns").get<uint64_t>();
  f.complete = j.at("complete").get<bool>();
  return f;
}

nlohmann::json stream_json(const StreamResult& s) {
  return {{"shard", s.shard},
          {"pid", s.pid},
          {"tid", s.tid},
          {"bytes_sent", s.bytes_sent},
          {"send_calls", s.send_calls},
          {"start_ns", s.start_ns},
          {"end_ns", s.end_ns}};
}

StreamResult stream_from_json(const nlohmann::json& j) {
  StreamResult s;
  s.shard = j.at("shard").get<uint32_t>();
  s.pid = j.at("pid").get<int32_t>();
  s.tid = j.at("tid").get<int32_t>();
  s.bytes_sent = j.at("bytes_sent").get<uint64_t>();
  s.send_calls = j.at("send_calls").get<uint64_t>();
  s.start_ns = j.at("start_ns").get<uint64_t>();
  s.end_ns = j.at("end_ns").get<uint64_t>();
  return s;
}

}  // namespace

void to_json(nlohmann::json& j, const IoFailure& failure) {
  j = {{"op", failure.op},         {"path", failure.path},   {"errno", failure.err},
       {"detail", failure.detail}, {"usage", failure.usage}, {"message", failure.message()}};
}

void from_json(const nlohmann::json& j, IoFailure& failure) {
  failure.op = j.at("op").get<std::string>();
  failure.path = j.at("path").get<std::string>();
  failure.err = j.at("errno").get<int>();
  failure.detail = j.at("detail").get<std::string>();
  failure.usage = j.at("usage").get<bool>();
}

void to_json(nlohmann::json& j, const StepResult& step) {
  uint64_t bytes = 0;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : step.files) {
    bytes += f.bytes;
    files.push_back(file_json(step.phase, f));
  }
  uint64_t tcp_bytes = 0;
  uint64_t tcp_calls = 0;
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& s : step.streams) {
    tcp_bytes += s.bytes_sent;
    tcp_calls += s.send_calls;
    streams.push_back(stream_json(s));
  }
  j = {{"checkpoint", step.checkpoint},
       {"direction", to_string(step.phase)},
       {"dir", step.dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(step.dir)},
       {"start_ns", step.start_ns},
       {"end_ns", step.end_ns},
       {"bytes", bytes},
       {"files", std::move(files)},
       {"tcp_bytes_sent", tcp_bytes},
       {"tcp_send_calls", tcp_calls},
       {"streams", std::move(streams)},
       {"failures", step.failures}};
}

void from_json(const nlohmann::json& j, StepResult& step) {
  const auto direction = j.at("direction").get<std::string>();
  step.phase = direction == "save" ? Phase::Save : Phase::Load;
  step.checkpoint = j.at("checkpoint").get<uint32_t>();
  step.dir = j.at("dir").is_null() ? std::string() : j.at("dir").get<std::string>();
  step.start_ns = j.at("start_ns").get<uint64_t>();
  step.end_ns = j.at("end_ns").get<uint64_t>();
  step.files.clear();
  for (const auto& f : j.at("files")) step.files.push_back(file_from_json(step.phase, f));
  step.streams.clear();
  for (const auto& s : j.at("streams")) step.streams.push_back(stream_from_json(s));
  step.failures = j.at("failures").get<std::vector<IoFailure>>();
}

nlohmann::json ground_truth_document(const Options& options, const std::string& dir,
                                     const RunResult& run) {
  nlohmann::json checkpoints = nlohmann::json::array();
  uint64_t bytes_written = 0, bytes_read = 0, files_written = 0, files_read = 0;
  uint64_t write_calls = 0, read_calls = 0, fsync_calls = 0, tcp_bytes = 0, tcp_calls = 0;
  uint64_t index = 0;
  for (const auto& step : run.steps) {
    nlohmann::json j = step;
    // 1, 2, ... in start order, the way the profiler numbers checkpoints.
    j["index"] = ++index;
    checkpoints.push_back(std::move(j));
    for (const auto& f : step.files) {
      if (step.phase == Phase::Save) {
        bytes_written += f.bytes;
        write_calls += f.calls;
        ++files_written;
      } else {
        bytes_read += f.bytes;
        read_calls += f.calls;
        ++files_read;
      }
      fsync_calls += f.fsync_calls;
    }
    for (const auto& s : step.streams) {
      tcp_bytes += s.bytes_sent;
      tcp_calls += s.send_calls;
    }
  }

  nlohmann::json shard_sizes = options.shard_sizes;
  nlohmann::json config = {
      {"dir", dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(dir)},
      {"shards", options.shards()},
      {"shard_sizes", std::move(shard_sizes)},
      {"checkpoints", options.checkpoints},
      {"mode", to_string(options.mode)},
      {"format", to_string(options.format)},
      {"block_size", options.block_size},
      {"fsync", options.fsync},
      {"o_direct", options.o_direct},
      {"rename_commit", options.rename_commit},
      {"gap_ms", options.gap_ms},
      {"serialize_ms", options.serialize_ms},
      {"tcp_sink",
       options.tcp_sink ? nlohmann::json(options.tcp_sink->to_string()) : nlohmann::json(nullptr)},
      {"tcp_only", options.tcp_only},
      {"seed", options.seed},
  };
  const auto failures = run.all_failures();
  return {
      {"schema", "ckptscope-workload-ground-truth/1"},
      {"pid", static_cast<int32_t>(getpid())},
      {"processes", options.processes},
      {"threads", options.threads},
      {"worker_pids", run.worker_pids},
      {"start_ns", run.start_ns},
      {"end_ns", run.end_ns},
      {"ok", failures.empty()},
      {"failures", failures},
      {"config", std::move(config)},
      {"checkpoints", std::move(checkpoints)},
      {"totals",
       {{"bytes_written", bytes_written},
        {"bytes_read", bytes_read},
        {"files_written", files_written},
        {"files_read", files_read},
        {"write_calls", write_calls},
        {"read_calls", read_calls},
        {"fsync_calls", fsync_calls},
        {"tcp_bytes_sent", tcp_bytes},
        {"tcp_send_calls", tcp_calls},
        {"checkpoints_saved",
         std::count_if(run.steps.begin(), run.steps.end(),
                       [](const StepResult& s) { return s.phase == Phase::Save; })},
        {"checkpoints_loaded",
         std::count_if(run.steps.begin(), run.steps.end(),
                       [](const StepResult& s) { return s.phase == Phase::Load; })}}},
  };
}

Expected<void> write_ground_truth(const std::string& path, const nlohmann::json& document) {
  return write_file_atomically(path, document.dump(2) + "\n");
}

}  // namespace ckpt::workload
