#include "analysis/logwatch/detector.h"

#include <gtest/gtest.h>

namespace ckpt::logwatch {
namespace {

// The novelty engine alone: no known faults, and a line without a level is
// scored without one (the tests of both are at the end).
DetectorConfig test_config() {
  DetectorConfig c;
  c.rare_count = 2;
  c.min_support = 1;
  c.top_k = 1;
  c.history = 2;
  c.known_faults = nullptr;
  c.severity_from_words = false;
  return c;
}

// A normal cycle of three kinds of line.
void train_cycle(LogDetector& d, int times) {
  for (int i = 0; i < times; ++i) {
    d.learn("job " + std::to_string(i) + " started on node alpha");
    d.learn("checkpoint saved to storage in " + std::to_string(i) + " ms");
    d.learn("job finished cleanly");
  }
  d.reset_history();
}

TEST(Detector, KnownSequenceIsNormal) {
  LogDetector d(test_config());
  train_cycle(d, 20);
  EXPECT_FALSE(d.observe("job 7 started on node alpha").anomaly);
  EXPECT_FALSE(d.observe("checkpoint saved to storage in 12 ms").anomaly);
  Verdict v = d.observe("job finished cleanly");
  EXPECT_FALSE(v.anomaly) << v.reason;
}

// A blank or whitespace-only line is no event: not an anomaly (it used to be
// a new_template), not learned, and no step in the sequence.
TEST(Detector, BlankLinesAreNeitherScoredNorLearned) {
  LogDetector d(test_config());
  train_cycle(d, 20);
  const std::size_t templates = d.miner().size();
  const std::uint64_t events = d.events();
  EXPECT_FALSE(d.observe("job 7 started on node alpha").anomaly);
  for (const char* blank : {"", " ", "\t \r", "   \t"}) {
    Verdict v = d.observe(blank);
    EXPECT_FALSE(v.anomaly) << "'" << blank << "': " << v.reason;
    EXPECT_TRUE(v.blank);
    EXPECT_TRUE(v.reason.empty());
    EXPECT_FALSE(d.observe_line(9, blank, Severity{3}).has_value()) << "'" << blank << "'";
    EXPECT_EQ(d.learn(blank), 0U);
  }
  EXPECT_EQ(d.miner().size(), templates);
  EXPECT_EQ(d.events(), events + 1);  // the one real line
  // The blanks did not break the cycle: its next line is still expected.
  Verdict next = d.observe("checkpoint saved to storage in 12 ms");
  EXPECT_FALSE(next.anomaly) << next.reason;
}

// With learn_anomalies (--learn-anomalies) a reported line is learned too.
DetectorConfig learning_anomalies() {
  DetectorConfig c = test_config();
  c.learn_anomalies = true;
  return c;
}

TEST(Detector, NewTemplateScoresOneAndThenTurnsRareThenNormal) {
  LogDetector d(learning_anomalies());
  train_cycle(d, 20);
  Verdict first = d.observe("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus");
  EXPECT_TRUE(first.anomaly);
  EXPECT_TRUE(first.new_template);
  EXPECT_EQ(first.score, 1.0);
  EXPECT_EQ(first.reason.rfind("new_template", 0), 0U) << first.reason;
  Verdict second = d.observe("NVRM: Xid (PCI:0000:af:00): 79, GPU has fallen off the bus");
  EXPECT_FALSE(second.new_template);
  EXPECT_EQ(second.template_id, first.template_id);
  EXPECT_NE(second.reason.find("rare_template"), std::string::npos) << second.reason;
  EXPECT_DOUBLE_EQ(second.score, 0.5);  // seen once of rare_count 2
  // Seen twice: no longer rare (the sequence around it is still new).
  Verdict third = d.observe("NVRM: Xid (PCI:0000:af:00): 79, GPU has fallen off the bus");
  EXPECT_EQ(third.reason.find("rare_template"), std::string::npos) << third.reason;
}

// By default (as DeepLog, which learns only what an operator confirms
// normal) an anomaly is not learned: a failure that repeats stays one, while
// an unseen line that is not reported (info chatter) is learned.
TEST(Detector, ARepeatedAnomalyStaysOneAndUnreportedLinesAreLearned) {
  LogDetector d(test_config());
  train_cycle(d, 20);
  const auto templates = d.miner().size();
  for (int i = 0; i < 4; ++i) {
    d.reset_history();
    Verdict v =
        d.observe("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus", Severity{3});
    EXPECT_TRUE(v.anomaly) << i;
    EXPECT_TRUE(v.new_template) << i;
  }
  EXPECT_EQ(d.miner().size(), templates);
  d.reset_history();
  Verdict info = d.observe("eth0: link is up at 100 Gbps", Severity{6});
  EXPECT_FALSE(info.anomaly);
  EXPECT_TRUE(info.new_template);
  EXPECT_EQ(d.miner().size(), templates + 1);
  d.reset_history();
  EXPECT_FALSE(d.observe("eth0: link is up at 100 Gbps", Severity{6}).new_template);
}

TEST(Detector, KnownTemplateOutOfOrderIsAnUnexpectedSequence) {
  LogDetector d(test_config());
  train_cycle(d, 40);  // 120 lines: enough for the surprise quantile
  ASSERT_TRUE(d.surprise_threshold().has_value());
  d.observe("job 1 started on node alpha");
  // After `started` always came `checkpoint saved`, never `finished`: its
  // smoothed probability there is far below anything the cycle itself gave.
  Verdict v = d.observe("job finished cleanly");
  EXPECT_TRUE(v.anomaly);
  EXPECT_EQ(v.reason, "unexpected_sequence");
  EXPECT_GT(v.score, 0.9);
  EXPECT_GT(d.surprise(0, v.template_id), *d.surprise_threshold());
}

TEST(Detector, TheSequenceIsNotJudgedBeforeTheQuantileHasSamples) {
  LogDetector d(test_config());
  train_cycle(d, 20);  // 60 lines, under kMinSurpriseSamples
  EXPECT_FALSE(d.surprise_threshold().has_value());
  d.observe("job 1 started on node alpha");
  EXPECT_FALSE(d.observe("job finished cleanly").anomaly);
}

TEST(Detector, InterleavedIndependentSourcesDoNotPredictEachOther) {
  // Two subsystems, each with a strict order of its own, interleaved at
  // random: per source the order holds, so nothing is unexpected; a line out
  // of its own source's order is.
  DetectorConfig c = test_config();
  c.rare_count = 0;
  c.top_k = 5;
  c.min_support = 5;
  LogDetector d(c);
  std::uint64_t x = 42;
  auto coin = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) & 1U;
  };
  // (Of different lengths, so Drain keeps them apart.)
  const char* nic[] = {"mlx5_core 0000:3b:00.0: link down",
                       "mlx5_core 0000:3b:00.0: link up at 100 Gbps full duplex"};
  const char* nfs[] = {"nfs: lease renewed for 10.0.0.1", "nfs: delegation returned to 10.0.0.1"};
  int a = 0;
  int b = 0;
  auto next = [&] { return coin() != 0U ? nic[a++ % 2] : nfs[b++ % 2]; };
  for (int i = 0; i < 2000; ++i) d.learn(next());
  int flagged = 0;
  for (int i = 0; i < 2000; ++i) flagged += d.observe(next()).anomaly ? 1 : 0;
  EXPECT_EQ(flagged, 0);
  // The NIC's next line is `link down` or `link up` by its own history; the
  // other one now is out of order.
  const char* wrong = nic[(a + 1) % 2];
  Verdict v = d.observe(wrong);
  EXPECT_TRUE(v.anomaly) << v.reason;
  EXPECT_EQ(v.reason, "unexpected_sequence");
}

