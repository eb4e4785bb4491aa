// Issue 36, item 5: `run` never dies of a signal while its job lives, and
// always hands back the job's exit code. Every catchable signal whose
// default action ends a process, sent to `run` by another process, is
// forwarded to the job: a job that ignores it goes on and exits as it would;
// one that does not dies of it, and that is its code (128+N). Before, SIGXCPU,
// SIGALRM, SIGVTALRM, SIGPROF and SIGXFSZ killed `run` itself (152, 142, 154,
// 155, 153) and orphaned the job.
#include <signal.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/bpf/harness.h"

namespace ckpt::test {
namespace {

using ::testing::HasSubstr;

// Sends `sig` to `ckptscope run` once its job is running; prints "rc=N", the
// code run exited with. The job ignores the signals listed in `trapped`,
// touches `ready` and exits 5 0.3 s later.
RunResult signal_run(const ScratchDir& dir, int sig, const std::string& trapped) {
  const std::string ready = dir / ("ready-" + std::to_string(sig));
  const std::string job = "trap '' " + trapped + "; touch " + quote(ready) + "; sleep 0.3; exit 5";
  const std::string script =
      quote(kCkptscope) + " run -q --no-trace --no-exporter --log " + quote(dir / "job.log") +
      " -- sh -c " + quote(job) + " & p=$!; while [ ! -e " + quote(ready) +
      " ]; do sleep 0.02; done; kill -" + std::to_string(sig) + " $p; wait $p; echo rc=$?";
  return run({"sh", "-c", script}, dir);
}

const std::vector<int> kEndingSignals = {
    SIGHUP,   SIGINT,  SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM,   SIGALRM,  SIGVTALRM,
    SIGPROF,  SIGXCPU, SIGXFSZ, SIGPWR,  SIGIO,   SIGSTKFLT, SIGRTMIN, SIGRTMIN + 3,
    SIGRTMAX, SIGSEGV, SIGBUS,  SIGFPE,  SIGTRAP, SIGSYS};

TEST(RunSignals, AJobThatIgnoresASignalSentToRunKeepsItsOwnExitCode) {
  ScratchDir dir;
  std::string trapped;
  for (int sig : kEndingSignals) trapped += std::to_string(sig) + " ";
  for (int sig : kEndingSignals) {
    SCOPED_TRACE(strsignal(sig));
    auto r = signal_run(dir, sig, trapped);
    EXPECT_EQ(r.out, "rc=5\n") << "signal " << sig << ": " << r.err;
  }
}

TEST(RunSignals, AJobThatDoesNotDiesOfItAndThatIsItsCode) {
  ScratchDir dir;
  for (int sig : {SIGALRM, SIGXCPU, SIGPROF, SIGRTMIN + 1}) {
    SCOPED_TRACE(strsignal(sig));
    auto r = signal_run(dir, sig, "");
    EXPECT_EQ(r.out, "rc=" + std::to_string(128 + sig) + "\n") << r.err;
  }
}

// Issue 36, item 6: `run` killed by SIGKILL (which nothing can forward) took
// a printing job with it: the job's next write to the tee hit a closed pipe.
// Now the tee goes on in a process of its own: the job prints every line to
// the end, to run's stdout and to the log, and exits as it would.
TEST(RunSignals, AJobOutlivesRunKilledBySigkillAndKeepsPrinting) {
  ScratchDir dir;
  const std::string ready = dir / "ready";
  const std::string done = dir / "done";
  const std::string job = "touch " + quote(ready) +
                          "; i=0; while [ $i -lt 20 ]; do echo line $i; echo err $i >&2; "
                          "i=$((i+1)); sleep 0.05; done; echo $? > " +
                          quote(done);
  const std::string script =
      "set -m; " + quote(kCkptscope) + " run -q --no-trace --no-exporter --log " +
      quote(dir / "job.log") + " -- sh -c " + quote(job) + " & p=$!; while [ ! -e " + quote(ready) +
      " ]; do sleep 0.02; done; sleep 0.3; kill -KILL $p; wait $p; echo rc=$?; "
      // At most 5 s: a job killed by SIGPIPE never writes `done`.
      "n=0; while [ ! -e " +
      quote(done) +
      " ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); "
      "done; sleep 0.2";
  auto r = run({"sh", "-c", script}, dir);
  EXPECT_THAT(r.out, HasSubstr("rc=137"));
  for (int i = 0; i < 20; ++i) {
    EXPECT_THAT(r.out, HasSubstr("line " + std::to_string(i) + "\n")) << r.out;
    EXPECT_THAT(r.err, HasSubstr("err " + std::to_string(i) + "\n")) << r.err;
  }
  EXPECT_EQ(slurp(done), "0\n") << "the job's last echo failed: its stdout was gone";
  const std::string log = slurp(dir / "job.log");
  EXPECT_THAT(log, HasSubstr("line 19\n"));
  EXPECT_THAT(log, HasSubstr("err 19\n"));
}

}  // namespace
}  // namespace ckpt::test
