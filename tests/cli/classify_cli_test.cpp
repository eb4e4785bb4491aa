// `ckptscope classify` and `eval-classifier` on hostile input (issue 22):
// an overflowing number in --rules or --extra aborted the command (exit 134);
// NaN passed --min-macro-f1, so the gate could never fail. Each is now an
// error naming the file, the line or the field, with exit 2 (bad input).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

const std::string kRule =
    R"({"id":"x","class":"nccl","precedence":PRECEDENCE,"doc":"d","match":["NCCL"],"examples":["NCCL"]})";

std::string rules_with(const std::string& precedence) {
  std::string rule = kRule;
  rule.replace(rule.find("PRECEDENCE"), 10, precedence);
  return R"({"version":1,"rules":[)" + rule + "]}";
}

TEST(ClassifyCli, OverflowingNumberInRulesIsAnErrorNamingTheFile) {
  ScratchDir dir;
  std::ofstream(dir / "job.log") << "NCCL error\n";
  std::ofstream(dir / "big.json") << rules_with("1e400");
  auto r = run({kCkptscope, "classify", "--rules", dir / "big.json", dir / "job.log"}, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(std::string(dir / "big.json") + ": not valid JSON"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1e400"), std::string::npos) << r.err;

  std::ofstream(dir / "wide.json") << rules_with("4294967297");
  r = run({kCkptscope, "classify", "--rules", dir / "wide.json", dir / "job.log"}, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("rule \"x\": \"precedence\" must be an integer in"), std::string::npos)
      << r.err;

  std::ofstream(dir / "ok.json") << rules_with("7");
  r = run({kCkptscope, "classify", "--rules", dir / "ok.json", dir / "job.log"}, dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("nccl (rule x)"), std::string::npos) << r.out;
}

TEST(ClassifyCli, InvalidUtf8InEvidenceIsReplacedInJson) {
  ScratchDir dir;
  std::ofstream(dir / "job.log") << "NCCL error \xff\xfe on rank 3\n";
  auto r = run({kCkptscope, "classify", "--json", dir / "job.log"}, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find('\xff'), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["class"], "nccl");
  EXPECT_EQ(j["evidence"][0]["text"], "NCCL error \xEF\xBF\xBD\xEF\xBF\xBD on rank 3");
}

TEST(ClassifyCli, ExitCodeOutsideAnExitStatusIsRefused) {
  ScratchDir dir;
  std::ofstream(dir / "job.log") << "nothing\n";
  for (const char* code : {"256", "1000", "-65"}) {
    auto r = run({kCkptscope, "classify", "--exit-code", code, dir / "job.log"}, dir);
    EXPECT_EQ(r.code, 2) << code << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("--exit-code ") + code + ": must be an exit status"),
              std::string::npos)
        << r.err;
  }
  auto r = run({kCkptscope, "classify", "--exit-code", "-11", dir / "job.log"}, dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("segfault"), std::string::npos) << r.out;
}

TEST(EvalClassifierCli, HostileExtraLabelsAreErrorsNamingLineAndField) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "logs");
  std::ofstream(std::filesystem::path(dir / "logs") / "a.log") << "NCCL error\n";
  const std::pair<const char*, const char*> cases[] = {
      {R"({"id":"a","mode":"nccl","log_path":"logs/a.log","true_exit_code":1e400})",
       "labels.jsonl:1: not valid JSON"},
      {R"({"id":["a"],"mode":"nccl","log_path":"logs/a.log"})",
       "labels.jsonl:1: /id: type must be string, but is array"},
  };
  for (const auto& [line, message] : cases) {
    std::ofstream(dir / "labels.jsonl") << line << "\n";
    auto r = run({kCkptscope, "eval-classifier", "--extra", dir / "labels.jsonl"}, dir);
    EXPECT_EQ(r.code, 2) << line << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

TEST(EvalClassifierCli, MinMacroF1MustBeAFiniteFraction) {
  ScratchDir dir;
  for (const char* bad : {"nan", "inf", "-0.5", "1.5"}) {
    auto r = run({kCkptscope, "eval-classifier", "--min-macro-f1", bad}, dir);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--min-macro-f1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("from 0 to 1"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace ckpt::test
