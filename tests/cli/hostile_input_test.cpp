// Issue 22, ckptscope's own commands: bad numbers in a config and on flags,
// bytes that are not UTF-8 in logs and requests, and the messages for an
// unknown command and a file that cannot be written. Nothing aborts; every
// refusal is exit 2 with a sentence naming what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kNotifier =
    (std::filesystem::path(kCkptscope).parent_path() / "ckptscope-notify").string();

TEST(HostileInput, AConfigNumberNoDoubleHoldsIsExit2BeforeTheJob) {
  ScratchDir dir;
  std::ofstream(dir / "c.json") << R"({"checkpoint":{"quiet_gap_ms":1e400}})";
  auto r =
      run({kCkptscope, "run", "--no-trace", "--config", dir / "c.json", "--", "touch", dir / "ran"},
          dir);
  EXPECT_EQ(r.code, 2) << r.err;  // it aborted (134) before the fix
  EXPECT_THAT(r.err, HasSubstr("c.json: not valid JSON: number overflow parsing '1e400'"));
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
}

TEST(HostileInput, AnUnknownCommandIsNamedWithTheCommands) {
  ScratchDir dir;
  auto r = run({kCkptscope, "nosuchcmd"}, dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'nosuchcmd'"));
  EXPECT_THAT(r.err, HasSubstr("run, attach, summary"));
  EXPECT_THAT(r.err, Not(HasSubstr("A subcommand is required")));
  EXPECT_EQ(run({kCkptscope, "--version"}, dir).code, 0);
}

struct BadFlag {
  std::vector<std::string> args;
  const char* message;
};

TEST(HostileInput, NumericFlagsRefuseNanInfAndNegative) {
  ScratchDir dir;
  std::ofstream(dir / "log.txt") << "a line\n";
  const std::string log = dir / "log.txt";
  const BadFlag cases[] = {
      {{"attach", "--pid", "1", "--duration", "nan"}, "--duration: nan is not a finite number"},
      {{"attach", "--pid", "1", "--duration", "inf"}, "--duration: inf is not a finite number"},
      {{"attach", "--pid", "1", "--duration", "1e11"}, "must be more than 0, at most 315360000"},
      {{"attach", "--pid", "1", "--duration", "-5"}, "must be more than 0"},
      {{"logwatch", "--source", log, "--threshold", "nan"}, "--threshold: nan is not a finite"},
      {{"logwatch", "--source", log, "--similarity", "nan"}, "--similarity: nan is not a finite"},
      {{"logwatch", "--source", log, "--min-support", "-1"}, "--min-support: -1 is out of range"},
      {{"logwatch", "--source", log, "--warmup", "-1"}, "--warmup: -1 is not a whole number"},
      {{"logwatch", "train", log, "-o", dir / "m", "--similarity", "nan"}, "not a finite number"},
      {{"eval-anomaly", "--min-f1", "nan"}, "--min-f1: nan is not a finite number"},
      {{"eval-anomaly", "--train-fraction", "nan"}, "--train-fraction: nan is not a finite"},
      {{"eval-classifier", "--min-macro-f1", "nan"}, "--min-macro-f1: nan is not a finite"},
      {{"exporter", "--cpu-report-min-ms", "nan"}, "--cpu-report-min-ms: nan is not a finite"},
      {{"exporter", "--cpu-report-min-ms", "-1"}, "must be from 0 to 10000"},
      {{"demo", "--shards", "0"}, "--shards: 0 is out of range: must be from 1 to 100000"},
      {{"calibrate", "--device", "-1"}, "--device: -1 is out of range: must be from 0 to 1023"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {kCkptscope};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run(argv, dir);
    EXPECT_EQ(r.code, 2) << join(argv) << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << join(argv);
    // CLI::PositiveNumber printed the 309 digits of DBL_MAX.
    EXPECT_LT(r.err.size(), 400u) << join(argv) << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "m"));
}

TEST(HostileInput, ExportSaysWhyItCannotWrite) {
  ScratchDir dir;
  const std::string trace = std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/report/node-a.db";
  auto missing_dir = run({kCkptscope, "export", trace, "-o", dir / "no/such/dir/o.json"}, dir);
  EXPECT_EQ(missing_dir.code, 1);
  EXPECT_THAT(missing_dir.err, HasSubstr("o.json"));
  EXPECT_THAT(missing_dir.err, HasSubstr("No such file or directory"));
  // A device is never written, nor replaced (issue 36).
  auto full = run({kCkptscope, "export", trace, "-o", "/dev/full"}, dir);
  EXPECT_EQ(full.code, 1);
  EXPECT_THAT(full.err, HasSubstr("/dev/full: a character device, not a regular file"));
}

TEST(HostileInput, LogwatchTrainsOnBytesThatAreNotUtf8) {
  ScratchDir dir;
  {
    std::ofstream log(dir / "node.log", std::ios::binary);
    for (int i = 0; i < 20; ++i) {
      log << "nfs: server fs1 OK " << i << "\n";
      log << "usb 1-1: bad descriptor \xff\xfe at " << i << "\n";
    }
  }
  const std::string model = dir / "m.model";
  auto train = run({kCkptscope, "logwatch", "train", dir / "node.log", "-o", model}, dir);
  EXPECT_EQ(train.code, 0) << train.err;  // aborted before the fix, leaving an empty m.model.tmp
  EXPECT_FALSE(std::filesystem::exists(model + ".tmp"));
  ASSERT_TRUE(std::filesystem::exists(model));
  // The model reads back, and the same bytes are not news to it.
  auto watch = run({kCkptscope, "logwatch", "--model", model, "--source", dir / "node.log",
                    "--json", "--no-exporter"},
                   dir);
  EXPECT_EQ(watch.code, 0) << watch.err;
  EXPECT_THAT(watch.err, HasSubstr("40 lines, 0 anomalies"));
  // A model that cannot be written (a directory at its path: never
  // replaced) leaves no temporary behind either.
  std::filesystem::create_directories(dir / "occupied/x");
  auto blocked =
      run({kCkptscope, "logwatch", "train", dir / "node.log", "-o", dir / "occupied"}, dir);
  EXPECT_EQ(blocked.code, 1);
  EXPECT_THAT(blocked.err, HasSubstr("occupied: a directory, not a regular file"));
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".occupied.tmp"), std::string::npos) << e.path();
  EXPECT_TRUE(std::filesystem::exists(dir / "occupied/x"));
}

TEST(HostileInput, TheNotifierAnswersARequestOfAnyBytesWithJson) {
  ScratchDir dir;
  for (const std::string& request :
       {std::string("{\"mode\": \"\xff\"}"), std::string("{\"mode\": \"check\", \"targets\": \xff"),
        std::string("{\"n\": 1e400}"), std::string("\xc3")}) {
    std::ofstream(dir / "req", std::ios::binary) << request;
    auto r = run({kNotifier}, dir, "cat " + quote(dir / "req") + " | ");
    EXPECT_EQ(r.code, 2) << r.err;  // it aborted echoing the bytes before the fix
    auto answer = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(answer.is_discarded()) << r.out;
    EXPECT_THAT(answer.value("request_error", ""), HasSubstr("request: ")) << r.out;
  }
}

}  // namespace
}  // namespace ckpt::test
