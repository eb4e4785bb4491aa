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

}  // namespace
}  // namespace ckpt::test
