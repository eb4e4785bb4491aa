#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "analysis/classifier/classifier.h"
#include "analysis/classifier/render.h"
#include "apps/cli/commands.h"
#include "files/input_file.h"
#include "json/json_io.h"

namespace ckpt::cli {

namespace {

Expected<classify::Classifier> load_classifier(const std::string& rules_path) {
  if (rules_path.empty()) {
    auto base = classify::parse_rule_base(classify::builtin_rules_json(), "built-in rules");
    if (!base) return base.error();
    return classify::Classifier::create(std::move(*base));
  }
  auto base = classify::load_rule_base(rules_path);
  if (!base) return base.error();
  return classify::Classifier::create(std::move(*base));
}

void print_rules(const classify::RuleBase& rules) {
  for (const auto& n : rules.noise) fmt::print("noise  {:<26} {}\n", n.id, n.doc);
  for (const auto& r : rules.rules)
    fmt::print("{:>5}  {:<26} {:<16} {}\n", r.precedence, r.id, r.cls, r.doc);
}

// The GPUAlert corpus when --corpus is not given: the copy in the source
// tree this binary was built from, so a checkout evaluates with nothing
// beside it.
const std::string kDefaultCorpus =
    std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/third_party/gpualert-corpus";

std::string default_corpus() {
  return std::filesystem::exists(kDefaultCorpus + "/corpus/labels.jsonl") ? kDefaultCorpus
                                                                          : std::string();
}

// A log on standard input is held whole while it is classified (a file is
// mapped instead, whatever its size): 1 GiB is far more of a job's log than
// its cause is found in (the classifier reads from the end).
constexpr InputLimit kStdinLogLimit{
    1u << 30, "give a log that large as a file (mapped, any size), or its end (tail -c)"};

constexpr int kMinExitCode = -64;  // SIGRTMAX
constexpr int kMaxExitCode = 255;

}  // namespace

int classify_command(const ClassifyOptions& o) {
  // An exit status as the shell reports it (0-255), or -N for signal N: any
  // other number would be read as a signal that does not exist.
  if (o.exit_code && (*o.exit_code < kMinExitCode || *o.exit_code > kMaxExitCode)) {
    warn(
        fmt::format("classify: --exit-code {}: must be an exit status in [{}, {}] (-N: killed "
                    "by signal N)",
                    *o.exit_code, kMinExitCode, kMaxExitCode));
    return 2;
  }
  auto classifier = load_classifier(o.rules_path);
  if (!classifier) {
    warn(classifier.error().message);
    return 2;
  }
  if (o.list_rules) {
    print_rules(classifier->rules());
    return 0;
  }
  classify::ScanOptions scan;
  scan.tail_bytes = o.tail_bytes;
  int rc = 0;
  for (const auto& path : o.logs) {
    Expected<classify::Classification> c = classify::Classification{};
    if (path == "-") {
      auto text = read_fd_bounded(0, "-", kStdinLogLimit, "classify");
      if (!text) {
        warn(text.error().message);
        rc = 2;
        continue;
      }
      c = classifier->classify_text(*text, "-");
    } else {
      c = classifier->classify_file(path, scan);
    }
    if (!c) {
      warn(c.error().message);
      rc = 2;
      continue;
    }
    if (o.exit_code) {
      classify::ExitInfo exit;
      if (*o.exit_code < 0)
        exit.signal = -*o.exit_code;
      else if (*o.exit_code > 128)
        exit.signal = *o.exit_code - 128;
      else
        exit.code = *o.exit_code;
      classify::apply_exit_status(*c, exit);
    }
    if (o.json)
      fmt::print("{}\n", dump_json(classify::to_json(*c, path)));
    else
      fmt::print("{}", classify::to_text(*c, path));
  }
  return rc;
}

int eval_classifier_command(const EvalClassifierOptions& o) {
  auto classifier = load_classifier(o.rules_path);
  if (!classifier) {
    warn(classifier.error().message);
    return 2;
  }
  std::string corpus = o.corpus.empty() ? default_corpus() : o.corpus;
  if (corpus.empty()) {
    warn("eval-classifier: the GPUAlert corpus was not found (looked for " + kDefaultCorpus +
         "); give --corpus DIR");
    return 2;
  }
  std::string labels = corpus + "/corpus/labels.jsonl";
  if (!std::filesystem::exists(labels)) labels = corpus + "/labels.jsonl";
  auto logs = classify::load_labels(labels);
  if (!logs) {
    warn(logs.error().message);
    return 2;
  }
  std::vector<std::string> classes(classify::kCorpusClasses.begin(),
                                   classify::kCorpusClasses.end());
  auto t0 = std::chrono::steady_clock::now();
  auto ev = classify::evaluate(*classifier, *logs, classes);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!ev) {
    warn(ev.error().message);
    return 2;
  }
  nlohmann::json out = {{"corpus", classify::to_json(*ev)}};
  std::string text = classify::to_text(*ev, "GPUAlert corpus, 15 classes: " + labels);

  // Our labelled logs of the infrastructure classes the corpus lacks.
  std::string extra = o.extra_labels;
  if (extra.empty()) {
    std::string builtin = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/classifier/labels.jsonl";
    if (std::filesystem::exists(builtin)) extra = builtin;
  }
  if (!extra.empty()) {
    auto more = classify::load_labels(extra);
    if (!more) {
      warn(o.extra_labels.empty() ? more.error().message : "--extra " + more.error().message);
      return 2;
    }
    std::vector<std::string> extra_classes;
    for (const auto& l : *more)
      if (std::find(extra_classes.begin(), extra_classes.end(), l.label) == extra_classes.end())
        extra_classes.push_back(l.label);
    auto ev2 = classify::evaluate(*classifier, *more, extra_classes);
    if (!ev2) {
      warn(ev2.error().message);
      return 2;
    }
    out["infrastructure"] = classify::to_json(*ev2);
    text += "\n" + classify::to_text(*ev2, "Infrastructure and mixed-cause logs: " + extra);
  }
  double mb_s = secs > 0 ? static_cast<double>(ev->bytes) / secs / 1e6 : 0;
  out["corpus_seconds"] = secs;
  text += fmt::format("\nclassified {} logs ({:.1f} KB) in {:.3f} s\n", ev->rules.logs,
                      static_cast<double>(ev->bytes) / 1e3, secs);
  (void)mb_s;  // small files: bench/classifier_bench measures throughput
  if (o.json)
    fmt::print("{}\n", dump_json(out, 2));
  else
    fmt::print("{}", text);
  if (o.min_macro_f1 && ev->rules.macro_f1 < *o.min_macro_f1) {
    warn(fmt::format("eval-classifier: macro-F1 {:.4f} is below the target {:.4f}",
                     ev->rules.macro_f1, *o.min_macro_f1));
    return 1;
  }
  return 0;
}

}  // namespace ckpt::cli
