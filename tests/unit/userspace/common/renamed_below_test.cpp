#include "common/renamed_below.h"

#include <gtest/gtest.h>

namespace ckpt {
namespace {

TEST(RenamedBelow, ANameBelowTheDirectoryMovesWithIt) {
  EXPECT_EQ(renamed_below("/out/tmp_save/w.bin", "/out/tmp_save", "/out/step_1"),
            "/out/step_1/w.bin");
  EXPECT_EQ(renamed_below("/out/tmp_save/a/b.bin", "/out/tmp_save/", "/out/step_1/"),
            "/out/step_1/a/b.bin")
      << "a trailing slash on either name changes nothing";
}

TEST(RenamedBelow, NamesNotBelowItStay) {
  EXPECT_FALSE(renamed_below("/out/tmp_save2/w.bin", "/out/tmp_save", "/out/step_1"))
      << "a name that only begins the same";
  EXPECT_FALSE(renamed_below("/out/tmp_save", "/out/tmp_save", "/out/step_1"))
      << "the directory itself is the rename's own";
  EXPECT_FALSE(renamed_below("/out/tmp_save/", "/out/tmp_save", "/out/step_1"));
  EXPECT_FALSE(renamed_below("/out/w.bin", "", "/out/step_1"));
  EXPECT_FALSE(renamed_below("/out/w.bin", "/out", ""));
}

}  // namespace
}  // namespace ckpt
