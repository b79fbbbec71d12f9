// The Vulkan probe: the loader (libvulkan.so.1) opened through the LibraryLoader, one instance,
// and what each physical device reports. Only vkGetInstanceProcAddr is taken from the library;
// every other function comes through it, as the loader is meant to be used (and so a fake library
// can serve everything from that one symbol).
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hw/report.h"

namespace polyinfer::hw {
namespace {

constexpr uint32_t kMaxDevices = 64;
constexpr uint32_t kMaxExtensions = 4096;

std::string result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
    default: return "VkResult";
  }
}

std::string failed(const char* what, VkResult r) {
  return std::string(what) + " failed: " + result_name(r) + " (" + std::to_string(r) + ")";
}

// Vulkan's packed version (variant bits dropped): "1.3.230".
std::string api_version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

// driverVersion is vendor-defined. NVIDIA packs 10.8.8.6 bits ("580.95.5.0"); Intel's Windows
// driver packs 18.14 bits ("101.4953"), while Mesa on Linux (Intel included) uses the standard
// VK_MAKE_VERSION 10.10.12 packing, which every other vendor uses too.
std::string driver_version_string(uint32_t vendor, uint32_t v) {
  auto s = [](uint32_t x) { return std::to_string(x); };
  if (vendor == 0x10DE)
    return s((v >> 22) & 0x3ff) + "." + s((v >> 14) & 0xff) + "." + s((v >> 6) & 0xff) + "." +
           s(v & 0x3f);
#ifdef _WIN32
  if (vendor == 0x8086) return s(v >> 14) + "." + s(v & 0x3fff);
#endif
  return s(v >> 22) + "." + s((v >> 12) & 0x3ff) + "." + s(v & 0xfff);
}

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// A fixed-size char array from the driver, which need not be terminated.
template <size_t N> std::string fixed_string(const char (&a)[N]) {
  return std::string(a, strnlen(a, N));
}

