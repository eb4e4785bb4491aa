#include "analysis/logwatch/masking.h"

#include <gtest/gtest.h>

namespace ckpt::logwatch {
namespace {

TEST(Masking, VariableKindsBecomeWildcards) {
  EXPECT_EQ(mask_token("12345"), "<*>");
  EXPECT_EQ(mask_token("-3.25"), "<*>");
  EXPECT_EQ(mask_token("0x0b85eee0"), "<*>");
  EXPECT_EQ(mask_token("10.0.0.5"), "<*>");
  EXPECT_EQ(mask_token("10.0.0.5:2049"), "<*>");
  EXPECT_EQ(mask_token("0000:3b:00.0"), "<*>");
  EXPECT_EQ(mask_token("123e4567-e89b-12d3-a456-426614174000"), "<*>");
  EXPECT_EQ(mask_token("/dev/nvme0n1p2"), "<*>");
  EXPECT_EQ(mask_token("R02-M1-N0-C:J12-U11"), "<*>");
  EXPECT_EQ(mask_token("core.2275"), "<*>");
}

TEST(Masking, FramingPunctuationAndNamesStay) {
  EXPECT_EQ(mask_token("3,"), "<*>,");
  EXPECT_EQ(mask_token("(0x1f)"), "(<*>)");
  EXPECT_EQ(mask_token("[42]:"), "[<*>]:");
  EXPECT_EQ(mask_token("pid=1234"), "pid=<*>");
  EXPECT_EQ(mask_token("sshd[991]:"), "sshd[<*>]:");
  EXPECT_EQ(mask_token("(PCI:0000:3b:00):"), "(<*>):");
}

TEST(Masking, WordsWithoutDigitsAreKept) {
  EXPECT_EQ(mask_token("error"), "error");
  EXPECT_EQ(mask_token("x+"), "x+");
  EXPECT_EQ(mask_token("ciod:"), "ciod:");
  EXPECT_FALSE(is_variable_token("parity"));
  EXPECT_TRUE(is_variable_token("<*>"));
  EXPECT_TRUE(is_variable_token("eth0"));
}

TEST(Masking, TokenizesOnWhitespaceAndMasks) {
  auto t = tokenize_and_mask("  NVRM: Xid (PCI:0000:3b:00): 79, pid=4242\tname=python ");
  std::vector<std::string> want = {"NVRM:", "Xid", "(<*>):", "<*>,", "pid=<*>", "name=python"};
  EXPECT_EQ(t, want);
  EXPECT_TRUE(tokenize_and_mask("   ").empty());
}

TEST(Masking, LongMessagesAreCappedAtMaxTokens) {
  std::string line;
  for (int i = 0; i < 500; ++i) line += "word ";
  auto t = tokenize_and_mask(line);
  ASSERT_EQ(t.size(), kMaxTokens);
  EXPECT_EQ(t.back(), "<*>");
  EXPECT_EQ(t.front(), "word");
}

}  // namespace
}  // namespace ckpt::logwatch
