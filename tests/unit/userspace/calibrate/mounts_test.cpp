#include "calibrate/mounts.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scratch_dir.h"

namespace ckpt {
namespace {

using ::testing::HasSubstr;

// Lines as Linux 6.x writes them: optional fields before " - ", escapes.
constexpr const char* kTable =
    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n"
    "30 22 0:27 / /mnt/my\\040data rw,relatime shared:9 master:2 - tmpfs tmpfs rw,size=65536k\n"
    "41 22 0:53 / /mnt/ckpt rw,relatime - nfs4 10.0.0.5:/export "
    "rw,vers=4.2,rsize=1048576,wsize=1048576,addr=10.0.0.5,clientaddr=10.0.0.7\n"
    "42 22 254:0 /srv /bind rw - ext4 /dev/vda rw\n";

TEST(Mountinfo, FieldsEscapesAndSuperOptions) {
  auto m = parse_mountinfo(kTable, "test");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ((*m)[0].dev, makedev(254, 0));
  EXPECT_EQ((*m)[0].mount_point, "/");
  EXPECT_EQ((*m)[0].fs_type, "ext4");
  EXPECT_EQ((*m)[0].source, "/dev/vda");
  EXPECT_EQ((*m)[1].mount_point, "/mnt/my data");  // two optional fields skipped
  EXPECT_EQ((*m)[1].fs_type, "tmpfs");
  EXPECT_TRUE((*m)[2].is_nfs());
  EXPECT_EQ((*m)[2].source, "10.0.0.5:/export");
  EXPECT_EQ((*m)[2].super_option("addr"), "10.0.0.5");
  EXPECT_EQ((*m)[2].super_option("clientaddr"), "10.0.0.7");
  EXPECT_EQ((*m)[2].super_option("add"), "");
  EXPECT_EQ(device_text((*m)[2].dev), "0:53");
}

TEST(Mountinfo, AMalformedLineIsAnErrorNamingIt) {
  auto m = parse_mountinfo("22 1 254:0 / / rw - ext4 /dev/vda rw\nnot a mount line\n", "FILE");
  ASSERT_FALSE(m);
  EXPECT_THAT(m.error().message, HasSubstr("FILE: line 2"));
  EXPECT_FALSE(parse_mountinfo("22 1 x:0 / / rw - ext4 /dev/vda rw\n", "f"));
  EXPECT_FALSE(parse_mountinfo("22 1 254:0 / / rw ext4 /dev/vda rw\n", "f"));  // no " - "
}

TEST(MountOfPath, TheDeepestMountWithThePathsDevice) {
  test::ScratchDir dir;
  struct stat st {};
  ASSERT_EQ(stat(dir.path().c_str(), &st), 0);
  const std::string real = std::filesystem::canonical(dir.path()).string();
  // Three mounts above the directory: "/" with its device, a deeper one
  // with another device (the path's file is not on it), and its parent.
  const std::string parent = std::filesystem::path(real).parent_path().string();
  std::vector<MountEntry> table = {
      {st.st_dev, "/", "ext4", "/dev/root", ""},
      {makedev(0, 99), parent, "tmpfs", "tmpfs", ""},
      {st.st_dev, real, "ext4", "/dev/root", ""},  // a bind mount of the same device
  };
  auto m = mount_of_path(table, dir.path().string());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->mount_point, real);
  table.pop_back();
  m = mount_of_path(table, dir.path().string());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mount_point, "/");  // not the tmpfs: the file's device is not its
  EXPECT_FALSE(mount_of_path(table, dir / "missing"));
}

TEST(MountOfPath, ThisMachinesTableHasEveryDirectory) {
  test::ScratchDir dir;
  auto table = read_mountinfo();
  ASSERT_TRUE(table) << table.error().message;
  auto m = mount_of_path(*table, dir.path().string());
  ASSERT_TRUE(m) << m.error().message;
  struct stat st {};
  ASSERT_EQ(stat(dir.path().c_str(), &st), 0);
  EXPECT_EQ(m->dev, st.st_dev);
}

}  // namespace
}  // namespace ckpt
