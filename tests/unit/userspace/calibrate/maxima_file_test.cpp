#include "calibrate/maxima_file.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

StorageCalibration entry(std::string mount_point, double write_Bps) {
  StorageCalibration c;
  c.mount_point = std::move(mount_point);
  c.device = "259:2";
  c.fs_type = "ext4";
  c.source = "/dev/nvme0n1p2";
  c.dir = c.mount_point + "/scratch";
  c.write_Bps = write_Bps;
  c.read_Bps = 2 * write_Bps;
  c.streams = 4;
  c.bytes = 1ull << 30;
  c.bytes_read = 1ull << 30;
  c.block_bytes = 1 << 20;
  c.write_seconds = 0.5;
  c.read_seconds = 0.25;
  c.direct = true;
  c.io = "O_DIRECT";
  c.date = "2026-12-02T10:11:12Z";
  c.tool_version = "0.1.0";
  return c;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(MaximaFile, RoundTrip) {
  const auto a = entry("/data", 2.5e9);
  auto b = entry("/mnt/ckpt", 7e8);
  b.fs_type = "nfs4";
  b.source = "10.0.0.5:/export";
  b.direct = false;
  b.io = "buffered + fdatasync (open with O_DIRECT: Invalid argument)";
  auto parsed = parse_maxima_file(maxima_file_text({a, b}), "t");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->mounts.size(), 2u);
  EXPECT_TRUE(parsed->skipped.empty());
  EXPECT_EQ(to_json(parsed->mounts[0]), to_json(a));
  EXPECT_EQ(to_json(parsed->mounts[1]), to_json(b));
  EXPECT_EQ(parsed->mounts[0].max_source(), "calibrated 2026-12-02");
}

TEST(MaximaFile, WhatIsNotAMaximaFileIsAnErrorNamingTheFileAndWhy) {
  for (auto [text, why] : {std::pair{"", "syntax error"},
                           {"{\"mounts\": [", "syntax error"},
                           {"[]", "not an object"},
                           {"{\"mounts\": []}", "/version"},
                           {"{\"version\": 2, \"mounts\": []}", "reads version 1"},
                           {"{\"version\": 1}", "/mounts"},
                           {"{\"version\": 1, \"mounts\": {}}", "/mounts"}}) {
    auto parsed = parse_maxima_file(text, "/x/maxima.json");
    ASSERT_FALSE(parsed) << text;
    EXPECT_THAT(parsed.error().message, HasSubstr("/x/maxima.json")) << text;
    EXPECT_THAT(parsed.error().message, HasSubstr(why)) << text;
  }
}

TEST(MaximaFile, ABadEntryIsSkippedSayingWhichFieldAndTheRestKept) {
  nlohmann::json doc = nlohmann::json::parse(maxima_file_text(
      {entry("/a", 1e9), entry("/b", 1e9), entry("/c", 1e9), entry("/d", 1e9), entry("/e", 1e9)}));
  doc["mounts"][0]["write_Bps"] = -5;
  doc["mounts"][1]["date"] = "yesterday";
  doc["mounts"][2].erase("source");
  doc["mounts"][3]["mount_point"] = "relative";
  auto parsed = parse_maxima_file(doc.dump(), "F");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->mounts.size(), 1u);
  EXPECT_EQ(parsed->mounts[0].mount_point, "/e");
  ASSERT_EQ(parsed->skipped.size(), 4u);
  EXPECT_THAT(parsed->skipped[0], HasSubstr("F: /mounts/0/write_Bps: must be a positive number"));
  EXPECT_THAT(parsed->skipped[1], HasSubstr("/mounts/1/date: must be a UTC time"));
  EXPECT_THAT(parsed->skipped[2], HasSubstr("/mounts/2/source: missing"));
  EXPECT_THAT(parsed->skipped[3], HasSubstr("/mounts/3/mount_point: must be an absolute path"));
}

