// `ckptscope eval-classifier`: the classifier and its two baselines over a
// labelled corpus (GPUAlert's labels.jsonl format), scored per class and by
// macro-F1 over the corpus's classes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/classifier/classifier.h"
#include "common/expected.h"

namespace ckpt::classify {

struct LabelledLog {
  std::string id;
  std::string label;   // the true class ("mode")
  std::string source;  // injected | synthetic | wild | ours
  std::string path;    // resolved
  std::optional<int> exit_code;
};

// labels.jsonl: one object a line with id, mode, source, log_path and
// true_exit_code; log_path is relative to the file's directory or its parent.
Expected<std::vector<LabelledLog>> load_labels(const std::string& labels_path);

// The corpus's capture harness writes "[inject] mode=<label> ..." as a log's
// first line: that is the answer, so it is removed before anything reads the log.
std::string strip_label_leaks(std::string_view log_text);

struct ClassScore {
  std::string cls;
  uint64_t support = 0;  // logs of this class
  uint64_t tp = 0, fp = 0, fn = 0;
  double precision = 0, recall = 0, f1 = 0;  // 0 when undefined (no predictions)
};

struct Scores {
  std::vector<ClassScore> per_class;
  double macro_f1 = 0;
  double accuracy = 0;
  uint64_t logs = 0;
};

Scores score(const std::vector<std::string>& truth, const std::vector<std::string>& predicted,
             const std::vector<std::string>& classes);

struct Mistake {
  std::string id;
  std::string truth;
  std::string predicted;
  std::string rule;
};

struct Evaluation {
  std::vector<std::string> classes;
  Scores rules;
  Scores keyword;
  Scores exit_code;
  std::vector<Mistake> mistakes;  // the classifier's
  uint64_t bytes = 0;
};

Expected<Evaluation> evaluate(const Classifier& classifier, const std::vector<LabelledLog>& logs,
                              const std::vector<std::string>& classes);

}  // namespace ckpt::classify
