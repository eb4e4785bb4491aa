#include "analysis/logwatch/alarm_grouper.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ckpt::logwatch {

AlarmGrouper::AlarmGrouper(AlarmConfig config, std::function<void(const std::string&)> notice)
    : config_(std::move(config)), notice_(std::move(notice)) {}

void AlarmGrouper::expire(std::uint64_t line) {
  last_line_ = std::max(last_line_, line);
  while (!recent_.empty() && recent_.front().first + config_.rate_window <= line)
    recent_.pop_front();
  const double budget = config_.max_rate * static_cast<double>(config_.rate_window) / 1000.0;
  if (raised_ && static_cast<double>(recent_.size()) < budget) {
    raised_.reset();
    if (notice_)
      notice_(
          fmt::format("{} {}: alarms back under the budget of {} per 1000 lines; threshold "
                      "back to the detector's ({} held back so far)",
                      config_.line_noun, line, config_.max_rate, held_));
  }
  for (auto it = open_.begin(); it != open_.end();) {
    if (it->second.alarm.last_line + config_.group_window < line) {
      if (it->second.shown && it->second.alarm.count > 1) ended_.push_back(it->second.alarm);
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
}

void AlarmGrouper::tick(std::uint64_t line) {
  // Groups and the window need not age on every line: each 64th is enough
  // to keep both bounded, and add() ages them exactly.
  if ((line & 63U) == 0) expire(line);
}

AlarmDecision AlarmGrouper::add(std::uint64_t line, const std::string& template_text, double score,
                                std::optional<std::uint8_t> severity) {
  expire(line);
  if (config_.group_window > 0) {
    if (auto it = open_.find(template_text); it != open_.end()) {
      Alarm& a = it->second.alarm;
      a.last_line = line;
      ++a.count;
      a.score = std::max(a.score, score);
      if (it->second.shown) return AlarmDecision::kGrouped;
      ++held_;
      return AlarmDecision::kHeld;
    }
  }
  bool show = true;
  const double budget = config_.max_rate * static_cast<double>(config_.rate_window) / 1000.0;
  if (config_.max_rate > 0 && static_cast<double>(recent_.size()) + 1 > budget) {
    double highest = 0;
    for (const auto& [l, s] : recent_) highest = std::max(highest, s);
    if (!raised_ && notice_)
      notice_(
          fmt::format("{} {}: {} alarms in the last {} lines reach the budget of {} per "
                      "1000 lines ({}); threshold raised to a score above {:.2f}",
                      config_.line_noun, line, recent_.size(), config_.rate_window,
                      config_.max_rate, config_.rate_flag, highest));
    raised_ = std::max(raised_.value_or(0.0), highest);
    show = score > *raised_ || (severity && *severity <= config_.never_held_at);
  }
  Group g;
  g.alarm = {line, line, 1, score, template_text};
  g.shown = show;
  if (config_.group_window > 0) open_.insert_or_assign(template_text, g);
  if (!show) {
    ++held_;
    return AlarmDecision::kHeld;
  }
  ++alarms_;
  recent_.emplace_back(line, score);
  return AlarmDecision::kNewAlarm;
}

std::optional<Alarm> AlarmGrouper::closed(std::uint64_t line, bool flush) {
  expire(line);
  if (flush) {
    std::vector<Alarm> rest;
    for (auto& [text, g] : open_)
      if (g.shown && g.alarm.count > 1) rest.push_back(g.alarm);
    open_.clear();
    // In the order they began, not the map's.
    std::sort(rest.begin(), rest.end(),
              [](const Alarm& a, const Alarm& b) { return a.first_line < b.first_line; });
    ended_.insert(ended_.end(), rest.begin(), rest.end());
  }
  if (ended_.empty()) return std::nullopt;
  Alarm a = std::move(ended_.front());
  ended_.pop_front();
  return a;
}

}  // namespace ckpt::logwatch
