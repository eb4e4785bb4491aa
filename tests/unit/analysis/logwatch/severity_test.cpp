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

TEST(Severity, WeightsFallWithTheLevelAndKeepNoticeAboveTheThreshold) {
  for (Severity s = 1; s <= kSeverityDebug; ++s)
    EXPECT_LE(severity_weight(s), severity_weight(s - 1)) << int(s);
  EXPECT_GE(severity_weight(5), 0.5);  // NFS "not responding" is KERN_NOTICE
  EXPECT_LT(severity_weight(6), 0.5);
  EXPECT_DOUBLE_EQ(severity_weight(99), severity_weight(kSeverityDebug));
}

}  // namespace
}  // namespace ckpt::logwatch