TEST(Detector, MinSupportWithholdsJudgementOnThinContexts) {
  DetectorConfig c = test_config();
  c.min_support = 1000;
  LogDetector d(c);
  train_cycle(d, 20);
  d.observe("job 1 started on node alpha");
  EXPECT_FALSE(d.observe("job finished cleanly").anomaly);
}

TEST(Detector, ThresholdFiltersLowScores) {
  DetectorConfig c = learning_anomalies();
  c.threshold = 0.9;
  LogDetector d(c);
  train_cycle(d, 20);
  d.observe("brand new kind of message");  // new: 1.0
  d.reset_history();
  Verdict rare = d.observe("brand new kind of message");  // rare: 0.5 < 0.9
  EXPECT_FALSE(rare.anomaly);
  EXPECT_EQ(rare.reason, "rare_template");
}

TEST(Detector, WithoutLearningUnknownStaysNew) {
  DetectorConfig c = test_config();
  c.learn = false;
  LogDetector d(c);
  train_cycle(d, 5);
  const auto templates = d.miner().size();
  for (int i = 0; i < 3; ++i) {
    Verdict v = d.observe("memory error detected on dimm seven");
    EXPECT_TRUE(v.new_template);
    EXPECT_EQ(v.template_id, 0U);
  }
  EXPECT_EQ(d.miner().size(), templates);
  auto a = d.observe_line(42, "memory error detected on dimm seven");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->line, 42U);
  EXPECT_EQ(a->template_text, "memory error detected on dimm seven");
}

