#include "analysis/fleet/attribution/events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt::fleet::attribution {
namespace {

using ::testing::HasSubstr;

TEST(Nodes, PortIsStrippedAndDcgmHostnameIsTheFallback) {
  EXPECT_EQ(strip_port("gpu-node-7:9400"), "gpu-node-7");
  EXPECT_EQ(strip_port("10.0.0.7:9100"), "10.0.0.7");
  EXPECT_EQ(strip_port("[fd00::7]:9100"), "[fd00::7]");
  EXPECT_EQ(strip_port("fd00::7"), "fd00::7");
  EXPECT_EQ(strip_port("gpu-node-7"), "gpu-node-7");
  EXPECT_EQ(node_of({{"instance", "n1:9400"}, {"Hostname", "host-1"}}, "instance"), "n1");
  EXPECT_EQ(node_of({{"Hostname", "host-1"}}, "instance"), "host-1");
  EXPECT_EQ(node_of({{"job", "dcgm"}}, "instance"), "");
  EXPECT_EQ(node_of({{"node", "n2"}, {"instance", "x:1"}}, "node"), "n2");
}

TEST(Nodes, LabelsFormatLikePromQL) {
  EXPECT_EQ(format_labels({{"__name__", "up"}, {"a", "1"}, {"b", "x"}}), "up{a=\"1\", b=\"x\"}");
  EXPECT_EQ(format_labels({{"__name__", "up"}}), "up");
  EXPECT_EQ(format_labels({{"__name__", "up"}, {"a", "1"}}, false), "{a=\"1\"}");
}

// The file's times go through the fleet-wide parsers (common/wall_time.h):
// zones, fractions, exponent-form Unix seconds, no zone as UTC, and the
// strict checks the old reader lacked (2023-02-31 was normalised to March 3,
// +99:99 accepted).
TEST(EventsCsv, TimesUseTheStrictSharedParsers) {
  auto events = parse_events_csv(
      "gpu-1,2026-01-31T13:30:00+01:30,79\ngpu-2,2026-01-31 07:00:00.25-05:00,79\n"
      "gpu-3,1.7698608e9,79\ngpu-4,2026-01-31T12:00:00,79\n",
      "f.csv", 0, 2e9);
  ASSERT_TRUE(events) << events.error().message;
  ASSERT_EQ(events->size(), 4u);
  EXPECT_DOUBLE_EQ((*events)[0].time_unix_s, 1769860800);
  EXPECT_DOUBLE_EQ((*events)[1].time_unix_s, 1769860800.25);
  EXPECT_DOUBLE_EQ((*events)[2].time_unix_s, 1769860800);
  EXPECT_DOUBLE_EQ((*events)[3].time_unix_s, 1769860800);
  for (const char* time : {"2023-02-31T00:00:00Z", "2026-01-31T12:00:00+99:99",
                           "2026-01-31T12:00:00+24:00", "yesterday", "1e400"}) {
    auto bad = parse_events_csv(std::string("gpu-1,") + time + ",79\n", "f.csv", 0, 2e9);
    ASSERT_FALSE(bad) << time;
    EXPECT_THAT(bad.error().message, HasSubstr(std::string("f.csv:1: bad time '") + time));
  }
}

// RFC 4180: quotes are not part of the value; a comma may sit inside them.
TEST(EventsCsv, QuotedFieldsAndAByteOrderMark) {
  auto events = parse_events_csv(
      "\xEF\xBB\xBFnode,time,type\n\"n1\",\"1769860800\",\"oom, kill\"\n", "f.csv", 0, 2e9);
  ASSERT_TRUE(events) << events.error().message;
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].node, "n1");
  EXPECT_EQ((*events)[0].type, "oom, kill");
  EXPECT_EQ((*events)[0].where, "f.csv:2");
  auto open = parse_events_csv("\"n1,1769860800,79\n", "f.csv", 0, 2e9);
  ASSERT_FALSE(open);
  EXPECT_THAT(open.error().message, HasSubstr("f.csv:1: column 1: the quote opened here"));
}

TEST(EventsCsv, HeaderCommentsBlankLinesAndBothTimeForms) {
  const std::string text =
      "node,time,type\n"
      "# planted\n"
      "\n"
      "gpu-1, 2026-01-31T12:00:00Z, 79\n"
      "gpu-2,1769860900.5,48\r\n";
  auto events = parse_events_csv(text, "f.csv", 0, 2e9);
  ASSERT_TRUE(events) << events.error().message;
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].node, "gpu-1");
  EXPECT_DOUBLE_EQ((*events)[0].time_unix_s, 1769860800);
  EXPECT_EQ((*events)[0].type, "79");
  EXPECT_EQ((*events)[0].source, "file");
  EXPECT_EQ((*events)[0].where, "f.csv:4");
  EXPECT_DOUBLE_EQ((*events)[1].time_unix_s, 1769860900.5);
  EXPECT_EQ((*events)[1].type, "48");
}