TEST(MaximaFile, SavingReplacesTheSameMountsEntryAndKeepsOthers) {
  test::ScratchDir dir;
  const std::string path = dir / "state/ckptscope/maxima.json";  // directories made
  ASSERT_TRUE(save_calibration(path, entry("/data", 1e9)));
  ASSERT_TRUE(save_calibration(path, entry("/scratch", 2e9)));
  auto newer = entry("/data", 3e9);
  newer.date = "2026-12-03T00:00:00Z";
  ASSERT_TRUE(save_calibration(path, newer));
  auto loaded = load_maxima_file(path);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE(*loaded);
  ASSERT_EQ((*loaded)->mounts.size(), 2u);
  EXPECT_EQ((*loaded)->mounts[0].mount_point, "/data");
  EXPECT_EQ((*loaded)->mounts[0].write_Bps, 3e9);
  EXPECT_EQ((*loaded)->mounts[1].mount_point, "/scratch");
  // Another file system mounted at the same place is another mount.
  auto other = entry("/data", 4e9);
  other.source = "/dev/sdb1";
  ASSERT_TRUE(save_calibration(path, other));
  EXPECT_EQ((*load_maxima_file(path))->mounts.size(), 3u);
  // Nothing but the file and its lock is left beside it.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) {
    ++files;
    EXPECT_THAT(e.path().filename().string(), ::testing::StartsWith("maxima.json")) << e.path();
  }
  EXPECT_EQ(files, 2u);
}

MemoryCalibration memory(double one_thread_Bps) {
  MemoryCalibration m;
  m.one_thread_Bps = one_thread_Bps;
  m.all_threads_Bps = 3 * one_thread_Bps;
  m.threads = 16;
  m.bytes = 256u << 20;
  m.rounds = 5;
  m.date = "2026-12-02T10:12:00Z";
  m.tool_version = "0.1.0";
  return m;
}

TEST(MaximaFile, TheNodesMemoryCopyRoundTripsBesideTheMounts) {
  auto parsed = parse_maxima_file(maxima_file_text({entry("/data", 1e9)}, memory(1.1e10)), "t");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_TRUE(parsed->memory);
  EXPECT_EQ(to_json(*parsed->memory), to_json(memory(1.1e10)));
  EXPECT_EQ(parsed->mounts.size(), 1u);
  // A file from before --memory has none, and reads as it did.
  auto older = parse_maxima_file(maxima_file_text({entry("/data", 1e9)}), "t");
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_FALSE(older->memory);
  EXPECT_EQ(nlohmann::json::parse(maxima_file_text({})).count("memory"), 0u);
}

TEST(MaximaFile, ABadMemoryEntryIsSkippedSayingWhichFieldAndTheMountsKept) {
  for (auto [key, value, why] :
       {std::tuple{"one_thread_Bps", nlohmann::json(0),
                   "/memory/one_thread_Bps: must be a positive"},
        {"all_threads_Bps", nlohmann::json("fast"), "/memory/all_threads_Bps: must be a positive"},
        {"threads", nlohmann::json(0), "/memory/threads: must be a whole number from 1"},
        {"rounds", nlohmann::json(-1), "/memory/rounds: must be a whole number"},
        {"date", nlohmann::json("today"), "/memory/date: must be a UTC time"}}) {
    nlohmann::json doc =
        nlohmann::json::parse(maxima_file_text({entry("/data", 1e9)}, memory(1e10)));
    doc["memory"][key] = value;
    auto parsed = parse_maxima_file(doc.dump(), "F");
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_FALSE(parsed->memory) << key;
    EXPECT_EQ(parsed->mounts.size(), 1u) << key;
    ASSERT_EQ(parsed->skipped.size(), 1u) << key;
    EXPECT_THAT(parsed->skipped[0], HasSubstr(std::string("F: ") + why)) << key;
  }
  auto not_object = parse_maxima_file(R"({"version": 1, "mounts": [], "memory": []})", "F");
  ASSERT_TRUE(not_object);
  ASSERT_EQ(not_object->skipped.size(), 1u);
  EXPECT_THAT(not_object->skipped[0], HasSubstr("/memory: must be an object"));
}

