// `ckptscope run` as a wrapper: the pre-launch log, the tee, exit-code
// passthrough for every classified failure mode (signals included), and the
// failure cause written into the log. --no-trace: no root needed.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> wrapped(const std::string& log, const std::vector<std::string>& command) {
  std::vector<std::string> argv = {kCkptscope, "run", "--no-trace", "--log", log, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// "# ckptscope: failure cause: CLASS (rule ID)" -> CLASS; "" when absent.
std::string failure_cause(const std::string& log_text) {
  std::smatch m;
  static const std::regex re("# ckptscope: failure cause: ([a-z_]+)");
  return std::regex_search(log_text, m, re) ? m[1].str() : std::string();
}

TEST(RunWrapper, LogExistsWhenTheCommandCannotStart) {
  ScratchDir dir;
  // The log directory does not exist yet: run creates it (a shell redirect
  // to it would fail and leave nothing).
  auto r = run({kCkptscope, "run", "--no-trace", "--log-dir", dir / "logs/not/yet", "--",
                "ckptscope-no-such-command"},
               dir);
  EXPECT_EQ(r.code, 127);
  EXPECT_NE(r.err.find("cannot start ckptscope-no-such-command"), std::string::npos) << r.err;
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(dir / "logs/not/yet")) logs.push_back(e.path());
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].filename().string().find("ckptscope-no-such-command-"), std::string::npos);
  std::string text = slurp(logs[0]);
  EXPECT_NE(text.find("# ckptscope: command: ckptscope-no-such-command"), std::string::npos);
  EXPECT_NE(text.find("cannot start ckptscope-no-such-command: No such file or directory"),
            std::string::npos);
  EXPECT_EQ(failure_cause(text), "file_not_found");
}

TEST(RunWrapper, LogHasTheHeaderBeforeTheJobsFirstByte) {
  ScratchDir dir;
  const std::string log = dir / "job.log";
  // The job reads its own log before printing anything: the header is there.
  // (head, not cat: cat would read back its own output as the tee appends it.)
  auto r = run(wrapped(log, {"sh", "-c", "head -n 9 \"$0\"; echo first-output", log}), dir);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("# ckptscope: command: sh -c"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the job's stdout and stderr follow"), std::string::npos);
}

TEST(RunWrapper, TeesBothStreamsKeepingThemApartOnTheConsole) {
  ScratchDir dir;
  const std::string log = dir / "job.log";
  auto r = run(wrapped(log, {"sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"}), dir);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("to-stdout"), std::string::npos);
  EXPECT_EQ(r.out.find("to-stderr"), std::string::npos);
  EXPECT_NE(r.err.find("to-stderr"), std::string::npos);
  EXPECT_EQ(r.err.find("to-stdout"), std::string::npos);
  std::string text = slurp(log);
  EXPECT_NE(text.find("to-stdout\n"), std::string::npos);
  EXPECT_NE(text.find("to-stderr\n"), std::string::npos);
  EXPECT_NE(text.find("# ckptscope: the job ended: exit code 3"), std::string::npos);
}

TEST(RunWrapper, ACrashInTheFirstMillisecondStillLeavesItsOutput) {
  ScratchDir dir;
  const std::string log = dir / "job.log";
  auto r = run(wrapped(log, {"sh", "-c", "echo boom; kill -SEGV $$"}), dir);
  EXPECT_EQ(r.code, 128 + 11);
  std::string text = slurp(log);
  EXPECT_NE(text.find("boom\n"), std::string::npos);
  EXPECT_NE(text.find("killed by signal 11 (SIGSEGV)"), std::string::npos);
  EXPECT_EQ(failure_cause(text), "segfault");  // from the exit status: the log says nothing
}

TEST(RunWrapper, NodeNameIsTheHostnameUnlessGiven) {
  ScratchDir dir;
  const std::string log = dir / "job.log";
  auto r = run(
      {kCkptscope, "run", "--no-trace", "--node-name", "rack3-node17", "--log", log, "--", "true"},
      dir);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(slurp(log).find("# ckptscope: host: rack3-node17 "), std::string::npos) << slurp(log);
}

TEST(RunWrapper, ASuccessfulJobHasNoFailureCause) {
  ScratchDir dir;
  const std::string log = dir / "job.log";
  auto r = run(wrapped(log, {"sh", "-c", "echo 'KeyError: handled and ignored'; exit 0"}), dir);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(failure_cause(slurp(log)), "");
}

TEST(RunWrapper, OutputOfProcessesLeftBehindDoesNotHoldTheJobsEnd) {
  ScratchDir dir;
  const std::string log = dir / "job.log";
  auto t0 = std::chrono::steady_clock::now();
  // A background process inherits stdout and keeps it open for 30 s.
  auto r = run(wrapped(log, {"sh", "-c", "sleep 30 & echo main-done; exit 4"}), dir);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, 4);
  EXPECT_LT(s, 15.0);
  std::string text = slurp(log);
  EXPECT_NE(text.find("main-done"), std::string::npos);
  EXPECT_NE(text.find("still hold its output"), std::string::npos);
}

// Every failure mode of the GPUAlert corpus, replayed through the wrapper:
// the job prints the captured log and ends the way the real job ended (exit
// code, or the signal). run returns exactly that status, and names the class.
TEST(RunWrapper, ExitStatusPassesThroughForEveryClassifiedFailureMode) {
  const std::string labels =
      CKPTSCOPE_SOURCE_DIR "/tests/data/third_party/gpualert-corpus/corpus/labels.jsonl";
  std::ifstream in(labels);
  ASSERT_TRUE(in) << labels;
  std::map<std::string, nlohmann::json> one_per_class;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    one_per_class.emplace(j["mode"].get<std::string>(), j);  // the first of each class
  }
  ASSERT_EQ(one_per_class.size(), 15u);
  ScratchDir dir;
  for (const auto& [cls, j] : one_per_class) {
    const std::string log_file =
        (fs::path(labels).parent_path().parent_path() / j["log_path"].get<std::string>()).string();
    int code = j["true_exit_code"].get<int>();
    // Negative: killed by that signal, as Python's subprocess reports it.
    std::string end =
        code < 0 ? "kill -" + std::to_string(-code) + " $$" : "exit " + std::to_string(code);
    // The corpus harness's first line names the label: leave it out.
    std::string script = "grep -v '^\\[inject\\]' \"$0\"; " + end;
    const std::string log = dir / (cls + ".log");
    auto r = run(wrapped(log, {"sh", "-c", script, log_file}), dir);
    int expected = code < 0 ? 128 - code : code;
    EXPECT_EQ(r.code, expected) << cls;
    std::string text = slurp(log);
    if (code == 0) {
      EXPECT_EQ(failure_cause(text), "") << cls << ": a job that exits 0 has no failure";
    } else {
      EXPECT_EQ(failure_cause(text), cls) << text;
    }
  }
}

}  // namespace
}  // namespace ckpt::test
