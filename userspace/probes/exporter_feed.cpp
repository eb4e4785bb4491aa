#include "probes/exporter_feed.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "json/json_io.h"
#include "probes/exporter_connection.h"
#include "probes/forward_protocol.h"

namespace ckpt {
namespace {

using nlohmann::json;

}  // namespace

Expected<std::unique_ptr<ExporterFeed>> ExporterFeed::connect(
    const std::string& socket_path, const std::vector<uint32_t>& tgids, const std::string& client,
    RecordHandler on_jobio, RecordHandler on_tcp, RecordHandler on_nfs, int timeout_ms) {
  const json hello = {{"op", "register"}, {"tgids", tgids}, {"client", client}};
  auto connection = connect_to_exporter(socket_path, hello, timeout_ms);
  if (!connection) return connection.error();
  std::unique_ptr<ExporterFeed> feed(new ExporterFeed());
  feed->fd_ = connection->fd;
  feed->in_ = std::move(connection->pending);
  feed->socket_path_ = socket_path;
  feed->on_jobio_ = std::move(on_jobio);
  feed->on_tcp_ = std::move(on_tcp);
  feed->on_nfs_ = std::move(on_nfs);
  const json& answer = connection->answer;
  feed->tcp_ = answer.value("tcp", false);
  feed->nfs_ = answer.value("nfs", false);
  // Only a mode we know goes in the trace; anything else is "not said".
  if (answer.contains("probe_mode") && answer["probe_mode"].is_string()) {
    const auto mode = answer["probe_mode"].get<std::string>();
    if (mode == "syscall" || mode == "file_layer") feed->probe_mode_ = mode;
  }
  feed->description_ = fmt::format("the node exporter at {} (version {})", socket_path,
                                   answer.value("version", std::string("?")));
  return feed;
}

ExporterFeed::~ExporterFeed() {
  if (fd_ >= 0) close(fd_);
}

Expected<void> ExporterFeed::send_line(const std::string& line) {
  return send_exporter_line(fd_, socket_path_, line);
}

Expected<void> ExporterFeed::trace_tgid(uint32_t tgid) {
  // Answered in order: once the sync comes back, the exporter forwards this
  // process's records (`run` holds its child until then).
  if (auto ok = send_line(dump_json(json{{"op", "trace"}, {"tgid", tgid}})); !ok) return ok;
  const size_t errors_before = refusals_.size();
  sync(2000);
  if (refusals_.size() > errors_before) return make_error(refusals_.back());
  return {};
}

Expected<void> ExporterFeed::start_nfs_if_available() {
  if (nfs_) return {};
  return make_error("the exporter's NFS probes are not running (no NFS mount yet)");
}

Expected<void> ExporterFeed::add_storage_endpoint(const StorageEndpoint& endpoint) {
  return make_error(fmt::format(
      "storage endpoint {}:{}: the exporter follows its own configured storage servers and the "
      "node's NFS mounts",
      endpoint.host.empty() ? "*" : endpoint.host, endpoint.port));
}

bool ExporterFeed::read_available() {
  char buf[65536];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    return false;  // closed, or an error
  }
}

void ExporterFeed::on_control(const std::string& text) {
  // The exporter's answers: anything unreadable or mistyped is ignored, as
  // an answer we do not know.
  auto parsed = parse_json(text, "exporter answer");
  if (!parsed || !parsed->is_object()) return;
  const json& j = *parsed;
  if (j.contains("sync") && j["sync"].is_number_unsigned())
    sync_seen_ = std::max(sync_seen_, j["sync"].get<uint64_t>());
  if (j.contains("nfs") && j["nfs"].is_boolean() && j["nfs"].get<bool>()) nfs_ = true;
  if (j.contains("error") && j["error"].is_string())
    refusals_.push_back(
        fmt::format("exporter at {}: {}", socket_path_, j["error"].get<std::string>()));
  if (j.contains("drops") && j["drops"].is_array()) {
    // value() throws on a mistyped field: a drop list we cannot read whole
    // keeps the last one we could.
    auto drops = read_json("exporter answer", [&]() -> Expected<std::vector<DropRecord>> {
      std::vector<DropRecord> out;
      for (const auto& d : j["drops"])
        if (d.is_object())
          out.push_back(DropRecord{d.value("source", std::string()),
                                   d.value("cause", std::string()), d.value("count", uint64_t{0})});
      return out;
    });
    if (drops) exporter_drops_ = std::move(*drops);
  }
}

int ExporterFeed::dispatch_frames() {
  int records = 0;
  size_t at = 0;
  while (in_.size() - at >= sizeof(ForwardFrameHeader)) {
    ForwardFrameHeader h{};
    std::memcpy(&h, in_.data() + at, sizeof(h));
    if (h.size > kMaxForwardFrame) {
      // Out of step with the exporter: nothing after this can be trusted.
      notes_.push_back(
          fmt::format("exporter at {}: malformed frame of {} bytes; records lost "
                      "from here",
                      socket_path_, h.size));
      lost_ = true;
      in_.clear();
      return records;
    }
    if (in_.size() - at < sizeof(h) + h.size) break;
    const char* body = in_.data() + at + sizeof(h);
    switch (static_cast<ForwardRing>(h.ring)) {
      case ForwardRing::Jobio:
        on_jobio_(body, h.size);
        ++records;
        break;
      case ForwardRing::Tcp:
        on_tcp_(body, h.size);
        ++records;
        break;
      case ForwardRing::Nfs:
        on_nfs_(body, h.size);
        ++records;
        break;
      case ForwardRing::Control:
        on_control(std::string(body, h.size));
        break;
    }
    at += sizeof(h) + h.size;
  }
  in_.erase(0, at);
  return records;
}

Expected<int> ExporterFeed::poll(int timeout_ms) {
  if (lost_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return 0;
  }
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) < 0 && errno != EINTR)
    return make_error(fmt::format("exporter at {}: poll: {}", socket_path_, std::strerror(errno)));
  const bool open = read_available();
  const int records = dispatch_frames();
  if (!open && !lost_) {
    lost_ = true;
    notes_.push_back(
        fmt::format("the exporter at {} went away during the trace: records after that were lost",
                    socket_path_));
  }
  return records;
}

void ExporterFeed::sync(int timeout_ms) {
  if (lost_) return;
  const uint64_t seq = ++sync_sent_;
  if (!send_line(dump_json(json{{"op", "sync"}, {"seq", seq}}))) return;
  const uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(timeout_ms) * 1'000'000;
  while (sync_seen_ < seq && !lost_ && exporter_ms_left(deadline) > 0)
    (void)poll(std::min(50, exporter_ms_left(deadline)));
  if (sync_seen_ < seq && !lost_)
    notes_.push_back(fmt::format("the exporter at {} did not confirm the last records within {} ms",
                                 socket_path_, timeout_ms));
}

std::vector<DropRecord> ExporterFeed::drops() const { return exporter_drops_; }

}  // namespace ckpt
