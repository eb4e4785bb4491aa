#include "analysis/fleet/records/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet::records {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(Hostlist, RangesListsAndPlainNamesInOrder) {
  auto nodes = expand_hostlist("gpu[01-03,07],cpu5");
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_THAT(*nodes, ElementsAre("gpu01", "gpu02", "gpu03", "gpu07", "cpu5"));
}

TEST(Hostlist, PaddingFollowsTheLowerBound) {
  EXPECT_THAT(*expand_hostlist("n[8-11]"), ElementsAre("n8", "n9", "n10", "n11"));
  EXPECT_THAT(*expand_hostlist("n[008-010]"), ElementsAre("n008", "n009", "n010"));
}

TEST(Hostlist, SeveralBracketGroupsGiveEveryCombination) {
  EXPECT_THAT(*expand_hostlist("rack[1-2]-n[1-2]"),
              ElementsAre("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"));
}

TEST(Hostlist, SlurmsNoNodeWordsAreEmpty) {
  EXPECT_THAT(*expand_hostlist(""), IsEmpty());
  EXPECT_THAT(*expand_hostlist("None assigned"), IsEmpty());
  EXPECT_THAT(*expand_hostlist("(null)"), IsEmpty());
}

TEST(Hostlist, MalformedExpressionsSayWhatIsWrong) {
  auto unclosed = expand_hostlist("gpu[01-03");
  ASSERT_FALSE(unclosed);
  EXPECT_THAT(unclosed.error().message, HasSubstr("\"[\" without \"]\""));
  auto backwards = expand_hostlist("gpu[03-01]");
  ASSERT_FALSE(backwards);
  EXPECT_THAT(backwards.error().message, HasSubstr("runs backwards"));
  auto letters = expand_hostlist("gpu[a-b]");
  ASSERT_FALSE(letters);
  EXPECT_THAT(letters.error().message, HasSubstr("\"a-b\" is not a number"));
  auto empty = expand_hostlist("gpu1,,gpu2");
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message, HasSubstr("empty name"));
}

}  // namespace
}  // namespace ckpt::fleet::records