TEST(MaximaFile, SavingTheMemoryCopyKeepsTheMountsAndTheMountsKeepIt) {
  test::ScratchDir dir;
  const std::string path = dir / "maxima.json";
  ASSERT_TRUE(save_calibration(path, entry("/data", 1e9)));
  ASSERT_TRUE(save_calibration(path, memory(1e10)));
  ASSERT_TRUE(save_calibration(path, memory(2e10)));  // replaced, not added
  ASSERT_TRUE(save_calibration(path, entry("/scratch", 2e9)));
  auto loaded = load_maxima_file(path);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE(*loaded);
  EXPECT_EQ((*loaded)->mounts.size(), 2u);
  ASSERT_TRUE((*loaded)->memory);
  EXPECT_EQ((*loaded)->memory->one_thread_Bps, 2e10);
}

TEST(MaximaFile, SavingKeepsTheEntriesItCouldNotReadAsTheyWere) {
  test::ScratchDir dir;
  const std::string path = dir / "maxima.json";
  nlohmann::json doc = nlohmann::json::parse(maxima_file_text({entry("/a", 1e9)}, memory(1e10)));
  doc["mounts"].push_back({{"mount_point", "/typo"}, {"write_Bps", "fast"}});
  doc["memory"]["threads"] = 0;
  std::ofstream(path) << doc.dump();
  ASSERT_TRUE(save_calibration(path, entry("/b", 2e9)));
  const nlohmann::json saved = nlohmann::json::parse(slurp(path));
  ASSERT_EQ(saved["mounts"].size(), 3u) << saved.dump();
  EXPECT_EQ(saved["mounts"][2]["mount_point"], "/typo");
  EXPECT_EQ(saved["mounts"][2]["write_Bps"], "fast");
  EXPECT_EQ(saved["memory"]["threads"], 0) << "kept as it was";
  auto loaded = load_maxima_file(path);
  ASSERT_TRUE(loaded && *loaded);
  EXPECT_EQ((*loaded)->mounts.size(), 2u);
  EXPECT_EQ((*loaded)->skipped.size(), 2u) << "still said when read";
  // A new memory calibration replaces the unreadable one.
  ASSERT_TRUE(save_calibration(path, memory(2e10)));
  EXPECT_EQ(nlohmann::json::parse(slurp(path))["memory"]["threads"], 16);
}

TEST(MaximaFile, TheMemoryCeilingScalesWithTheStagesThreadsUpToAllCpus) {
  const MemoryCalibration m = memory(1e10);  // all threads: 3e10
  EXPECT_EQ(m.ceiling_Bps(1), 1e10);
  EXPECT_EQ(m.ceiling_Bps(2), 2e10);
  EXPECT_EQ(m.ceiling_Bps(8), 3e10);
  EXPECT_EQ(m.ceiling_Bps(0), 1e10);
  MemoryCalibration slow_all = m;
  slow_all.all_threads_Bps = 0.5e10;  // a node whose CPUs share a slow bus
  EXPECT_EQ(slow_all.ceiling_Bps(4), 1e10) << "never below one thread's own rate";
  EXPECT_EQ(m.max_source(3), "calibrated 2026-12-02 (memory copy, 3 threads)");
}