TEST(Detector, CountsDecaySoMemoryAndHistoryFade) {
  DetectorConfig c = test_config();
  c.decay_every = 10;
  c.decay_factor = 0.5;
  LogDetector d(c);
  for (int i = 0; i < 10; ++i) d.learn("heartbeat ok");
  // 10 counted, then halved at the 10th event.
  const TemplateId id = d.miner().match({"heartbeat", "ok"}).value();
  EXPECT_DOUBLE_EQ(d.template_count(id), 5.0);
  for (int i = 0; i < 90; ++i) d.learn("other line number " + std::to_string(i));
  // Nine more halvings: 5 / 512 < 0.01 is forgotten (0).
  EXPECT_DOUBLE_EQ(d.template_count(id), 0.0);
  EXPECT_NE(d.observe("heartbeat ok").reason.find("rare_template"), std::string::npos);
}

TEST(Detector, ContextsAreCapped) {
  DetectorConfig c = test_config();
  c.max_contexts = 8;
  c.drain.max_templates = 100000;
  LogDetector d(c);
  for (int i = 0; i < 200; ++i)
    d.learn("unique" + std::string(1, static_cast<char>('a' + i % 26)) +
            std::string(1, static_cast<char>('a' + i / 26)) + " message");
  EXPECT_LE(d.context_count(), 8U);
  EXPECT_GT(d.context_evictions(), 0U);
}

TEST(Detector, CopiesDoNotShareState) {
  LogDetector d(test_config());
  train_cycle(d, 3);
  LogDetector copy = d;
  for (int i = 0; i < 50; ++i) copy.learn("copy only line");
  EXPECT_EQ(d.miner().match({"copy", "only", "line"}), std::nullopt);
  EXPECT_EQ(copy.context_count(), d.context_count() + 2);
}

