#include "stitch/maxima.h"

#include "calibrate/maxima_file.h"

#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ckpt {
namespace {

namespace fs = std::filesystem;

TEST(PcieTest, LinkBandwidth) {
  // Gen4 x16: 16 GT/s * 16 lanes * 128/130 / 8 = 31.5 GB/s.
  EXPECT_NEAR(*pcie_bytes_per_second("16.0 GT/s PCIe", "16"), 31.5077e9, 1e6);
  // Gen1 x4, 8b/10b: 2.5 * 4 * 0.8 / 8 = 1 GB/s.
  EXPECT_NEAR(*pcie_bytes_per_second("2.5 GT/s", "4"), 1e9, 1);
  EXPECT_FALSE(pcie_bytes_per_second("Unknown", "16"));
  EXPECT_FALSE(pcie_bytes_per_second("8 GT/s", "0"));
}

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fs::path("ckpt-sysfs-" + std::to_string(getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text << "\n";
  }
  fs::path root_;
};

TEST_F(FakeSysfs, NvmeDiskMaxComesFromItsPcieLink) {
  // /sys/dev/block/259:0 -> ../../devices/pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1
  fs::path dev = root_ / "devices/pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1";
  fs::create_directories(dev);
  fs::create_directories(root_ / "dev/block");
  fs::create_symlink(dev, root_ / "dev/block/259:0");
  fs::create_symlink(root_ / "devices/pci0000:00/0000:00:01.0/nvme/nvme0", dev / "device");
  write("devices/pci0000:00/0000:00:01.0/current_link_speed", "8.0 GT/s PCIe");
  write("devices/pci0000:00/0000:00:01.0/current_link_width", "4");
  SystemMaxima m(ConfiguredMaxima{}, root_.string());
  auto s = m.storage(Direction::Save, {FileId{makedev(259, 0), 12}});
  ASSERT_TRUE(s.Bps);
  EXPECT_NEAR(*s.Bps, 8e9 * 4 * 128.0 / 130.0 / 8, 1);
  EXPECT_THAT(s.source, ::testing::HasSubstr("current_link_speed"));
}

TEST_F(FakeSysfs, ConfigWinsAndUnknownSaysSo) {
  ConfiguredMaxima c;
  c.storage_write_Bps = 250e9;
  SystemMaxima m(c, root_.string());
  EXPECT_EQ(*m.storage(Direction::Save, {}).Bps, 250e9);
  EXPECT_EQ(m.storage(Direction::Save, {}).source, "config:storage.write_bandwidth");
  auto load = m.storage(Direction::Load, {FileId{makedev(8, 1), 1}});
  EXPECT_FALSE(load.Bps);
  EXPECT_EQ(load.source, "unknown");
  EXPECT_FALSE(m.serialize(1).Bps);
}

// Config, then the mount's calibration, then sysfs, then unknown; a
// calibration gives saves its write figure and loads its read figure.
TEST_F(FakeSysfs, ResolutionOrderConfigThenCalibratedThenSysfs) {
  fs::path dev = root_ / "devices/pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1";
  fs::create_directories(dev);
  fs::create_directories(root_ / "dev/block");
  fs::create_symlink(dev, root_ / "dev/block/259:0");
  write("devices/pci0000:00/0000:00:01.0/current_link_speed", "8.0 GT/s PCIe");
  write("devices/pci0000:00/0000:00:01.0/current_link_width", "4");
  write("mountinfo",
        "22 1 259:0 / / rw - ext4 /dev/nvme0n1 rw\n"
        "23 22 259:1 / /scratch rw - ext4 /dev/nvme1n1 rw");
  StorageCalibration c;
  c.mount_point = "/";
  c.fs_type = "ext4";
  c.source = "/dev/nvme0n1";
  c.write_Bps = 1.5e9;
  c.read_Bps = 2.5e9;
  c.date = "2026-12-02T10:11:12Z";
  std::ofstream(root_ / "maxima.json") << maxima_file_text({c});
  auto calibrated =
      std::make_shared<CalibratedMaxima>(std::vector<std::string>{(root_ / "maxima.json").string()},
                                         (root_ / "mountinfo").string(), nullptr);
  const std::vector<FileId> on_root = {FileId{makedev(259, 0), 12}};

  ConfiguredMaxima configured;
  configured.storage_write_Bps = 250e9;
  SystemMaxima with_config(configured, root_.string(), calibrated);
  EXPECT_EQ(with_config.storage(Direction::Save, on_root).source, "config:storage.write_bandwidth");
  // The config has no read figure: the calibration's.
  EXPECT_EQ(*with_config.storage(Direction::Load, on_root).Bps, 2.5e9);

  SystemMaxima m(ConfiguredMaxima{}, root_.string(), calibrated);
  auto save = m.storage(Direction::Save, on_root);
  EXPECT_EQ(*save.Bps, 1.5e9);
  EXPECT_EQ(save.source, "calibrated 2026-12-02");
  EXPECT_EQ(*m.storage(Direction::Load, on_root).Bps, 2.5e9);
  // A file whose mount was not calibrated, among others: the first that was.
  EXPECT_EQ(*m.storage(Direction::Save, {FileId{makedev(259, 1), 3}, on_root[0]}).Bps, 1.5e9);

  SystemMaxima uncalibrated(ConfiguredMaxima{}, root_.string(), nullptr);
  EXPECT_THAT(uncalibrated.storage(Direction::Save, on_root).source,
              ::testing::HasSubstr("current_link_speed"));
  EXPECT_EQ(m.storage(Direction::Save, {FileId{makedev(259, 1), 3}}).source, "unknown");
}

// serialize: the config's figure, else the node's memory copy, one thread's
// rate per thread that did the checkpoint's I/O, at most all CPUs' together.
TEST_F(FakeSysfs, SerializeIsTheConfigElseTheMemoryCopyScaledByItsThreads) {
  MemoryCalibration mem;
  mem.one_thread_Bps = 10e9;
  mem.all_threads_Bps = 25e9;
  mem.threads = 4;
  mem.bytes = 256u << 20;
  mem.rounds = 5;
  mem.date = "2026-12-02T10:12:00Z";
  std::ofstream(root_ / "maxima.json") << maxima_file_text({}, mem);
  auto calibrated =
      std::make_shared<CalibratedMaxima>(std::vector<std::string>{(root_ / "maxima.json").string()},
                                         (root_ / "mountinfo").string(), nullptr);
  SystemMaxima m(ConfiguredMaxima{}, root_.string(), calibrated);
  EXPECT_EQ(*m.serialize(1).Bps, 10e9);
  EXPECT_EQ(m.serialize(1).source, "calibrated 2026-12-02 (memory copy, 1 thread)");
  EXPECT_EQ(*m.serialize(2).Bps, 20e9);
  EXPECT_EQ(m.serialize(2).source, "calibrated 2026-12-02 (memory copy, 2 threads)");
  EXPECT_EQ(*m.serialize(3).Bps, 25e9) << "no faster than every CPU at once";
  EXPECT_EQ(*m.serialize(0).Bps, 10e9) << "a stage with no thread known is one thread's";

  ConfiguredMaxima configured;
  configured.serialize_Bps = 3e9;
  SystemMaxima with_config(configured, root_.string(), calibrated);
  EXPECT_EQ(*with_config.serialize(2).Bps, 3e9);
  EXPECT_EQ(with_config.serialize(2).source, "config:maxima.serialize_bandwidth");
}

TEST_F(FakeSysfs, NicSpeed) {
  write("class/net/eth0/speed", "100000");
  SystemMaxima m(ConfiguredMaxima{}, root_.string());
  auto s = m.nic_speed("eth0");
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s->Bps, 12.5e9);
  EXPECT_FALSE(m.nic_speed("lo"));
}

}  // namespace
}  // namespace ckpt
