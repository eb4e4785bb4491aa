#include "analysis/fleet/records/torchelastic_log.h"

#include <charconv>
#include <limits>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <re2/re2.h>

#include "analysis/fleet/records/text_lines.h"
#include "analysis/fleet/records/wall_time.h"

namespace ckpt::fleet::records {
namespace {

// `text` (digits only, as the pattern matched them) as an int; false when it
// does not fit.
bool whole_int(const std::string& text, int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::optional<double> line_time(std::string_view line) {
  static const RE2 kTime(R"((\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})(?:[,.](\d+))?)");
  std::string date, fraction;
  if (!RE2::PartialMatch(line, kTime, &date, &fraction)) return std::nullopt;
  auto t = parse_wall_time(date);
  if (!t || !*t) return std::nullopt;
  double seconds = **t;
  if (!fraction.empty()) seconds += std::stod("0." + fraction);
  return seconds;
}

}  // namespace

Expected<void> read_torchelastic_log(std::string_view text, std::string_view file,
                                     Records& records) {
  static const RE2 kStart(R"(Starting worker group)");
  static const RE2 kRestart(
      R"(Worker group (FAILED|UNHEALTHY)\. (\d+)/(\d+) attempts left; will restart worker group)");
  static const RE2 kSuccess(
      R"((?i:worker group successfully finished)|WorkerState\.SUCCEEDED|Worker group SUCCEEDED)");
  static const RE2 kFailed(R"(ChildFailedError)");

  std::string chain_id = fmt::format("torchelastic:{}", file);
  std::vector<Attempt> attempts;
  auto begin_attempt = [&](std::optional<double> start, std::string source) {
    Attempt a;
    a.scheduler = "torchelastic";
    a.chain_id = chain_id;
    a.name = std::string(file);
    a.attempt_number = static_cast<int>(attempts.size()) + 1;
    a.trigger = attempts.empty() ? Trigger::manual : Trigger::automatic;
    a.outcome = Outcome::unfinished;
    a.state = "RUNNING";
    a.start_unix_s = start;
    a.source = std::move(source);
    attempts.push_back(std::move(a));
  };
  bool saw_agent_line = false;
  bool awaiting_start = true;  // the next "Starting worker group" opens an attempt
  int last_left = -1, max_restarts = -1;
  size_t last_restart_line = 0;
  std::optional<double> last_time;  // a line without a time ended no later than this
  auto lines = split_lines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    auto time = line_time(line);
    if (time) last_time = time;
    std::string where = fmt::format("{}:{}", file, n + 1);
    std::string state, left_text, max_text;
    if (RE2::PartialMatch(line, kRestart, &state, &left_text, &max_text)) {
      saw_agent_line = true;
      // The digits can be any length; std::stoi would throw past INT_MAX.
      int left = 0;
      int max = 0;
      if (!whole_int(left_text, left) || !whole_int(max_text, max))
        return make_error(fmt::format("{}: \"{}/{} attempts left\": a count past {}", where,
                                      left_text, max_text, std::numeric_limits<int>::max()));
      if (last_left >= 0 && (left != last_left - 1 || max != max_restarts))
        return make_error(fmt::format(
            "{}: \"{}/{} attempts left\" after \"{}/{}\" at line {}: restarts of one agent count "
            "down by one (give each agent's log on its own)",
            where, left, max, last_left, max_restarts, last_restart_line));
      if (left > max)
        return make_error(
            fmt::format("{}: {}/{} attempts left is more than the maximum", where, left, max));
      last_left = left;
      max_restarts = max;
      last_restart_line = n + 1;
      if (attempts.empty()) begin_attempt(std::nullopt, where);
      auto& current = attempts.back();
      current.outcome = Outcome::failure;
      current.state = "WORKER_GROUP_" + state;
      current.end_unix_s = time;
      // The restart begins now; its "Starting worker group" line, when
      // logged, gives the start.
      begin_attempt(time, where);
      awaiting_start = true;
      continue;
    }
    if (RE2::PartialMatch(line, kStart)) {
      saw_agent_line = true;
      if (attempts.empty()) {
        begin_attempt(time, where);
      } else if (awaiting_start && time) {
        attempts.back().start_unix_s = time;
      }
      awaiting_start = false;
      continue;
    }
    if (RE2::PartialMatch(line, kSuccess)) {
      saw_agent_line = true;
      if (attempts.empty()) begin_attempt(std::nullopt, where);
      attempts.back().outcome = Outcome::success;
      attempts.back().state = "SUCCEEDED";
      attempts.back().end_unix_s = time;
      continue;
    }
    if (RE2::PartialMatch(line, kFailed) && !attempts.empty() &&
        attempts.back().outcome == Outcome::unfinished) {
      attempts.back().outcome = Outcome::failure;
      attempts.back().state = "FAILED";
      attempts.back().end_unix_s = last_time;
    }
  }
  if (!saw_agent_line)
    return make_error(fmt::format(
        "{}: no TorchElastic agent lines (\"Starting worker group\", \"Worker group FAILED. N/M "
        "attempts left\", \"worker group successfully finished\")",
        file));
  // A log that ends without a verdict leaves its last attempt unfinished.
  for (auto& a : attempts) records.attempts.push_back(std::move(a));
  return {};
}

}  // namespace ckpt::fleet::records
