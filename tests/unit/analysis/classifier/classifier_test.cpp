// The rule engine: each rule's own examples, precedence between causes and
// symptoms, noise removal, evidence line numbers from tail-first scans.
#include "analysis/classifier/classifier.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/scratch_dir.h"

namespace ckpt::classify {
namespace {

const Classifier& rules() { return Classifier::builtin(); }

// Files for one run of this binary, in a directory removed at exit (a
// directory named by the pid was left in /tmp by every run).
std::string temp_file(const std::string& name, const std::string& text) {
  static const test::ScratchDir dir;
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ClassifierRules, EveryRuleClassifiesItsOwnExamples) {
  for (const auto& rule : rules().rules().rules) {
    for (const auto& example : rule.examples) {
      Classification c = rules().classify_text(example);
      EXPECT_EQ(c.rule, rule.id) << "example of " << rule.id << ": " << example;
      EXPECT_EQ(c.cls, rule.cls) << example;
      ASSERT_EQ(c.evidence.size(), 1u);
      EXPECT_EQ(c.evidence[0].line, 1u);
    }
  }
}

TEST(ClassifierRules, NoiseExamplesAreNeverACause) {
  for (const auto& noise : rules().rules().noise) {
    for (const auto& example : noise.examples) {
      Classification c = rules().classify_text(example);
      EXPECT_EQ(c.cls, kUnknownClass) << noise.id << ": " << example << " -> " << c.rule;
    }
  }
}

TEST(ClassifierRules, EveryClassHasARule) {
  std::vector<std::string> classes(kCorpusClasses.begin(), kCorpusClasses.end());
  classes.insert(classes.end(), kInfraClasses.begin(), kInfraClasses.end());
  for (const auto& cls : classes) {
    bool found = false;
    for (const auto& r : rules().rules().rules) found = found || r.cls == cls;
    EXPECT_TRUE(found) << cls;
  }
}

TEST(ClassifierPrecedence, GpuFaultOutranksTheNcclWatchdogItCauses) {
  Classification c = rules().classify_text(
      "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, "
      "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n"
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=31337, GPU has fallen off the bus.\n"
      "RuntimeError: CUDA error: unspecified launch failure\n");
  EXPECT_EQ(c.cls, "gpu_lost");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].line, 2u);
  ASSERT_GE(c.symptoms.size(), 2u);
  // Symptoms come by precedence; the NCCL timeout is among them.
  bool nccl = false;
  for (const auto& s : c.symptoms) nccl = nccl || (s.cls == "nccl" && s.first.line == 1);
  EXPECT_TRUE(nccl);
}

TEST(ClassifierPrecedence, NfsStallEndingInTimeLimitIsStorage) {
  Classification c = rules().classify_text(
      "nfs: server nfs01 not responding, still trying\n"
      "slurmstepd: error: *** JOB 4121 ON gpu017 CANCELLED AT 2026-11-02T08:00:12 DUE TO TIME "
      "LIMIT ***\n");
  EXPECT_EQ(c.cls, "storage_io");
  ASSERT_EQ(c.symptoms.size(), 1u);
  EXPECT_EQ(c.symptoms[0].cls, "time_limit");
}

TEST(ClassifierPrecedence, LauncherNoiseNeverOutranksTheCause) {
  Classification c = rules().classify_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
      "  exitcode  : 1 (pid: 3141)\n"
      "srun: error: gpu017: task 0: Exited with exit code 1\n");
  EXPECT_EQ(c.cls, "cuda_oom");
  EXPECT_TRUE(c.symptoms.empty()) << c.symptoms[0].rule;
}

TEST(ClassifierPrecedence, LauncherNoiseAloneIsUnknown) {
  Classification c = rules().classify_text(
      "Traceback (most recent call last):\n"
      "  File \"/usr/local/bin/torchrun\", line 8, in <module>\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
      "srun: error: gpu017: task 0: Exited with exit code 1\n");
  EXPECT_EQ(c.cls, kUnknownClass);
  EXPECT_TRUE(c.evidence.empty());
}

