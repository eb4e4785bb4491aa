#include "analysis/logwatch/evaluation.h"

#include <algorithm>
#include <fstream>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/logwatch/baselines.h"
#include "analysis/logwatch/line_format.h"
#include "analysis/logwatch/masking.h"

namespace ckpt::logwatch {

namespace {

// One CSV record's fields (RFC 4180 quoting; no newlines inside fields in
// Loghub's files).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

double ratio(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

}  // namespace

Expected<std::vector<LabelledLine>> load_bgl(const std::string& log_path,
                                             const std::string& structured_csv) {
  std::ifstream log(log_path);
  if (!log) return make_error(fmt::format("cannot open {}", log_path));
  std::vector<LabelledLine> lines;
  std::string text;
  while (std::getline(log, text)) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    std::string scratch;
    ParsedLine p = parse_line(text, LineFormat::kBgl, scratch);
    if (p.label.empty())
      return make_error(
          fmt::format("{}:{}: empty line, not a BGL record", log_path, lines.size() + 1));
    lines.push_back({std::string(p.message), p.label != "-", {}, p.severity});
  }
  if (lines.empty()) return make_error(fmt::format("{}: no lines", log_path));
  if (structured_csv.empty()) return lines;
  std::ifstream csv(structured_csv);
  if (!csv) return make_error(fmt::format("cannot open {}", structured_csv));
  std::getline(csv, text);
  auto header = csv_fields(text);
  auto column = std::find(header.begin(), header.end(), "EventId");
  if (column == header.end())
    return make_error(fmt::format("{}: no EventId column in the header", structured_csv));
  const auto event_col = static_cast<std::size_t>(column - header.begin());
  std::size_t n = 0;
  while (std::getline(csv, text)) {
    auto fields = csv_fields(text);
    if (n >= lines.size())
      return make_error(fmt::format("{}: more records than {} has lines ({})", structured_csv,
                                    log_path, lines.size()));
    if (fields.size() <= event_col)
      return make_error(
          fmt::format("{}:{}: {} fields, no EventId", structured_csv, n + 2, fields.size()));
    lines[n++].event_id = fields[event_col];
  }
  if (n != lines.size())
    return make_error(fmt::format("{}: {} records for {} lines of {}", structured_csv, n,
                                  lines.size(), log_path));
  return lines;
}

Expected<std::vector<LabelledLine>> load_log(const std::string& log_path, LineFormat format) {
  std::ifstream log(log_path);
  if (!log) return make_error(fmt::format("cannot open {}", log_path));
  std::vector<LabelledLine> lines;
  std::string text;
  std::string scratch;
  while (std::getline(log, text)) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    ParsedLine p = parse_line(text, format, scratch);
    lines.push_back({std::string(p.message), !p.label.empty() && p.label != "-", {}, p.severity});
  }
  if (lines.empty()) return make_error(fmt::format("{}: no lines", log_path));
  return lines;
}

double Confusion::precision() const { return ratio(tp, tp + fp); }
double Confusion::recall() const { return ratio(tp, tp + fn); }
double Confusion::f1() const {
  double p = precision();
  double r = recall();
  return p + r == 0 ? 0.0 : 2 * p * r / (p + r);
}
Confusion& Confusion::operator+=(const Confusion& o) {
  tp += o.tp;
  fp += o.fp;
  fn += o.fn;
  tn += o.tn;
  return *this;
}

Confusion confusion(const std::vector<bool>& predicted, const std::vector<bool>& truth) {
  Confusion c;
  for (std::size_t i = 0; i < predicted.size() && i < truth.size(); ++i) {
    if (predicted[i] && truth[i]) ++c.tp;
    if (predicted[i] && !truth[i]) ++c.fp;
    if (!predicted[i] && truth[i]) ++c.fn;
    if (!predicted[i] && !truth[i]) ++c.tn;
  }
  return c;
}

