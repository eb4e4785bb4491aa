#include "analysis/logwatch/model_file.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ckpt::logwatch {
namespace {

LogDetector trained() {
  DetectorConfig c;
  c.min_support = 1;
  c.top_k = 1;
  LogDetector d(c);
  for (int i = 0; i < 30; ++i) {
    d.learn("job " + std::to_string(i) + " started on node alpha");
    d.learn("checkpoint saved to storage in " + std::to_string(i) + " ms");
    d.learn("job finished cleanly");
  }
  d.reset_history();
  return d;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::getpid()) + ".model"))
      .string();
}

TEST(ModelFile, RoundTripKeepsTemplatesCountsAndVerdicts) {
  LogDetector d = trained();
  const std::string path = temp_path("roundtrip");
  ASSERT_TRUE(save_model(d, path).has_value());
  auto loaded = load_model(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->miner().size(), d.miner().size());
  EXPECT_EQ(loaded->context_count(), d.context_count());
  EXPECT_EQ(loaded->events(), d.events());
  for (const Cluster* c : d.miner().clusters_by_recency()) {
    EXPECT_EQ(loaded->miner().template_text(c->id), d.miner().template_text(c->id));
    EXPECT_DOUBLE_EQ(loaded->template_count(c->id), d.template_count(c->id));
  }
  // Saving the loaded model gives the same bytes.
  EXPECT_EQ(model_to_string(*loaded), model_to_string(d));
  // Same verdicts on the same stream.
  for (const char* line : {"job 3 started on node alpha", "job finished cleanly",
                           "disk failure on sdb", "checkpoint saved to storage in 9 ms"}) {
    Verdict a = d.observe(line);
    Verdict b = loaded->observe(line);
    EXPECT_EQ(a.anomaly, b.anomaly) << line;
    EXPECT_EQ(a.reason, b.reason) << line;
    EXPECT_DOUBLE_EQ(a.score, b.score) << line;
    EXPECT_EQ(a.template_id, b.template_id) << line;
  }
  std::filesystem::remove(path);
}

TEST(ModelFile, MissingFileIsNamed) {
  auto m = load_model("/nonexistent/dir/x.model");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("/nonexistent/dir/x.model"), std::string::npos);
}

// Issue 36: a model is read through the bounded reader: /dev/zero stops at
// its first byte, a file larger than any model is refused from its size.
TEST(ModelFile, AnUnboundedInputIsRefusedNamingTheLimit) {
  auto zero = load_model("/dev/zero");
  ASSERT_FALSE(zero.has_value());
  EXPECT_NE(zero.error().message.find("model /dev/zero: not a text file (a NUL byte at byte 0)"),
            std::string::npos)
      << zero.error().message;
  const std::string big = temp_path("too-large");
  std::ofstream(big) << "ckptscope-logwatch-model";
  std::filesystem::resize_file(big, kModelFileLimit.bytes + 1);  // sparse
  auto large = load_model(big);
  std::filesystem::remove(big);
  ASSERT_FALSE(large.has_value());
  EXPECT_NE(large.error().message.find(big + ": larger than 256 MiB; no trained model"),
            std::string::npos)
      << large.error().message;
}

TEST(ModelFile, TruncatedFileIsAClearError) {
  std::string text = model_to_string(trained());
  auto m = model_from_string(text.substr(0, text.size() / 2), "half.model");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("half.model"), std::string::npos);
  EXPECT_NE(m.error().message.find("truncated"), std::string::npos) << m.error().message;
}

TEST(ModelFile, WrongVersionIsAClearError) {
  auto doc = nlohmann::json::parse(model_to_string(trained()));
  doc["version"] = 1;  // before contexts per source
  auto m = model_from_string(doc.dump(), "v1.model");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("version 1"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("reads version 2"), std::string::npos);
}

TEST(ModelFile, NotAModelIsAClearError) {
  auto m = model_from_string(R"({"format": "something-else", "version": 1})", "other.json");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("not a ckptscope logwatch model"), std::string::npos);
}

