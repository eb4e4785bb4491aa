// What an operator is shown: the detector's anomalous lines (detector.h)
// grouped into alarms, within an alert budget that ranks them.
//
// Grouping: an anomaly whose template had an alarm within the last
// `group_window` lines joins that alarm (its count and last line grow)
// instead of raising another: a burst of the same new error is one alarm
// with a count, however long it lasts, while the lines keep coming.
//
// Budget: at most `max_rate` alarms per 1,000 lines, counted over the last
// `rate_window` lines, and it ranks, it does not queue (severity.h
// AlarmRank): a known fault (an Xid, a machine check, a link down: known_faults.h)
// is always raised; a novel line at warning or worse competes only with the
// alarms of its rank or above in the window, a novel notice or info line with
// all of them, so a routine line that spent the budget never holds back an
// error. When a new alarm would exceed its share it is raised only if it
// outranks every alarm it competes with, rank first, then score: above the
// highest score of its rank, and with none of a higher rank in the window. A line at crit or worse
// (the node's own word that something failed) is never held back; everything raised counts toward
// the budget. Both changes of the budget are announced (the caller says them on stderr), so a quiet
// stretch is never mistaken for a healthy one. `max_rate` 0: no budget.
//
// Held back is not lost: every line held back is counted by its template
// (its count, first and last line, rank and highest score), handed out as a
// digest of what was held since the last one (digest()) and in full
// (held_templates()), for the periodic digest lines and the final summary.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/logwatch/severity.h"

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

// The lines of one template the budget held back.
struct HeldTemplate {
  std::string template_text;
  std::uint64_t count = 0;
  std::uint64_t first_line = 0;
  std::uint64_t last_line = 0;
  AlarmRank rank = AlarmRank::kBenign;  // the highest its lines had
  double score = 0;                     // the highest of its lines'
};

// How many templates the held-back account names one by one; the lines of
// any more are counted together (held_untracked()), never dropped.
inline constexpr std::size_t kMaxHeldTemplates = 1000;

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

  // One anomalous line. `line` numbers must not decrease. `rank`: what the
  // line is (a known fault, a novelty at warning or worse, a milder one).
  AlarmDecision add(std::uint64_t line, const std::string& template_text, double score,
                    std::optional<std::uint8_t> severity = std::nullopt,
                    AlarmRank rank = AlarmRank::kError);
  // A line that was no anomaly: the rate window and the groups age with it.
  void tick(std::uint64_t line);
  // Groups that ended (no line within group_window) with more than one line,
  // handed over once each; at the end of the input, `flush` hands all.
  std::optional<Alarm> closed(std::uint64_t line, bool flush = false);

  [[nodiscard]] std::uint64_t alarms() const { return alarms_; }
  [[nodiscard]] std::uint64_t held() const { return held_; }
  // Whether the budget holds alarms back now (a notice said so).
  [[nodiscard]] bool budget_reached() const { return reached_; }

  // The templates held back since the last digest, each with what it had
  // in that time (in the order they were first held); empties it.
  std::vector<HeldTemplate> digest();
  // Every template held back so far, with its totals, in the order first held.
  [[nodiscard]] std::vector<HeldTemplate> held_templates() const;
  // Lines held back of templates past kMaxHeldTemplates.
  [[nodiscard]] std::uint64_t held_untracked() const { return held_untracked_; }

 private:
  struct Group {
    Alarm alarm;
    AlarmRank rank = AlarmRank::kError;
    bool shown = false;
  };
  struct Recent {
    std::uint64_t line;
    double score;
    AlarmRank rank;
  };
  struct HeldAccount {
    HeldTemplate total;
    HeldTemplate since_digest;  // count 0: nothing since the last digest
    std::size_t order = 0;
  };
  void expire(std::uint64_t line);
  // Whether a new alarm of `rank` and `score` fits the budget now.
  bool fits_budget(std::uint64_t line, double score, AlarmRank rank);
  void hold(std::uint64_t line, const std::string& template_text, double score, AlarmRank rank);

  AlarmConfig config_;
  std::function<void(const std::string&)> notice_;
  std::unordered_map<std::string, Group> open_;  // by template text
  std::deque<Recent> recent_;                    // shown alarms in the rate window
  std::deque<Alarm> ended_;
  bool reached_ = false;
  std::unordered_map<std::string, HeldAccount> held_by_template_;
  std::uint64_t held_untracked_ = 0;
  std::uint64_t alarms_ = 0;
  std::uint64_t held_ = 0;
  std::uint64_t last_line_ = 0;
};

}  // namespace ckpt::logwatch
