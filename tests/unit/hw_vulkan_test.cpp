// The Vulkan probe on a faked loader (a libvulkan exporting only vkGetInstanceProcAddr, which
// hands out the fake functions below) and on this machine's real one.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "hw/report.h"
#include "hw_fake.h"

namespace polyinfer::hw {
namespace {

using testing::FakeLoader;
using testing::sym;

// One fake physical device: what the driver reports, and what the probe asked of it.
struct FakeDevice {
  VkPhysicalDeviceProperties props{};
  std::vector<VkMemoryHeap> heaps;
  uint32_t subgroup_size = 0;
  const char* driver_name = "";
  bool fp16 = false, int8 = false;
  std::vector<const char*> extensions;
  int properties2_calls = 0;
  int features2_calls = 0;
};

// The fake loader's state; the fake functions are plain C-style functions, so they read it here.
struct FakeVulkan {
  uint32_t instance_version = 0;  // 0: the loader lacks vkEnumerateInstanceVersion (1.0)
  VkResult create_result = VK_SUCCESS;
  std::vector<const char*> instance_extensions;
  std::vector<FakeDevice> devices;
  uint32_t reported_device_count = 0;  // what vkEnumeratePhysicalDevices claims; 0: devices.size()
  // Recorded.
  uint32_t requested_api = 0;
  VkInstanceCreateFlags create_flags = 0;
  std::vector<std::string> enabled_extensions;
  int destroyed = 0;
};
FakeVulkan* g = nullptr;
int instance_object;  // its address is the fake VkInstance

VkInstance fake_instance() { return reinterpret_cast<VkInstance>(&instance_object); }
// Device i's handle is the address of its FakeDevice (a dispatchable handle is a pointer).
FakeDevice& device_of(VkPhysicalDevice pd) { return *reinterpret_cast<FakeDevice*>(pd); }

VKAPI_ATTR VkResult VKAPI_CALL enumerate_instance_version(uint32_t* v) {
  *v = g->instance_version;
  return VK_SUCCESS;
}

VkResult copy_extensions(const std::vector<const char*>& names, uint32_t* n,
                         VkExtensionProperties* out) {
  if (!out) {
    *n = static_cast<uint32_t>(names.size());
    return VK_SUCCESS;
  }
  const uint32_t k = std::min<uint32_t>(*n, static_cast<uint32_t>(names.size()));
  for (uint32_t i = 0; i < k; ++i) {
    out[i] = {};
    std::strncpy(out[i].extensionName, names[i], VK_MAX_EXTENSION_NAME_SIZE - 1);
    out[i].specVersion = 1;
  }
  *n = k;
  return k < names.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL enumerate_instance_extensions(const char* layer, uint32_t* n,
                                                             VkExtensionProperties* out) {
  if (layer) return VK_ERROR_LAYER_NOT_PRESENT;
  return copy_extensions(g->instance_extensions, n, out);
}

VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo* ci,
                                               const VkAllocationCallbacks*, VkInstance* out) {
  g->requested_api = ci->pApplicationInfo ? ci->pApplicationInfo->apiVersion : 0;
  g->create_flags = ci->flags;
  for (uint32_t i = 0; i < ci->enabledExtensionCount; ++i)
    g->enabled_extensions.push_back(ci->ppEnabledExtensionNames[i]);
  if (g->create_result != VK_SUCCESS) return g->create_result;
  *out = fake_instance();
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroy_instance(VkInstance i, const VkAllocationCallbacks*) {
  if (i == fake_instance()) ++g->destroyed;
}

VKAPI_ATTR VkResult VKAPI_CALL enumerate_devices(VkInstance, uint32_t* n, VkPhysicalDevice* out) {
  const uint32_t total = g->reported_device_count ? g->reported_device_count
                                                  : static_cast<uint32_t>(g->devices.size());
  if (!out) {
    *n = total;
    return VK_SUCCESS;
  }
  const uint32_t k = std::min(*n, total);
  // Beyond the described devices, the same last device is handed out again (the bound test).
  for (uint32_t i = 0; i < k; ++i)
    out[i] =
        reinterpret_cast<VkPhysicalDevice>(&g->devices[std::min<size_t>(i, g->devices.size() - 1)]);
  *n = k;
  return k < total ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL get_properties(VkPhysicalDevice pd, VkPhysicalDeviceProperties* p) {
  *p = device_of(pd).props;
}

VKAPI_ATTR void VKAPI_CALL get_memory(VkPhysicalDevice pd, VkPhysicalDeviceMemoryProperties* m) {
  *m = {};
  const auto& heaps = device_of(pd).heaps;
  m->memoryHeapCount = static_cast<uint32_t>(heaps.size());
  for (size_t i = 0; i < heaps.size(); ++i) m->memoryHeaps[i] = heaps[i];
}

VKAPI_ATTR VkResult VKAPI_CALL enumerate_device_extensions(VkPhysicalDevice pd, const char*,
                                                           uint32_t* n,
                                                           VkExtensionProperties* out) {
  return copy_extensions(device_of(pd).extensions, n, out);
}

// Walks the pNext chain as a driver does, filling the structures it knows.
VKAPI_ATTR void VKAPI_CALL get_properties2(VkPhysicalDevice pd, VkPhysicalDeviceProperties2* p2) {
  FakeDevice& d = device_of(pd);
  ++d.properties2_calls;
  p2->properties = d.props;
  for (auto* s = static_cast<VkBaseOutStructure*>(p2->pNext); s; s = s->pNext) {
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES)
      reinterpret_cast<VkPhysicalDeviceSubgroupProperties*>(s)->subgroupSize = d.subgroup_size;
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES)
      std::strncpy(reinterpret_cast<VkPhysicalDeviceDriverProperties*>(s)->driverName,
                   d.driver_name, VK_MAX_DRIVER_NAME_SIZE - 1);
  }
}

VKAPI_ATTR void VKAPI_CALL get_features2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2* f2) {
  FakeDevice& d = device_of(pd);
  ++d.features2_calls;
  for (auto* s = static_cast<VkBaseOutStructure*>(f2->pNext); s; s = s->pNext)
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES) {
      auto* f = reinterpret_cast<VkPhysicalDeviceShaderFloat16Int8Features*>(s);
      f->shaderFloat16 = d.fp16 ? VK_TRUE : VK_FALSE;
      f->shaderInt8 = d.int8 ? VK_TRUE : VK_FALSE;
    }
}