TEST(ModelFile, ChangedBodyFailsTheChecksum) {
  auto doc = nlohmann::json::parse(model_to_string(trained()));
  doc["body"]["templates"][0]["count"] = 12345.0;
  auto m = model_from_string(doc.dump(), "edited.model");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("checksum"), std::string::npos) << m.error().message;
}

// `doc` with the checksum its (edited) body needs.
nlohmann::json resummed(nlohmann::json doc) {
  std::string body = doc["body"].dump();
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : body) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(h));
  doc["checksum"] = std::string("fnv1a64:") + sum;
  return doc;
}

// Issue 22: `logwatch train` on a line with a byte that is not UTF-8 threw
// type_error.316 while writing the model.
TEST(ModelFile, TextThatIsNotUtf8IsWrittenReplacedAndReadsBack) {
  LogDetector d = trained();
  for (int i = 0; i < 3; ++i) d.learn("disk \xff\xfe error on sda");
  const std::string path = temp_path("bytes");
  auto saved = save_model(d, path);
  ASSERT_TRUE(saved.has_value()) << saved.error().message;
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  auto loaded = load_model(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->miner().size(), d.miner().size());
  EXPECT_NE(model_to_string(*loaded).find("\xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(ModelFile, AFailedSaveLeavesNoTmpBehind) {
  // The model's path is a directory with a file in it: refused, never
  // replaced (issue 36), and nothing left beside it.
  std::string scratch = (std::filesystem::temp_directory_path() / "ckpt-model-XXXXXX").string();
  ASSERT_NE(mkdtemp(scratch.data()), nullptr);
  const std::string dir = scratch + "/occupied";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/keep") << "x";
  auto saved = save_model(trained(), dir);
  ASSERT_FALSE(saved.has_value());
  EXPECT_NE(saved.error().message.find("a directory, not a regular file"), std::string::npos)
      << saved.error().message;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(scratch),
                          std::filesystem::directory_iterator()),
            1)
      << "a temporary file left beside it";
  EXPECT_TRUE(std::filesystem::exists(dir + "/keep"));
  std::filesystem::remove_all(scratch);
}

struct BadSetting {
  const char* pointer;  // into the body
  nlohmann::json value;
  const char* message;
};

// NaN similarity is written as null (`--similarity nan` made a model that
// could not be read back); a huge integer wrapped in get<int>().
TEST(ModelFile, OutOfRangeSettingsAndCountsAreNamed) {
  const BadSetting cases[] = {
      {"/drain/similarity", nullptr, "drain.similarity is null, not a number from 0 to 1"},
      {"/drain/similarity", 1.5, "drain.similarity is 1.5"},
      {"/drain/prefix_tokens", 4294967297ULL, "drain.prefix_tokens is 4294967297"},
      {"/drain/max_templates", 0, "drain.max_templates is 0"},
      {"/history", -1, "history is -1"},
      {"/templates/0/count", -3.0, "a template's count is -3.0"},
      {"/contexts/0/total", std::numeric_limits<double>::infinity(), "a context's total is null"},
  };
  for (const auto& c : cases) {
    auto doc = nlohmann::json::parse(model_to_string(trained()));
    doc["body"][nlohmann::json::json_pointer(c.pointer)] = c.value;
    auto m = model_from_string(resummed(doc).dump(), "edited.model");
    ASSERT_FALSE(m.has_value()) << c.pointer;
    EXPECT_NE(m.error().message.find(c.message), std::string::npos) << m.error().message;
  }
}

TEST(ModelFile, WellSummedButMalformedBodyNamesTheProblem) {
  // A body with the right checksum but a field of the wrong type.
  auto doc = nlohmann::json::parse(model_to_string(trained()));
  doc["body"]["templates"][0]["tokens"] = "not a list";
  std::string body = doc["body"].dump();
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : body) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(h));
  doc["checksum"] = std::string("fnv1a64:") + sum;
  auto m = model_from_string(doc.dump(), "typed.model");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("typed.model"), std::string::npos);
  EXPECT_NE(m.error().message.find("wrong type"), std::string::npos) << m.error().message;
  // and where: the JSON pointer of the field.
  EXPECT_NE(m.error().message.find("/body/templates/0/tokens"), std::string::npos)
      << m.error().message;
}

}  // namespace
}  // namespace ckpt::logwatch
