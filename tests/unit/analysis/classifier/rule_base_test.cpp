// Loading a rule base: every mistake a rule author can make is named.
#include "analysis/classifier/rule_base.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ckpt::classify {
namespace {

std::string error_of(const std::string& json) {
  auto r = parse_rule_base(json, "rules.json");
  return r ? std::string("(accepted)") : r.error().message;
}

const char* kRule =
    R"({"id":"x","class":"nccl","precedence":1,"doc":"d","match":["NCCL"],"examples":["NCCL"]})";

TEST(RuleBase, BuiltinRulesLoad) {
  auto base = parse_rule_base(builtin_rules_json(), "built-in");
  ASSERT_TRUE(base) << base.error().message;
  EXPECT_GE(base->rules.size(), 23u);
  EXPECT_FALSE(base->noise.empty());
}

TEST(RuleBase, RejectsWhatARuleAuthorGetsWrong) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"version":2,"rules":[]})").find("\"version\" must be 1"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version":1,"rules":[]})").find("non-empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"version":1,"rulez":[]})").find("unknown key \"rulez\""),
            std::string::npos);
  std::string bad_class = kRule;
  bad_class.replace(bad_class.find("nccl"), 4, "gpu_melted");
  EXPECT_NE(error_of(std::string(R"({"version":1,"rules":[)") + bad_class + "]}")
                .find("rule \"x\": unknown class \"gpu_melted\""),
            std::string::npos);
  EXPECT_NE(error_of(std::string(R"({"version":1,"rules":[)") + kRule + "," + kRule + "]}")
                .find("\"x\" is used twice"),
            std::string::npos);
  EXPECT_NE(
      error_of(
          R"({"version":1,"rules":[{"id":"x","class":"nccl","precedence":1,"doc":"d","match":["(unclosed"],"examples":["e"]}]})")
          .find("rule \"x\": pattern \"(unclosed\" does not compile"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          R"({"version":1,"rules":[{"id":"x","class":"nccl","precedence":"high","doc":"d","match":["a"],"examples":["a"]}]})")
          .find("\"precedence\" must be an integer"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          R"({"version":1,"rules":[{"id":"x","class":"nccl","precedence":1,"doc":"d","match":["a"]}]})")
          .find("x\".examples: must be a non-empty list"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          R"({"version":1,"rules":[{"id":"x","class":"nccl","precedence":1,"doc":"d","match":["a"],"examples":["a"],"prio":3}]})")
          .find("unknown key \"prio\""),
      std::string::npos);
}

// Issue 22: 1e400 aborted `classify --rules` (out_of_range.406); a
// precedence past int's range was wrapped into a different order.
TEST(RuleBase, HostileNumbersAreErrorsNotAborts) {
  const std::string overflow = error_of(R"({"version":1e400,"rules":[]})");
  EXPECT_EQ(overflow.rfind("rules.json: not valid JSON: ", 0), 0u) << overflow;
  EXPECT_NE(overflow.find("1e400"), std::string::npos) << overflow;
  for (const char* precedence : {"4294967297", "-4294967297", "1.5", "1e300"}) {
    const std::string rules =
        std::string(R"({"version":1,"rules":[{"id":"x","class":"nccl","precedence":)") +
        precedence + R"(,"doc":"d","match":["a"],"examples":["a"]}]})";
    EXPECT_NE(error_of(rules).find("rule \"x\": \"precedence\" must be an integer in"),
              std::string::npos)
        << precedence << ": " << error_of(rules);
  }
}

TEST(RuleBase, MissingFileIsNamed) {
  auto r = load_rule_base("/nonexistent/rules.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/rules.json"), std::string::npos);
}

// Issue 36: the rule base is read through the bounded reader.
TEST(RuleBase, AnUnboundedInputIsRefusedNamingTheFlagAndLimit) {
  auto zero = load_rule_base("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("--rules /dev/zero: not a text file (a NUL byte at byte 0)"),
            std::string::npos)
      << zero.error().message;
  const std::string big = ::testing::TempDir() + "/too-large-rules.json";
  std::ofstream(big) << "{";
  std::filesystem::resize_file(big, kRuleBaseFileLimit.bytes + 1);  // sparse
  auto large = load_rule_base(big);
  std::filesystem::remove(big);
  ASSERT_FALSE(large);
  EXPECT_NE(large.error().message.find("--rules " + big +
                                       ": larger than 16 MiB; a rule base is tens of KiB"),
            std::string::npos)
      << large.error().message;
}

// docs/classifier.md documents every rule: the table there must list each id.
TEST(RuleBase, DocsListEveryRule) {
  std::ifstream in(CKPTSCOPE_SOURCE_DIR "/docs/classifier.md");
  ASSERT_TRUE(in) << "docs/classifier.md is missing";
  std::stringstream doc;
  doc << in.rdbuf();
  auto base = parse_rule_base(builtin_rules_json(), "built-in");
  ASSERT_TRUE(base);
  for (const auto& r : base->rules)
    EXPECT_NE(doc.str().find("`" + r.id + "`"), std::string::npos) << r.id;
  for (const auto& n : base->noise)
    EXPECT_NE(doc.str().find("`" + n.id + "`"), std::string::npos) << n.id;
}

}  // namespace
}  // namespace ckpt::classify
