// hw/npu.cpp: probe_npus on faked /dev and /sys trees — each accelerator found through each kind
// of evidence, its kernel module loaded or not, one entry per device, and nothing on an empty
// root — and a no-crash check on the real machine.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "hw/report.h"
#include "hw_fake.h"

namespace polyinfer::hw {
namespace {

using testing::FakeRoot;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A device-tree "compatible" property: NUL-terminated strings, most specific first.
std::string compatible(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* n : names) out += std::string(n) + '\0';
  return out;
}

// A PCI function as sysfs shows it (the device folder, and the bus's link to it); `driver` ""
// leaves it unbound.
void pci(FakeRoot& r, const std::string& addr, const std::string& vendor, const std::string& device,
         const std::string& cls, const std::string& driver = "") {
  const std::string d = "/sys/devices/pci0000:00/" + addr;
  r.write(d + "/vendor", vendor + "\n");
  r.write(d + "/device", device + "\n");
  r.write(d + "/class", cls + "\n");
  if (!driver.empty()) r.symlink("../../../bus/pci/drivers/" + driver, d + "/driver");
  r.symlink("../../../devices/pci0000:00/" + addr, "/sys/bus/pci/devices/" + addr);
}

// /sys/class/accel/accelN/device → the PCI function above, and the node /dev/accel/accelN.
void accel(FakeRoot& r, int n, const std::string& addr) {
  const std::string name = "accel" + std::to_string(n);
  r.symlink("../../../devices/pci0000:00/" + addr, "/sys/class/accel/" + name + "/device");
  r.write("/dev/accel/" + name, "");
}

// A platform device (an SoC block) driven by `driver`, linked from /sys/class/drm/NAME/device.
void drm(FakeRoot& r, const std::string& name, const std::string& platform_dev,
         const std::string& driver) {
  const std::string d = "/sys/devices/platform/" + platform_dev;
  r.mkdir(d);
  if (!r.fs().link_name(d + "/driver"))
    r.symlink("../../../bus/platform/drivers/" + driver, d + "/driver");
  r.symlink("../../../devices/platform/" + platform_dev, "/sys/class/drm/" + name + "/device");
}

TEST(HwNpu, NothingOnEmptyRoot) {
  FakeRoot r;
  EXPECT_TRUE(probe_npus(r.fs()).empty());
}

// An ordinary machine: a GPU, a host bridge, another driver's render node, a Rockchip SoC without
// an NPU, names that only look like NPU nodes: none of them is an NPU.
TEST(HwNpu, NothingOnAMachineWithoutOne) {
  FakeRoot r;
  pci(r, "0000:00:02.0", "0x8086", "0x7d55", "0x030000", "i915");  // Intel GPU, not the NPU
  pci(r, "0000:01:00.0", "0x10de", "0x2335", "0x030200", "nvidia");
  pci(r, "0000:02:00.0", "0x1022", "0x14e8", "0x060000");
  drm(r, "renderD128", "fde60000.gpu", "panfrost");
  r.write("/proc/device-tree/compatible", compatible({"pine64,rockpro64", "rockchip,rk3399"}));
  for (const char* n :
       {"/dev/null", "/dev/hl", "/dev/hailo", "/dev/davinci", "/dev/apex", "/dev/nvidia0"})
    r.write(n, "");
  EXPECT_TRUE(probe_npus(r.fs()).empty());
}

// Intel NPU with intel_vpu bound: found through its accel node; its PCI function is the same
// device, so it is not reported twice, and its PCI id is part of the evidence.
TEST(HwNpu, IntelNpuThroughAccel) {
  FakeRoot r;
  pci(r, "0000:00:0b.0", "0x8086", "0x7d1d", "0x120000", "intel_vpu");
  accel(r, 0, "0000:00:0b.0");
  r.mkdir("/sys/module/intel_vpu");
  const auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_EQ(npus[0].kind, "Intel NPU");
  EXPECT_EQ(npus[0].node, "/dev/accel/accel0");
  EXPECT_EQ(npus[0].module, "intel_vpu");
  EXPECT_TRUE(npus[0].module_loaded);
  EXPECT_EQ(npus[0].toolchain, "OpenVINO (NPU plugin)");
  EXPECT_TRUE(contains(npus[0].evidence, "driver intel_vpu")) << npus[0].evidence;
  EXPECT_TRUE(contains(npus[0].evidence, "0000:00:0b.0")) << npus[0].evidence;
  EXPECT_TRUE(contains(npus[0].evidence, "8086:7d1d")) << npus[0].evidence;
}

// The case: the NPU is on the PCI bus, no driver is bound and intel_vpu is not loaded.
TEST(HwNpu, IntelNpuOnPciWithoutDriver) {
  FakeRoot r;
  pci(r, "0000:00:0b.0", "0x8086", "0x643e", "0x120000");
  auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_EQ(npus[0].kind, "Intel NPU");
  EXPECT_EQ(npus[0].node, "");
  EXPECT_EQ(npus[0].module, "intel_vpu");
  EXPECT_FALSE(npus[0].module_loaded);
  EXPECT_EQ(npus[0].evidence, "PCI 0000:00:0b.0 [8086:643e], no driver bound");

  // The module is loaded but did not claim the device (too old for it, firmware missing).
  r.mkdir("/sys/module/intel_vpu");
  npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_TRUE(npus[0].module_loaded);
  EXPECT_EQ(npus[0].node, "");
  EXPECT_TRUE(contains(npus[0].evidence, "did not claim it")) << npus[0].evidence;
}

TEST(HwNpu, AmdXdna) {
  {  // Phoenix NPU, a signal processing controller, amdxdna not loaded.
    FakeRoot r;
    pci(r, "0000:c6:00.1", "0x1022", "0x1502", "0x118000");
    pci(r, "0000:c6:00.3", "0x1022", "0x15b9", "0x0c0330", "xhci_hcd");  // USB, not the NPU
    const auto npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_EQ(npus[0].kind, "AMD XDNA (Ryzen AI)");
    EXPECT_EQ(npus[0].module, "amdxdna");
    EXPECT_FALSE(npus[0].module_loaded);
    EXPECT_EQ(npus[0].toolchain, "Ryzen AI Software / XRT");
  }
  {  // Strix, bound to amdxdna: the accel node.
    FakeRoot r;
    pci(r, "0000:c5:00.1", "0x1022", "0x17f0", "0x118000", "amdxdna");
    accel(r, 0, "0000:c5:00.1");
    const auto npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_EQ(npus[0].node, "/dev/accel/accel0");
    EXPECT_TRUE(npus[0].module_loaded);  // bound; built in, so no /sys/module entry
  }
  {  // Passed through to a VM: bound, but to vfio-pci, so amdxdna is not driving it.
    FakeRoot r;
    pci(r, "0000:c5:00.1", "0x1022", "0x17f0", "0x118000", "vfio-pci");
    const auto npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_EQ(npus[0].module, "amdxdna");
    EXPECT_FALSE(npus[0].module_loaded);
    EXPECT_TRUE(contains(npus[0].evidence, "bound to vfio-pci")) << npus[0].evidence;
  }
}

// Accel devices by driver, one of a driver polyinfer has no name for, and an accel node without
// sysfs (a container's /dev): all reported.
TEST(HwNpu, OtherAccelDevices) {
  FakeRoot r;
  pci(r, "0000:03:00.0", "0x1234", "0x0001", "0x120000", "foo_npu");
  accel(r, 0, "0000:03:00.0");
  r.write("/dev/accel/accel1", "");
  pci(r, "0000:04:00.0", "0x17cb", "0xa100", "0x120000", "qaic");
  accel(r, 2, "0000:04:00.0");
  pci(r, "0000:05:00.0", "0x1da3", "0x1020", "0x120000", "habanalabs");
  accel(r, 3, "0000:05:00.0");
  const auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 4u);
  EXPECT_EQ(npus[0].kind, "accel device (driver foo_npu)");
  EXPECT_EQ(npus[0].module, "foo_npu");
  EXPECT_TRUE(npus[0].module_loaded);
  EXPECT_EQ(npus[1].kind, "Qualcomm Cloud AI 100");
  EXPECT_EQ(npus[1].node, "/dev/accel/accel2");
  EXPECT_EQ(npus[1].toolchain, "Qualcomm Cloud AI SDK");
  EXPECT_EQ(npus[2].kind, "Intel Gaudi");
  EXPECT_EQ(npus[2].module, "habanalabs");
  EXPECT_EQ(npus[3].kind, "accel device");
  EXPECT_EQ(npus[3].node, "/dev/accel/accel1");
  EXPECT_FALSE(npus[3].module_loaded);
}

