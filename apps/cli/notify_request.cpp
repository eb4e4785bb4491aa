#include "apps/cli/notify_request.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "common/sigpipe_block.h"
#include "json/json_io.h"

namespace ckpt::cli {

namespace {

// A path travels byte for byte (the sender opens it): a JSON string when it
// is valid UTF-8, else {"hex": "2f746d70ff"}. Other text (the job's name, its
// argv, evidence lines) is shown, not opened, and dump_json replaces its
// invalid bytes with U+FFFD.
nlohmann::json path_json(const std::string& path) {
  bool replaced = false;
  valid_utf8(path, &replaced);
  if (!replaced) return path;
  std::string hex;
  for (unsigned char c : path) hex += fmt::format("{:02x}", c);
  return {{"hex", hex}};
}

std::string path_from_json(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  const std::string hex = j.at("hex").get<std::string>();
  std::string path;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    unsigned byte = 0;
    auto [end, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
    if (ec == std::errc() && end == hex.data() + i + 2) path += static_cast<char>(byte);
  }
  return path;  // ours to write and read: a pair that is not hex is dropped
}

nlohmann::json outcome_json(const notify::JobOutcome& o) {
  nlohmann::json evidence = nlohmann::json::array();
  for (const auto& e : o.evidence)
    evidence.push_back({{"line", e.line}, {"text", e.text}, {"source", e.source}});
  return {{"job_name", o.job_name},
          {"command", o.command},
          {"host", o.host},
          {"start_wall_ns", o.start_wall_ns},
          {"duration_ns", o.duration_ns},
          {"exit_code", o.exit_code ? nlohmann::json(*o.exit_code) : nlohmann::json()},
          {"signal", o.signal ? nlohmann::json(*o.signal) : nlohmann::json()},
          {"core_dumped", o.core_dumped},
          {"failure_class", o.failure_class},
          {"failure_rule", o.failure_rule},
          {"evidence", evidence},
          {"kernel_events", o.kernel_events},
          {"checkpoint_summary_text", o.checkpoint_summary_text},
          {"checkpoint_summary_json", o.checkpoint_summary_json},
          {"log_path", path_json(o.log_path)},
          {"log_incomplete", o.log_incomplete},
          {"log_tail", o.log_tail},
          {"trace_path", path_json(o.trace_path)}};
}

notify::JobOutcome outcome_from_json(const nlohmann::json& j) {
  notify::JobOutcome o;
  o.job_name = j.at("job_name").get<std::string>();
  o.command = j.at("command").get<std::vector<std::string>>();
  o.host = j.at("host").get<std::string>();
  o.start_wall_ns = j.at("start_wall_ns").get<uint64_t>();
  o.duration_ns = j.at("duration_ns").get<uint64_t>();
  if (!j.at("exit_code").is_null()) o.exit_code = j["exit_code"].get<int>();
  if (!j.at("signal").is_null()) o.signal = j["signal"].get<int>();
  o.core_dumped = j.at("core_dumped").get<bool>();
  o.failure_class = j.at("failure_class").get<std::string>();
  o.failure_rule = j.at("failure_rule").get<std::string>();
  for (const auto& e : j.at("evidence"))
    o.evidence.push_back(notify::Evidence{e.at("line").get<uint64_t>(),
                                          e.at("text").get<std::string>(),
                                          e.value("source", std::string())});
  o.kernel_events = j.at("kernel_events").get<std::vector<std::string>>();
  o.checkpoint_summary_text = j.at("checkpoint_summary_text").get<std::string>();
  o.checkpoint_summary_json = j.at("checkpoint_summary_json");
  o.log_path = path_from_json(j.at("log_path"));
  o.log_incomplete = j.value("log_incomplete", std::string());
  o.log_tail = j.at("log_tail").get<std::vector<std::string>>();
  o.trace_path = path_from_json(j.at("trace_path"));
  return o;
}

}  // namespace

nlohmann::json to_json(const NotifyRequest& r) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : r.candidates)
    candidates.push_back({{"path", path_json(c.path)}, {"is_log", c.is_log}});
  return {{"mode", r.mode == NotifyRequest::Mode::Check ? "check" : "send"},
          {"targets", r.targets},
          {"smtp_flag", r.smtp_flag},
          {"config_section", r.config_section},
          {"attach_budget", r.attach_budget ? nlohmann::json(*r.attach_budget) : nlohmann::json()},
          {"candidates", candidates},
          {"outcome", outcome_json(r.outcome)}};
}

