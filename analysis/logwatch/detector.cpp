#include "analysis/logwatch/detector.h"

#include <algorithm>
#include <cmath>

#include "analysis/logwatch/masking.h"
#include "analysis/logwatch/source_key.h"
#include "common/fnv1a.h"

namespace ckpt::logwatch {

namespace {

constexpr double kDropBelow = 0.01;  // decayed counts under this are forgotten
// Sources whose recent templates are kept; past it the histories start over
// (a stream naming ever new sources must not grow without bound).
constexpr std::size_t kMaxSources = 4096;

Context context_of(std::uint32_t source, const std::vector<TemplateId>& history,
                   std::size_t length) {
  Context c;
  c.source = source;
  c.length = static_cast<std::uint8_t>(length);
  std::copy(history.end() - static_cast<std::ptrdiff_t>(length), history.end(), c.ids.begin());
  return c;
}

void add_reason(Verdict& v, const char* reason, double score) {
  if (!v.reason.empty()) v.reason += '+';
  v.reason += reason;
  v.novelty = std::max(v.novelty, score);
}

}  // namespace

std::size_t ContextHash::operator()(const Context& c) const noexcept {
  // FNV-1a over the source, the length and the ids in use.
  std::uint64_t h = fnv1a_step(kFnv1aOffset ^ c.length, c.source);
  for (std::size_t i = 0; i < c.length; ++i) h = fnv1a_step(h, c.ids[i]);
  return static_cast<std::size_t>(h);
}

LogDetector::LogDetector(DetectorConfig config) : config_(config), miner_(config.drain) {
  config_.history = std::clamp(config_.history, 0, kMaxHistory);
}

void LogDetector::set_scoring(const DetectorConfig& s) {
  config_.top_k = s.top_k;
  config_.sequence_quantile = s.sequence_quantile;
  config_.min_support = s.min_support;
  config_.rare_count = s.rare_count;
  config_.threshold = s.threshold;
  config_.learn = s.learn;
  config_.learn_anomalies = s.learn_anomalies;
  config_.known_faults = s.known_faults;
  config_.severity_from_words = s.severity_from_words;
  config_.decay_every = s.decay_every;
  config_.decay_factor = s.decay_factor;
  config_.max_contexts = s.max_contexts;
  config_.max_successors = s.max_successors;
}

double LogDetector::template_count(TemplateId id) const {
  auto it = template_counts_.find(id);
  return it == template_counts_.end() ? 0.0 : it->second;
}

LogDetector::LogDetector(const LogDetector& other) { *this = other; }

LogDetector& LogDetector::operator=(const LogDetector& other) {
  if (this == &other) return *this;
  config_ = other.config_;
  miner_ = other.miner_;
  template_counts_ = other.template_counts_;
  histories_ = other.histories_;
  total_count_ = other.total_count_;
  surprise_bins_ = other.surprise_bins_;
  threshold_cache_ = other.threshold_cache_;
  threshold_stale_ = other.threshold_stale_;
  events_ = other.events_;
  context_evictions_ = other.context_evictions_;
  // The recency iterators must point into our own list.
  contexts_.clear();
  context_recency_.clear();
  for (const Context& c : other.context_recency_) {
    const Successors& s = other.contexts_.at(c);
    restore_context(c, s.total, s.next);
  }
  return *this;
}

TemplateId LogDetector::learn(std::string_view content) {
  std::vector<std::string> tokens = tokenize_and_mask(content);
  if (tokens.empty()) return 0;  // a blank line is no event (detector.h)
  const std::uint32_t source = source_key(source_of(content));
  MatchResult m = miner_.add(tokens);
  count(source, m.id, surprise(source, m.created ? 0 : m.id), m.evicted);
  return m.id;
}

const std::vector<TemplateId>& LogDetector::history_of(std::uint32_t source) const {
  static const std::vector<TemplateId> kNone;
  auto it = histories_.find(source);
  return it == histories_.end() ? kNone : it->second;
}

void LogDetector::push_history(std::uint32_t source, TemplateId id) {
  if (config_.history == 0) return;
  if (histories_.size() >= kMaxSources && !histories_.contains(source)) histories_.clear();
  std::vector<TemplateId>& h = histories_[source];
  h.push_back(id);
  if (h.size() > static_cast<std::size_t>(config_.history)) h.erase(h.begin());
}

double LogDetector::surprise(std::uint32_t source, TemplateId id) const {
  return surprise_found(source, id, nullptr);
}

double LogDetector::surprise_found(std::uint32_t source, TemplateId id, Found* found) const {
  // Witten-Bell interpolation, shortest context first: the global base rate
  // (a new template has the escape mass, distinct / (total + distinct)),
  // then the source's own counts, then its recent templates.
  const auto distinct = static_cast<double>(template_counts_.size());
  if (total_count_ <= 0) return 0;  // nothing known: nothing is surprising
  const double known = id == 0 ? 0.0 : template_count(id);
  double p = (known > 0 ? known : distinct) / (total_count_ + distinct);
  const std::vector<TemplateId>& history = history_of(source);
  const std::size_t longest = std::min<std::size_t>(config_.history, history.size());
  for (std::size_t length = source == 0 ? 1 : 0; length <= longest; ++length) {
    auto it = contexts_.find(context_of(source, history, length));
    if (it == contexts_.end()) continue;
    const Successors& s = it->second;
    if (found != nullptr) found->at[length] = &it->second;
    // A thin context has no say (min_support); the source's own counts always do.
    if (s.total <= 0 || (length > 0 && s.total < config_.min_support)) continue;
    double mine = 0;
    if (id != 0)
      for (const auto& [next, c] : s.next)
        if (next == id) mine = c;
    const auto d = static_cast<double>(s.next.size());
    p = (mine + d * p) / (s.total + d);
  }
  return p > 0 ? -std::log2(p) : 64.0;
}

std::optional<double> LogDetector::surprise_threshold() const {
  if (threshold_stale_ < kThresholdRefresh) return threshold_cache_;
  threshold_stale_ = 0;
  threshold_cache_ = threshold_from_bins();
  return threshold_cache_;
}

std::optional<double> LogDetector::threshold_from_bins() const {
  double n = 0;
  for (double c : surprise_bins_) n += c;
  if (n < kMinSurpriseSamples) return std::nullopt;
  // The bin where the quantile falls; its upper edge, so a surprise as high
  // as the training's own quantile is not flagged.
  const double target = config_.sequence_quantile * n;
  double seen = 0;
  for (int b = 0; b < kSurpriseBins; ++b) {
    seen += surprise_bins_[static_cast<std::size_t>(b)];
    if (seen >= target) return static_cast<double>(b + 1) / kSurpriseBinsPerBit;
  }
  return static_cast<double>(kSurpriseBins) / kSurpriseBinsPerBit;
}

std::optional<LogDetector::SequenceCheck> LogDetector::check_sequence(std::uint32_t source,
                                                                      TemplateId id,
                                                                      double s) const {
  const auto threshold = surprise_threshold();
  if (!threshold || id == 0) return std::nullopt;
  // Most lines are not surprising: they need no look at the successors.
  if (s <= *threshold) return SequenceCheck{};
  const std::vector<TemplateId>& history = history_of(source);
  // The longest supported context: a top-k successor there is expected.
  for (auto length = std::min<std::size_t>(config_.history, history.size()); length > 0; --length) {
    auto it = contexts_.find(context_of(source, history, length));
    if (it == contexts_.end() || it->second.total < config_.min_support) continue;
    double mine = 0;
    for (const auto& [next, c] : it->second.next)
      if (next == id) mine = c;
    int ahead = 0;
    for (const auto& [next, c] : it->second.next)
      if (c > mine) ++ahead;
    if (mine > 0 && ahead < config_.top_k) return SequenceCheck{};
    break;
  }
  SequenceCheck check;
  check.unexpected = s > *threshold;
  check.score = check.unexpected ? 1.0 - std::exp2(*threshold - s) : 0.0;
  return check;
}

Verdict LogDetector::observe(std::string_view content, std::optional<Severity> severity) {
  std::vector<std::string> tokens = tokenize_and_mask(content);
  Verdict v;
  if (tokens.empty()) {
    // Blank: neither scored, learned, nor a step in the sequence.
    v.blank = true;
    return v;
  }
  // Judged against what is known before this line; learned (below) only
  // once the verdict is in.
  const std::optional<TemplateId> matched = miner_.match(tokens);
  if (matched) {
    v.template_id = *matched;
  } else {
    v.new_template = true;
  }
  const std::uint32_t source = source_key(source_of(content));
  if (config_.known_faults) {
    if (const KnownFault* fault = config_.known_faults->match(content)) {
      v.known_fault = fault;
      add_reason(v, "known_fault", 1.0);
    }
  }
  if (v.new_template) {
    add_reason(v, "new_template", 1.0);
  } else if (config_.rare_count > 0) {
    if (const double seen = template_count(v.template_id); seen < config_.rare_count)
      add_reason(v, "rare_template", 1.0 - seen / config_.rare_count);
  }
  // Scored once: the same state judges the line and, when learned, is what
  // its surprise is recorded against.
  Found found;
  const double surprise_now = surprise_found(source, v.new_template ? 0 : v.template_id, &found);
  if (auto seq = check_sequence(source, v.template_id, surprise_now); seq && seq->unexpected)
    add_reason(v, "unexpected_sequence", seq->score);
  // A line without a level takes one from its words, read only for a line
  // some reason fired on: the others are no anomaly whatever their level.
  if (!severity && config_.severity_from_words && !v.reason.empty())
    severity = severity_from_words(content);
  v.level = severity;
  v.score = v.novelty * (severity ? severity_weight(*severity) : 1.0);
  const double threshold = config_.threshold.value_or(severity ? kSeverityThreshold : 0.0);
  v.anomaly = v.known_fault != nullptr || (!v.reason.empty() && v.score >= threshold);
  if (v.known_fault) v.score = std::max(v.score, severity_weight(v.known_fault->severity));
  if (config_.learn && (!v.anomaly || config_.learn_anomalies)) {
    const MatchResult m = miner_.add_matched(tokens, matched);
    v.template_id = m.id;
    count(source, m.id, surprise_now, m.evicted, &found);
  } else {
    // The sequence still moves on; an unknown template (0) matches no context.
    push_history(source, v.template_id);
  }
  return v;
}

std::optional<Anomaly> LogDetector::observe_line(std::uint64_t line, std::string_view content,
                                                 std::optional<Severity> severity) {
  Verdict v = observe(content, severity);
  if (!v.anomaly) return std::nullopt;
  Anomaly a;
  a.line = line;
  a.text = std::string(content);
  a.template_text = v.template_id != 0 ? miner_.template_text(v.template_id)
                                       : join_tokens(tokenize_and_mask(content));
  a.score = v.score;
  a.reason = std::move(v.reason);
  a.level = v.level;
  if (v.known_fault) {
    a.kind = v.known_fault->kind;
    a.fault_id = v.known_fault->id;
    a.rank = AlarmRank::kKnownFault;
  } else {
    a.rank = novelty_rank(v.level);
  }
  return a;
}

void LogDetector::count(std::uint32_t source, TemplateId id, double surprise,
                        std::optional<TemplateId> evicted, const Found* found) {
  if (evicted) {
    if (auto it = template_counts_.find(*evicted); it != template_counts_.end()) {
      total_count_ -= it->second;
      template_counts_.erase(it);
    }
  }
  // The surprise this line had before it was learned: the distribution the
  // sequence threshold is the quantile of.
  const auto bin = static_cast<std::size_t>(
      std::clamp(surprise * kSurpriseBinsPerBit, 0.0, static_cast<double>(kSurpriseBins - 1)));
  surprise_bins_[bin] += 1.0;
  ++threshold_stale_;
  template_counts_[id] += 1.0;
  total_count_ += 1.0;
  // One look-up of the source's history, counted and moved on in place.
  if (histories_.size() >= kMaxSources && !histories_.contains(source)) histories_.clear();
  std::vector<TemplateId>& history = histories_[source];
  const std::size_t longest = std::min<std::size_t>(config_.history, history.size());
  for (std::size_t length = source == 0 ? 1 : 0; length <= longest; ++length) {
    // A context scoring found is counted through its pointer (elements of an
    // unordered_map stay put on rehash) until an insertion evicts one: then
    // the rest are looked up again, as the evicted one may be among them.
    if (found != nullptr && found->at[length] != nullptr) {
      Successors& s = *const_cast<Successors*>(found->at[length]);
      context_recency_.splice(context_recency_.end(), context_recency_, s.recency);
      add_successor(s, id);
      continue;
    }
    if (count_successor(context_of(source, history, length), id)) found = nullptr;
  }
  if (config_.history > 0) {
    history.push_back(id);
    if (history.size() > static_cast<std::size_t>(config_.history)) history.erase(history.begin());
  }
  ++events_;
  if (config_.learn && config_.decay_every > 0 && events_ % config_.decay_every == 0) decay();
}

bool LogDetector::count_successor(const Context& context, TemplateId id) {
  bool evicted = false;
  auto it = contexts_.find(context);
  if (it == contexts_.end()) {
    if (config_.max_contexts > 0 && contexts_.size() >= config_.max_contexts) {
      contexts_.erase(context_recency_.front());
      context_recency_.pop_front();
      ++context_evictions_;
      evicted = true;
    }
    context_recency_.push_back(context);
    Successors s;
    s.recency = std::prev(context_recency_.end());
    it = contexts_.emplace(context, std::move(s)).first;
  } else {
    context_recency_.splice(context_recency_.end(), context_recency_, it->second.recency);
  }
  add_successor(it->second, id);
  return evicted;
}

void LogDetector::add_successor(Successors& s, TemplateId id) {
  s.total += 1.0;
  auto next =
      std::find_if(s.next.begin(), s.next.end(), [id](const auto& p) { return p.first == id; });
  if (next != s.next.end()) {
    next->second += 1.0;
    return;
  }
  if (config_.max_successors > 0 && s.next.size() >= config_.max_successors) {
    // Keep the most frequent: the newcomer replaces the least frequent.
    auto least = std::min_element(s.next.begin(), s.next.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
    *least = {id, 1.0};
    return;
  }
  s.next.emplace_back(id, 1.0);
}

void LogDetector::decay() {
  const double f = config_.decay_factor;
  // A template's count stays while the miner has it: a long-unseen template
  // decays to rare, which is what it has become.
  total_count_ = 0;
  for (auto& [id, c] : template_counts_) {
    c = c * f < kDropBelow ? 0.0 : c * f;
    total_count_ += c;
  }
  for (double& b : surprise_bins_) b *= f;
  threshold_stale_ = kThresholdRefresh;
  for (auto it = contexts_.begin(); it != contexts_.end();) {
    Successors& s = it->second;
    s.total = 0;
    for (auto& p : s.next) p.second *= f;
    std::erase_if(s.next, [](const auto& p) { return p.second < kDropBelow; });
    for (const auto& p : s.next) s.total += p.second;
    if (s.next.empty()) {
      context_recency_.erase(s.recency);
      it = contexts_.erase(it);
    } else {
      ++it;
    }
  }
}

void LogDetector::restore_template(Cluster cluster, double count) {
  total_count_ += count - template_count(cluster.id);
  template_counts_[cluster.id] = count;
  miner_.restore(std::move(cluster));
}

void LogDetector::restore_context(const Context& context, double total,
                                  std::vector<std::pair<TemplateId, double>> next) {
  context_recency_.push_back(context);
  Successors s;
  s.total = total;
  s.next = std::move(next);
  s.recency = std::prev(context_recency_.end());
  contexts_.insert_or_assign(context, std::move(s));
}

}  // namespace ckpt::logwatch