TEST(ClassifierPrecedence, SpecificRuntimeErrorsBeatTheGenericOne) {
  EXPECT_EQ(rules().classify_text("RuntimeError: CUDA error: device-side assert triggered").cls,
            "cuda_runtime");
  EXPECT_EQ(rules().classify_text("RuntimeError: CUDA out of memory. Tried to allocate 2 GiB").cls,
            "cuda_oom");
  EXPECT_EQ(rules().classify_text("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275").cls,
            "nccl");
  EXPECT_EQ(rules().classify_text("RuntimeError: CUDA capability sm_90 is not compatible").cls,
            "runtime_error");
  // A C assert inside a CUDA kernel is a CUDA error, not a Python assertion.
  EXPECT_EQ(rules()
                .classify_text("IndexKernel.cu:92: operator(): block: [0,0,0], thread: [0,0,0] "
                               "Assertion `idx < n` failed.")
                .cls,
            "cuda_runtime");
  // A shared library missing is a missing module, not a missing file.
  EXPECT_EQ(rules()
                .classify_text("ImportError: libcudart.so.11.0: cannot open shared object file: "
                               "No such file or directory")
                .cls,
            "missing_module");
  // /dev/shm full is the DataLoader's shared memory, not the checkpoint storage.
  EXPECT_EQ(rules()
                .classify_text("RuntimeError: unable to write to file </torch_1_2_0>: No space "
                               "left on device (28)")
                .cls,
            "dataloader_shm");
}

// The frameworks' own NaN/Inf checks raise assertions and exceptions (their
// messages: docs/classifier.md); they are nan_loss, not the assertion or the
// exception that carries them. Lines that only look alike are not.
TEST(ClassifierPrecedence, FrameworkNumericChecksAreNanLossAndLookalikesAreNot) {
  EXPECT_EQ(rules()
                .classify_text("Traceback (most recent call last):\n"
                               "  File \"pretrain_gpt.py\", line 290, in loss_func\n"
                               "AssertionError: Rank 0: found NaN in local forward loss "
                               "calculation. Device: 0, node: gpu017\n")
                .cls,
            "nan_loss");
  EXPECT_EQ(rules()
                .classify_text("[rank0]: Exception: Current loss scale already at minimum - "
                               "cannot decrease scale anymore. Exiting run.")
                .cls,
            "nan_loss");
  const char* lookalikes[] = {
      // DeepSpeed skips a step on overflow early in fp16 training: normal.
      "[INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
      "Attempted loss scale: 65536, reducing to 32768",
      // A config error that names nan.
      "ValueError: fp16.loss_scale must be a finite number (not inf/-inf/nan)",
      // Anomaly mode prints this for any backward error.
      "UserWarning: Error detected in MulBackward0. Traceback of forward call that caused the "
      "error:",
      // Megatron's progress line, 0 in a healthy run.
      " iteration      100/ 1000 | number of nan iterations:   0 |",
      // Large gradients are a warning in Megatron, not a NaN.
      "found unexpected large grads in bucket #0 in backward pass before data-parallel "
      "communication collective",
  };
  for (const char* line : lookalikes)
    EXPECT_NE(rules().classify_text(line).cls, "nan_loss") << line;
}

TEST(ClassifierPrecedence, EqualPrecedenceGoesToTheEarlierRule) {
  auto base = parse_rule_base(R"({"version":1,"rules":[
    {"id":"a","class":"nccl","precedence":5,"doc":"d","match":["alpha"],"examples":["alpha"]},
    {"id":"b","class":"segfault","precedence":5,"doc":"d","match":["beta"],"examples":["beta"]}]})",
                              "test");
  ASSERT_TRUE(base) << base.error().message;
  auto c = Classifier::create(std::move(*base));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->classify_text("beta\nalpha\n").rule, "a");
}

TEST(ClassifierEvidence, LinesAreCountedFromOneAndCut) {
  std::string longline = "OSError: [Errno 28] No space left on device: '" + std::string(2000, 'x');
  Classification c = rules().classify_text("step 1\r\nstep 2\r\n" + longline + "\n");
  EXPECT_EQ(c.cls, "storage_full");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].line, 3u);
  EXPECT_LE(c.evidence[0].text.size(), kMaxEvidenceChars + 4);
  EXPECT_EQ(c.lines_scanned, 3u);
}

TEST(ClassifierEvidence, KeepsAtMostTheConfiguredNumber) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "step " + std::to_string(i) + " | loss = nan\n";
  Classification c = rules().classify_text(text);
  EXPECT_EQ(c.cls, "nan_loss");
  EXPECT_EQ(c.evidence.size(), 5u);
  EXPECT_EQ(c.evidence.front().line, 1u);
}