// Extension names from a two-call enumeration, the count bounded.
template <class Enumerate> std::vector<std::string> extension_names(Enumerate enumerate) {
  uint32_t n = 0;
  if (enumerate(&n, nullptr) != VK_SUCCESS) return {};
  n = std::min(n, kMaxExtensions);
  std::vector<VkExtensionProperties> props(n);
  const VkResult r = enumerate(&n, props.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return {};
  std::vector<std::string> names;
  for (uint32_t i = 0; i < std::min<uint32_t>(n, props.size()); ++i)
    names.push_back(fixed_string(props[i].extensionName));
  return names;
}

bool contains(const std::vector<std::string>& v, const char* s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The instance-level functions the probe uses, looked up through vkGetInstanceProcAddr.
struct InstanceFns {
  PFN_vkDestroyInstance destroy = nullptr;
  PFN_vkEnumeratePhysicalDevices enumerate_devices = nullptr;
  PFN_vkGetPhysicalDeviceProperties properties = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties memory = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties device_extensions = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 properties2 = nullptr;  // Vulkan 1.1
  PFN_vkGetPhysicalDeviceFeatures2 features2 = nullptr;      // Vulkan 1.1
};

VulkanDevice describe(const InstanceFns& f, uint32_t instance_api, VkPhysicalDevice pd) {
  VulkanDevice d;
  VkPhysicalDeviceProperties p{};
  f.properties(pd, &p);
  d.name = fixed_string(p.deviceName);
  d.type = type_name(p.deviceType);
  d.api_version = api_version_string(p.apiVersion);
  d.vendor_id = p.vendorID;
  d.device_id = p.deviceID;
  d.driver_version = driver_version_string(p.vendorID, p.driverVersion);

  if (f.memory) {
    VkPhysicalDeviceMemoryProperties m{};
    f.memory(pd, &m);
    const uint32_t heaps = std::min<uint32_t>(m.memoryHeapCount, VK_MAX_MEMORY_HEAPS);
    for (uint32_t i = 0; i < heaps; ++i)
      d.heaps.push_back({static_cast<int64_t>(m.memoryHeaps[i].size),
                         (m.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});
  }

  // The *2 queries are core in 1.1, usable when both the instance and the device speak 1.1.
  const uint32_t api = std::min(VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(p.apiVersion),
                                                    VK_API_VERSION_MINOR(p.apiVersion), 0),
                                instance_api);
  if (api < VK_API_VERSION_1_1) return d;
  if (f.properties2) {
    VkPhysicalDeviceDriverProperties driver{};
    driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    VkPhysicalDeviceSubgroupProperties subgroup{};
    subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    if (api >= VK_API_VERSION_1_2) subgroup.pNext = &driver;  // driver properties: core in 1.2
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &subgroup;
    f.properties2(pd, &p2);
    if (subgroup.subgroupSize > 0 && subgroup.subgroupSize <= 1024)
      d.subgroup_size = static_cast<int>(subgroup.subgroupSize);
    if (api >= VK_API_VERSION_1_2) d.driver_name = fixed_string(driver.driverName);
  }
  // shaderFloat16/shaderInt8: core in 1.2, else VK_KHR_shader_float16_int8.
  bool f16i8 = api >= VK_API_VERSION_1_2;
  if (!f16i8 && f.device_extensions)
    f16i8 = contains(extension_names([&](uint32_t* n, VkExtensionProperties* e) {
                       return f.device_extensions(pd, nullptr, n, e);
                     }),
                     VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  if (f16i8 && f.features2) {
    VkPhysicalDeviceShaderFloat16Int8Features fi{};
    fi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &fi;
    f.features2(pd, &f2);
    d.fp16 = fi.shaderFloat16 == VK_TRUE;
    d.int8 = fi.shaderInt8 == VK_TRUE;
  }
  return d;
}

}  // namespace

VulkanInfo probe_vulkan(const LibraryLoader& libs) {
  VulkanInfo info;
  std::string why;
  auto lib = libs.open({"libvulkan.so.1", "libvulkan.so"}, &why);
  if (!lib) {
    info.error = why;
    return info;
  }
  info.loader_found = true;
  auto gipa = lib->fn<PFN_vkGetInstanceProcAddr>("vkGetInstanceProcAddr");
  if (!gipa) {
    info.error = "the Vulkan loader " + lib->path() + " does not export vkGetInstanceProcAddr";
    return info;
  }
  auto global = [&](const char* name) { return gipa(VK_NULL_HANDLE, name); };

  // vkEnumerateInstanceVersion is 1.1; a 1.0 loader lacks it.
  uint32_t version = VK_API_VERSION_1_0;
  if (auto ev =
          reinterpret_cast<PFN_vkEnumerateInstanceVersion>(global("vkEnumerateInstanceVersion"))) {
    uint32_t v = 0;
    if (ev(&v) == VK_SUCCESS && v != 0) version = v;
  }
  info.instance_version = api_version_string(version);

  auto create = reinterpret_cast<PFN_vkCreateInstance>(global("vkCreateInstance"));
  if (!create) {
    info.error = "the Vulkan loader has no vkCreateInstance";
    return info;
  }
  std::vector<std::string> extensions;
  if (auto ee = reinterpret_cast<PFN_vkEnumerateInstanceExtensionProperties>(
          global("vkEnumerateInstanceExtensionProperties")))
    extensions =
        extension_names([&](uint32_t* n, VkExtensionProperties* e) { return ee(nullptr, n, e); });

  const uint32_t api = std::min(
      VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version), 0),
      VK_API_VERSION_1_3);
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "polyinfer doctor";
  app.pEngineName = "polyinfer";
  app.apiVersion = api;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  // MoltenVK (macOS) devices are listed only to instances that ask for portability devices.
  const char* portability = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
  if (contains(extensions, portability)) {
    ci.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = &portability;
  }
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = create(&ci, nullptr, &instance);
  if (r != VK_SUCCESS || instance == VK_NULL_HANDLE) {
    info.error = failed("vkCreateInstance", r);
    return info;
  }

  InstanceFns f;
  auto get = [&](const char* name) { return gipa(instance, name); };
  f.destroy = reinterpret_cast<PFN_vkDestroyInstance>(get("vkDestroyInstance"));
  f.enumerate_devices =
      reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(get("vkEnumeratePhysicalDevices"));
  f.properties =
      reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(get("vkGetPhysicalDeviceProperties"));
  f.memory = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
      get("vkGetPhysicalDeviceMemoryProperties"));
  f.device_extensions = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
      get("vkEnumerateDeviceExtensionProperties"));
  if (api >= VK_API_VERSION_1_1) {
    f.properties2 =
        reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(get("vkGetPhysicalDeviceProperties2"));
    f.features2 =
        reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(get("vkGetPhysicalDeviceFeatures2"));
  }

  if (!f.enumerate_devices || !f.properties) {
    info.error =
        "the Vulkan loader has no vkEnumeratePhysicalDevices/vkGetPhysicalDeviceProperties";
  } else {
    uint32_t n = 0;
    VkResult er = f.enumerate_devices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> devices;
    if (er == VK_SUCCESS) {
      n = std::min(n, kMaxDevices);
      devices.resize(n);
      er = f.enumerate_devices(instance, &n, devices.data());
      if (er == VK_INCOMPLETE) er = VK_SUCCESS;  // more than we bound ourselves to
      devices.resize(std::min<size_t>(n, devices.size()));
    }
    if (er != VK_SUCCESS) {
      info.error = failed("vkEnumeratePhysicalDevices", er);
    } else {
      for (VkPhysicalDevice pd : devices)
        if (pd != VK_NULL_HANDLE) info.devices.push_back(describe(f, api, pd));
    }
  }
  libs.pin_loaded();  // the drivers the enumeration opened outlive the instance
  if (f.destroy) f.destroy(instance, nullptr);
  return info;
}

}  // namespace polyinfer::hw