// host_io's ceiling: one thread's page-cache copy each, together scaled as
// the memory copy scaled (here 3x over every CPU); a file from before the
// figures has none, and says so by nullopt.
TEST(MaximaFile, ThePageCacheCeilingScalesAsTheMemoryCopyDidAndRoundTrips) {
  MemoryCalibration m = memory(1e10);  // all threads: 3e10
  EXPECT_FALSE(m.page_cache_ceiling_Bps(false, 1));
  m.page_cache_read_Bps = 2.4e10;
  m.page_cache_write_Bps = 2e10;
  EXPECT_EQ(m.page_cache_ceiling_Bps(false, 1), 2.4e10);
  EXPECT_EQ(m.page_cache_ceiling_Bps(true, 2), 4e10);
  EXPECT_EQ(m.page_cache_ceiling_Bps(true, 8), 6e10) << "3x one thread, as the copy";
  EXPECT_EQ(m.page_cache_source(false, 1), "calibrated 2026-12-02 (page-cache read, 1 thread)");
  EXPECT_EQ(m.page_cache_source(true, 4), "calibrated 2026-12-02 (page-cache write, 4 threads)");
  auto parsed = parse_maxima_file(maxima_file_text({}, m), "t");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_TRUE(parsed->memory);
  EXPECT_EQ(parsed->memory->page_cache_read_Bps, 2.4e10);
  EXPECT_EQ(parsed->memory->page_cache_write_Bps, 2e10);
  nlohmann::json bad = to_json(m);
  bad["page_cache_read_Bps"] = -1;
  auto skipped = parse_maxima_file(
      nlohmann::json{{"version", 1}, {"mounts", nlohmann::json::array()}, {"memory", bad}}.dump(),
      "t");
  ASSERT_TRUE(skipped) << skipped.error().message;
  EXPECT_FALSE(skipped->memory);
  ASSERT_EQ(skipped->skipped.size(), 1u);
  EXPECT_THAT(skipped->skipped[0], HasSubstr("page_cache_read_Bps"));
}

TEST(MaximaFile, AFileThatIsNotOneIsNeitherReadNorReplaced) {
  test::ScratchDir dir;
  const std::string path = dir / "maxima.json";
  std::ofstream(path) << "{\"version\": 1, \"mounts\": [";
  auto loaded = load_maxima_file(path);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().message, HasSubstr(path));
  auto saved = save_calibration(path, entry("/data", 1e9));
  ASSERT_FALSE(saved);
  EXPECT_THAT(saved.error().message, HasSubstr(path));
  EXPECT_THAT(saved.error().message, HasSubstr("not replaced"));
  EXPECT_EQ(slurp(path), "{\"version\": 1, \"mounts\": [");
  // A directory where the file should be: said, not a crash.
  fs::create_directory(dir / "dir.json");
  auto is_dir = load_maxima_file(dir / "dir.json");
  ASSERT_FALSE(is_dir);
  EXPECT_THAT(is_dir.error().message, HasSubstr("Is a directory"));
  // No file: nothing calibrated, not an error.
  auto none = load_maxima_file(dir / "none.json");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(MaximaFile, WhereItIs) {
  MaximaFileInputs root{.root = true, .home = "/root"};
  EXPECT_EQ(*maxima_file_for_writing(root), "/var/lib/ckptscope/maxima.json");
  EXPECT_EQ(maxima_files_for_reading(root),
            std::vector<std::string>{"/var/lib/ckptscope/maxima.json"});
  MaximaFileInputs user{.xdg_state_home = "/s", .home = "/home/u"};
  EXPECT_EQ(*maxima_file_for_writing(user), "/s/ckptscope/maxima.json");
  EXPECT_EQ(
      maxima_files_for_reading(user),
      (std::vector<std::string>{"/s/ckptscope/maxima.json", "/var/lib/ckptscope/maxima.json"}));
  user.xdg_state_home = "relative";  // ignored, as the XDG rules say
  EXPECT_EQ(*maxima_file_for_writing(user), "/home/u/.local/state/ckptscope/maxima.json");
  EXPECT_FALSE(maxima_file_for_writing(MaximaFileInputs{}));
  MaximaFileInputs override{.root = true, .override_path = "/tmp/m.json"};
  EXPECT_EQ(*maxima_file_for_writing(override), "/tmp/m.json");
  EXPECT_EQ(maxima_files_for_reading(override), std::vector<std::string>{"/tmp/m.json"});
}

TEST(MaximaFile, Iso8601Utc) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso8601_utc(1796206272), "2026-12-02T10:11:12Z");
}

}  // namespace
}  // namespace ckpt
