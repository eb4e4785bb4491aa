// The root cause of a failed run from its logs: every line is tested against
// an ordered rule base (rule_base.h); the matched rule with the highest
// precedence names the class, and its lines are the evidence. Lines that
// only report a failure (launcher noise) are removed first.
//
// Matching uses one RE2::Set over all patterns, so a line costs one DFA pass
// however many rules there are. Files are read from the tail first: the cause
// is usually near the end, and a multi-GB log stops being read as soon as
// nothing earlier could outrank what was found.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/classifier/rule_base.h"
#include "common/expected.h"
#include "model/records.h"

namespace ckpt::classify {

// A line that matched a rule (text cut to kMaxEvidenceChars); source is the
// log file, "kmsg" or "exit_status".
using Evidence = JobEvidence;

// Another rule that matched, outranked by the cause: the symptoms.
struct Symptom {
  std::string cls;
  std::string rule;
  Evidence first;
};

struct Classification {
  std::string cls = std::string(kUnknownClass);
  std::string rule;  // the rule that fired; empty for unknown
  int precedence = 0;
  std::vector<Evidence> evidence;  // the winning rule's lines, in line order
  std::vector<Symptom> symptoms;   // other classes seen, by precedence
  uint64_t lines_scanned = 0;
  uint64_t bytes_scanned = 0;
  bool whole_input = true;  // false when the scan stopped early or was limited
};

inline constexpr size_t kMaxEvidenceChars = 400;

struct ScanOptions {
  uint64_t tail_bytes = 0;        // scan at most this much from the end; 0 = all
  size_t max_evidence = 5;        // evidence lines kept for the cause
  bool stop_when_settled = true;  // stop reading once nothing earlier can outrank
};

class Classifier;

// One classification in progress: lines from several sources (the job's log,
// the kernel log) are added in any order; finish() names the cause.
class Scan {
 public:
  explicit Scan(const Classifier& classifier, size_t max_evidence = 5);
  // Returns true when the line matched a rule.
  bool add_line(std::string_view text, uint64_t line, std::string_view source);
  // Nothing not yet seen could change the class (the best rule is the top one).
  [[nodiscard]] bool settled() const;
  [[nodiscard]] Classification finish() const;
  // Renumbers evidence of `source` with f(line) (tail-first scans count
  // lines from the end until they know where the file starts).
  template <typename F>
  void renumber(std::string_view source, F f) {
    for (auto& hits : hits_)
      for (auto& e : hits.evidence)
        if (e.source == source) e.line = f(e.line);
  }
  uint64_t lines = 0;
  uint64_t bytes = 0;

 private:
  struct RuleHits {
    uint64_t count = 0;
    std::vector<Evidence> evidence;  // the first max_evidence in arrival order
  };
  const Classifier& classifier_;
  size_t max_evidence_;
  std::vector<RuleHits> hits_;  // by rule index
  std::vector<int> matched_;    // scratch
  int best_ = -1;               // rule index
};

class Classifier {
 public:
  static Expected<Classifier> create(RuleBase rules);
  // The compiled-in rules; they are tested, so a failure here is a build bug.
  static const Classifier& builtin();
  Classifier(Classifier&&) noexcept;
  Classifier& operator=(Classifier&&) noexcept;
  ~Classifier();

  [[nodiscard]] Classification classify_text(std::string_view text,
                                             std::string_view source = "log") const;
  // Tail first; line numbers in the evidence are always from the file's start.
  // `also`: lines from elsewhere (the kernel log) weighed with the file's.
  [[nodiscard]] Expected<Classification> classify_file(
      const std::string& path, const ScanOptions& options = {},
      const std::vector<Evidence>& also = {}) const;

  [[nodiscard]] const RuleBase& rules() const { return rules_; }
  // For Scan: the rules a line matches (indices into rules().rules), or
  // nothing when it is noise or matches nothing.
  void match_line(std::string_view line, std::vector<int>& rule_indices) const;
  [[nodiscard]] int top_precedence() const { return top_precedence_; }
  // Is rule a outranked by rule b?
  [[nodiscard]] bool outranks(int a, int b) const;

 private:
  struct Engine;
  Classifier(RuleBase rules, std::unique_ptr<Engine> engine);
  RuleBase rules_;
  std::unique_ptr<Engine> engine_;
  int top_precedence_ = 0;
};

// When the log says nothing, how the process ended can: SIGSEGV is a
// segfault. Adds exit-status evidence; never overrides a log rule.
struct ExitInfo {
  std::optional<int> code;
  std::optional<int> signal;
};
void apply_exit_status(Classification& c, const ExitInfo& exit);

}  // namespace ckpt::classify
