#include "analysis/above_max_note.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/summary.h"
#include "model/vocabulary.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

StageRecord stage(std::string_view name, uint64_t bytes, uint64_t busy_ns, double max_Bps) {
  StageRecord s;
  s.name = std::string(name);
  s.bytes = bytes;
  s.busy_ns = busy_ns;
  s.max_Bps = max_Bps;
  s.max_source = "calibrated 2026-12-02";
  return s;
}

CheckpointRecord checkpoint(Direction d, std::vector<StageRecord> stages) {
  CheckpointRecord c;
  c.id = 1;
  c.direction = d;
  c.stages = std::move(stages);
  return c;
}

// Traces from before the storage stage measured host_io against the
// storage's maximum. 1 GiB in 0.1 s: 10.7 GB/s against a 1.44 GB/s disk, a
// load read from the page cache as the demo's right after its save.
TEST(AboveMaxNote, AnOldTracesLoadFasterThanTheDiskWasReadFromThePageCache) {
  auto notes = above_max_notes(
      checkpoint(Direction::Load, {stage(kStageHostIo, 1ull << 30, 100'000'000, 1.44e9)}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], StartsWith("host_io ran at 7.5x its maximum (calibrated 2026-12-02)"));
  EXPECT_THAT(notes[0], HasSubstr("the page cache served these reads, not the storage"));
}

TEST(AboveMaxNote, AnOldTracesSaveFasterThanTheDiskWasTakenByThePageCache) {
  auto notes = above_max_notes(
      checkpoint(Direction::Save, {stage(kStageHostIo, 1ull << 30, 500'000'000, 1e9)}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], StartsWith("host_io ran at 2.1x"));
  EXPECT_THAT(notes[0], HasSubstr("the page cache took these buffered writes"));
}

// With a storage stage every maximum is the stage's own: above it, the
// maximum is wrong, and the note says which calibration to run again.
TEST(AboveMaxNote, AnyStageAboveItsMaximumIsACalibrationWarning) {
  auto notes = above_max_notes(
      checkpoint(Direction::Save, {stage(kStageSerialize, 3'000'000'000, 1'000'000'000, 2e9),
                                   stage(kStageHostIo, 1'000'000'000, 1'000'000'000, 2e9),
                                   stage(kStageStorage, 2'000'000'000, 1'000'000'000, 1e9)}));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], StartsWith("calibration warning: serialize ran at 1.5x its maximum"));
  EXPECT_THAT(notes[0], HasSubstr("ckptscope calibrate --memory"));
  EXPECT_THAT(notes[1], StartsWith("calibration warning: storage ran at 2.0x its maximum"));
  EXPECT_THAT(notes[1], HasSubstr("ckptscope calibrate --storage DIR"));
  EXPECT_TRUE(calibration_fault(stage(kStageStorage, 1'060'000'000, 1'000'000'000, 1e9)));
  EXPECT_FALSE(calibration_fault(stage(kStageStorage, 1'050'000'000, 1'000'000'000, 1e9)));
}

TEST(AboveMaxNote, NoneWithinNoiseOfTheMaximumOrWithoutOne) {
  StageRecord unknown = stage(kStageHostIo, 1ull << 30, 1, 1);
  unknown.max_Bps.reset();
  EXPECT_TRUE(
      above_max_notes(checkpoint(Direction::Load,
                                 {stage(kStageHostIo, 1'040'000'000, 1'000'000'000, 1e9), unknown}))
          .empty());
  EXPECT_TRUE(above_max_notes(checkpoint(Direction::Load, {})).empty());
}

TEST(AboveMaxNote, TheSummaryJsonAndTableSayIt) {
  Trace t;
  t.job.traced = true;
  t.checkpoints.push_back(
      checkpoint(Direction::Load, {stage(kStageHostIo, 1ull << 30, 100'000'000, 1.44e9)}));
  const auto j = summary_json(t);
  ASSERT_EQ(j["checkpoints"][0]["notes"].size(), 1u);
  EXPECT_THAT(j["checkpoints"][0]["notes"][0].get<std::string>(), HasSubstr("page cache"));
  EXPECT_TRUE(j["checkpoints"][0]["stages"][0]["calibration_warning"].get<bool>());
  const std::string table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("\n  note: host_io ran at 7.5x its maximum"));
  // Wrapped to the table's width, continued under the text.
  const size_t at = table.find("  note: ");
  const size_t next = table.find('\n', at);
  EXPECT_LE(next - at, 100u);
  EXPECT_EQ(table.compare(next + 1, 8, std::string(8, ' ')), 0) << table;
}

}  // namespace
}  // namespace ckpt