Expected<NotifyRequest> request_from_json(const nlohmann::json& j) {
  // A missing or mistyped field: "request: /outcome/job_name: type must be string, ...".
  return read_json("request", [&]() -> Expected<NotifyRequest> {
    NotifyRequest r;
    std::string mode = j.at("mode").get<std::string>();
    if (mode != "check" && mode != "send") return make_error("request: unknown mode " + mode);
    r.mode = mode == "check" ? NotifyRequest::Mode::Check : NotifyRequest::Mode::Send;
    r.targets = j.at("targets").get<std::vector<std::string>>();
    r.smtp_flag = j.at("smtp_flag").get<std::string>();
    r.config_section = j.at("config_section").get<std::string>();
    if (!j.at("attach_budget").is_null()) r.attach_budget = j["attach_budget"].get<uint64_t>();
    for (const auto& c : j.at("candidates"))
      r.candidates.push_back({path_from_json(c.at("path")), c.at("is_log").get<bool>()});
    r.outcome = outcome_from_json(j.at("outcome"));
    return r;
  });
}

nlohmann::json to_json(const DeliveryResult& r) {
  return {{"target", r.target}, {"ok", r.ok}, {"error", r.error}, {"timeout_ms", r.timeout_ms}};
}

Expected<DeliveryResult> result_from_json(const nlohmann::json& j) {
  return read_json("notifier result", [&]() -> Expected<DeliveryResult> {
    return DeliveryResult{j.at("target").get<std::string>(), j.at("ok").get<bool>(),
                          j.at("error").get<std::string>(), j.value("timeout_ms", uint64_t{0})};
  });
}

namespace {

int64_t ms_left(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return std::max<int64_t>(0, left.count());
}

}  // namespace

std::string find_sender() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::filesystem::path beside = self.parent_path() / "ckptscope-notify";
  if (!ec && std::filesystem::exists(beside, ec)) return beside.string();
  return "ckptscope-notify";
}

Expected<std::vector<DeliveryResult>> run_sender(const std::string& sender,
                                                 const NotifyRequest& request, uint64_t deadline_ms,
                                                 bool* rejected) {
  if (rejected) *rejected = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  int in[2];
  int out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return make_error(fmt::format("pipe: {}", std::strerror(errno)));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return make_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  // dump_json: a byte of the job's name, argv or evidence that is not UTF-8
  // is replaced; a throw here meant no notification at all.
  const std::string payload = dump_json(to_json(request));
  std::vector<char*> argv = {const_cast<char*>(sender.c_str()), nullptr};
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return make_error(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0) _exit(127);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  // A sender that exits before reading its stdin (or never execs) turns our
  // write into EPIPE; without the mask SIGPIPE would end the caller.
  SigpipeBlock no_sigpipe;
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  std::string answer;
  bool out_open = true;
  bool timed_out = false;
  while (out_open) {
    pollfd fds[2] = {{out[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
    const bool writing = in[1] >= 0;
    int n =
        poll(fds, writing ? 2 : 1, static_cast<int>(std::min<int64_t>(ms_left(deadline), 1000)));
    if (n < 0 && errno != EINTR) break;
    if (ms_left(deadline) == 0) {
      timed_out = true;
      break;
    }
    if (writing && fds[1].revents) {
      ssize_t w = write(in[1], payload.data() + written, payload.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == payload.size()) {
        close(in[1]);
        in[1] = -1;
      }
    }
    if (fds[0].revents) {
      char buf[4096];
      ssize_t r = read(out[0], buf, sizeof(buf));
      if (r > 0) answer.append(buf, static_cast<size_t>(r));
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) out_open = false;
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return make_error(fmt::format("the notifier did not finish within {:.0f} s and was stopped",
                                  static_cast<double>(deadline_ms) / 1000));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && answer.empty())
    return make_error(fmt::format("cannot run {}", sender));
  if (WIFSIGNALED(status))
    return make_error(fmt::format("{} was killed by signal {}", sender, WTERMSIG(status)));
  std::vector<DeliveryResult> results;
  std::istringstream lines(answer);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    auto parsed = parse_json(line, sender);
    if (!parsed || !parsed->is_object())
      return make_error(
          fmt::format("{} answered something unreadable: {}", sender, valid_utf8(line)));
    const nlohmann::json& j = *parsed;
    if (j.contains("request_error")) {
      if (rejected) *rejected = true;
      const nlohmann::json& e = j["request_error"];
      return make_error(e.is_string() ? e.get<std::string>() : dump_json(e));
    }
    auto r = result_from_json(j);
    if (!r) return r.error();
    results.push_back(std::move(*r));
  }
  if (results.size() != request.targets.size())
    return make_error(fmt::format("{} answered for {} of {} targets", sender, results.size(),
                                  request.targets.size()));
  return results;
}

}  // namespace ckpt::cli