// Global functions for a null instance, instance functions for ours — as the real loader does.
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance i, const char* name) {
  auto fn = [](auto* f) { return reinterpret_cast<PFN_vkVoidFunction>(f); };
  const std::string n = name;
  if (i == VK_NULL_HANDLE) {
    if (n == "vkEnumerateInstanceVersion")
      return g->instance_version ? fn(enumerate_instance_version) : nullptr;
    if (n == "vkEnumerateInstanceExtensionProperties") return fn(enumerate_instance_extensions);
    if (n == "vkCreateInstance") return fn(create_instance);
    return nullptr;
  }
  if (i != fake_instance()) return nullptr;
  if (n == "vkDestroyInstance") return fn(destroy_instance);
  if (n == "vkEnumeratePhysicalDevices") return fn(enumerate_devices);
  if (n == "vkGetPhysicalDeviceProperties") return fn(get_properties);
  if (n == "vkGetPhysicalDeviceMemoryProperties") return fn(get_memory);
  if (n == "vkEnumerateDeviceExtensionProperties") return fn(enumerate_device_extensions);
  if (n == "vkGetPhysicalDeviceProperties2") return fn(get_properties2);
  if (n == "vkGetPhysicalDeviceFeatures2") return fn(get_features2);
  return nullptr;
}

FakeDevice make_device(const char* name, VkPhysicalDeviceType type, uint32_t api, uint32_t vendor,
                       uint32_t device, uint32_t driver) {
  FakeDevice d;
  std::strncpy(d.props.deviceName, name, VK_MAX_PHYSICAL_DEVICE_NAME_SIZE - 1);
  d.props.deviceType = type;
  d.props.apiVersion = api;
  d.props.vendorID = vendor;
  d.props.deviceID = device;
  d.props.driverVersion = driver;
  return d;
}

// NVIDIA's 10.8.8.6-bit driver version packing.
constexpr uint32_t nvidia_version(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 22) | (b << 14) | (c << 6) | d;
}

