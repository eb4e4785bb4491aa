#include "analysis/logwatch/line_format.h"

#include <gtest/gtest.h>

namespace ckpt::logwatch {
namespace {

TEST(LineFormat, BglKeepsTheContentTheLabelAndTheLevel) {
  std::string scratch;
  auto p = parse_line(
      "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 "
      "R02-M1-N0-C:J12-U11 RAS KERNEL INFO instruction cache parity error corrected",
      LineFormat::kBgl, scratch);
  EXPECT_EQ(p.label, "-");
  EXPECT_EQ(p.message, "instruction cache parity error corrected");
  EXPECT_EQ(p.severity, Severity{6});
  auto alert = parse_line(
      "KERNDTLB 1118536327 2005.06.11 R30-M0-N9-C:J16-U01 2005-06-11-17.32.07.581048 "
      "R30-M0-N9-C:J16-U01 RAS KERNEL FATAL data TLB error interrupt",
      LineFormat::kBgl, scratch);
  EXPECT_EQ(alert.label, "KERNDTLB");
  EXPECT_EQ(alert.message, "data TLB error interrupt");
  EXPECT_EQ(alert.severity, Severity{2});
}

// The kmsg format is sources/kernel_log.h's parser: level, \xNN unescaped.
TEST(LineFormat, KmsgTakesTheLevelAndTheUnescapedText) {
  std::string scratch;
  auto p = parse_line(
      "4,1127,5123456789,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
      " SUBSYSTEM=pci\n",
      LineFormat::kKmsg, scratch);
  EXPECT_EQ(p.message, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  EXPECT_EQ(p.severity, Severity{4});
  // prio 13 = facility 1 (user) << 3 | 5 (notice).
  auto u = parse_line("13,2,100,-,caller=T1;a\\x5cb", LineFormat::kKmsg, scratch);
  EXPECT_EQ(u.message, "a\\b");
  EXPECT_EQ(u.severity, Severity{5});
  // Not a record: the line as it is, no severity.
  auto bad = parse_line("x,1,2,-;bad priority", LineFormat::kKmsg, scratch);
  EXPECT_EQ(bad.message, "x,1,2,-;bad priority");
  EXPECT_FALSE(bad.severity.has_value());
}

TEST(LineFormat, SyslogDropsTimeAndHost) {
  std::string s;
  EXPECT_EQ(parse_line("2026-12-01T01:47:21+0000 node17 kernel: nfs: server fs1 not responding",
                       LineFormat::kSyslog, s)
                .message,
            "kernel: nfs: server fs1 not responding");
  EXPECT_EQ(
      parse_line("Dec  1 01:47:21 node17 sshd[991]: Accepted key", LineFormat::kSyslog, s).message,
      "sshd[991]: Accepted key");
  EXPECT_EQ(parse_line("[  123.456789] mlx5_core 0000:3b:00.0: link down", LineFormat::kSyslog, s)
                .message,
            "mlx5_core 0000:3b:00.0: link down");
  EXPECT_EQ(parse_line("plain message", LineFormat::kSyslog, s).message, "plain message");
  EXPECT_FALSE(parse_line("plain message", LineFormat::kSyslog, s).severity.has_value());
  EXPECT_EQ(parse_line("  as is ", LineFormat::kRaw, s).message, "  as is ");
  EXPECT_FALSE(parse_line("<3>as is", LineFormat::kRaw, s).severity.has_value());
}

TEST(LineFormat, SyslogPriGivesTheLevel) {
  std::string s;
  // RFC 3164: <PRI> then the time; 5 = kern.notice.
  auto p = parse_line("<5>Dec  1 01:47:21 node17 kernel: nfs: server fs1 not responding",
                      LineFormat::kSyslog, s);
  EXPECT_EQ(p.message, "kernel: nfs: server fs1 not responding");
  EXPECT_EQ(p.severity, Severity{5});
  // RFC 5424: <PRI>1 TIME HOST APP ...: from APP on; 34 = auth.crit.
  auto q = parse_line("<34>1 2026-12-01T01:47:21Z node17 su - ID47 - 'su root' failed",
                      LineFormat::kSyslog, s);
  EXPECT_EQ(q.severity, Severity{2});
  EXPECT_EQ(q.message, "su - ID47 - 'su root' failed");
  // Not a PRI: kept as text.
  auto r = parse_line("<html> page", LineFormat::kSyslog, s);
  EXPECT_FALSE(r.severity.has_value());
  EXPECT_EQ(r.message, "<html> page");
}

TEST(LineFormat, JournalJsonAsShortIsoPrintsIt) {
  std::string s;
  auto p = parse_line(
      R"({"__REALTIME_TIMESTAMP":"1764553641000000","PRIORITY":"5","SYSLOG_IDENTIFIER":"kernel",)"
      R"("_TRANSPORT":"kernel","MESSAGE":"nfs: server fs1 not responding, still trying"})",
      LineFormat::kJournal, s);
  EXPECT_EQ(p.message, "kernel: nfs: server fs1 not responding, still trying");
  EXPECT_EQ(p.severity, Severity{5});
  auto q =
      parse_line(R"({"PRIORITY":"6","SYSLOG_IDENTIFIER":"sshd","_PID":"991","MESSAGE":[104,105]})",
                 LineFormat::kJournal, s);
  EXPECT_EQ(q.message, "sshd[991]: hi");  // a MESSAGE that is not UTF-8 comes as bytes
  EXPECT_EQ(q.severity, Severity{6});
  auto bad = parse_line("not json", LineFormat::kJournal, s);
  EXPECT_EQ(bad.message, "not json");
  EXPECT_FALSE(bad.severity.has_value());
}

// Issue 22: the message goes into a template and the model's JSON, so it is
// made valid UTF-8 once, here, for training and scoring alike.
TEST(LineFormat, BytesThatAreNotUtf8AreReplaced) {
  std::string s;
  EXPECT_EQ(parse_line("disk \xff error", LineFormat::kRaw, s).message, "disk \xEF\xBF\xBD error");
  EXPECT_EQ(parse_line("caf\xC3\xA9 ok", LineFormat::kRaw, s).message, "caf\xC3\xA9 ok");
  auto bgl = parse_line(
      "- 1 2005.06.03 R02 2005-06-03-15.42.50.363779 R02 RAS KERNEL INFO a\x80"
      "b",
      LineFormat::kBgl, s);
  EXPECT_EQ(bgl.message,
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(bgl.label, "-");
  // journalctl's bytes form of a MESSAGE that is not UTF-8.
  auto j = parse_line(R"({"MESSAGE":[104,255,105]})", LineFormat::kJournal, s);
  EXPECT_EQ(j.message, "h\xEF\xBF\xBDi");
  // A number no double holds makes the line not JSON, read as text.
  auto big = parse_line(R"({"MESSAGE":"x","N":1e400})", LineFormat::kJournal, s);
  EXPECT_EQ(big.message, R"({"MESSAGE":"x","N":1e400})");
}

TEST(LineFormat, UnknownFormatIsNamed) {
  auto f = parse_line_format("xml");
  ASSERT_FALSE(f.has_value());
  EXPECT_NE(f.error().message.find("'xml'"), std::string::npos);
  EXPECT_EQ(*parse_line_format("bgl"), LineFormat::kBgl);
  EXPECT_EQ(*parse_line_format("journal"), LineFormat::kJournal);
}

}  // namespace
}  // namespace ckpt::logwatch
