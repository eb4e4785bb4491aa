// The end-of-run accounting in words and in the summary's JSON.
#include "analysis/io_accounting_notice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

using ::testing::HasSubstr;

IoAccountingRecord counted(uint64_t kernel, uint64_t traced) {
  IoAccountingRecord io;
  io.threads = 8;
  io.kernel_written_bytes = kernel;
  io.traced_written_bytes = traced;
  io.kernel_read_bytes = 1 << 20;
  io.files_written = 4;
  io.page_bytes = 4096;
  io.notice_bytes = 16 << 20;
  return io;
}

TEST(IoAccountingNotice, AMissAboveTheSlackIsSaidWithItsSize) {
  auto io = counted(69ull << 20, 3ull << 20);
  auto n = io_accounting_notice(io);
  ASSERT_TRUE(n);
  EXPECT_THAT(*n, HasSubstr("the kernel counted the job's 8 threads writing 69.0 MiB, the trace "
                            "3.00 MiB"));
  EXPECT_THAT(*n, HasSubstr("66.0 MiB more went by a way the trace did not see"));
  EXPECT_EQ(io_accounting_line(io),
            "the kernel counted 69.0 MiB over 8 threads, the trace 3.00 MiB (reads from storage "
            "1.00 MiB)");
  auto j = io_accounting_json(io);
  EXPECT_EQ(j["unseen_written_bytes"], 66ull << 20);
  EXPECT_EQ(j["allowance_bytes"], (16ull << 20) + 8 * 4096);
  EXPECT_TRUE(j["notice"].is_string());
}

TEST(IoAccountingNotice, WithinTheSlackOrStillRunningIsNoNotice) {
  auto io = counted((69ull << 20) + 35708, 69ull << 20);
  EXPECT_FALSE(io_accounting_notice(io));
  EXPECT_TRUE(io_accounting_json(io)["notice"].is_null());
  io = counted(69ull << 20, 0);
  io.processes_running = 2;
  EXPECT_FALSE(io_accounting_notice(io));
  EXPECT_EQ(io_accounting_line(io),
            "not compared, 2 of the job's processes still ran when the trace ended");
  EXPECT_TRUE(io_accounting_json(std::nullopt).is_null()) << "not counted";
}

}  // namespace
}  // namespace ckpt
