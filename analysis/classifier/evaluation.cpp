#include "analysis/classifier/evaluation.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/classifier/baselines.h"

namespace ckpt::classify {

namespace fs = std::filesystem;

Expected<std::vector<LabelledLog>> load_labels(const std::string& labels_path) {
  std::ifstream in(labels_path);
  if (!in) return make_error(fmt::format("{}: cannot read it", labels_path));
  fs::path dir = fs::path(labels_path).parent_path();
  std::vector<LabelledLog> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      return make_error(fmt::format("{}:{}: not JSON: {}", labels_path, n, e.what()));
    }
    LabelledLog log;
    try {
      log.id = j.at("id").get<std::string>();
      log.label = j.at("mode").get<std::string>();
      log.source = j.value("source", "");
      std::string rel = j.at("log_path").get<std::string>();
      fs::path a = dir / rel;
      fs::path b = dir.parent_path() / rel;
      log.path = fs::exists(a) ? a.string() : b.string();
      if (!fs::exists(log.path))
        return make_error(fmt::format("{}:{}: {}: log not found", labels_path, n, rel));
      if (j.contains("true_exit_code") && j["true_exit_code"].is_number_integer())
        log.exit_code = j["true_exit_code"].get<int>();
    } catch (const nlohmann::json::exception& e) {
      return make_error(fmt::format("{}:{}: {}", labels_path, n, e.what()));
    }
    out.push_back(std::move(log));
  }
  if (out.empty()) return make_error(fmt::format("{}: no labelled logs", labels_path));
  return out;
}

std::string strip_label_leaks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view line = text.substr(pos, end - pos);
    if (line.rfind("[inject] ", 0) != 0) out.append(line);
    pos = end;
  }
  return out;
}

Scores score(const std::vector<std::string>& truth, const std::vector<std::string>& predicted,
             const std::vector<std::string>& classes) {
  Scores s;
  s.logs = truth.size();
  uint64_t correct = 0;
  for (size_t i = 0; i < truth.size(); ++i) correct += truth[i] == predicted[i] ? 1 : 0;
  s.accuracy = truth.empty() ? 0 : static_cast<double>(correct) / static_cast<double>(truth.size());
  double sum = 0;
  for (const auto& cls : classes) {
    ClassScore c;
    c.cls = cls;
    for (size_t i = 0; i < truth.size(); ++i) {
      bool t = truth[i] == cls;
      bool p = predicted[i] == cls;
      c.support += t ? 1 : 0;
      c.tp += (t && p) ? 1 : 0;
      c.fp += (!t && p) ? 1 : 0;
      c.fn += (t && !p) ? 1 : 0;
    }
    c.precision = c.tp + c.fp ? static_cast<double>(c.tp) / static_cast<double>(c.tp + c.fp) : 0;
    c.recall = c.tp + c.fn ? static_cast<double>(c.tp) / static_cast<double>(c.tp + c.fn) : 0;
    c.f1 = c.precision + c.recall > 0 ? 2 * c.precision * c.recall / (c.precision + c.recall) : 0;
    sum += c.f1;
    s.per_class.push_back(c);
  }
  s.macro_f1 = classes.empty() ? 0 : sum / static_cast<double>(classes.size());
  return s;
}

Expected<Evaluation> evaluate(const Classifier& classifier, const std::vector<LabelledLog>& logs,
                              const std::vector<std::string>& classes) {
  Evaluation ev;
  ev.classes = classes;
  std::vector<std::string> truth, by_rules, by_keyword, by_exit;
  for (const auto& log : logs) {
    std::ifstream in(log.path, std::ios::binary);
    if (!in) return make_error(fmt::format("{}: cannot read it", log.path));
    std::ostringstream buf;
    buf << in.rdbuf();
    std::string text = strip_label_leaks(buf.str());
    ev.bytes += text.size();
    Classification c = classifier.classify_text(text, log.path);
    truth.push_back(log.label);
    by_rules.push_back(c.cls);
    by_keyword.push_back(keyword_baseline(text));
    by_exit.push_back(exit_code_baseline(log.exit_code));
    if (c.cls != log.label) ev.mistakes.push_back(Mistake{log.id, log.label, c.cls, c.rule});
  }
  ev.rules = score(truth, by_rules, classes);
  ev.keyword = score(truth, by_keyword, classes);
  ev.exit_code = score(truth, by_exit, classes);
  return ev;
}

}  // namespace ckpt::classify