// Rockchip's vendor driver as /dev/rknpu, also a DRM device, on an SoC the device tree names:
// one device, all three in its evidence, loaded because the render node's driver is bound
// (BSP kernels build rknpu in, so /sys/module/rknpu is absent).
TEST(HwNpu, RockchipNodeRenderNodeAndDeviceTreeAreOneDevice) {
  FakeRoot r;
  r.write("/dev/rknpu", "");
  drm(r, "renderD128", "fb000000.gpu", "panfrost");
  drm(r, "renderD129", "fdab0000.npu", "RKNPU");
  r.write("/dev/dri/renderD128", "");
  r.write("/dev/dri/renderD129", "");
  r.write("/proc/device-tree/compatible", compatible({"radxa,rock-5b", "rockchip,rk3588"}));
  const auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_EQ(npus[0].kind, "Rockchip RKNPU");
  EXPECT_EQ(npus[0].node, "/dev/rknpu");
  EXPECT_EQ(npus[0].module, "rknpu");
  EXPECT_TRUE(npus[0].module_loaded);
  EXPECT_EQ(npus[0].toolchain, "RKNN-Toolkit2 / rknn-toolkit-lite2 (librknnrt)");
  EXPECT_TRUE(contains(npus[0].evidence, "renderD129")) << npus[0].evidence;
  EXPECT_TRUE(contains(npus[0].evidence, "rockchip,rk3588")) << npus[0].evidence;
  EXPECT_FALSE(contains(npus[0].evidence, "renderD128")) << npus[0].evidence;
}

