// Writing JSON from bytes that are not UTF-8, and reading JSON whose errors
// must name the field: the reproducers of issue 22.
#include "json/json_io.h"

#include <gtest/gtest.h>

#include <string>

namespace ckpt {
namespace {

using nlohmann::json;

TEST(ValidUtf8, ValidTextIsUnchanged) {
  bool replaced = true;
  const std::string text = "plain, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80";
  EXPECT_EQ(valid_utf8(text, &replaced), text);
  EXPECT_FALSE(replaced);
}

TEST(ValidUtf8, EachMaximalInvalidSubpartIsOneReplacement) {
  // Unicode 15, table 3-8: "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"
  // becomes a U+FFFD U+FFFD U+FFFD b U+FFFD c U+FFFD U+FFFD d.
  const std::string r = "\xEF\xBF\xBD";
  bool replaced = false;
  EXPECT_EQ(valid_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", &replaced),
            "a" + r + r + r + "b" + r + "c" + r + r + "d");
  EXPECT_TRUE(replaced);
}

TEST(ValidUtf8, OverlongSurrogatesAndPastTheLastCodePointAreReplaced) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("\xC0\xAF"), r + r);                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), r + r + r);          // overlong, 3 bytes
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), r + r + r);          // U+D800
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // U+110000
  EXPECT_EQ(valid_utf8("\xFF"), r);
  EXPECT_EQ(valid_utf8("ab\xE2\x82"), "ab" + r);  // truncated at the end
}

TEST(ValidUtf8, KeepsValidTextAndNulBytes) {
  EXPECT_EQ(valid_utf8(""), "");
  EXPECT_EQ(valid_utf8("\xF4\x8F\xBF\xBF"), "\xF4\x8F\xBF\xBF");  // U+10FFFF is valid
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
  // A truncated sequence is one maximal subpart: one U+FFFD, not one per
  // byte (what analysis/utf8.cpp did before this library replaced it).
  EXPECT_EQ(valid_utf8("\xE6\xA8"), "\xEF\xBF\xBD");
}

TEST(ValidUtf8, AgreesWithNlohmannsReplaceHandler) {
  // Every two-byte string, and the lead bytes with every continuation: the
  // same answer as the library's own replacement, which the exporter's
  // readers (Prometheus, jq) then parse.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; b += 7) {
      const std::string text{static_cast<char>(a), static_cast<char>(b), '\x80', 'z'};
      const std::string ours = json(valid_utf8(text)).dump();
      const std::string theirs = json(text).dump(-1, ' ', false, json::error_handler_t::replace);
      ASSERT_EQ(ours, theirs) << a << " " << b;
    }
  }
}

TEST(DumpJson, NonUtf8NeverThrows) {
  json j = {{"node", "gpu\xFF\x01node"}, {"line", std::string("\xE2\x82", 2)}};
  EXPECT_THROW((void)j.dump(), json::type_error);  // what dump_json() exists for
  const std::string text = dump_json(j);
  EXPECT_EQ(text, "{\"line\":\"\xEF\xBF\xBD\",\"node\":\"gpu\xEF\xBF\xBD\\u0001node\"}");
  EXPECT_TRUE(json::parse(text).is_object());
  EXPECT_EQ(dump_json(j, 2).find('\n'), 1u);
}

TEST(ParseJson, AnOverflowingNumberIsAnErrorNotAnAbort) {
  auto r = parse_json(R"({"checkpoint":{"quiet_gap_ms":1e400}})", "config x.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("config x.json: not valid JSON: ", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find("1e400"), std::string::npos) << r.error().message;
}

TEST(ParseJson, SyntaxErrorsSayWhere) {
  auto r = parse_json("{\"a\": [1, 2,\n ]}", "--rules r.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.find("[json.exception"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("line 2, column 2"), std::string::npos) << r.error().message;
  auto bad_bytes = parse_json("{\"a\": \"\xFF\"}", "x");
  ASSERT_FALSE(bad_bytes);
  // The message quotes the bad input; it must itself be writable as JSON.
  EXPECT_NO_THROW((void)json(bad_bytes.error().message).dump());
  EXPECT_TRUE(parse_json("{\"a\": [1, 2]}", "x"));
}

TEST(ReadJson, TypeAndKeyErrorsNameTheField) {
  auto doc = parse_json(R"({"fleet":{"nodes":[{"name":7}]}})", "x");
  ASSERT_TRUE(doc);
  auto name = read_json("--sacct-json s.json", [&]() -> Expected<std::string> {
    return doc->at("fleet").at("nodes").at(0).at("name").get<std::string>();
  });
  ASSERT_FALSE(name);
  EXPECT_EQ(name.error().message,
            "--sacct-json s.json: /fleet/nodes/0/name: type must be string, but is number");
  auto missing = read_json("x", [&]() -> Expected<int> { return doc->at("jobs").get<int>(); });
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "x: key 'jobs' not found");
  auto ok = read_json("x", [&]() -> Expected<int> { return 3; });
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 3);
}

}  // namespace
}  // namespace ckpt
