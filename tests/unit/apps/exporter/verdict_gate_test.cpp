// The exporter's rule for verdicts: never CKPT_VERDICT_OTHER on a file a
// registered client's process touched (the client may use other globs), so
// the client still gets every record; CHECKPOINT always; bounded memory.
#include "apps/exporter/verdict_gate.h"

#include <gtest/gtest.h>

namespace ckpt {
namespace {

const FileId kClientFile{2049, 11};
const FileId kOtherFile{2049, 12};

TEST(VerdictGate, WithholdsOtherOnlyForFilesAClientTouched) {
  VerdictGate gate;
  gate.client_touched(kClientFile);
  EXPECT_FALSE(gate.allows(kClientFile, false));
  EXPECT_TRUE(gate.allows(kClientFile, true));
  EXPECT_TRUE(gate.allows(kOtherFile, false));
  EXPECT_EQ(gate.withheld(), 1u);
  gate.clients_gone();
  EXPECT_TRUE(gate.allows(kClientFile, false));
}

TEST(VerdictGate, PastItsBoundItWithholdsEveryOtherUntilClientsAreGone) {
  VerdictGate gate(2);
  gate.client_touched(FileId{1, 1});
  gate.client_touched(FileId{1, 2});
  gate.client_touched(FileId{1, 2});  // already there: no overflow
  EXPECT_TRUE(gate.allows(kOtherFile, false));
  gate.client_touched(FileId{1, 3});
  EXPECT_EQ(gate.protected_files(), 0u);
  EXPECT_FALSE(gate.allows(kOtherFile, false));
  EXPECT_FALSE(gate.allows(FileId{1, 1}, false));
  EXPECT_TRUE(gate.allows(kOtherFile, true));
  gate.clients_gone();
  EXPECT_TRUE(gate.allows(kOtherFile, false));
}

TEST(VerdictGate, AnUnknownFileIsNeverProtected) {
  VerdictGate gate;
  gate.client_touched(FileId{});
  EXPECT_EQ(gate.protected_files(), 0u);
}

}  // namespace
}  // namespace ckpt
