// The Xid lists: the kernel-log watcher and the classifier's rule base read
// one table (model/xid_catalogue.h), so they name every Xid alike.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "analysis/classifier/classifier.h"
#include "analysis/classifier/rule_base.h"
#include "model/xid_catalogue.h"
#include "sources/kernel_log.h"

namespace ckpt::classify {
namespace {

std::set<uint32_t> xids_in(XidCategory category) {
  std::set<uint32_t> out;
  for (uint32_t xid = 0; xid <= 1024; ++xid)
    if (xid_category(xid) == category) out.insert(xid);
  return out;
}

// The lists as NVIDIA's catalogue gives them (xid_catalogue.h says why).
TEST(XidLists, TheCataloguesCategories) {
  EXPECT_EQ(xids_in(XidCategory::EccError),
            (std::set<uint32_t>{48, 63, 64, 94, 95, 160, 171, 172}));
  EXPECT_EQ(xids_in(XidCategory::GpuLost), (std::set<uint32_t>{79}));
  EXPECT_EQ(xids_in(XidCategory::NvlinkError), (std::set<uint32_t>{74}));
  EXPECT_EQ(xid_category(92), XidCategory::GpuXid);  // high single-bit rate: a plain Xid
  EXPECT_EQ(xid_category(13), XidCategory::GpuXid);
  EXPECT_EQ(to_string(XidCategory::GpuLost), "gpu_lost");
  EXPECT_EQ(to_string(XidCategory::EccError), "ecc_error");
  EXPECT_EQ(to_string(XidCategory::NvlinkError), "nvlink_error");
  EXPECT_EQ(to_string(XidCategory::GpuXid), "gpu_xid");
}

// The same driver line, read by each consumer: the watcher's category is the
// classifier's class, for every Xid number (and for MIG-attributed lines).
TEST(XidLists, WatcherAndRuleBaseAgreeOnEveryXid) {
  for (uint32_t xid = 0; xid <= 1024; ++xid) {
    for (const char* where : {"PCI:0000:3b:00", "PCI:0000:01:00 GPU-I:05 GPU-CI:01"}) {
      const std::string line =
          fmt::format("NVRM: Xid ({}): {}, pid=4242, name=python, something failed", where, xid);
      auto fault = match_kernel_fault(line);
      ASSERT_TRUE(fault) << line;
      ASSERT_EQ(fault->xid, xid);
      const Classification c = Classifier::builtin().classify_text(line);
      EXPECT_EQ(c.cls, to_string(fault->category)) << line << " (rule " << c.rule << ")";
    }
  }
}

// rules.json names the lists rather than copying them; the loader expands them.
TEST(XidLists, TheBuiltinRulesNameTheListsAndLoadThemExpanded) {
  const std::string_view raw = builtin_rules_json();
  EXPECT_NE(raw.find("{{xids:ecc_error}}"), std::string_view::npos);
  EXPECT_NE(raw.find("{{xids:gpu_lost}}"), std::string_view::npos);
  EXPECT_NE(raw.find("{{xids:nvlink_error}}"), std::string_view::npos);
  EXPECT_EQ(raw.find("(48|"), std::string_view::npos) << "a copy of the ECC list in rules.json";

  auto base = parse_rule_base(raw, "built-in");
  ASSERT_TRUE(base) << base.error().message;
  const Rule* ecc = nullptr;
  for (const auto& r : base->rules)
    if (r.id == "xid-ecc-uncorrectable") ecc = &r;
  ASSERT_NE(ecc, nullptr);
  EXPECT_EQ(
      ecc->patterns[0],
      R"(NVRM: Xid \(PCI:[0-9A-Fa-f:.]+(?: GPU-C?I:\d+)*\): (?:48|63|64|94|95|160|171|172)\b)");
  EXPECT_THAT(ecc->doc, ::testing::HasSubstr("Xid 48/63/64/94/95/160/171/172 "));
  for (const auto& r : base->rules) {
    EXPECT_EQ(r.doc.find("{{"), std::string::npos) << r.id;
    for (const auto& p : r.patterns) EXPECT_EQ(p.find("{{xids:"), std::string::npos) << r.id;
  }
}

TEST(XidLists, ExpandsInPatternsAndProse) {
  auto pattern = expand_xid_lists(R"(: {{xids:ecc_error}}\b)", XidListStyle::Pattern);
  ASSERT_TRUE(pattern) << pattern.error().message;
  EXPECT_EQ(*pattern, R"(: (?:48|63|64|94|95|160|171|172)\b)");
  auto prose =
      expand_xid_lists("Xid {{xids:gpu_lost}} or {{xids:nvlink_error}}.", XidListStyle::Prose);
  ASSERT_TRUE(prose) << prose.error().message;
  EXPECT_EQ(*prose, "Xid 79 or 74.");
  // No placeholder: the text as it was, braces and all (a user's rule file).
  auto plain = expand_xid_lists(R"(a{2}b{{c}}: (48|63)\b)", XidListStyle::Pattern);
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, R"(a{2}b{{c}}: (48|63)\b)");

  auto unknown = expand_xid_lists("{{xids:gpu_melted}}", XidListStyle::Pattern);
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, ::testing::HasSubstr("{{xids:gpu_melted}}"));
  EXPECT_FALSE(expand_xid_lists("{{xids:gpu_xid}}", XidListStyle::Pattern));  // no list of its own
  auto open = expand_xid_lists("x {{xids:ecc_error", XidListStyle::Pattern);
  ASSERT_FALSE(open);
  EXPECT_THAT(open.error().message, ::testing::HasSubstr("not closed"));
}

// A user's rule file: without placeholders it loads exactly as written; with
// one it gets the same list, and a bad one is named with its rule.
TEST(XidLists, UserRuleFiles) {
  auto plain = parse_rule_base(
      R"({"version":1,"rules":[{"id":"x","class":"ecc_error","precedence":1,"doc":"Xid 48 {x}","match":["Xid \\(PCI:\\S+\\): (48|63)\\b","a{2}"],"examples":["e"]}]})",
      "mine.json");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->rules[0].doc, "Xid 48 {x}");
  EXPECT_THAT(plain->rules[0].patterns,
              ::testing::ElementsAre(R"(Xid \(PCI:\S+\): (48|63)\b)", "a{2}"));

  auto with = parse_rule_base(
      R"({"version":1,"rules":[{"id":"x","class":"nvlink_error","precedence":1,"doc":"Xid {{xids:nvlink_error}}","match":["Xid .*: {{xids:nvlink_error}}\\b"],"examples":["e"]}]})",
      "mine.json");
  ASSERT_TRUE(with) << with.error().message;
  EXPECT_EQ(with->rules[0].doc, "Xid 74");
  EXPECT_EQ(with->rules[0].patterns[0], R"(Xid .*: (?:74)\b)");

  auto bad = parse_rule_base(
      R"({"version":1,"rules":[{"id":"x","class":"nccl","precedence":1,"doc":"d","match":["{{xids:nccl}}"],"examples":["e"]}]})",
      "mine.json");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("mine.json: rule \"x\".match: {{xids:nccl}}"));
}

}  // namespace
}  // namespace ckpt::classify
