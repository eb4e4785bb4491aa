// What an operator is shown: the detector's anomalous lines (detector.h)
// grouped into alarms, within an alert budget.
//
// Grouping: an anomaly whose template had an alarm within the last
// `group_window` lines joins that alarm (its count and last line grow)
// instead of raising another: a burst of the same new error is one alarm
// with a count, however long it lasts, while the lines keep coming.
//
// Budget: at most `max_rate` alarms per 1,000 lines, counted over the last
// `rate_window` lines. When a new alarm would exceed it, the threshold is
// raised to the highest score among the alarms in the window: only a more
// severe one is raised, the others are held back (counted, not shown) until
// the rate falls under the budget again. Both changes are announced (the
// caller says them on stderr), so a quiet stretch is never mistaken for a
// healthy one. `max_rate` 0: no budget. A line at crit or worse (the
// node's own word that something failed: a kernel panic, an MCE, a FATAL
// job) is never held back; it counts toward the budget like any other.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

namespace ckpt::logwatch {

// The default budget, alarms per 1,000 lines: what the healthy logs'
// evaluation asks for (docs/logwatch.md, "Evaluation").
inline constexpr double kDefaultMaxAlarmRate = 2.0;

struct AlarmConfig {
  std::uint64_t group_window = 100;        // lines; 0: every anomaly is its own alarm
  double max_rate = kDefaultMaxAlarmRate;  // alarms per 1,000 lines; 0: no budget
  std::uint64_t rate_window = 1000;        // lines the rate is counted over
  std::uint8_t never_held_at = 2;          // syslog level (crit) at or above which no line is held
  // How the notices name an input line and the budget's flag: `run
  // --logwatch-model` reads kernel log records and has its own flag name.
  std::string line_noun = "line";
  std::string rate_flag = "--max-alarm-rate";
};

struct Alarm {
  std::uint64_t first_line = 0;
  std::uint64_t last_line = 0;
  std::uint64_t count = 0;  // anomalous lines in the group
  double score = 0;         // the highest of its lines'
  std::string template_text;
};

// What became of one anomalous line.
enum class AlarmDecision {
  kNewAlarm,  // raised: show it
  kGrouped,   // joined a shown alarm (no new line for the operator)
  kHeld,      // held back by the budget, or joined a held-back group
};

class AlarmGrouper {
 public:
  // `notice` hears the budget's changes ("budget reached...", "back under").
  explicit AlarmGrouper(AlarmConfig config, std::function<void(const std::string&)> notice = {});

  // One anomalous line. `line` numbers must not decrease.
  AlarmDecision add(std::uint64_t line, const std::string& template_text, double score,
                    std::optional<std::uint8_t> severity = std::nullopt);
  // A line that was no anomaly: the rate window and the groups age with it.
  void tick(std::uint64_t line);
  // Groups that ended (no line within group_window) with more than one line,
  // handed over once each; at the end of the input, `flush` hands all.
  std::optional<Alarm> closed(std::uint64_t line, bool flush = false);

  [[nodiscard]] std::uint64_t alarms() const { return alarms_; }
  [[nodiscard]] std::uint64_t held() const { return held_; }
  [[nodiscard]] std::optional<double> raised_threshold() const { return raised_; }

 private:
  struct Group {
    Alarm alarm;
    bool shown = false;
  };
  void expire(std::uint64_t line);

  AlarmConfig config_;
  std::function<void(const std::string&)> notice_;
  std::unordered_map<std::string, Group> open_;          // by template text
  std::deque<std::pair<std::uint64_t, double>> recent_;  // shown alarms: line, score
  std::deque<Alarm> ended_;
  std::optional<double> raised_;
  std::uint64_t alarms_ = 0;
  std::uint64_t held_ = 0;
  std::uint64_t last_line_ = 0;
};

}  // namespace ckpt::logwatch
