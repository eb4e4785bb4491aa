// `ckptscope calibrate --storage DIR` as a user runs it: a real measurement
// of the file system under a scratch directory, kept in the maxima file, and
// the refusals that stop it before it writes anything.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
  return buf;
}

// What is in `dir` besides the test harness's own output files.
std::vector<std::string> left_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != "stdout.txt" && name != "stderr.txt") out.push_back(name);
  }
  return out;
}

struct Calibration {
  ScratchDir dir;
  std::string maxima = dir / "state/maxima.json";
  std::string target = dir / "target";
  Calibration() { fs::create_directory(target); }
  RunResult run_calibrate(std::vector<std::string> extra) {
    std::vector<std::string> argv = {kCkptscope, "calibrate", "--storage", target};
    for (auto& a : extra) argv.push_back(std::move(a));
    return run(argv, dir, "env CKPTSCOPE_MAXIMA_FILE=" + quote(maxima) + " ");
  }
};

TEST(CalibrateStorage, MeasuresTheMountAndKeepsItInTheMaximaFile) {
  Calibration c;
  auto r = c.run_calibrate({"--bytes", "64M"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  const auto& s = out["storage"];
  EXPECT_EQ(s["bytes"], 64u << 20);
  EXPECT_EQ(s["bytes_read"], 64u << 20);
  EXPECT_EQ(s["streams"], 4);
  EXPECT_GT(s["write_Bps"].get<double>(), 1e6);  // any disk writes 1 MB/s
  EXPECT_GT(s["read_Bps"].get<double>(), 1e6);
  EXPECT_EQ(s["dir"], c.target);
  EXPECT_EQ(s["date"].get<std::string>().substr(0, 10), today_utc());
  EXPECT_EQ(out["max_source"], "calibrated " + today_utc());
  EXPECT_EQ(out["maxima_file"], c.maxima);
  struct stat st {};
  ASSERT_EQ(stat(c.target.c_str(), &st), 0);
  EXPECT_EQ(s["device"], fmt::format("{}:{}", major(st.st_dev), minor(st.st_dev)));
  EXPECT_EQ(s["direct"], s["io"] == "O_DIRECT");
  EXPECT_THAT(r.err, HasSubstr("saved for " + s["mount_point"].get<std::string>()));
  EXPECT_THAT(r.err, HasSubstr("beside: config"));

  // The file holds exactly that entry.
  const auto file = read_json(c.maxima);
  EXPECT_EQ(file["version"], 1);
  ASSERT_EQ(file["mounts"].size(), 1u);
  EXPECT_EQ(file["mounts"][0], s);
  // Nothing of the measurement is left in the directory.
  EXPECT_TRUE(left_in(c.target).empty());

  // Again: the mount's entry is replaced, not added to.
  auto again = c.run_calibrate({"--bytes", "16M", "--streams", "2", "--block", "256K"});
  ASSERT_EQ(again.code, 0) << again.err;
  const auto file2 = read_json(c.maxima);
  ASSERT_EQ(file2["mounts"].size(), 1u);
  EXPECT_EQ(file2["mounts"][0]["bytes"], 16u << 20);
  EXPECT_EQ(file2["mounts"][0]["streams"], 2);
  EXPECT_EQ(file2["mounts"][0]["block_bytes"], 256u << 10);
}

TEST(CalibrateStorage, TooLittleFreeSpaceIsRefusedNamingTheDirectory) {
  Calibration c;
  // More than half of any disk this runs on.
  auto r = c.run_calibrate({"--bytes", "1000T"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(c.target + " has "));
  EXPECT_THAT(r.err, HasSubstr("free; calibrating with 1000.0 TiB needs 2000.0 TiB"));
  EXPECT_FALSE(fs::exists(c.maxima));
  EXPECT_TRUE(left_in(c.target).empty());
}

TEST(CalibrateStorage, AMaximaFileThatIsNotOneStopsItBeforeMeasuring) {
  Calibration c;
  fs::create_directories(fs::path(c.maxima).parent_path());
  std::ofstream(c.maxima) << "not json";
  auto r = c.run_calibrate({"--bytes", "1000T"});  // would be refused later for space
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(c.maxima));
  EXPECT_THAT(r.err, HasSubstr("fix or remove it"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("free")));
  EXPECT_EQ(slurp(c.maxima), "not json");
}

TEST(CalibrateStorage, FlagsOfTheOtherModeAndBadSizesAreRefused) {
  Calibration c;
  for (const auto& [argv, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{kCkptscope, "calibrate", "--bytes", "64M"}, "--storage"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--device", "0"}, "excludes"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--size", "1G"}, "excludes"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--bytes", "0"}, "more than 0"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--bytes", "lots"}, "--bytes lots"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--block", "1000"}, "multiple of 4K"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--bytes", "1M"}, "less than one"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--streams", "0"}, "--streams"},
           {{kCkptscope, "calibrate", "--storage", c.target, "--seconds", "-1"}, "--seconds"},
           {{kCkptscope, "calibrate", "--storage", c.dir / "missing"}, "missing"}}) {
    auto r = run(argv, c.dir);
    EXPECT_EQ(r.code, 2) << join(argv) << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(says)) << join(argv);
  }
  EXPECT_TRUE(left_in(c.target).empty());
}

TEST(CalibrateStorage, ASignalStopsItAndItsFilesGo) {
  Calibration c;
  // Long enough to be running when the signal comes (30 s at most).
  const std::string cmd = "env CKPTSCOPE_MAXIMA_FILE=" + quote(c.maxima) + " " +
                          join({kCkptscope, "calibrate", "--storage", c.target, "--bytes", "4G",
                                "--streams", "1", "--block", "4K", "--seconds", "60"}) +
                          " 2>" + quote(c.dir / "err.txt") +
                          " & pid=$!; sleep 1; kill -TERM $pid;" + " wait $pid";
  auto r = run({"sh", "-c", cmd}, c.dir);
  EXPECT_EQ(r.code, 128 + 15) << slurp(c.dir / "err.txt");
  EXPECT_THAT(slurp(c.dir / "err.txt"), HasSubstr("stopped by signal 15"));
  EXPECT_TRUE(left_in(c.target).empty());
  EXPECT_FALSE(fs::exists(c.maxima));
}

}  // namespace
}  // namespace ckpt::test
