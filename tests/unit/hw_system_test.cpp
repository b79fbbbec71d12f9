// hw/system.h: reading files under an injected root, and the parsing helpers the probes share.
#include <gtest/gtest.h>

#include "hw/system.h"
#include "hw_fake.h"

namespace polyinfer::hw {
namespace {

TEST(HwSystem, ReadsUnderTheRoot) {
  testing::FakeRoot root;
  root.write("/proc/meminfo", "MemTotal:  100 kB\nMemFree: 5 kB\n");
  root.write("/sys/x/value", "  0x1f \n");
  root.write("/sys/x/bad", "abc\n");
  root.mkdir("/sys/dir/b");
  root.mkdir("/sys/dir/a");
  root.symlink("../../bus/pci/drivers/nvidia", "/sys/dev/driver");
  const FileSystem fs = root.fs();
  EXPECT_EQ(fs.read("/proc/meminfo").value(), "MemTotal:  100 kB\nMemFree: 5 kB\n");
  EXPECT_EQ(fs.read_line("/proc/meminfo").value(), "MemTotal:  100 kB");
  EXPECT_EQ(fs.read_int("/sys/x/value").value(), 31);
  EXPECT_FALSE(fs.read_int("/sys/x/bad").has_value());
  EXPECT_FALSE(fs.read("/proc/absent").has_value());
  EXPECT_EQ(fs.list("/sys/dir"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(fs.list("/sys/none").empty());
  EXPECT_TRUE(fs.exists("/sys/dir/a"));
  EXPECT_FALSE(fs.exists("/sys/dir/c"));
  EXPECT_EQ(fs.link_name("/sys/dev/driver").value(), "nvidia");
  EXPECT_FALSE(fs.link_name("/sys/x/value").has_value());
}

TEST(HwSystem, CpuListCount) {
  EXPECT_EQ(cpu_list_count("0-3,8,10-11\n"), 7);
  EXPECT_EQ(cpu_list_count("5"), 1);
  EXPECT_EQ(cpu_list_count(""), 0);
  EXPECT_EQ(cpu_list_count("3-1"), 0);
  EXPECT_EQ(cpu_list_count("x"), 0);
}

TEST(HwSystem, SplitAndTrim) {
  EXPECT_EQ(trim("  a b \n"), "a b");
  EXPECT_EQ(split_ws(" a  b\tc\n"), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(HwSystem, LoaderReportsWhyALibraryDidNotLoad) {
  std::string error;
  EXPECT_EQ(system_loader().open({"libpolyinfer-no-such-library.so.7"}, &error), nullptr);
  EXPECT_NE(error.find("libpolyinfer-no-such-library.so.7"), std::string::npos) << error;
  // libc is everywhere; its symbols resolve through the same path the probes use.
  auto libc = system_loader().open({"libc.so.6"}, &error);
  ASSERT_NE(libc, nullptr) << error;
  EXPECT_NE(libc->symbol("strlen"), nullptr);
  EXPECT_EQ(libc->symbol("polyinfer_no_such_symbol"), nullptr);
  EXPECT_NE(libc->path().find("libc"), std::string::npos);
}

}  // namespace
}  // namespace polyinfer::hw