// rknpu only as a DRM driver: the render node is the device node; /dev/rknpu alone, with no
// driver to show for it, is not loaded.
TEST(HwNpu, RockchipRenderNodeOrBareNode) {
  {
    FakeRoot r;
    drm(r, "card1", "fdab0000.npu", "RKNPU");
    drm(r, "renderD129", "fdab0000.npu", "RKNPU");
    r.write("/dev/dri/renderD129", "");
    const auto npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_EQ(npus[0].node, "/dev/dri/renderD129");  // the render node, not the card
    EXPECT_TRUE(npus[0].module_loaded);
  }
  {
    FakeRoot r;
    r.write("/dev/rknpu", "");
    auto npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_FALSE(npus[0].module_loaded);
    EXPECT_TRUE(contains(npus[0].evidence, "no loaded driver registered it")) << npus[0].evidence;
    r.mkdir("/sys/class/misc/rknpu");  // the kernel registered it: a built-in driver
    npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_TRUE(npus[0].module_loaded);
  }
}

// Only the device tree shows the NPU: the SoC has one, but no driver exposes it.
TEST(HwNpu, RockchipDeviceTreeOnly) {
  FakeRoot r;
  r.write("/sys/firmware/devicetree/base/compatible",
          compatible({"friendlyarm,nanopi-r5s", "rockchip,rk3568"}));
  auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_EQ(npus[0].kind, "Rockchip RKNPU");
  EXPECT_EQ(npus[0].node, "");
  EXPECT_EQ(npus[0].module, "rknpu");
  EXPECT_FALSE(npus[0].module_loaded);
  EXPECT_EQ(npus[0].evidence, "device tree: rockchip,rk3568");
  r.mkdir("/sys/module/rknpu");
  npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_TRUE(npus[0].module_loaded);
}

// Ascend: one entry per /dev/davinciN; davinci_manager is the control node, not a device.
TEST(HwNpu, AscendNodes) {
  FakeRoot r;
  r.write("/dev/davinci0", "");
  r.write("/dev/davinci1", "");
  r.write("/dev/davinci_manager", "");
  auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 2u);
  EXPECT_EQ(npus[0].kind, "Huawei Ascend");
  EXPECT_EQ(npus[0].node, "/dev/davinci0");
  EXPECT_EQ(npus[1].node, "/dev/davinci1");
  EXPECT_EQ(npus[0].module, "drv_davinci");
  EXPECT_FALSE(npus[0].module_loaded);
  EXPECT_EQ(npus[0].toolchain, "CANN (ascend-toolkit)");
  EXPECT_TRUE(contains(npus[0].evidence, "/dev/davinci0"));

  r.mkdir("/sys/module/drv_davinci_intf_host");  // the host driver's real module name
  npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 2u);
  EXPECT_EQ(npus[0].module, "drv_davinci_intf_host");
  EXPECT_TRUE(npus[0].module_loaded);
  EXPECT_TRUE(npus[1].module_loaded);
}

// The other case: only the control node is there (bind-mounted into a container, or
// left by an installer) and no driver is loaded or registered it.
TEST(HwNpu, NodePresentModuleNotLoaded) {
  FakeRoot r;
  r.write("/dev/davinci_manager", "");
  const auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_EQ(npus[0].kind, "Huawei Ascend");
  EXPECT_EQ(npus[0].node, "/dev/davinci_manager");
  EXPECT_FALSE(npus[0].module_loaded);
  EXPECT_TRUE(contains(npus[0].evidence, "no loaded driver registered it")) << npus[0].evidence;
}

