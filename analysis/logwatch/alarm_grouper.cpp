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
  while (!recent_.empty() && recent_.front().line + config_.rate_window <= line)
    recent_.pop_front();
  const double budget = config_.max_rate * static_cast<double>(config_.rate_window) / 1000.0;
  if (reached_ && static_cast<double>(recent_.size()) < budget) {
    reached_ = false;
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

bool AlarmGrouper::fits_budget(std::uint64_t line, double score, AlarmRank rank) {
  if (config_.max_rate <= 0 || rank == AlarmRank::kKnownFault) return true;
  const double budget = config_.max_rate * static_cast<double>(config_.rate_window) / 1000.0;
  // The alarms this one competes with: those of its rank and above. Past
  // the budget it must outrank all of them, rank first, then score.
  std::size_t competing = 0;
  bool outranked = false;
  double highest_of_rank = 0;
  for (const Recent& r : recent_) {
    if (r.rank < rank) continue;
    ++competing;
    if (r.rank > rank)
      outranked = true;
    else
      highest_of_rank = std::max(highest_of_rank, r.score);
  }
  if (static_cast<double>(competing) + 1 <= budget) return true;
  if (!reached_ && notice_)
    notice_(fmt::format(
        "{} {}: {} alarms in the last {} lines reach the budget of {} per 1000 lines ({}); "
        "threshold raised to a score above {:.2f} for {} alarms (a known fault is always raised)",
        config_.line_noun, line, recent_.size(), config_.rate_window, config_.max_rate,
        config_.rate_flag, highest_of_rank, to_string(rank)));
  reached_ = true;
  return !outranked && score > highest_of_rank;
}

void AlarmGrouper::hold(std::uint64_t line, const std::string& template_text, double score,
                        AlarmRank rank) {
  ++held_;
  auto it = held_by_template_.find(template_text);
  if (it == held_by_template_.end()) {
    if (held_by_template_.size() >= kMaxHeldTemplates) {
      ++held_untracked_;
      return;
    }
    HeldAccount account;
    account.total = HeldTemplate{template_text, 0, line, line, rank, score};
    account.order = held_by_template_.size();
    it = held_by_template_.emplace(template_text, std::move(account)).first;
  }
  for (HeldTemplate* h : {&it->second.total, &it->second.since_digest}) {
    if (h->count == 0) *h = HeldTemplate{template_text, 0, line, line, rank, score};
    ++h->count;
    h->last_line = line;
    h->rank = std::max(h->rank, rank);
    h->score = std::max(h->score, score);
  }
}

AlarmDecision AlarmGrouper::add(std::uint64_t line, const std::string& template_text, double score,
                                std::optional<std::uint8_t> severity, AlarmRank rank) {
  expire(line);
  const bool never_held =
      rank == AlarmRank::kKnownFault || (severity && *severity <= config_.never_held_at);
  if (config_.group_window > 0) {
    if (auto it = open_.find(template_text); it != open_.end()) {
      Group& g = it->second;
      Alarm& a = g.alarm;
      a.last_line = line;
      ++a.count;
      a.score = std::max(a.score, score);
      g.rank = std::max(g.rank, rank);
      if (g.shown) return AlarmDecision::kGrouped;
      if (!never_held) {
        hold(line, template_text, score, rank);
        return AlarmDecision::kHeld;
      }
      // A known fault (or a crit line) joining a group the budget held back
      // is raised: the group starts over with it.
      open_.erase(it);
    }
  }
  const bool show = never_held || fits_budget(line, score, rank);
  Group g;
  g.alarm = {line, line, 1, score, template_text};
  g.rank = rank;
  g.shown = show;
  if (config_.group_window > 0) open_.insert_or_assign(template_text, g);
  if (!show) {
    hold(line, template_text, score, rank);
    return AlarmDecision::kHeld;
  }
  ++alarms_;
  recent_.push_back(Recent{line, score, rank});
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

std::vector<HeldTemplate> AlarmGrouper::digest() {
  std::vector<std::pair<std::size_t, HeldTemplate>> out;
  for (auto& [text, account] : held_by_template_) {
    if (account.since_digest.count == 0) continue;
    out.emplace_back(account.order, std::move(account.since_digest));
    account.since_digest = HeldTemplate{};
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<HeldTemplate> held;
  held.reserve(out.size());
  for (auto& [order, h] : out) held.push_back(std::move(h));
  return held;
}

std::vector<HeldTemplate> AlarmGrouper::held_templates() const {
  std::vector<const HeldAccount*> accounts;
  accounts.reserve(held_by_template_.size());
  for (const auto& [text, account] : held_by_template_) accounts.push_back(&account);
  std::sort(accounts.begin(), accounts.end(),
            [](const HeldAccount* a, const HeldAccount* b) { return a->order < b->order; });
  std::vector<HeldTemplate> out;
  out.reserve(accounts.size());
  for (const HeldAccount* a : accounts) out.push_back(a->total);
  return out;
}

}  // namespace ckpt::logwatch
