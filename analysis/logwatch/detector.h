// The node-log anomaly detector: Drain templates (drain.h) plus decayed
// counts of how often each template and each short sequence of templates
// occurred. Per message it asks three questions and answers each with a
// score in [0, 1]:
//   new_template         no known template is similar (score 1);
//   rare_template        the template was seen fewer than `rare_count`
//                        times (score 1 - count / rare_count);
//   unexpected_sequence  the template is less likely after its context than
//                        the training stream's own surprises make ordinary:
//                        -log2 P(template | context) above the
//                        `sequence_quantile` of the surprises of the lines
//                        learned (a bounded histogram, decayed with the
//                        counts), and not among the context's `top_k` most
//                        frequent successors. P is Witten-Bell smoothed
//                        (Witten and Bell, 1991): each context with at least
//                        `min_support` lines interpolates its counts with
//                        the next shorter one's, down to the source's own
//                        template counts and the global base rate, so a
//                        context that has had many different successors is
//                        less surprised by another. Contexts are kept per
//                        source (source_key.h): the previous `history`
//                        templates of the line's own subsystem, so that
//                        interleaved independent writers do not predict
//                        each other. Score 1 - 2^-(surprise - threshold).
// A line that matches a known fault (known_faults.h: an Xid, a machine check,
// a link down, ...) is an anomaly whatever the rest says, reason
// `known_fault`, score its severity's weight.
// The line's score is the highest of those times its severity's weight
// (severity.h; a line whose format gives none takes one from its words,
// severity_from_words, unless that is off; then 1). A message is an anomaly when
// any fired and the score is at least `threshold` (by default 0.5 for a line
// with a severity, so a new info line alone is not reported, and 0 for one
// without, which reports every fired reason); the reason names every one that
// fired, joined by '+'.
//
// A blank or whitespace-only message (no tokens) is no event: it is neither
// scored nor learned and does not move the sequence on (Verdict::blank).
//
// Memory is bounded on an endless stream: templates are capped (drain.h),
// contexts are capped (least recently used evicted), each context keeps its
// `max_successors` most frequent successors, and when learning online every
// count is multiplied by `decay_factor` each `decay_every` messages (counts
// below 0.01 are dropped).
//
// Use (the API other parts of ckptscope call):
//   auto model = logwatch::load_model("node.model");      // model_file.h
//   logwatch::LogDetector detector(std::move(*model));
//   if (auto a = detector.observe_line(n, content, kmsg.level)) report(*a);
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/logwatch/drain.h"
#include "analysis/logwatch/known_faults.h"
#include "analysis/logwatch/severity.h"

namespace ckpt::logwatch {

inline constexpr int kMaxHistory = 4;
// The default threshold for a line with a severity (severity.h).
inline constexpr double kSeverityThreshold = 0.5;

// The training surprises' histogram: bins of 1/kSurpriseBinsPerBit bits.
inline constexpr int kSurpriseBinsPerBit = 4;
inline constexpr int kSurpriseBins = 64 * kSurpriseBinsPerBit;
// Fewer learned lines than this and the sequence is not judged: no quantile yet.
inline constexpr double kMinSurpriseSamples = 100;

struct DetectorConfig {
  DrainConfig drain;
  int history = 2;  // n-gram order minus one (saved with the model)
  // Scoring; given at run time, not saved with a model.
  int top_k = 5;                     // a top-k successor is never unexpected
  double sequence_quantile = 0.999;  // of the learned lines' surprises
  double min_support = 5.0;          // judge a sequence only after a context seen this often
  double rare_count = 0;             // 0: rarity is judged by the calibrated surprise alone
  // nullopt: kSeverityThreshold for a line with a severity, 0 for one without.
  std::optional<double> threshold;
  bool learn = true;  // keep learning from the stream (counts decay)
  // Also learn the lines judged anomalous. Off by default: as DeepLog updates
  // its model only with what an operator confirms normal, a failure that
  // repeats (the same Xid every few seconds) stays an anomaly rather than
  // becoming a "known" template by its own repetition.
  bool learn_anomalies = false;
  // A line matching a known fault (known_faults.h) is an anomaly whatever
  // its novelty and the threshold; nullptr: none are.
  const KnownFaults* known_faults = &KnownFaults::builtin();
  // A line whose format gives no level takes one from its words
  // (severity.h severity_from_words); off: it is scored without one.
  bool severity_from_words = true;
  std::uint64_t decay_every = 10000;
  double decay_factor = 0.5;
  std::size_t max_contexts = 100000;
  std::size_t max_successors = 32;
};

struct Verdict {
  TemplateId template_id = 0;  // 0: unknown to a model that does not learn
  bool anomaly = false;
  double novelty = 0;  // the highest of the fired reasons' scores
  double score = 0;    // novelty times the severity's weight
  std::string reason;
  bool new_template = false;
  bool blank = false;  // no tokens: not judged, not learned
  // The known fault the line is, if any (it is then an anomaly).
  const KnownFault* known_fault = nullptr;
  // The level it was scored with: its own, or one from its words (read
  // only when a reason fired).
  std::optional<Severity> level;
};

struct Anomaly {
  std::uint64_t line = 0;  // 1-based, in the input
  std::string text;        // the message as read
  std::string template_text;
  double score = 0;
  std::string reason;
  // A known fault's failure kind and catalogue id; empty for a novelty.
  std::string kind;
  std::string fault_id;
  std::optional<Severity> level;  // as scored (its own, or from its words)
  AlarmRank rank = AlarmRank::kError;
};

struct Context {
  std::uint32_t source = 0;                   // source_key(); 0: lines that name none
  std::uint8_t length = 0;                    // 0: the source's own template counts
  std::array<TemplateId, kMaxHistory> ids{};  // oldest first
  bool operator==(const Context&) const = default;
};

struct ContextHash {
  std::size_t operator()(const Context& c) const noexcept;
};

struct Successors {
  double total = 0;
  std::vector<std::pair<TemplateId, double>> next;
  std::list<Context>::iterator recency;
};

class LogDetector {
 public:
  explicit LogDetector(DetectorConfig config = {});
  LogDetector(const LogDetector& other);
  LogDetector& operator=(const LogDetector& other);
  LogDetector(LogDetector&&) noexcept = default;
  LogDetector& operator=(LogDetector&&) noexcept = default;
  ~LogDetector() = default;

