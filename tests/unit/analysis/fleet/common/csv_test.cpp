#include "analysis/fleet/common/csv.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SplitCsvRecord, SplitsPlainFields) {
  EXPECT_THAT(*split_csv_record("a,b,,c"), ElementsAre("a", "b", "", "c"));
  EXPECT_THAT(*split_csv_record(""), ElementsAre(""));
  EXPECT_THAT(*split_csv_record("a, b ,"), ElementsAre("a", " b ", ""));
  EXPECT_THAT(*split_csv_record("a,b\r"), ElementsAre("a", "b"));
}

TEST(SplitCsvRecord, UnquotesRfc4180Fields) {
  EXPECT_THAT(*split_csv_record(R"("n1",n2)"), ElementsAre("n1", "n2"));
  EXPECT_THAT(*split_csv_record(R"("a,b","say ""hi""",c)"), ElementsAre("a,b", R"(say "hi")", "c"));
  EXPECT_THAT(*split_csv_record(R"(x,"")"), ElementsAre("x", ""));
  EXPECT_THAT(*split_csv_record(R"(x, "y" ,z)"), ElementsAre("x", "y", "z"));
  EXPECT_THAT(*split_csv_record(R"(a"b,c)"), ElementsAre(R"(a"b)", "c"));  // stray quote: data
}

TEST(SplitCsvRecord, RejectsUnterminatedQuotesAndTextAfterThem) {
  const auto open = split_csv_record(R"(a,"b,c)");
  ASSERT_FALSE(open);
  EXPECT_THAT(open.error().message, HasSubstr("column 3: the quote opened here is never closed"));
  const auto after = split_csv_record(R"("a"b,c)");
  ASSERT_FALSE(after);
  EXPECT_THAT(after.error().message, HasSubstr("column 4: text after a closing quote"));
}

TEST(Trim, DropsAsciiWhitespaceOnly) {
  EXPECT_EQ(trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\xC2\xA0x"), "\xC2\xA0x");  // a UTF-8 no-break space is not ASCII whitespace
}

TEST(StripUtf8Bom, DropsOnlyALeadingMark) {
  EXPECT_EQ(strip_utf8_bom("\xEF\xBB\xBFjob_id,attempt"), "job_id,attempt");
  EXPECT_EQ(strip_utf8_bom("job_id"), "job_id");
  EXPECT_EQ(strip_utf8_bom("a\xEF\xBB\xBF"), "a\xEF\xBB\xBF");
  EXPECT_EQ(strip_utf8_bom("\xEF\xBB"), "\xEF\xBB");
}

}  // namespace
}  // namespace ckpt::fleet

namespace ckpt::fleet {
namespace {

TEST(SplitCsvText, NumbersRecordsByTheirFirstLine) {
  const auto records = split_csv_text("a,b\r\n\r\n\"x\ny\",z\nlast,\"\"\n");
  ASSERT_TRUE(records) << records.error().message;
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[0].line, 1u);
  EXPECT_THAT((*records)[0].fields, ElementsAre("a", "b"));
  EXPECT_EQ((*records)[1].line, 3u);
  EXPECT_THAT((*records)[1].fields, ElementsAre("x\ny", "z"));
  EXPECT_EQ((*records)[2].line, 5u);
  EXPECT_THAT((*records)[2].fields, ElementsAre("last", ""));
  EXPECT_TRUE(split_csv_text("")->empty());
  EXPECT_THAT(split_csv_text("a\rb,c")->front().fields, ElementsAre("a\rb", "c"));
}

TEST(SplitCsvText, NamesLineAndColumnOfErrors) {
  const auto open = split_csv_text("a,b\nc,\"d\n");
  ASSERT_FALSE(open);
  EXPECT_THAT(open.error().message, HasSubstr("line 2, column 3"));
  const auto after = split_csv_text("a\n\"b\"c\n");
  ASSERT_FALSE(after);
  EXPECT_THAT(after.error().message, HasSubstr("line 2, column 4"));
}

TEST(SplitCsvRecord, RejectsALineBreak) { EXPECT_FALSE(split_csv_record("a\nb")); }

}  // namespace
}  // namespace ckpt::fleet
