#include "analysis/logwatch/severity.h"

#include <gtest/gtest.h>

namespace ckpt::logwatch {
namespace {

TEST(Severity, BglLevelsMapOntoSyslogLevelsInOrder) {
  EXPECT_EQ(bgl_level("INFO"), Severity{6});
  EXPECT_EQ(bgl_level("WARNING"), Severity{4});
  EXPECT_EQ(bgl_level("SEVERE"), Severity{3});
  EXPECT_EQ(bgl_level("ERROR"), Severity{3});
  EXPECT_EQ(bgl_level("FAILURE"), Severity{2});
  EXPECT_EQ(bgl_level("FATAL"), Severity{2});
  EXPECT_FALSE(bgl_level("fatal").has_value());
  EXPECT_FALSE(bgl_level("").has_value());
}

TEST(Severity, NamesAndNumbersParse) {
  EXPECT_EQ(parse_severity("crit"), Severity{2});
  EXPECT_EQ(parse_severity("error"), Severity{3});
  EXPECT_EQ(parse_severity("warn"), Severity{4});
  EXPECT_EQ(parse_severity("7"), Severity{7});
  EXPECT_FALSE(parse_severity("8").has_value());
  EXPECT_FALSE(parse_severity("loud").has_value());
  EXPECT_EQ(severity_name(3), "err");
  EXPECT_EQ(severity_name(200), "debug");  // out of range reads as debug
}

// A line without a level (severity_from_words): error words and phrases at
// a word's start, any case; warn; else info. Inside a word they do not count.
TEST(Severity, ALineWithoutALevelTakesOneFromItsWords) {
  for (const char* err :
       {"EXT4-fs error (device sda1): bad block", "pool0: scrub FAILED", "mount: Fatal: no fs",
        "Kernel panic - not syncing", "ACPI: Critical temperature", "job aborted by user",
        "zfs: checksum corruption on vdev", "nccl: Timeout waiting for peer",
        "rpc to 10.0.0.3 timed out", "nfs: server fs01 not responding",
        "Call Trace:", "python3[211]: segfault at 0", "ssh: connection refused",
        "Oops: 0000 [#1] SMP", "worker raised an exception", "host 10.0.0.3 unreachable",
        "rpc: timeouts_total=3"})  // a prefix: timeouts counts too
    EXPECT_EQ(severity_from_words(err), Severity{3}) << err;
  for (const char* warn : {"WARNING: CPU: 3 PID: 1 at mm/page_alloc.c", "nvme0: warn: slow"})
    EXPECT_EQ(severity_from_words(warn), Severity{4}) << warn;
  for (const char* info :
       {"systemd[1]: Started Session 12 of User root.", "usb 1-2: new high-speed USB device",
        "terrorist", "errata applied", "nowarn set", "", "NullPointerException"})
    EXPECT_EQ(severity_from_words(info), Severity{6}) << info;
}

TEST(Severity, AnAlarmRanksByWhatItIs) {
  EXPECT_EQ(novelty_rank(Severity{3}), AlarmRank::kError);
  EXPECT_EQ(novelty_rank(Severity{4}), AlarmRank::kError);
  EXPECT_EQ(novelty_rank(Severity{5}), AlarmRank::kBenign);
  EXPECT_EQ(novelty_rank(Severity{6}), AlarmRank::kBenign);
  EXPECT_EQ(novelty_rank(std::nullopt), AlarmRank::kError);
  EXPECT_LT(AlarmRank::kBenign, AlarmRank::kError);
  EXPECT_LT(AlarmRank::kError, AlarmRank::kKnownFault);
  EXPECT_EQ(to_string(AlarmRank::kKnownFault), "known_fault");
  EXPECT_EQ(to_string(AlarmRank::kError), "error");
  EXPECT_EQ(to_string(AlarmRank::kBenign), "benign");
}

TEST(Severity, WeightsFallWithTheLevelAndKeepNoticeAboveTheThreshold) {
  for (Severity s = 1; s <= kSeverityDebug; ++s)
    EXPECT_LE(severity_weight(s), severity_weight(s - 1)) << int(s);
  EXPECT_GE(severity_weight(5), 0.5);  // NFS "not responding" is KERN_NOTICE
  EXPECT_LT(severity_weight(6), 0.5);
  EXPECT_DOUBLE_EQ(severity_weight(99), severity_weight(kSeverityDebug));
}

}  // namespace
}  // namespace ckpt::logwatch
