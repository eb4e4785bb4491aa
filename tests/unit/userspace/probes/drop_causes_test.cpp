// The drop-cause names, indexed by the BPF enums (the static_asserts in
// drop_causes.h tie them at compile time; this pins the names themselves,
// which are the trace's and the metrics' `cause`).
#include "probes/drop_causes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace ckpt {
namespace {

template <size_t N>
std::vector<std::string> names(const DropCauseName (&table)[N]) {
  std::vector<std::string> out;
  for (size_t i = 0; i < N; ++i) {
    EXPECT_EQ(table[i].index, i) << table[i].name;
    out.emplace_back(table[i].name);
  }
  EXPECT_EQ(std::set<std::string>(out.begin(), out.end()).size(), N) << "a name used twice";
  return out;
}

TEST(DropCauses, EachNameAtItsEnumIndex) {
  EXPECT_THAT(names(kJobioDropCauses),
              ::testing::ElementsAre("ringbuf_full", "inflight_full", "thread_table_full",
                                     "tgid_table_full", "uring_inflight_full", "exit_missed",
                                     "aio_inflight_full", "aio_unreadable", "aio_unmatched",
                                     "aio_unreaped", "mmap_unattributed", "storage_bios_full"));
  EXPECT_EQ(kJobioDropCauses[CKPT_DROP_TGID_FULL].name, "tgid_table_full");
  EXPECT_EQ(std::size(kJobioDropCauses), static_cast<size_t>(CKPT_JOBIO_DROP_MAX));

  EXPECT_THAT(names(kTcpDropCauses), ::testing::ElementsAre("ringbuf_full", "socket_table_full"));
  EXPECT_EQ(kTcpDropCauses[CKPT_TCP_DROP_SOCK_FULL].name, "socket_table_full");
  EXPECT_EQ(std::size(kTcpDropCauses), static_cast<size_t>(CKPT_TCP_DROP_MAX));

  EXPECT_THAT(names(kNfsDropCauses), ::testing::ElementsAre("ringbuf_full", "task_table_full"));
  EXPECT_EQ(kNfsDropCauses[CKPT_NFS_DROP_TASK_TABLE_FULL].name, "task_table_full");
  EXPECT_EQ(std::size(kNfsDropCauses), static_cast<size_t>(CKPT_NFS_DROP_MAX));
}

TEST(DropCauses, TheCheckRejectsATableOutOfOrder) {
  constexpr DropCauseName swapped[] = {{1, "b"}, {0, "a"}};
  constexpr DropCauseName unnamed[] = {{0, ""}};
  constexpr DropCauseName ordered[] = {{0, "a"}, {1, "b"}};
  static_assert(!each_at_its_index(swapped));
  static_assert(!each_at_its_index(unnamed));
  static_assert(each_at_its_index(ordered));
  EXPECT_FALSE(each_at_its_index(swapped));
  EXPECT_TRUE(each_at_its_index(ordered));
}

}  // namespace
}  // namespace ckpt
