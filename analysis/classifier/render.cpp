#include "analysis/classifier/render.h"

#include <fmt/format.h>

namespace ckpt::classify {

namespace {

// "source" only when the line came from elsewhere than `file` (the kernel
// log, the exit status).
nlohmann::json evidence_json(const Evidence& e, const std::string& file) {
  nlohmann::json j = {{"line", e.line}, {"text", e.text}};
  if (!e.source.empty() && e.source != file) j["source"] = e.source;
  return j;
}

nlohmann::json scores_json(const Scores& s) {
  nlohmann::json per = nlohmann::json::object();
  for (const auto& c : s.per_class)
    per[c.cls] = {{"support", c.support},     {"tp", c.tp},         {"fp", c.fp}, {"fn", c.fn},
                  {"precision", c.precision}, {"recall", c.recall}, {"f1", c.f1}};
  return {{"macro_f1", s.macro_f1}, {"accuracy", s.accuracy}, {"logs", s.logs}, {"classes", per}};
}

}  // namespace

nlohmann::json to_json(const Classification& c, const std::string& file) {
  nlohmann::json j = {{"file", file}, {"class", c.cls}, {"rule", c.rule}};
  j["evidence"] = nlohmann::json::array();
  for (const auto& e : c.evidence) j["evidence"].push_back(evidence_json(e, file));
  j["precedence"] = c.precedence;
  j["symptoms"] = nlohmann::json::array();
  for (const auto& s : c.symptoms)
    j["symptoms"].push_back(
        {{"class", s.cls}, {"rule", s.rule}, {"first", evidence_json(s.first, file)}});
  j["lines_scanned"] = c.lines_scanned;
  j["bytes_scanned"] = c.bytes_scanned;
  j["whole_file"] = c.whole_input;
  return j;
}

std::string to_text(const Classification& c, const std::string& file) {
  std::string out = c.rule.empty() ? fmt::format("{}: {}\n", file, c.cls)
                                   : fmt::format("{}: {} (rule {})\n", file, c.cls, c.rule);
  for (const auto& e : c.evidence) {
    out += fmt::format("  {}: {}\n", evidence_where(e.line, e.source, e.source == file), e.text);
  }
  for (const auto& s : c.symptoms)
    out += fmt::format("  symptom {} (rule {}) first at line {}\n", s.cls, s.rule, s.first.line);
  if (!c.whole_input)
    out += fmt::format("  (read the last {} lines; nothing earlier could outrank this)\n",
                       c.lines_scanned);
  return out;
}

nlohmann::json to_json(const Evaluation& e) {
  nlohmann::json mistakes = nlohmann::json::array();
  for (const auto& m : e.mistakes)
    mistakes.push_back(
        {{"id", m.id}, {"truth", m.truth}, {"predicted", m.predicted}, {"rule", m.rule}});
  return {{"classes", e.classes},
          {"ordered_rules", scores_json(e.rules)},
          {"keyword_baseline", scores_json(e.keyword)},
          {"exit_code_baseline", scores_json(e.exit_code)},
          {"mistakes", mistakes},
          {"bytes", e.bytes}};
}

std::string to_text(const Evaluation& e, const std::string& title) {
  std::string out = fmt::format("{} ({} logs)\n", title, e.rules.logs);
  out += fmt::format("{:<16} {:>7} | {:>9} {:>9} {:>9} | {:>10} | {:>10}\n", "class", "support",
                     "precision", "recall", "F1", "keyword F1", "exit F1");
  for (size_t i = 0; i < e.classes.size(); ++i) {
    const auto& r = e.rules.per_class[i];
    out += fmt::format("{:<16} {:>7} | {:>9.4f} {:>9.4f} {:>9.4f} | {:>10.4f} | {:>10.4f}\n", r.cls,
                       r.support, r.precision, r.recall, r.f1, e.keyword.per_class[i].f1,
                       e.exit_code.per_class[i].f1);
  }
  out += fmt::format("{:<16} {:>7} | {:>9} {:>9} {:>9.4f} | {:>10.4f} | {:>10.4f}\n", "macro-F1",
                     "", "", "", e.rules.macro_f1, e.keyword.macro_f1, e.exit_code.macro_f1);
  out += fmt::format("accuracy: ordered rules {:.4f}, keyword matching {:.4f}, exit code {:.4f}\n",
                     e.rules.accuracy, e.keyword.accuracy, e.exit_code.accuracy);
  for (const auto& m : e.mistakes)
    out += fmt::format("  mistake: {} is {} but classified {}{}\n", m.id, m.truth, m.predicted,
                       m.rule.empty() ? "" : " (rule " + m.rule + ")");
  return out;
}

}  // namespace ckpt::classify