double grouping_accuracy(const std::vector<TemplateId>& predicted,
                         const std::vector<std::string>& truth) {
  if (predicted.empty() || predicted.size() != truth.size()) return 0;
  // A predicted group is correct when all its messages share one truth
  // group and that truth group has no other messages: same sizes and one
  // truth id across the predicted group.
  std::unordered_map<TemplateId, std::size_t> predicted_size;
  std::unordered_map<std::string, std::size_t> truth_size;
  std::unordered_map<TemplateId, std::string> truth_of_group;
  std::unordered_map<TemplateId, bool> pure;
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    ++predicted_size[predicted[i]];
    ++truth_size[truth[i]];
    auto [it, inserted] = truth_of_group.emplace(predicted[i], truth[i]);
    if (inserted) pure[predicted[i]] = true;
    if (it->second != truth[i]) pure[predicted[i]] = false;
  }
  std::size_t correct = 0;
  for (const auto& [group, size] : predicted_size)
    if (pure[group] && truth_size[truth_of_group[group]] == size) correct += size;
  return static_cast<double>(correct) / static_cast<double>(predicted.size());
}

namespace {

// Flags grouped into alarms as the detector's are (same template within the
// window), with no budget: what an operator would be shown by a baseline.
std::uint64_t grouped_alarms(const std::vector<bool>& flags, const std::vector<TemplateId>& ids,
                             std::uint64_t window) {
  std::unordered_map<TemplateId, std::size_t> last;
  std::uint64_t alarms = 0;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (!flags[i]) continue;
    auto it = last.find(ids[i]);
    if (window == 0 || it == last.end() || it->second + window < i) ++alarms;
    last[ids[i]] = i;
  }
  return alarms;
}

}  // namespace

SplitResult evaluate_split(const std::vector<LabelledLine>& lines,
                           const std::vector<std::size_t>& train, std::size_t test_begin,
                           std::size_t test_end, const EvalOptions& options) {
  SplitResult r;
  DetectorConfig learning = options.detector;
  learning.learn = true;
  LogDetector trained(learning);
  std::vector<TemplateId> train_ids;
  train_ids.reserve(train.size());
  for (std::size_t i : train) train_ids.push_back(trained.learn(lines[i].message));
  trained.reset_history();
  r.train_lines = train.size();
  const TemplateId first_new = trained.miner().next_id();

  std::vector<bool> truth;
  std::vector<bool> detected;
  std::vector<bool> severe;
  LogDetector detector = trained;
  DetectorConfig scoring = options.detector;
  // The ablation without levels gives the detector none, not even from words.
  if (!options.use_severity) scoring.severity_from_words = false;
  detector.set_scoring(scoring);
  AlarmGrouper alarms(options.alarms);
  // The same alarms with no budget: what the detector itself raises.
  AlarmConfig grouping_only = options.alarms;
  grouping_only.max_rate = 0;
  AlarmGrouper unbudgeted(grouping_only);
  TemplateMiner miner = trained.miner();
  std::vector<TemplateId> test_ids;
  for (std::size_t i = test_begin; i < test_end; ++i) {
    truth.push_back(lines[i].anomaly);
    const auto severity = options.use_severity ? lines[i].severity : std::nullopt;
    const std::uint64_t line = i + 1;
    bool shown = false;
    if (auto a = detector.observe_line(line, lines[i].message, severity)) {
      const AlarmDecision d = alarms.add(line, a->template_text, a->score, severity, a->rank);
      shown = d != AlarmDecision::kHeld;
      if (d == AlarmDecision::kNewAlarm && !lines[i].anomaly) ++r.false_alarms;
      if (unbudgeted.add(line, a->template_text, a->score, severity, a->rank) ==
              AlarmDecision::kNewAlarm &&
          !lines[i].anomaly)
        ++r.false_alarms_unbudgeted;
      if (a->rank == AlarmRank::kKnownFault) {
        ++r.known_fault_lines;
        if (shown) ++r.known_fault_lines_shown;
      }
    } else {
      alarms.tick(line);
      unbudgeted.tick(line);
    }
    detected.push_back(shown);
    severe.push_back(lines[i].severity && *lines[i].severity <= options.severity_at_least);
    test_ids.push_back(miner.add(tokenize_and_mask(lines[i].message)).id);
  }
  r.test_lines = truth.size();
  r.test_anomalies = static_cast<std::size_t>(std::count(truth.begin(), truth.end(), true));
  r.held = alarms.held();
  CountOutlierBaseline counts(options.counts);
  counts.fit(train_ids);
  const auto new_flags = new_template_baseline(test_ids, first_new);
  const auto count_flags = counts.flag(test_ids);
  const std::uint64_t w = options.alarms.group_window;
  r.methods = {
      {"detector", confusion(detected, truth), alarms.alarms()},
      {"new_template", confusion(new_flags, truth), grouped_alarms(new_flags, test_ids, w)},
      {"count_outlier", confusion(count_flags, truth), grouped_alarms(count_flags, test_ids, w)},
      {"severity", confusion(severe, truth), grouped_alarms(severe, test_ids, w)}};
  return r;
}