// Severity (severity.h): novelty times the level's weight, default threshold
// 0.5 for lines with a level. A new info line alone is not reported; a new
// notice (NFS not responding) or err (Xid) line is; raw lines are unchanged.
TEST(Detector, SeverityWeighsTheNovelty) {
  LogDetector d(learning_anomalies());
  train_cycle(d, 20);
  Verdict info = d.observe("eth0: link is up at 100 Gbps", Severity{6});
  EXPECT_TRUE(info.new_template);
  EXPECT_DOUBLE_EQ(info.novelty, 1.0);
  EXPECT_DOUBLE_EQ(info.score, 0.45);
  EXPECT_FALSE(info.anomaly);
  d.reset_history();
  Verdict nfs = d.observe("nfs: server fs1 not responding, still trying", Severity{5});
  EXPECT_TRUE(nfs.anomaly);
  EXPECT_DOUBLE_EQ(nfs.score, 0.8);
  d.reset_history();
  auto xid =
      d.observe_line(9, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus", Severity{3});
  ASSERT_TRUE(xid.has_value());
  EXPECT_DOUBLE_EQ(xid->score, 1.0);
  EXPECT_EQ(xid->reason, "new_template");
  // rare_template at err: 1 - 1/2 = 0.5 clears 0.5; at warning 0.45 does not.
  d.reset_history();
  EXPECT_TRUE(d.observe("disk sda failing smart check", Severity{3}).new_template);
  d.reset_history();
  Verdict rare = d.observe("disk sda failing smart check", Severity{4});
  EXPECT_EQ(rare.reason, "rare_template");
  EXPECT_DOUBLE_EQ(rare.score, 0.45);
  EXPECT_FALSE(rare.anomaly);
}

TEST(Detector, WithoutASeverityTheScoreIsTheNoveltyAndEveryReasonCounts) {
  LogDetector d(learning_anomalies());
  train_cycle(d, 20);
  d.observe("eth0: link is up at 100 Gbps");
  d.reset_history();
  Verdict rare = d.observe("eth0: link is up at 100 Gbps");  // rare: 1 - 1/2
  EXPECT_TRUE(rare.anomaly);
  EXPECT_DOUBLE_EQ(rare.score, 0.5);
  EXPECT_DOUBLE_EQ(rare.novelty, 0.5);
}

TEST(Detector, AnExplicitThresholdAppliesToLinesWithASeverityToo) {
  DetectorConfig c = test_config();
  c.threshold = 0.0;
  LogDetector d(c);
  train_cycle(d, 20);
  Verdict debug = d.observe("usb 1-1: new high-speed device number 3", Severity{7});
  EXPECT_TRUE(debug.anomaly);
  EXPECT_DOUBLE_EQ(debug.score, 0.2);
}

// docs/logwatch.md: by default every line of a flood of one new template at
// notice or worse is reported (it is never learned), none at info (learned
// on its first line, then not rare enough to clear 0.5 at info's weight).
// With --learn-anomalies and rare_count 5 it is reported on its first three
// lines at err or warning, two at notice, five without a severity (every
// fired reason); none at info.
TEST(Detector, AFloodIsReportedForAFewLinesDependingOnItsLevel) {
  auto reported = [](std::optional<Severity> level, bool learn_anomalies) {
    DetectorConfig c = test_config();
    c.top_k = 5;
    c.rare_count = 5;
    c.learn_anomalies = learn_anomalies;
    c.min_support = 1e9;
    LogDetector d(c);
    for (int i = 0; i < 20; ++i) d.learn("heartbeat " + std::to_string(i) + " ok");
    int n = 0;
    for (int i = 0; i < 20; ++i) {
      d.reset_history();
      n += d.observe("memory error on dimm " + std::to_string(i), level).anomaly ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(reported(Severity{3}, false), 20);
  EXPECT_EQ(reported(Severity{4}, false), 20);
  EXPECT_EQ(reported(Severity{5}, false), 20);
  EXPECT_EQ(reported(Severity{6}, false), 0);
  EXPECT_EQ(reported(std::nullopt, false), 20);
  EXPECT_EQ(reported(Severity{3}, true), 3);
  EXPECT_EQ(reported(Severity{4}, true), 3);
  EXPECT_EQ(reported(Severity{5}, true), 2);
  EXPECT_EQ(reported(Severity{6}, true), 0);
  EXPECT_EQ(reported(std::nullopt, true), 5);
}

// A known fault (known_faults.h) is an anomaly whatever the model says: seen
// in training, at info, under a threshold of 1, learned or not. It names its
// kind and outranks any novelty (severity.h AlarmRank).
TEST(Detector, AKnownFaultIsAnAnomalyWhateverTheModelSays) {
  DetectorConfig c;  // the built-in catalogue
  c.threshold = 1.0;
  LogDetector d(c);
  const std::string xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.";
  for (int i = 0; i < 50; ++i) {
    d.learn("heartbeat " + std::to_string(i) + " ok");
    d.learn(xid);
  }
  auto a = d.observe_line(7, xid, Severity{6});
  ASSERT_TRUE(a.has_value()) << "a known fault seen in training was no anomaly";
  EXPECT_EQ(a->kind, "gpu_xid");
  EXPECT_EQ(a->fault_id, "xid-gpu-lost");
  EXPECT_EQ(a->rank, AlarmRank::kKnownFault);
  EXPECT_NE(a->reason.find("known_fault"), std::string::npos) << a->reason;
  EXPECT_DOUBLE_EQ(a->score, 1.0);  // the fault's severity (crit), not the line's info
  // A kernel line through syslog or the journal is the same fault.
  auto via_syslog = d.observe_line(8, "kernel: [ 8812.231134] " + xid);
  ASSERT_TRUE(via_syslog.has_value());
  EXPECT_EQ(via_syslog->kind, "gpu_xid");
  // An ordinary line under that threshold is none.
  EXPECT_FALSE(d.observe_line(9, "heartbeat 3 ok", Severity{3}).has_value());
  // Off (an ablation): the same line is judged as any other.
  c.known_faults = nullptr;
  LogDetector plain(c);
  for (int i = 0; i < 50; ++i) plain.learn(xid);
  EXPECT_FALSE(plain.observe_line(7, xid, Severity{6}).has_value());
}

// A line whose format gives no level takes one from its words (severity.h):
// a new routine line weighs as a new info line (not reported, learned, so its
// next occurrence is known), a new error as an error; off, it is scored
// without one, as before.
TEST(Detector, ALineWithoutALevelTakesOneFromItsWords) {
  DetectorConfig c;
  c.known_faults = nullptr;
  c.min_support = 1e9;
  LogDetector d(c);
  for (int i = 0; i < 20; ++i) d.learn("heartbeat " + std::to_string(i) + " ok");
  d.reset_history();
  Verdict unit = d.observe("systemd[1]: Started Nightly scrub of the scratch pool.");
  EXPECT_TRUE(unit.new_template);
  EXPECT_EQ(unit.level, Severity{6});
  EXPECT_DOUBLE_EQ(unit.score, 0.45);
  EXPECT_FALSE(unit.anomaly);
  d.reset_history();
  EXPECT_FALSE(d.observe("systemd[1]: Started Nightly scrub of the scratch pool.").new_template)
      << "a routine line was not learned";
  d.reset_history();
  auto error = d.observe_line(5, "pool0: scrub failed on vdev nvme3n1");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->level, Severity{3});
  EXPECT_DOUBLE_EQ(error->score, 1.0);
  EXPECT_EQ(error->rank, AlarmRank::kError);
  d.reset_history();
  auto warning = d.observe_line(6, "pool0: Warning: vdev nvme2n1 is slow");
  ASSERT_TRUE(warning.has_value());
  EXPECT_DOUBLE_EQ(warning->score, 0.9);
  EXPECT_EQ(warning->rank, AlarmRank::kError);
  // Given a level, the line keeps it.
  d.reset_history();
  EXPECT_FALSE(d.observe("pool1: scrub failed on vdev nvme4n1 again", Severity{6}).anomaly);

  c.severity_from_words = false;
  LogDetector plain(c);
  for (int i = 0; i < 20; ++i) plain.learn("heartbeat " + std::to_string(i) + " ok");
  auto unit_plain = plain.observe_line(1, "systemd[1]: Started Nightly scrub of the scratch pool.");
  ASSERT_TRUE(unit_plain.has_value());
  EXPECT_FALSE(unit_plain->level.has_value());
  EXPECT_EQ(unit_plain->rank, AlarmRank::kError) << "no level known: never ranked down";
}

}  // namespace
}  // namespace ckpt::logwatch
