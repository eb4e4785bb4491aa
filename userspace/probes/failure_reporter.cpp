#include "probes/failure_reporter.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "json/json_io.h"
#include "probes/exporter_connection.h"

namespace ckpt {

using nlohmann::json;

Expected<std::unique_ptr<FailureReporter>> FailureReporter::connect(const std::string& socket_path,
                                                                    const std::string& client,
                                                                    int timeout_ms) {
  const json hello = {
      {"op", "register"}, {"tgids", json::array()}, {"client", client}, {"records", false}};
  auto connection = connect_to_exporter(socket_path, hello, timeout_ms);
  if (!connection) return connection.error();
  std::unique_ptr<FailureReporter> r(new FailureReporter());
  r->fd_ = connection->fd;
  r->socket_path_ = socket_path;
  r->in_ = std::move(connection->pending);
  return r;
}

FailureReporter::~FailureReporter() {
  if (fd_ >= 0) close(fd_);
}

Expected<void> FailureReporter::read_answers() {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0)
      return make_error(fmt::format("exporter at {} closed the connection", socket_path_));
    if (errno == EINTR) continue;
    if (errno == EAGAIN) break;
    return make_error(fmt::format("exporter at {}: {}", socket_path_, std::strerror(errno)));
  }
  // Only refusals come back (a report is not acknowledged otherwise).
  size_t eol;
  while ((eol = in_.find('\n')) != std::string::npos) {
    auto answer = parse_json(in_.substr(0, eol), "exporter answer");
    in_.erase(0, eol + 1);
    if (!answer || !answer->is_object() || !answer->contains("ok") || (*answer)["ok"] != false)
      continue;
    const json error = answer->contains("error") ? (*answer)["error"] : json();
    return make_error(fmt::format(
        "exporter at {} refused a failure report: {}", socket_path_,
        error.is_string() ? valid_utf8(error.get<std::string>()) : std::string("no reason given")));
  }
  return {};
}

Expected<void> FailureReporter::report(const FailureRecord& failure) {
  if (auto ok = read_answers(); !ok) return ok;
  const json line = {{"op", "failure"},
                     {"kind", failure.kind},
                     {"evidence", failure.evidence},
                     {"time_ns", failure.time_ns}};
  // The evidence is a log line: any bytes (dump_json replaces invalid UTF-8).
  return send_exporter_line(fd_, socket_path_, dump_json(line));
}

Expected<void> FailureReporter::report_held_back(uint64_t lines) {
  if (auto ok = read_answers(); !ok) return ok;
  return send_exporter_line(fd_, socket_path_,
                            dump_json(json{{"op", "held_back"}, {"lines", lines}}));
}

}  // namespace ckpt
