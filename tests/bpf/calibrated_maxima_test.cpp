// The calibrated maxima in real traces: what `calibrate --storage` measured
// of a mount becomes the host_io maximum of checkpoints on it in `run`'s
// trace, summary and report, and in `demo`'s table; what `calibrate
// --memory` measured becomes serialize's; a maxima file that cannot be read
// is a warning naming it, and the run goes on.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
namespace fs = std::filesystem;

std::string env_for(const std::string& maxima) {
  return "env CKPTSCOPE_MAXIMA_FILE=" + quote(maxima) + " ";
}

const nlohmann::json* stage(const nlohmann::json& checkpoint, const std::string& name) {
  for (const auto& s : checkpoint["stages"])
    if (s["name"] == name) return &s;
  return nullptr;
}

// The mount's calibration is the storage stage's maximum; host_io copies to
// and from the page cache, against the memory's (none calibrated here).
TEST(CalibratedMaxima, RunsStorageMaximumIsTheMountsCalibration) {
  REQUIRE_ROOT();
  ScratchDir dir;
  const std::string maxima = dir / "maxima.json";
  fs::create_directory(dir / "ckpt");
  auto cal = run({kCkptscope, "calibrate", "--storage", dir / "ckpt", "--bytes", "32M"}, dir,
                 env_for(maxima));
  ASSERT_EQ(cal.code, 0) << cal.err;
  const auto entry = nlohmann::json::parse(cal.out)["storage"];
  const std::string source = nlohmann::json::parse(cal.out)["max_source"];
  EXPECT_THAT(source, StartsWith("calibrated 20"));

  std::vector<std::string> argv = {kCkptscope,   "run",   "--quiet",       "--trace",
                                   dir / "t.db", "--log", dir / "job.log", "--"};
  for (auto& a : small_checkpoint_job(dir)) argv.push_back(a);
  auto r = run(argv, dir, env_for(maxima));
  ASSERT_EQ(r.code, 0) << r.err;
  auto s = run({kCkptscope, "summary", dir / "t.db", "--json"}, dir);
  ASSERT_EQ(s.code, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  ASSERT_EQ(j["checkpoints"].size(), 2u) << s.out;
  for (const auto& c : j["checkpoints"]) {
    const auto* storage = stage(c, "storage");
    ASSERT_TRUE(storage) << c.dump();
    EXPECT_EQ((*storage)["max_source"], source);
    EXPECT_DOUBLE_EQ(
        (*storage)["max_Bps"].get<double>(),
        (c["direction"] == "save" ? entry["write_Bps"] : entry["read_Bps"]).get<double>());
    EXPECT_TRUE((*storage)["fraction_of_max"].is_number()) << storage->dump();
    const auto* io = stage(c, "host_io");
    ASSERT_TRUE(io) << c.dump();
    EXPECT_EQ((*io)["max_source"], "unknown") << "no memory calibration in this file";
  }
  auto table = run({kCkptscope, "summary", dir / "t.db"}, dir);
  EXPECT_THAT(table.out, HasSubstr(source));
  // The report of a one-node job takes the node's calibration as the storage's.
  auto rep = run({kCkptscope, "report", dir / "t.db", "--format", "json"}, dir);
  ASSERT_EQ(rep.code, 0) << rep.err;
  const auto report = nlohmann::json::parse(rep.out);
  EXPECT_THAT(report["checkpoints"][0]["storage_max_source"].get<std::string>(),
              StartsWith(source + " ("));
  EXPECT_TRUE(report["checkpoints"][0]["fraction_of_storage_max"].is_number());
}

TEST(CalibratedMaxima, AMalformedMaximaFileIsAWarningNamingItAndTheJobRuns) {
  REQUIRE_ROOT();
  ScratchDir dir;
  const std::string maxima = dir / "maxima.json";
  std::ofstream(maxima) << "{\"version\": 1, \"mounts\": [{]}";
  std::vector<std::string> argv = {kCkptscope, "run",           "--trace", dir / "t.db",
                                   "--log",    dir / "job.log", "--"};
  for (auto& a : small_checkpoint_job(dir)) argv.push_back(a);
  auto r = run(argv, dir, env_for(maxima));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("calibrated maxima not used: " + maxima + ": "));
  auto t = read_trace_or_fail(dir / "t.db");
  EXPECT_THAT(t.job.trace_warning, HasSubstr(maxima));
  ASSERT_FALSE(t.checkpoints.empty());
  for (const auto& c : t.checkpoints)
    for (const auto& s : c.stages)
      if (s.name == "host_io") {
        EXPECT_THAT(s.max_source, Not(StartsWith("calibrated")));
      }
}