TEST(EventsCsv, BadRowsAreNamedByLineAndField) {
  auto e = parse_events_csv("node,time,type\ngpu-1,2026-01-31T12:00:00Z\n", "f.csv", 0, 2e9);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message, HasSubstr("f.csv:2: expected 3 fields"));
  e = parse_events_csv("gpu-1,12:00,79\n", "f.csv", 0, 2e9);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message, HasSubstr("f.csv:1: bad time '12:00'"));
  e = parse_events_csv("gpu-1,100,79\n,200,79\n", "f.csv", 0, 2e9);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message, HasSubstr("f.csv:2: empty node"));
  e = parse_events_csv("gpu-1,100,\n", "f.csv", 0, 2e9);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message, HasSubstr("f.csv:1: empty type"));
  e = parse_events_csv("gpu-1,100,79\n", "f.csv", 200, 300);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message, HasSubstr("f.csv:1: time '100' is outside --from..--to"));
}

TEST(EventsFile, MissingAndEmptyFilesAreErrors) {
  auto e = load_events_file("/nonexistent/events.csv", 0, 1);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message, HasSubstr("/nonexistent/events.csv: cannot read it"));
}

// Issue 36: the events file is read through the bounded reader.
TEST(EventsFile, AnUnboundedInputIsRefusedNamingTheFlag) {
  auto e = load_events_file("/dev/zero", 0, 1);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message,
              HasSubstr("--events /dev/zero: not a text file (a NUL byte at byte 0)"));
}

SeriesChunk chunk(Labels labels, std::vector<Sample> samples) {
  return {.labels = std::move(labels), .samples = std::move(samples)};
}

TEST(EventDetector, OneEventPerRunAcrossChunks) {
  EventDetector d(EventDetector::Kind::kXidChange, "instance", 400);
  const Labels gpu0 = {{"__name__", kXidMetric}, {"instance", "n1:9400"}, {"gpu", "0"}};
  const Labels gpu1 = {{"__name__", kXidMetric}, {"Hostname", "n2"}, {"gpu", "1"}};
  // A run 100..220 split over two chunks is one change; 1000 is another.
  d.add(chunk(gpu0, {{100, 79}, {160, 79}}));
  d.add(chunk(gpu1, {{130, 48}}));
  d.add(chunk(gpu0, {{220, 79}, {1000, 31}}));
  const auto events = d.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].node, "n1");
  EXPECT_DOUBLE_EQ(events[0].time_unix_s, 100);
  EXPECT_EQ(events[0].type, "79");
  EXPECT_EQ(events[0].source, "xid");
  EXPECT_EQ(events[1].node, "n2");
  EXPECT_EQ(events[1].type, "48");
  EXPECT_DOUBLE_EQ(events[2].time_unix_s, 1000);
  EXPECT_EQ(events[2].type, "31");
}

TEST(EventDetector, CkptscopeFailuresTakeTheirKind) {
  EventDetector d(EventDetector::Kind::kCounterIncrease, "instance", 400);
  d.add(chunk({{"instance", "n3:9464"}, {"kind", "gpu_xid"}}, {{500, 1}}));
  const auto events = d.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "gpu_xid");
  EXPECT_EQ(events[0].source, "ckptscope");
  EXPECT_EQ(events[0].node, "n3");
}

TEST(EventQueries, ChangesToNonZeroAndIncreases) {
  EXPECT_EQ(xid_change_query(360),
            "DCGM_FI_DEV_XID_ERRORS != 0 and changes(DCGM_FI_DEV_XID_ERRORS[360s]) > 0");
  EXPECT_EQ(ckptscope_failure_query(360), "increase(ckptscope_failures_total[360s]) > 0");
}

TEST(MergeCloseEvents, SameNodeWithinTheWindowIsOneFailure) {
  std::vector<FailureEvent> events = {{.node = "n1", .time_unix_s = 1000, .type = "79"},
                                      {.node = "n1", .time_unix_s = 100, .type = "48"},
                                      {.node = "n2", .time_unix_s = 150, .type = "79"},
                                      {.node = "n1", .time_unix_s = 300, .type = "79"}};
  const auto merged = merge_close_events(events, 600);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_DOUBLE_EQ(merged[0].time_unix_s, 100);
  EXPECT_EQ(merged[0].type, "48");
  EXPECT_EQ(merged[1].node, "n2");
  EXPECT_DOUBLE_EQ(merged[2].time_unix_s, 1000);
}

}  // namespace
}  // namespace ckpt::fleet::attribution