FakeDevice nvidia_gpu() {
  FakeDevice d =
      make_device("NVIDIA GeForce RTX 4090", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                  VK_MAKE_API_VERSION(0, 1, 3, 277), 0x10DE, 0x2684, nvidia_version(580, 95, 5, 0));
  d.heaps = {{24ull << 30, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT}, {64ull << 30, 0}};
  d.subgroup_size = 32;
  d.driver_name = "NVIDIA";
  d.fp16 = d.int8 = true;
  return d;
}

// llvmpipe as an old Mesa reports it: a CPU device speaking Vulkan 1.0.
FakeDevice llvmpipe_10() {
  FakeDevice d =
      make_device("llvmpipe (LLVM 15.0.6, 256 bits)", VK_PHYSICAL_DEVICE_TYPE_CPU,
                  VK_MAKE_API_VERSION(0, 1, 0, 2), 0x10005, 0, VK_MAKE_VERSION(22, 3, 6));
  d.heaps = {{2ull << 30, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT}};
  d.subgroup_size = 8;  // would be reported if the probe (wrongly) asked
  d.fp16 = d.int8 = true;
  return d;
}

class HwVulkanFake : public ::testing::Test {
 protected:
  void SetUp() override {
    g = &state;
    state.instance_version = VK_MAKE_API_VERSION(0, 1, 3, 250);
    loader.add("libvulkan.so.1", {{"vkGetInstanceProcAddr", sym(get_instance_proc_addr)}});
  }
  void TearDown() override { g = nullptr; }
  FakeVulkan state;
  FakeLoader loader;
};