TEST(ClassifierFile, TailFirstScanGivesLinesFromTheStart) {
  // 2 MB of progress lines, an Xid near the start, the symptom at the end:
  // the scan must still reach the start and number lines from it.
  std::string text =
      "start\nNVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=python, Graphics Exception\n";
  for (int i = 0; i < 40000; ++i) text += "step " + std::to_string(i) + " | loss 2.13 | lr 3e-4\n";
  text += "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  auto path = temp_file("xid-early.log", text);
  auto c = rules().classify_file(path);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cls, "gpu_xid");
  ASSERT_EQ(c->evidence.size(), 1u);
  EXPECT_EQ(c->evidence[0].line, 2u);
  ASSERT_FALSE(c->symptoms.empty());
  EXPECT_EQ(c->symptoms[0].cls, "cuda_runtime");
  EXPECT_EQ(c->symptoms[0].first.line, 40003u);
  EXPECT_TRUE(c->whole_input);
}

TEST(ClassifierFile, StopsEarlyWhenNothingEarlierCanOutrank) {
  // 20 MB: more than two scan chunks; the top rule (Xid 79) is in the last one.
  std::string filler;
  for (int i = 0; i < 400000; ++i) filler += "step " + std::to_string(i) + " | loss 2.13 | ok\n";
  std::string text = "FileNotFoundError: [Errno 2] No such file or directory: 'x'\n" + filler +
                     "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n";
  auto path = temp_file("xid79-late.log", text);
  auto c = rules().classify_file(path);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cls, "gpu_lost");
  EXPECT_FALSE(c->whole_input);
  EXPECT_LT(c->bytes_scanned, text.size());
  ASSERT_EQ(c->evidence.size(), 1u);
  EXPECT_EQ(c->evidence[0].line, 400002u);  // still counted from the file's start
  // With early stop off it reads everything and sees the earlier symptom.
  ScanOptions all;
  all.stop_when_settled = false;
  auto full = rules().classify_file(path, all);
  ASSERT_TRUE(full);
  EXPECT_TRUE(full->whole_input);
  ASSERT_FALSE(full->symptoms.empty());
  EXPECT_EQ(full->symptoms.back().first.line, 1u);
}

TEST(ClassifierFile, TailLimitReadsOnlyTheEnd) {
  std::string text = "ZeroDivisionError: division by zero\n";
  for (int i = 0; i < 1000; ++i) text += "filler line " + std::to_string(i) + "\n";
  text += "KeyError: 'lr'";  // no final newline
  auto path = temp_file("tail.log", text);
  ScanOptions tail;
  tail.tail_bytes = 200;
  auto c = rules().classify_file(path, tail);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->cls, "traceback");
  EXPECT_EQ(c->evidence[0].line, 1002u);
  EXPECT_FALSE(c->whole_input);
  auto whole = rules().classify_file(path);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->cls, "div_zero");
}

TEST(ClassifierFile, EmptyMissingAndNotRegular) {
  auto empty = rules().classify_file(temp_file("empty.log", ""));
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->cls, kUnknownClass);
  auto missing = rules().classify_file("/nonexistent/ckpt.log");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/ckpt.log"), std::string::npos);
  auto dir = rules().classify_file(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("not a regular file"), std::string::npos);
}

TEST(ClassifierScan, MixesSourcesAndKeepsTheirNames) {
  Scan scan(rules());
  scan.add_line("RuntimeError: CUDA error: unspecified launch failure", 10, "job.log");
  scan.add_line(
      "NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, An uncorrectable double bit "
      "error (DBE) has been detected",
      7, "kmsg");
  Classification c = scan.finish();
  EXPECT_EQ(c.cls, "ecc_error");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].source, "kmsg");
}

TEST(ClassifierExitStatus, SigsegvNamesASilentSegfaultOnly) {
  Classification silent = rules().classify_text("step 1\nstep 2\n");
  apply_exit_status(silent, ExitInfo{std::nullopt, 11});
  EXPECT_EQ(silent.cls, "segfault");
  EXPECT_EQ(silent.evidence.at(0).source, "exit_status");
  Classification loud = rules().classify_text("KeyError: 'lr'\n");
  apply_exit_status(loud, ExitInfo{std::nullopt, 11});
  EXPECT_EQ(loud.cls, "traceback");  // the log's cause is kept
  Classification killed = rules().classify_text("step 1\n");
  apply_exit_status(killed, ExitInfo{std::nullopt, 9});
  EXPECT_EQ(killed.cls, kUnknownClass);  // SIGKILL alone could be anyone
}

}  // namespace
}  // namespace ckpt::classify