HealthyResult evaluate_healthy(const std::vector<LabelledLine>& lines, const EvalOptions& options) {
  std::vector<std::size_t> train(lines.size() / 2);
  for (std::size_t i = 0; i < train.size(); ++i) train[i] = i;
  // Every line is normal here: the split's false positives are the false alarms.
  std::vector<LabelledLine> healthy = lines;
  for (auto& l : healthy) l.anomaly = false;
  SplitResult s = evaluate_split(healthy, train, train.size(), lines.size(), options);
  HealthyResult h;
  h.train_lines = s.train_lines;
  h.test_lines = s.test_lines;
  h.methods = std::move(s.methods);
  h.held = s.held;
  h.false_alarms = s.false_alarms;
  h.false_alarms_unbudgeted = s.false_alarms_unbudgeted;
  return h;
}

Expected<EvalResult> evaluate(const std::vector<LabelledLine>& lines, const EvalOptions& options) {
  if (options.train_fraction <= 0 || options.train_fraction >= 1)
    return make_error(
        fmt::format("train fraction {} is not between 0 and 1", options.train_fraction));
  if (options.folds < 2 || static_cast<std::size_t>(options.folds) > lines.size())
    return make_error(fmt::format("{} folds for {} lines", options.folds, lines.size()));
  EvalResult result;
  result.lines = lines.size();
  for (const auto& l : lines) result.anomalies += l.anomaly ? 1 : 0;

  if (!lines.front().event_id.empty()) {
    TemplateMiner miner(options.detector.drain);
    std::vector<TemplateId> ids;
    std::vector<std::string> truth;
    for (const auto& l : lines) {
      ids.push_back(miner.add(tokenize_and_mask(l.message)).id);
      truth.push_back(l.event_id);
    }
    result.grouping_accuracy = grouping_accuracy(ids, truth);
    result.templates_mined = miner.size();
    std::sort(truth.begin(), truth.end());
    result.templates_truth =
        static_cast<std::size_t>(std::unique(truth.begin(), truth.end()) - truth.begin());
  }

  // Chronological only: every model is trained on lines before the ones it scores.
  auto normal_before = [&](std::size_t end) {
    std::vector<std::size_t> train;
    for (std::size_t i = 0; i < end; ++i)
      if (!lines[i].anomaly) train.push_back(i);
    return train;
  };
  const auto split_at = static_cast<std::size_t>(options.train_fraction * lines.size());
  result.split = evaluate_split(lines, normal_before(split_at), split_at, lines.size(), options);
  for (int f = 1; f < options.folds; ++f) {
    std::size_t begin = lines.size() * f / options.folds;
    std::size_t end = lines.size() * (f + 1) / options.folds;
    SplitResult fold = evaluate_split(lines, normal_before(begin), begin, end, options);
    if (result.kfold.empty()) {
      result.kfold = fold.methods;
    } else {
      for (std::size_t m = 0; m < fold.methods.size(); ++m) {
        result.kfold[m].counts += fold.methods[m].counts;
        result.kfold[m].alarms += fold.methods[m].alarms;
      }
    }
  }
  return result;
}

}  // namespace ckpt::logwatch