TEST_F(HwVulkanFake, DiscreteNvidiaAndCpuDevice) {
  state.devices = {nvidia_gpu(), llvmpipe_10()};
  const VulkanInfo info = probe_vulkan(loader);
  EXPECT_TRUE(info.loader_found);
  EXPECT_EQ(info.error, "");
  EXPECT_EQ(info.instance_version, "1.3.250");
  // Asks for at most 1.3, without the patch level.
  EXPECT_EQ(state.requested_api, VK_API_VERSION_1_3);
  EXPECT_EQ(state.destroyed, 1);
  ASSERT_EQ(info.devices.size(), 2u);

  const VulkanDevice& gpu = info.devices[0];
  EXPECT_EQ(gpu.name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(gpu.type, "discrete");
  EXPECT_EQ(gpu.api_version, "1.3.277");
  EXPECT_EQ(gpu.driver_version, "580.95.5.0");
  EXPECT_EQ(gpu.driver_name, "NVIDIA");
  EXPECT_EQ(gpu.vendor_id, 0x10DEu);
  EXPECT_EQ(gpu.device_id, 0x2684u);
  ASSERT_EQ(gpu.heaps.size(), 2u);
  EXPECT_EQ(gpu.heaps[0].size_bytes, int64_t{24} << 30);
  EXPECT_TRUE(gpu.heaps[0].device_local);
  EXPECT_EQ(gpu.heaps[1].size_bytes, int64_t{64} << 30);
  EXPECT_FALSE(gpu.heaps[1].device_local);
  EXPECT_EQ(gpu.subgroup_size, 32);
  EXPECT_TRUE(gpu.fp16);
  EXPECT_TRUE(gpu.int8);

  const VulkanDevice& cpu = info.devices[1];
  EXPECT_EQ(cpu.name, "llvmpipe (LLVM 15.0.6, 256 bits)");
  EXPECT_EQ(cpu.type, "cpu");
  EXPECT_EQ(cpu.api_version, "1.0.2");
  EXPECT_EQ(cpu.driver_version, "22.3.6");  // the standard packing, not NVIDIA's
  ASSERT_EQ(cpu.heaps.size(), 1u);
  EXPECT_TRUE(cpu.heaps[0].device_local);
  // A 1.0 device: the *2 queries are not its to answer, so these stay unknown.
  EXPECT_EQ(state.devices[1].properties2_calls, 0);
  EXPECT_EQ(state.devices[1].features2_calls, 0);
  EXPECT_EQ(cpu.subgroup_size, -1);
  EXPECT_EQ(cpu.driver_name, "");
  EXPECT_FALSE(cpu.fp16);
  EXPECT_FALSE(cpu.int8);
}

TEST_F(HwVulkanFake, DeviceTypesNamed) {
  state.devices = {
      make_device("a", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, VK_API_VERSION_1_0, 0x8086, 1, 0),
      make_device("b", VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, VK_API_VERSION_1_0, 0x1AF4, 2, 0),
      make_device("c", VK_PHYSICAL_DEVICE_TYPE_OTHER, VK_API_VERSION_1_0, 0x1002, 3, 0)};
  const VulkanInfo info = probe_vulkan(loader);
  ASSERT_EQ(info.devices.size(), 3u);
  EXPECT_EQ(info.devices[0].type, "integrated");
  EXPECT_EQ(info.devices[1].type, "virtual");
  EXPECT_EQ(info.devices[2].type, "other");
}

TEST_F(HwVulkanFake, IntelDriverVersionOnLinuxIsStandard) {
  state.devices = {make_device("Intel(R) UHD Graphics 770 (ADL-S GT1)",
                               VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, VK_API_VERSION_1_3, 0x8086,
                               0x4680, VK_MAKE_VERSION(23, 2, 1))};
  const VulkanInfo info = probe_vulkan(loader);
  ASSERT_EQ(info.devices.size(), 1u);
#ifdef _WIN32
  EXPECT_EQ(info.devices[0].driver_version, std::to_string(VK_MAKE_VERSION(23, 2, 1) >> 14) + "." +
                                                std::to_string(VK_MAKE_VERSION(23, 2, 1) & 0x3fff));
#else
  EXPECT_EQ(info.devices[0].driver_version, "23.2.1");  // Mesa's ANV packs it the standard way
#endif
}

TEST_F(HwVulkanFake, LoaderAbsent) {
  FakeLoader none;
  const VulkanInfo info = probe_vulkan(none);
  EXPECT_FALSE(info.loader_found);
  EXPECT_EQ(info.error,
            "libvulkan.so.1: cannot open shared object file: No such file or directory");
  EXPECT_TRUE(info.devices.empty());
}

TEST_F(HwVulkanFake, LoaderWithoutGetInstanceProcAddr) {
  FakeLoader broken;
  broken.add("libvulkan.so.1", {});
  const VulkanInfo info = probe_vulkan(broken);
  EXPECT_TRUE(info.loader_found);
  EXPECT_NE(info.error.find("vkGetInstanceProcAddr"), std::string::npos) << info.error;
}

TEST_F(HwVulkanFake, CreateInstanceFailsWithCodeName) {
  // What a loader with no driver (ICD) answers.
  state.create_result = VK_ERROR_INCOMPATIBLE_DRIVER;
  const VulkanInfo info = probe_vulkan(loader);
  EXPECT_TRUE(info.loader_found);
  EXPECT_EQ(info.error, "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER (-9)");
  EXPECT_EQ(info.instance_version, "1.3.250");
  EXPECT_TRUE(info.devices.empty());
  EXPECT_EQ(state.destroyed, 0);
}

TEST_F(HwVulkanFake, ZeroDevices) {
  const VulkanInfo info = probe_vulkan(loader);
  EXPECT_TRUE(info.loader_found);
  EXPECT_EQ(info.error, "");
  EXPECT_TRUE(info.devices.empty());
  EXPECT_EQ(state.destroyed, 1);
}

TEST_F(HwVulkanFake, OldLoaderIsVulkan10) {
  // No vkEnumerateInstanceVersion: a 1.0 loader. Even a 1.3 device is then asked nothing of 1.1.
  state.instance_version = 0;
  state.devices = {nvidia_gpu()};
  const VulkanInfo info = probe_vulkan(loader);
  EXPECT_EQ(info.instance_version, "1.0.0");
  EXPECT_EQ(state.requested_api, VK_API_VERSION_1_0);
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(state.devices[0].properties2_calls, 0);
  EXPECT_EQ(info.devices[0].subgroup_size, -1);
}

TEST_F(HwVulkanFake, ApiCappedAt13) {
  state.instance_version = VK_MAKE_API_VERSION(0, 1, 4, 309);
  const VulkanInfo info = probe_vulkan(loader);
  EXPECT_EQ(info.instance_version, "1.4.309");
  EXPECT_EQ(state.requested_api, VK_API_VERSION_1_3);
}

TEST_F(HwVulkanFake, PortabilityEnumerationWhenOffered) {
  state.instance_extensions = {"VK_KHR_surface", VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME};
  probe_vulkan(loader);
  EXPECT_TRUE(state.create_flags & VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR);
  EXPECT_EQ(state.enabled_extensions,
            std::vector<std::string>{VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME});
}

TEST_F(HwVulkanFake, NoPortabilityWhenNotOffered) {
  state.instance_extensions = {"VK_KHR_surface"};
  probe_vulkan(loader);
  EXPECT_EQ(state.create_flags, 0u);
  EXPECT_TRUE(state.enabled_extensions.empty());
}

TEST_F(HwVulkanFake, Vulkan11DeviceFp16Int8ThroughExtension) {
  FakeDevice with = make_device("with", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
                                VK_MAKE_API_VERSION(0, 1, 1, 0), 0x1002, 1, 0);
  with.extensions = {"VK_KHR_16bit_storage", VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME};
  with.fp16 = true;
  with.subgroup_size = 64;
  with.driver_name = "must not be read on 1.1";
  FakeDevice without = with;
  without.extensions = {"VK_KHR_16bit_storage"};
  state.devices = {with, without};
  const VulkanInfo info = probe_vulkan(loader);
  ASSERT_EQ(info.devices.size(), 2u);
  EXPECT_EQ(info.devices[0].subgroup_size, 64);
  EXPECT_EQ(info.devices[0].driver_name, "");  // driver properties are 1.2
  EXPECT_TRUE(info.devices[0].fp16);
  EXPECT_FALSE(info.devices[0].int8);
  EXPECT_EQ(info.devices[1].subgroup_size, 64);
  EXPECT_EQ(state.devices[1].features2_calls, 0);  // not offered: not asked
  EXPECT_FALSE(info.devices[1].fp16);
}

TEST_F(HwVulkanFake, DeviceCountBounded) {
  state.devices = {nvidia_gpu()};
  state.reported_device_count = 100000;
  const VulkanInfo info = probe_vulkan(loader);
  EXPECT_EQ(info.error, "");
  EXPECT_EQ(info.devices.size(), 64u);
}

TEST_F(HwVulkanFake, UnterminatedNameIsBounded) {
  FakeDevice d = nvidia_gpu();
  std::memset(d.props.deviceName, 'x', VK_MAX_PHYSICAL_DEVICE_NAME_SIZE);
  state.devices = {d};
  const VulkanInfo info = probe_vulkan(loader);
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(info.devices[0].name, std::string(VK_MAX_PHYSICAL_DEVICE_NAME_SIZE, 'x'));
}

// This machine's real loader: whatever it finds, the report must be well formed. What it found is
// printed, so the test log shows the driver CI ran on (llvmpipe on the project's machines).
TEST(HwVulkan, RealSystem) {
  const VulkanInfo info = probe_vulkan(system_loader());
  std::cout << "[ vulkan  ] loader_found=" << info.loader_found
            << " instance=" << info.instance_version << " error='" << info.error
            << "' devices=" << info.devices.size() << "\n";
  for (const auto& d : info.devices) {
    std::cout << "[ vulkan  ]   " << d.name << " type=" << d.type << " api=" << d.api_version
              << " driver=" << d.driver_name << " " << d.driver_version
              << " subgroup=" << d.subgroup_size << " fp16=" << d.fp16 << " int8=" << d.int8
              << " heaps=" << d.heaps.size() << "\n";
  }
  ::testing::Test::RecordProperty("vulkan_devices", static_cast<int>(info.devices.size()));
  if (!info.loader_found) {
    EXPECT_FALSE(info.error.empty());
    EXPECT_TRUE(info.devices.empty());
    return;
  }
  if (!info.error.empty()) return;
  EXPECT_FALSE(info.instance_version.empty());
  EXPECT_LE(info.devices.size(), 64u);
  for (const auto& d : info.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_TRUE(d.type == "discrete" || d.type == "integrated" || d.type == "virtual" ||
                d.type == "cpu" || d.type == "other")
        << d.type;
    EXPECT_FALSE(d.api_version.empty());
    EXPECT_TRUE(d.subgroup_size == -1 || d.subgroup_size >= 1) << d.subgroup_size;
  }
}

}  // namespace
}  // namespace polyinfer::hw
