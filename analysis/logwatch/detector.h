// The node-log anomaly detector: Drain templates (drain.h) plus decayed
// counts of how often each template and each short sequence of templates
// occurred. Per message it asks three questions and answers each with a
// score in [0, 1]:
//   new_template         no known template is similar (score 1);
//   rare_template        the template was seen fewer than `rare_count`
//                        times (score 1 - count / rare_count);
//   unexpected_sequence  the template is not among the `top_k` most frequent
//                        successors of the previous `history` templates
//                        (DeepLog, Du et al., CCS 2017, with n-gram counts
//                        for the LSTM, as LogGPT's top-k check; the longest
//                        context seen before is used, backing off to
//                        shorter ones, and only a context seen at least
//                        `min_support` times; score 1 - P(template | context)).
// The line's score is the highest of those times its severity's weight
// (severity.h; 1 for a line without a severity). A message is an anomaly when
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
#include "analysis/logwatch/severity.h"

namespace ckpt::logwatch {

inline constexpr int kMaxHistory = 4;
// The default threshold for a line with a severity (severity.h).
inline constexpr double kSeverityThreshold = 0.5;

struct DetectorConfig {
  DrainConfig drain;
  int history = 2;  // n-gram order minus one (saved with the model)
  // Scoring; given at run time, not saved with a model.
  int top_k = 5;
  double min_support = 5.0;  // judge a sequence only after a context seen this often
  double rare_count = 5.0;
  // nullopt: kSeverityThreshold for a line with a severity, 0 for one without.
  std::optional<double> threshold;
  bool learn = true;  // keep learning from the stream (counts decay)
  // Also learn the lines judged anomalous. Off by default: as DeepLog updates
  // its model only with what an operator confirms normal, a failure that
  // repeats (the same Xid every few seconds) stays an anomaly rather than
  // becoming a "known" template by its own repetition.
  bool learn_anomalies = false;
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
};

struct Anomaly {
  std::uint64_t line = 0;  // 1-based, in the input
  std::string text;        // the message as read
  std::string template_text;
  double score = 0;
  std::string reason;
};

struct Context {
  std::uint8_t length = 0;
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
  void reset_history() { history_.clear(); }

  [[nodiscard]] const DetectorConfig& config() const { return config_; }
  // Run-time scoring settings (top_k, min_support, rare_count, threshold, learn, decay,
  // context caps); the tree's settings and history stay as trained.
  void set_scoring(const DetectorConfig& scoring);
  [[nodiscard]] const TemplateMiner& miner() const { return miner_; }
  [[nodiscard]] double template_count(TemplateId id) const;
  [[nodiscard]] std::size_t context_count() const { return contexts_.size(); }
  [[nodiscard]] std::uint64_t events() const { return events_; }
  [[nodiscard]] std::uint64_t context_evictions() const { return context_evictions_; }

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
  struct SequenceCheck {
    bool unexpected = false;
    double score = 0;
  };
  [[nodiscard]] std::optional<SequenceCheck> check_sequence(TemplateId id) const;
  void count(TemplateId id, bool created, std::optional<TemplateId> evicted);
  void count_successor(const Context& context, TemplateId id);
  void decay();

  DetectorConfig config_;
  TemplateMiner miner_;
  std::unordered_map<TemplateId, double> template_counts_;
  std::unordered_map<Context, Successors, ContextHash> contexts_;
  std::list<Context> context_recency_;  // front: least recently used
  std::vector<TemplateId> history_;     // last `history` templates, oldest first
  std::uint64_t events_ = 0;
  std::uint64_t context_evictions_ = 0;
};

}  // namespace ckpt::logwatch