  // Learns one normal message (training): no verdict; its template's id, 0
  // for a blank message (not learned).
  TemplateId learn(std::string_view content);
  // Scores one message, then learns it when config.learn. `severity`: the
  // line's syslog level (0 emerg .. 7 debug), nullopt when the format has none.
  Verdict observe(std::string_view content, std::optional<Severity> severity = std::nullopt);
  // observe() as an Anomaly when it is one.
  std::optional<Anomaly> observe_line(std::uint64_t line, std::string_view content,
                                      std::optional<Severity> severity = std::nullopt);
  // Forgets the recent templates (a new stream starts without context).
  void reset_history() { histories_.clear(); }

  [[nodiscard]] const DetectorConfig& config() const { return config_; }
  // Run-time scoring settings (top_k, min_support, rare_count, threshold, learn, decay,
  // context caps); the tree's settings and history stay as trained.
  void set_scoring(const DetectorConfig& scoring);
  [[nodiscard]] const TemplateMiner& miner() const { return miner_; }
  [[nodiscard]] double template_count(TemplateId id) const;
  [[nodiscard]] std::size_t context_count() const { return contexts_.size(); }
  [[nodiscard]] std::uint64_t events() const { return events_; }
  [[nodiscard]] std::uint64_t context_evictions() const { return context_evictions_; }
  // -log2 P(template | context) for `id` (0: a new template) from `source`
  // after that source's recent templates, as observe() scores it.
  [[nodiscard]] double surprise(std::uint32_t source, TemplateId id) const;
  // The surprise the sequence check flags above; nullopt until
  // kMinSurpriseSamples lines were learned.
  [[nodiscard]] std::optional<double> surprise_threshold() const;
  [[nodiscard]] const std::array<double, kSurpriseBins>& surprise_bins() const {
    return surprise_bins_;
  }
  void restore_surprise_bins(const std::array<double, kSurpriseBins>& bins) {
    surprise_bins_ = bins;
    threshold_stale_ = kThresholdRefresh;
  }

  // For model_file.cpp.
  [[nodiscard]] const std::unordered_map<Context, Successors, ContextHash>& contexts() const {
    return contexts_;
  }
  [[nodiscard]] const std::list<Context>& contexts_by_recency() const { return context_recency_; }
  void restore_template(Cluster cluster, double count);
  void restore_context(const Context& context, double total,
                       std::vector<std::pair<TemplateId, double>> next);
  void set_events(std::uint64_t events) { events_ = events; }
  void set_next_template_id(TemplateId id) { miner_.set_next_id(id); }

 private:
  // The contexts surprise_found() looked at, by length, for count() to reuse.
  struct Found {
    std::array<const Successors*, kMaxHistory + 1> at{};
  };
  struct SequenceCheck {
    bool unexpected = false;
    double score = 0;
  };
  // `surprise`: surprise(source, id), computed once per line by observe().
  [[nodiscard]] std::optional<SequenceCheck> check_sequence(std::uint32_t source, TemplateId id,
                                                            double surprise) const;
  [[nodiscard]] const std::vector<TemplateId>& history_of(std::uint32_t source) const;
  [[nodiscard]] std::optional<double> threshold_from_bins() const;
  void push_history(std::uint32_t source, TemplateId id);
  void count(std::uint32_t source, TemplateId id, double surprise,
             std::optional<TemplateId> evicted, const Found* found = nullptr);
  // Finds or makes `context` and counts `id` after it; true when making it
  // evicted another context.
  bool count_successor(const Context& context, TemplateId id);
  void add_successor(Successors& s, TemplateId id);
  double surprise_found(std::uint32_t source, TemplateId id, Found* found) const;
  void decay();

  DetectorConfig config_;
  TemplateMiner miner_;
  std::unordered_map<TemplateId, double> template_counts_;
  std::unordered_map<Context, Successors, ContextHash> contexts_;
  std::list<Context> context_recency_;  // front: least recently used
  // Per source, its last `history` templates, oldest first.
  std::unordered_map<std::uint32_t, std::vector<TemplateId>> histories_;
  double total_count_ = 0;  // the sum of template_counts_
  std::array<double, kSurpriseBins> surprise_bins_{};
  // surprise_threshold() walks the bins; a quantile of thousands of lines
  // barely moves in a few more, so it is recomputed each kThresholdRefresh
  // learned lines (and after a restore or decay), not per line.
  static constexpr std::uint32_t kThresholdRefresh = 64;
  mutable std::optional<double> threshold_cache_;
  mutable std::uint32_t threshold_stale_ = kThresholdRefresh;
  std::uint64_t events_ = 0;
  std::uint64_t context_evictions_ = 0;
};

}  // namespace ckpt::logwatch
