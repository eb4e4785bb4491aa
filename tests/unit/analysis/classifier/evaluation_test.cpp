// The corpus evaluation is a test: it fails below the target.
#include "analysis/classifier/evaluation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "analysis/classifier/baselines.h"

namespace ckpt::classify {
namespace {

const std::string kCorpusLabels =
    CKPTSCOPE_SOURCE_DIR "/tests/data/third_party/gpualert-corpus/corpus/labels.jsonl";
const std::string kOurLabels = CKPTSCOPE_SOURCE_DIR "/tests/data/classifier/labels.jsonl";

std::vector<std::string> corpus_classes() { return {kCorpusClasses.begin(), kCorpusClasses.end()}; }

TEST(ClassifierEvaluation, GpuAlertCorpusMacroF1AtLeastTarget) {
  auto logs = load_labels(kCorpusLabels);
  ASSERT_TRUE(logs) << logs.error().message << " (the corpus is in tests/data/third_party)";
  ASSERT_EQ(logs->size(), 474u);
  auto ev = evaluate(Classifier::builtin(), *logs, corpus_classes());
  ASSERT_TRUE(ev) << ev.error().message;
  for (const auto& m : ev->mistakes)
    ADD_FAILURE() << m.id << ": " << m.truth << " classified " << m.predicted << " by " << m.rule;
  EXPECT_GE(ev->rules.macro_f1, 0.998);
  // The baselines are what they are: far below the ordered rules. The exit
  // code can only tell SIGSEGV and SIGKILL: exactly 2 of the 15 classes.
  EXPECT_LT(ev->keyword.macro_f1, 0.9);
  EXPECT_GT(ev->keyword.macro_f1, 0.5);
  EXPECT_NEAR(ev->exit_code.macro_f1, 2.0 / 15.0, 1e-9);
}

TEST(ClassifierEvaluation, TheLabelHeaderIsNotWhatTheRulesRead) {
  // Classifying with the "[inject] mode=..." line left in gives the same
  // answers: the header is removed only so that no rule could ever use it.
  auto logs = load_labels(kCorpusLabels);
  ASSERT_TRUE(logs);
  for (const auto& log : *logs) {
    auto with_header = Classifier::builtin().classify_file(log.path);
    ASSERT_TRUE(with_header);
    EXPECT_EQ(with_header->cls, log.label) << log.id;
  }
  EXPECT_EQ(strip_label_leaks("[inject] mode=nccl host=x pid=1\nKeyError: 'a'\n"),
            "KeyError: 'a'\n");
}

TEST(ClassifierEvaluation, OurInfrastructureLogsAreAllRight) {
  auto logs = load_labels(kOurLabels);
  ASSERT_TRUE(logs) << logs.error().message;
  std::vector<std::string> seen;
  for (const auto& l : *logs) seen.push_back(l.label);
  for (auto cls : kInfraClasses)
    EXPECT_GE(std::count(seen.begin(), seen.end(), std::string(cls)), 2) << cls;
  std::vector<std::string> classes(kInfraClasses.begin(), kInfraClasses.end());
  auto ev = evaluate(Classifier::builtin(), *logs, classes);
  ASSERT_TRUE(ev);
  for (const auto& m : ev->mistakes)
    ADD_FAILURE() << m.id << ": " << m.truth << " classified " << m.predicted << " by " << m.rule;
  EXPECT_DOUBLE_EQ(ev->rules.accuracy, 1.0);
}

TEST(ClassifierEvaluation, ScoresMatchAHandComputedExample) {
  // truth a a b c; predicted a b b a.
  Scores s = score({"a", "a", "b", "c"}, {"a", "b", "b", "a"}, {"a", "b", "c"});
  ASSERT_EQ(s.per_class.size(), 3u);
  EXPECT_DOUBLE_EQ(s.per_class[0].precision, 0.5);  // a: tp 1, fp 1
  EXPECT_DOUBLE_EQ(s.per_class[0].recall, 0.5);     // fn 1
  EXPECT_DOUBLE_EQ(s.per_class[1].precision, 0.5);  // b: tp 1, fp 1
  EXPECT_DOUBLE_EQ(s.per_class[1].recall, 1.0);
  EXPECT_DOUBLE_EQ(s.per_class[2].f1, 0.0);  // c never predicted
  EXPECT_NEAR(s.macro_f1, (0.5 + 2.0 / 3.0 + 0.0) / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.accuracy, 0.5);
}

TEST(ClassifierBaselines, ExitCodeAndKeywords) {
  EXPECT_EQ(exit_code_baseline(-11), "segfault");
  EXPECT_EQ(exit_code_baseline(139), "segfault");
  EXPECT_EQ(exit_code_baseline(-9), "oom_killer");
  EXPECT_EQ(exit_code_baseline(1), "unknown");
  EXPECT_EQ(exit_code_baseline(std::nullopt), "unknown");
  EXPECT_EQ(keyword_baseline("ZeroDivisionError: division by zero"), "div_zero");
  EXPECT_EQ(keyword_baseline("nothing to see"), "unknown");
}

TEST(ClassifierEvaluation, BadLabelsAreNamed) {
  auto missing = load_labels("/nonexistent/labels.jsonl");
  ASSERT_FALSE(missing);
  auto dir = std::filesystem::temp_directory_path() / "ckpt-labels-test";
  std::filesystem::create_directories(dir);
  auto path = (dir / "labels.jsonl").string();
  {
    std::ofstream(path) << R"({"id":"a","mode":"nccl","log_path":"nope.log"})"
                        << "\n";
  }
  auto bad = load_labels(path);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("nope.log: log not found"), std::string::npos);
  { std::ofstream(path) << "{not json\n"; }
  bad = load_labels(path);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find(":1: not valid JSON"), std::string::npos);
}

// Issue 22: `eval-classifier --extra` aborted on 1e400 (out_of_range.406);
// a wrong type or a missing key named no field; an exit status past int's
// range was read as a different one.
TEST(ClassifierEvaluation, HostileLabelsAreFieldErrors) {
  auto dir = std::filesystem::temp_directory_path() / "ckpt-labels-hostile-test";
  std::filesystem::create_directories(dir / "logs");
  { std::ofstream(dir / "logs" / "a.log") << "hello\n"; }
  const auto path = (dir / "labels.jsonl").string();
  const std::pair<const char*, const char*> cases[] = {
      {R"({"id":"a","mode":"nccl","log_path":"logs/a.log","true_exit_code":1e400})",
       ":1: not valid JSON"},
      {R"({"id":7,"mode":"nccl","log_path":"logs/a.log"})", ":1: /id: type must be string"},
      {R"({"id":"a","log_path":"logs/a.log"})", ":1: key 'mode' not found"},
      {R"({"id":"a","mode":"nccl","log_path":"logs/a.log","true_exit_code":4294967297})",
       ":1: /true_exit_code: 4294967297 is not an exit status"},
      {R"({"id":"a","mode":"nccl","log_path":"logs/a.log","true_exit_code":"1"})",
       ":1: /true_exit_code: \"1\" is not an exit status"},
  };
  for (const auto& [line, message] : cases) {
    { std::ofstream(path) << line << "\n"; }
    auto bad = load_labels(path);
    ASSERT_FALSE(bad) << line;
    EXPECT_NE(bad.error().message.find(std::string(path) + message), std::string::npos)
        << line << ": " << bad.error().message;
  }
  {
    std::ofstream(path) << R"({"id":"a","mode":"nccl","log_path":"logs/a.log","true_exit_code":-9})"
                        << "\n";
  }
  auto good = load_labels(path);
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ((*good)[0].exit_code, -9);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ckpt::classify
