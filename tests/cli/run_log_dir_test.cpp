// Where `ckptscope run` puts the job log by default: beside --trace FILE when
// one is given, else the state directory ($XDG_STATE_HOME/ckptscope/logs,
// ~/.local/state/ckptscope/logs, /var/log/ckptscope as root), never the
// directory it was started in; and a log directory it cannot make is a
// warning, never a change to the job's exit code.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

// A scratch directory the test's user, and the unprivileged user a root test
// runs `run` as, can both work in; `cwd` is where `run` is started.
struct UserScratch {
  ScratchDir dir;
  fs::path cwd = dir.path() / "cwd";
  UserScratch() {
    fs::permissions(dir.path(), fs::perms::all);
    fs::create_directory(cwd);
    fs::permissions(cwd, fs::perms::all);
  }
};

// `run` as a user sees it, started in `cwd` with `env` (env(1) arguments):
// as root the test drops to nobody, whose default is a user's.
std::string as_user_in(const fs::path& cwd, const std::string& env) {
  std::string user = is_root() ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  return "cd " + quote(cwd.string()) + " && " + user + "env " + env + " ";
}

TEST(RunLogDir, AUsersDefaultIsXdgStateHomeAndTheCwdStaysEmpty) {
  UserScratch s;
  const std::string env = "HOME=" + quote(s.dir / "home") +
                          " XDG_STATE_HOME=" + quote(s.dir / "state") + " CKPTSCOPE_LOG_DIR=";
  auto r = run({kCkptscope, "run", "--no-trace", "--", "sh", "-c", "echo ran; exit 3"}, s.dir,
               as_user_in(s.cwd, env));
  EXPECT_EQ(r.code, 3) << r.err;
  auto logs = files_in(s.dir / "state/ckptscope/logs");
  ASSERT_EQ(logs.size(), 1U) << r.err;
  EXPECT_EQ(logs[0].filename().string().rfind("sh-", 0), 0U) << logs[0];
  EXPECT_NE(slurp(logs[0]).find("ran\n"), std::string::npos);
  EXPECT_TRUE(files_in(s.cwd).empty());
  EXPECT_FALSE(fs::exists(s.dir / "home"));
}

TEST(RunLogDir, WithoutXdgStateHomeAUsersDefaultIsUnderTheHome) {
  UserScratch s;
  const std::string env = "-u XDG_STATE_HOME HOME=" + quote(s.dir / "home") + " CKPTSCOPE_LOG_DIR=";
  auto r = run({kCkptscope, "run", "--no-trace", "--", "true"}, s.dir, as_user_in(s.cwd, env));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(files_in(s.dir / "home/.local/state/ckptscope/logs").size(), 1U) << r.err;
  EXPECT_TRUE(files_in(s.cwd).empty());
}

TEST(RunLogDir, TheLogGoesBesideTheTraceWhenOneIsGiven) {
  UserScratch s;
  fs::create_directory(s.dir / "traces");
  fs::permissions(s.dir / "traces", fs::perms::all);
  const std::string env = "HOME=" + quote(s.dir / "home") +
                          " XDG_STATE_HOME=" + quote(s.dir / "state") + " CKPTSCOPE_LOG_DIR=";
  // Traced, but unprivileged: the probes are refused and the job runs; the
  // trace is written all the same, and the log beside it.
  auto r = run({kCkptscope, "run", "--quiet", "--no-exporter", "--trace", s.dir / "traces/t.db",
                "--", "sh", "-c", "exit 4"},
               s.dir, as_user_in(s.cwd, env));
  EXPECT_EQ(r.code, 4) << r.err;
  std::vector<fs::path> logs;
  for (const auto& f : files_in(s.dir / "traces"))
    if (f.extension() == ".log") logs.push_back(f);
  ASSERT_EQ(logs.size(), 1U) << r.err;
  EXPECT_EQ(logs[0].filename().string().rfind("sh-", 0), 0U) << logs[0];
  EXPECT_TRUE(fs::exists(s.dir / "traces/t.db"));
  EXPECT_FALSE(fs::exists(s.dir / "state"));
  EXPECT_TRUE(files_in(s.cwd).empty());
}

TEST(RunLogDir, RootsDefaultIsVarLogCkptscopeWhateverXdgSays) {
  if (!is_root()) GTEST_SKIP() << "the root default needs root";
  UserScratch s;
  const fs::path var_log = "/var/log/ckptscope";
  const bool existed = fs::exists(var_log);
  const std::string job = "ckptscope-log-dir-test-" + std::to_string(getpid());
  auto r = run({kCkptscope, "run", "--no-trace", "--job-name", job, "--", "true"}, s.dir,
               "cd " + quote(s.cwd.string()) + " && env XDG_STATE_HOME=" + quote(s.dir / "state") +
                   " CKPTSCOPE_LOG_DIR= ");
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<fs::path> ours;
  for (const auto& f : files_in(var_log))
    if (f.filename().string().rfind(job + "-", 0) == 0) ours.push_back(f);
  EXPECT_EQ(ours.size(), 1U) << r.err;
  for (const auto& f : ours) fs::remove(f);
  std::error_code ec;
  if (!existed) fs::remove(var_log, ec);  // only when empty: never others' logs
  EXPECT_FALSE(fs::exists(s.dir / "state"));
  EXPECT_TRUE(files_in(s.cwd).empty());
}

TEST(RunLogDir, ALogDirThatCannotBeMadeIsAWarningAndTheJobKeepsItsExitCode) {
  UserScratch s;
  std::ofstream(s.dir / "a-file") << "not a directory\n";
  auto r = run({kCkptscope, "run", "--no-trace", "--log-dir", s.dir / "a-file/logs", "--", "sh",
                "-c", "echo ran; exit 7"},
               s.dir);
  EXPECT_EQ(r.code, 7);
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_NE(r.err.find("the job runs without a log"), std::string::npos) << r.err;
  // The default state directory, unusable the same way.
  const std::string env = "HOME=" + quote(s.dir / "home") +
                          " XDG_STATE_HOME=" + quote(s.dir / "a-file") + " CKPTSCOPE_LOG_DIR=";
  r = run({kCkptscope, "run", "--no-trace", "--", "sh", "-c", "echo ran; exit 9"}, s.dir,
          as_user_in(s.cwd, env));
  EXPECT_EQ(r.code, 9);
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_NE(r.err.find("the job runs without a log"), std::string::npos) << r.err;
  EXPECT_TRUE(files_in(s.cwd).empty());
}

}  // namespace
}  // namespace ckpt::test
