// The note a checkpoint gets when the storage copied its bytes itself.
#include "analysis/storage_copy_note.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

using ::testing::HasSubstr;

TEST(StorageCopyNote, NamesHowTheStorageCopiedAndThatNoStageCountsIt) {
  CheckpointRecord c;
  c.bytes_by_via = {{"syscall", 1024}};
  EXPECT_FALSE(storage_copy_note(c)) << "nothing the storage copied: no note";

  c.bytes_by_via = {{"server_copy", 192ull << 20}};
  auto server = storage_copy_note(c);
  ASSERT_TRUE(server);
  EXPECT_THAT(*server, HasSubstr("the storage copied 192 MiB itself (an NFS 4.2 server-side COPY "
                                 "or CLONE)"));
  EXPECT_THAT(*server, HasSubstr("no host_io, serialize or NFS stage counts those bytes"));

  c.bytes_by_via = {{"reflink", 3ull << 20}, {"server_copy", 1ull << 20}, {"syscall", 5}};
  auto both = storage_copy_note(c);
  ASSERT_TRUE(both);
  EXPECT_THAT(*both, HasSubstr("copied 4.00 MiB itself (an NFS 4.2 server-side COPY or CLONE; a "
                               "reflink: the file system shared the source's extents)"));
}

}  // namespace
}  // namespace ckpt
