#include "analysis/logwatch/source_key.h"

#include <gtest/gtest.h>

namespace ckpt::logwatch {
namespace {

TEST(SourceKey, TheLeadingTagNamesTheSource) {
  EXPECT_EQ(source_of("ntpd[15380]: synchronized to 10.100.20.250, stratum 3"), "ntpd");
  EXPECT_EQ(source_of("NVRM: Xid (PCI:0000:3b:00): 79"), "NVRM");
  EXPECT_EQ(source_of("mlx5_core 0000:3b:00.0: mlx5e_update_carrier: Link up"), "mlx5_core");
  EXPECT_EQ(source_of("/apps/x86_64/sbin/gmetad[1682]: data_thread() got no answer"), "gmetad");
  EXPECT_EQ(source_of("kernel: nfs: server fs01 not responding, still trying"), "nfs");
  EXPECT_EQ(source_of("systemd-logind[812]: New session 12 of user root."), "systemd-logind");
}

TEST(SourceKey, ALineWithoutATagHasNone) {
  EXPECT_EQ(source_of("instruction cache parity error corrected"), "");
  EXPECT_EQ(source_of("device veth1a2b3c4 entered promiscuous mode"), "");
  EXPECT_EQ(source_of("12345: a number is no name"), "");
  EXPECT_EQ(source_of(""), "");
  EXPECT_EQ(source_key(""), 0U);
  EXPECT_NE(source_key("nfs"), 0U);
  EXPECT_NE(source_key("nfs"), source_key("NVRM"));
}

}  // namespace
}  // namespace ckpt::logwatch
