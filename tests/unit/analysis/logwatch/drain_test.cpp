#include "analysis/logwatch/drain.h"

#include <gtest/gtest.h>

#include "analysis/logwatch/masking.h"

namespace ckpt::logwatch {
namespace {

MatchResult add(TemplateMiner& m, const std::string& line) {
  return m.add(tokenize_and_mask(line));
}

TEST(Drain, GroupsKnownLinesAndMasksTheirDifferences) {
  TemplateMiner m;
  auto a = add(m, "instruction cache parity error corrected");
  auto b = add(m, "instruction cache parity error corrected");
  EXPECT_TRUE(a.created);
  EXPECT_FALSE(b.created);
  EXPECT_EQ(a.id, b.id);
  // BGL lines of one Loghub template (E3 `<*> double-hummer alignment exceptions`).
  auto c = add(m, "63543 double-hummer alignment exceptions");
  auto d = add(m, "162 double-hummer alignment exceptions");
  EXPECT_EQ(c.id, d.id);
  EXPECT_EQ(m.template_text(c.id), "<*> double-hummer alignment exceptions");
  // Same length, most tokens equal: joins and the differing token becomes `<*>`.
  auto e = add(m, "generating core file for rank alpha");
  auto f = add(m, "generating core file for rank beta");
  EXPECT_EQ(e.id, f.id);
  EXPECT_TRUE(f.template_changed);
  EXPECT_EQ(m.template_text(e.id), "generating core file for rank <*>");
  EXPECT_EQ(m.size(), 3U);
}

TEST(Drain, DissimilarOrDifferentLengthLinesStartNewTemplates) {
  TemplateMiner m;
  auto a = add(m, "link up on port eth");
  auto b = add(m, "link down on port eth now");  // other length
  auto c = add(m, "link flaps seen by switch");  // same length, 1 of 5 equal < 0.5
  EXPECT_NE(a.id, b.id);
  EXPECT_NE(a.id, c.id);
  EXPECT_TRUE(c.created);
  EXPECT_EQ(m.match(tokenize_and_mask("link up on port eth")), a.id);
  EXPECT_EQ(m.match(tokenize_and_mask("something else entirely here")), std::nullopt);
}

TEST(Drain, TemplateCapEvictsTheLeastRecentlyMatched) {
  DrainConfig config;
  config.max_templates = 2;
  TemplateMiner m(config);
  auto a = add(m, "alpha event");
  auto b = add(m, "beta event happened");
  add(m, "alpha event");  // a is now the most recent
  auto c = add(m, "gamma event happened twice over");
  ASSERT_TRUE(c.evicted.has_value());
  EXPECT_EQ(*c.evicted, b.id);
  EXPECT_EQ(m.size(), 2U);
  EXPECT_EQ(m.cluster(b.id), nullptr);
  EXPECT_NE(m.cluster(a.id), nullptr);
  EXPECT_EQ(m.evictions(), 1U);
  // b's line is new again and gets a fresh id; the cap holds.
  auto b2 = add(m, "beta event happened");
  EXPECT_TRUE(b2.created);
  EXPECT_NE(b2.id, b.id);
  EXPECT_EQ(m.size(), 2U);
}

TEST(Drain, EvictionOnAnEndlessStreamKeepsTheTreeBounded) {
  DrainConfig config;
  config.max_templates = 50;
  TemplateMiner m(config);
  // Every line a new template: unique words, varied lengths.
  for (int i = 0; i < 5000; ++i) {
    std::string line = "w" + std::string(1, static_cast<char>('a' + i % 26)) + "x";
    for (int j = 0; j < 1 + i % 7; ++j)
      line += " tok" + std::string(1, static_cast<char>('a' + (i / 26 + j) % 26));
    add(m, line);
  }
  EXPECT_LE(m.size(), 50U);
  EXPECT_EQ(m.clusters_by_recency().size(), m.size());
}

TEST(Drain, CopiesAreIndependent) {
  TemplateMiner m;
  auto a = add(m, "disk sda failed");
  TemplateMiner copy = m;
  add(copy, "disk sdb failed");
  EXPECT_EQ(copy.template_text(a.id), "disk <*> failed");
  EXPECT_EQ(m.template_text(a.id), "disk sda failed");
}

}  // namespace
}  // namespace ckpt::logwatch