// Hailo with a built-in driver (the kernel registered the node, no /sys/module entry), Coral
// with its module, the Hexagon DSPs as one entry on the compute DSP.
TEST(HwNpu, HailoCoralHexagon) {
  FakeRoot r;
  r.write("/dev/hailo0", "");
  r.mkdir("/sys/class/hailo_chardev/hailo0");
  r.write("/dev/apex_0", "");
  r.mkdir("/sys/module/apex");
  r.write("/dev/fastrpc-adsp", "");
  r.write("/dev/fastrpc-cdsp", "");
  const auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 3u);
  EXPECT_EQ(npus[0].kind, "Google Coral Edge TPU");  // /dev is read in sorted order
  EXPECT_EQ(npus[0].node, "/dev/apex_0");
  EXPECT_EQ(npus[0].module, "apex");
  EXPECT_TRUE(npus[0].module_loaded);
  EXPECT_EQ(npus[0].toolchain, "libedgetpu + TensorFlow Lite");
  EXPECT_EQ(npus[1].kind, "Hailo");
  EXPECT_EQ(npus[1].module, "hailo_pci");
  EXPECT_TRUE(npus[1].module_loaded);
  EXPECT_EQ(npus[1].toolchain, "HailoRT");
  EXPECT_EQ(npus[2].kind, "Qualcomm Hexagon");
  EXPECT_EQ(npus[2].node, "/dev/fastrpc-cdsp");
  EXPECT_TRUE(contains(npus[2].evidence, "/dev/fastrpc-adsp"));
  EXPECT_EQ(npus[2].module, "fastrpc");
  EXPECT_FALSE(npus[2].module_loaded);
  EXPECT_EQ(npus[2].toolchain, "Qualcomm QNN / SNPE");
}

// A Hailo-8 on PCI: with its driver bound the node is the entry (one, not two); unbound, the
// PCI function is reported with the module not loaded.
TEST(HwNpu, HailoPci) {
  {
    FakeRoot r;
    pci(r, "0000:01:00.0", "0x1e60", "0x2864", "0x120000", "hailo_pci");
    r.write("/dev/hailo0", "");
    r.mkdir("/sys/module/hailo_pci");
    const auto npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_EQ(npus[0].node, "/dev/hailo0");
  }
  {
    FakeRoot r;
    pci(r, "0000:01:00.0", "0x1e60", "0x2864", "0x120000");
    const auto npus = probe_npus(r.fs());
    ASSERT_EQ(npus.size(), 1u);
    EXPECT_EQ(npus[0].kind, "Hailo");
    EXPECT_EQ(npus[0].node, "");
    EXPECT_FALSE(npus[0].module_loaded);
    EXPECT_EQ(npus[0].evidence, "PCI 0000:01:00.0 [1e60:2864], no driver bound");
  }
}

// Coral USB needs no kernel module (libusb); Gaudi through its pre-accel /dev/hlN node.
TEST(HwNpu, CoralUsbAndGaudiNode) {
  FakeRoot r;
  r.write("/sys/bus/usb/devices/2-1/idVendor", "18d1\n");
  r.write("/sys/bus/usb/devices/2-1/idProduct", "9302\n");
  r.write("/sys/bus/usb/devices/1-1/idVendor", "046d\n");  // a keyboard
  r.write("/sys/bus/usb/devices/1-1/idProduct", "c31c\n");
  r.write("/dev/hl0", "");
  r.mkdir("/sys/module/habanalabs");
  const auto npus = probe_npus(r.fs());
  ASSERT_EQ(npus.size(), 2u);
  EXPECT_EQ(npus[0].kind, "Intel Gaudi");
  EXPECT_EQ(npus[0].node, "/dev/hl0");
  EXPECT_TRUE(npus[0].module_loaded);
  EXPECT_EQ(npus[1].kind, "Google Coral Edge TPU (USB)");
  EXPECT_EQ(npus[1].module, "");
  EXPECT_TRUE(npus[1].module_loaded);
  EXPECT_EQ(npus[1].evidence, "USB 2-1 [18d1:9302]");
}

// The real machine may or may not have an NPU; whatever is found must say what and why.
TEST(HwNpu, RealSystem) {
  const auto npus = probe_npus(system_files());
  EXPECT_LE(npus.size(), 64u);
  for (const auto& n : npus) {
    EXPECT_FALSE(n.kind.empty());
    EXPECT_FALSE(n.evidence.empty());
  }
}

}  // namespace
}  // namespace polyinfer::hw
