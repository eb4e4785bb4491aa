#include "analysis/classifier/evaluation.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/classifier/baselines.h"
#include "files/input_file.h"
#include "json/json_io.h"

namespace ckpt::classify {

namespace fs = std::filesystem;

constexpr int kMinExitCode = -64;  // -N: killed by signal N (SIGRTMAX is 64)
constexpr int kMaxExitCode = 255;

// A labels file is a line of about 200 bytes per log: the GPUAlert
// corpus's is 100 KiB. 64 MiB is hundreds of thousands of logs.
constexpr InputLimit kLabelsFileLimit{64u << 20, "a labels file is a short line per log", true};
// A corpus log is one failed job's log, KiBs to a few MiB (the GPUAlert
// corpus's are all under 4 KiB).
constexpr InputLimit kCorpusLogLimit{256u << 20, "a corpus log is one job's log, at most MiBs"};

Expected<std::vector<LabelledLog>> load_labels(const std::string& labels_path) {
  auto text = read_file_bounded(labels_path, kLabelsFileLimit, "");
  if (!text) return text.error();
  std::istringstream in(std::move(*text));
  fs::path dir = fs::path(labels_path).parent_path();
  std::vector<LabelledLog> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", labels_path, n);
    // parse_json: a syntax error or an overflowing number (1e400) names the
    // line; read_json: a missing key or a wrong type names the field.
    auto j = parse_json(line, where);
    if (!j) return j.error();
    auto log = read_json(where, [&]() -> Expected<LabelledLog> {
      LabelledLog log;
      log.id = j->at("id").get<std::string>();
      log.label = j->at("mode").get<std::string>();
      log.source = j->value("source", "");
      std::string rel = j->at("log_path").get<std::string>();
      fs::path a = dir / rel;
      fs::path b = dir.parent_path() / rel;
      log.path = fs::exists(a) ? a.string() : b.string();
      if (!fs::exists(log.path))
        return make_error(fmt::format("{}: {}: log not found", where, rel));
      if (j->contains("true_exit_code") && !(*j)["true_exit_code"].is_null()) {
        const auto& code = (*j)["true_exit_code"];
        // An exit status as the shell reports it (0-255), or -N for signal N.
        if (!code.is_number_integer() || code < kMinExitCode || code > kMaxExitCode)
          return make_error(
              fmt::format("{}: /true_exit_code: {} is not an exit status (an integer "
                          "in [{}, {}])",
                          where, dump_json(code), kMinExitCode, kMaxExitCode));
        log.exit_code = code.get<int>();
      }
      return log;
    });
    if (!log) return log.error();
    out.push_back(std::move(*log));
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
    auto read = read_file_bounded(log.path, kCorpusLogLimit, "");
    if (!read) return read.error();
    std::string text = strip_label_leaks(*read);
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