// `calibrate --memory` gives serialize its maximum: one thread's copy rate
// for a checkpoint one thread did, as the trace, summary and table say.
TEST(CalibratedMaxima, RunsSerializeMaximumIsTheNodesMemoryCopy) {
  REQUIRE_ROOT();
  ScratchDir dir;
  const std::string maxima = dir / "maxima.json";
  auto cal = run({kCkptscope, "calibrate", "--memory", "--bytes", "16M", "--rounds", "2"}, dir,
                 env_for(maxima));
  ASSERT_EQ(cal.code, 0) << cal.err;
  const auto result = nlohmann::json::parse(cal.out);
  const double one_thread = result["memory"]["one_thread_Bps"];
  EXPECT_GT(one_thread, 0);
  EXPECT_EQ(result["rounds"]["one_thread_Bps"].size(), 2u);
  EXPECT_EQ(read_json(maxima)["memory"], result["memory"]);
  // host_io's ceiling: the copies read(2) and write(2) make, through a buffer
  // that stays in the caches: above the big-buffer copy.
  const double page_cache_read = result["memory"]["page_cache_read_Bps"];
  EXPECT_GT(page_cache_read, 0);
  EXPECT_GT(result["memory"]["page_cache_write_Bps"].get<double>(), 0);
  EXPECT_EQ(result["rounds"]["page_cache_read_Bps"].size(), 2u);

  std::vector<std::string> argv = {kCkptscope,   "run",   "--quiet",       "--trace",
                                   dir / "t.db", "--log", dir / "job.log", "--"};
  for (auto& a : small_checkpoint_job(dir)) argv.push_back(a);
  auto r = run(argv, dir, env_for(maxima));
  ASSERT_EQ(r.code, 0) << r.err;
  auto s = run({kCkptscope, "summary", dir / "t.db", "--json"}, dir);
  ASSERT_EQ(s.code, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  ASSERT_FALSE(j["checkpoints"].empty()) << s.out;
  for (const auto& c : j["checkpoints"]) {
    const auto* io = stage(c, "host_io");
    ASSERT_TRUE(io) << c.dump();
    EXPECT_THAT((*io)["max_source"].get<std::string>(),
                HasSubstr(c["direction"] == "save" ? "(page-cache write, 1 thread)"
                                                   : "(page-cache read, 1 thread)"));
    if (c["direction"] == "load") EXPECT_DOUBLE_EQ((*io)["max_Bps"].get<double>(), page_cache_read);
    const auto* ser = stage(c, "serialize");
    ASSERT_TRUE(ser) << c.dump();
    EXPECT_THAT((*ser)["max_source"].get<std::string>(), StartsWith("calibrated 20"));
    EXPECT_THAT((*ser)["max_source"].get<std::string>(), HasSubstr("(memory copy, 1 thread)"));
    EXPECT_DOUBLE_EQ((*ser)["max_Bps"].get<double>(), one_thread);
  }
}

TEST(CalibratedMaxima, CalibrateMemoryRefusesWhatItCannotMeasure) {
  ScratchDir dir;
  const std::string maxima = dir / "maxima.json";
  auto small = run({kCkptscope, "calibrate", "--memory", "--bytes", "4K"}, dir, env_for(maxima));
  EXPECT_EQ(small.code, 2);
  EXPECT_THAT(small.err, HasSubstr("--bytes 4K: at least 1M for --memory"));
  auto both = run({kCkptscope, "calibrate", "--memory", "--storage", dir.path().string()}, dir,
                  env_for(maxima));
  EXPECT_EQ(both.code, 2);
  EXPECT_THAT(both.err, HasSubstr("excludes"));
  auto threads = run({kCkptscope, "calibrate", "--threads", "2"}, dir, env_for(maxima));
  EXPECT_EQ(threads.code, 2);
  EXPECT_THAT(threads.err, HasSubstr("--threads requires --memory"));
  auto bytes = run({kCkptscope, "calibrate", "--bytes", "1G"}, dir, env_for(maxima));
  EXPECT_EQ(bytes.code, 2);
  EXPECT_THAT(bytes.err, HasSubstr("--bytes: for --storage or --memory"));
  std::ofstream(maxima) << "{\"version\": 1, \"mounts\": [";
  auto bad_file = run({kCkptscope, "calibrate", "--memory", "--bytes", "2M"}, dir, env_for(maxima));
  EXPECT_EQ(bad_file.code, 1);
  EXPECT_THAT(bad_file.err, HasSubstr(maxima));
  EXPECT_THAT(bad_file.err, HasSubstr("fix or remove it"));
  EXPECT_FALSE(fs::exists(dir / "maxima.json.lock")) << "refused before measuring";
}

// scripts/demo.sh's promise: on a machine calibrated for nothing, the demo
// measures its directory and the memory copy first, and every host_io and
// serialize row has a fraction.
TEST(CalibratedMaxima, TheDemoCalibratesItsDirectoryAndShowsFractions) {
  REQUIRE_ROOT();
  ScratchDir dir;
  const std::string maxima = dir / "maxima.json";
  auto r = run({kCkptscope, "demo", "--dir", dir / "demo", "--shards", "2", "--shard-size", "4M",
                "--checkpoints", "1", "--trace", dir / "t.db"},
               dir, env_for(maxima));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("calibrate: " + dir.path().string()));
  EXPECT_THAT(r.err, HasSubstr("saved for "));
  EXPECT_THAT(r.err, Not(HasSubstr("demo: calibrating"))) << r.err;  // no failure said
  const auto file = read_json(maxima);
  ASSERT_EQ(file["mounts"].size(), 1u);
  EXPECT_EQ(file["mounts"][0]["bytes"], 256u << 20);
  EXPECT_TRUE(file["memory"].is_object()) << file.dump();
  EXPECT_THAT(r.err, HasSubstr("saved the memory copy in " + maxima));
  // The table: host_io's, storage's and serialize's max and percentage,
  // never "unknown".
  size_t rows = 0;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    // Stage rows: "  * serialize ..." or "    host_io ..." (summary_table.cpp).
    if (line.size() < 14 || !line.starts_with("  ") ||
        (line.compare(4, 8, "host_io ") != 0 && line.compare(4, 10, "serialize ") != 0 &&
         line.compare(4, 8, "storage ") != 0))
      continue;
    ++rows;
    EXPECT_THAT(line, HasSubstr("%")) << line;
    EXPECT_THAT(line, HasSubstr("calibrated 20")) << line;
    EXPECT_THAT(line, Not(HasSubstr("unknown"))) << line;
  }
  EXPECT_EQ(rows, 6u) << r.err;  // one save, one load

  // Run again: the calibration is there, so the demo does not measure anew.
  auto again = run({kCkptscope, "demo", "--dir", dir / "demo", "--shards", "1", "--shard-size",
                    "1M", "--checkpoints", "1", "--trace", dir / "t2.db", "--quiet"},
                   dir, env_for(maxima));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("was calibrated on "));
  EXPECT_THAT(again.err, HasSubstr("the memory copy was calibrated on "));
  EXPECT_THAT(again.err, Not(HasSubstr("saved for ")));
  EXPECT_THAT(again.err, Not(HasSubstr("saved the memory copy")));
}

}  // namespace
}  // namespace ckpt::test
