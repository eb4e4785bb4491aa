#include "calibrate/calibrated_maxima.h"

#include <sys/sysmacros.h>

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

StorageCalibration entry(std::string mount_point, std::string fs_type, std::string source,
                         double write_Bps, std::string date = "2026-12-02T10:00:00Z") {
  StorageCalibration c;
  c.mount_point = std::move(mount_point);
  c.fs_type = std::move(fs_type);
  c.source = std::move(source);
  c.write_Bps = write_Bps;
  c.read_Bps = write_Bps * 2;
  c.date = std::move(date);
  return c;
}

class Calibrated : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(mountinfo_)
        << "22 1 259:2 / / rw - ext4 /dev/nvme0n1p2 rw\n"
           "23 22 259:2 /srv /srv-bind rw - ext4 /dev/nvme0n1p2 rw\n"
           "24 22 0:53 / /mnt/ckpt rw - nfs4 10.0.0.5:/export rw,addr=10.0.0.5\n"
           "25 22 0:60 / /mnt/ckpt2 rw - nfs4 10.0.0.6:/export rw,addr=10.0.0.6\n";
  }
  void write(const std::string& path, const std::vector<StorageCalibration>& mounts) {
    std::ofstream(path) << maxima_file_text(mounts);
  }
  CalibratedMaxima make(std::vector<std::string> files) {
    return CalibratedMaxima(std::move(files), mountinfo_,
                            [this](const std::string& w) { warnings_.push_back(w); });
  }
  test::ScratchDir dir_;
  std::string mountinfo_ = dir_ / "mountinfo";
  std::string node_ = dir_ / "node.json";
  std::string user_ = dir_ / "user.json";
  std::vector<std::string> warnings_;
};

TEST_F(Calibrated, AFilesDeviceFindsItsMountsEntry) {
  write(node_, {entry("/", "ext4", "/dev/nvme0n1p2", 3e9),
                entry("/mnt/ckpt", "nfs4", "10.0.0.5:/export", 7e8)});
  auto m = make({node_});
  auto local = m.for_device(makedev(259, 2));
  ASSERT_TRUE(local);
  EXPECT_EQ(local->write_Bps, 3e9);
  auto nfs = m.for_device(makedev(0, 53));
  ASSERT_TRUE(nfs);
  EXPECT_EQ(nfs->write_Bps, 7e8);
  EXPECT_EQ(nfs->max_source(), "calibrated 2026-12-02");
  EXPECT_FALSE(m.for_device(makedev(0, 60)));  // the other server was not calibrated
  EXPECT_FALSE(m.for_device(makedev(8, 1)));   // not mounted at all
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(Calibrated, AnEntryForWhatIsNoLongerMountedThereIsNotUsed) {
  // /mnt/ckpt was calibrated when another server's export was mounted there.
  write(node_, {entry("/mnt/ckpt", "nfs4", "10.0.0.9:/old", 7e8),
                entry("/", "xfs", "/dev/nvme0n1p2", 3e9)});
  auto m = make({node_});
  EXPECT_FALSE(m.for_device(makedev(0, 53)));
  EXPECT_FALSE(m.for_device(makedev(259, 2)));
}

TEST_F(Calibrated, ABindMountsCalibrationServesTheDeviceAndTheNewestWins) {
  write(node_, {entry("/srv-bind", "ext4", "/dev/nvme0n1p2", 1e9, "2026-12-01T00:00:00Z"),
                entry("/", "ext4", "/dev/nvme0n1p2", 2e9, "2026-12-02T00:00:00Z")});
  auto m = make({node_});
  EXPECT_EQ(m.for_device(makedev(259, 2))->write_Bps, 2e9);
  write(node_, {entry("/srv-bind", "ext4", "/dev/nvme0n1p2", 1e9, "2026-12-01T00:00:00Z")});
  // The file changed (its size, its time): read again.
  EXPECT_EQ(m.for_device(makedev(259, 2))->write_Bps, 1e9);
}

TEST_F(Calibrated, TheUsersFileComesBeforeTheNodes) {
  write(node_, {entry("/mnt/ckpt", "nfs4", "10.0.0.5:/export", 7e8)});
  write(user_, {entry("/mnt/ckpt", "nfs4", "10.0.0.5:/export", 5e8)});
  EXPECT_EQ(make({user_, node_}).for_device(makedev(0, 53))->write_Bps, 5e8);
  EXPECT_EQ(make({dir_ / "missing.json", node_}).for_device(makedev(0, 53))->write_Bps, 7e8);
}

TEST_F(Calibrated, ACalibrationMadeWhileRunningIsPickedUp) {
  auto m = make({node_});  // no file yet
  EXPECT_FALSE(m.for_device(makedev(0, 53)));
  write(node_, {entry("/mnt/ckpt", "nfs4", "10.0.0.5:/export", 7e8)});
  auto c = m.for_device(makedev(0, 53));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->write_Bps, 7e8);
  fs::remove(node_);
  EXPECT_FALSE(m.for_device(makedev(0, 53)));
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(Calibrated, AMalformedFileIsAWarningNamingItOnceAndTheOtherFileStillServes) {
  std::ofstream(user_) << "{\"version\": 1, \"mounts\": [{\"mount_point\": \"/mnt/ckpt\"";
  write(node_, {entry("/mnt/ckpt", "nfs4", "10.0.0.5:/export", 7e8)});
  auto m = make({user_, node_});
  ASSERT_EQ(warnings_.size(), 1u);  // said when made, before any lookup
  EXPECT_THAT(warnings_[0], HasSubstr(user_));
  EXPECT_THAT(warnings_[0], HasSubstr("syntax error"));
  EXPECT_EQ(m.for_device(makedev(0, 53))->write_Bps, 7e8);
  EXPECT_EQ(m.for_device(makedev(259, 2)), std::nullopt);
  EXPECT_EQ(warnings_.size(), 1u);  // not again at every lookup
}

TEST_F(Calibrated, AnEntryWithABadFieldIsAWarningAndTheOthersServe) {
  auto bad = entry("/", "ext4", "/dev/nvme0n1p2", 3e9);
  nlohmann::json doc = nlohmann::json::parse(
      maxima_file_text({bad, entry("/mnt/ckpt", "nfs4", "10.0.0.5:/export", 7e8)}));
  doc["mounts"][0]["read_Bps"] = "fast";
  std::ofstream(node_) << doc.dump();
  auto m = make({node_});
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("/mounts/0/read_Bps"));
  EXPECT_FALSE(m.for_device(makedev(259, 2)));
  EXPECT_TRUE(m.for_device(makedev(0, 53)));
}

TEST_F(Calibrated, AnUnreadableMountTableIsAWarningNotACrash) {
  write(node_, {entry("/mnt/ckpt", "nfs4", "10.0.0.5:/export", 7e8)});
  CalibratedMaxima m({node_}, dir_ / "no-mountinfo",
                     [this](const std::string& w) { warnings_.push_back(w); });
  EXPECT_FALSE(m.for_device(makedev(0, 53)));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("no-mountinfo"));
}

}  // namespace
}  // namespace ckpt
