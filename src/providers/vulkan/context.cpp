#include "providers/vulkan/context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/device_registry.h"
#include "hw/report.h"
#include "providers/vulkan/shaders.h"

namespace polyinfer::vulkan {

void check(VkResult r, const char* what) {
  PI_CHECK(r == VK_SUCCESS, Internal, "Vulkan: ", what, " failed (VkResult ", static_cast<int>(r),
           ")");
}

namespace {

constexpr uint32_t kSetsPerPool = 1024;  // dispatches per flush before the pool is recycled
constexpr uint32_t kMaxBindings = 8;

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

class VulkanAllocator final : public Allocator {
 public:
  explicit VulkanAllocator(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  Device device() const override { return ctx_->device(); }
  void* allocate(size_t bytes) override { return ctx_->allocate(bytes); }
  void deallocate(void* ptr, size_t) override { ctx_->deallocate(ptr); }

 private:
  std::shared_ptr<Context> ctx_;
};

// The registered copies (Tensor::to, clone, the executor's border copies): the context's.
void copy_to_device(const void* host_src, void* device_dst, size_t bytes) {
  Context::get()->upload(host_src, device_dst, bytes);
}
void copy_to_host(const void* device_src, void* host_dst, size_t bytes) {
  Context::get()->download(device_src, host_dst, bytes);
}
void copy_on_device(const void* device_src, void* device_dst, size_t bytes) {
  Context::get()->copy(device_src, device_dst, bytes);
}

// The process's one context and its allocator, made on first use, for the device asked for
// first. The Vulkan stack is probed once (doctor's check; its device list is the enumeration
// that vulkan:N counts in). The holder unregisters the device before dropping the context, so the
// context is destroyed here (at exit, before the driver's own exit handlers, which were
// registered while the context was being made) and not later from the device registry.
struct Holder {
  std::mutex mu;
  bool probed = false;
  hw::VulkanInfo info;
  hw::StackCheck stack;
  std::shared_ptr<Context> ctx;
  std::shared_ptr<Allocator> alloc;
  std::string auto_error;  // why the automatic choice failed to start (it would fail again)
  void release() {
    if (ctx) unregister_device(ctx->device());
    alloc.reset();
    ctx.reset();
  }
  ~Holder() { release(); }
};

}  // namespace

// The one place that constructs a Context (a friend of it).
struct ContextFactory {
  static std::shared_ptr<Context> make(int index) {
    return std::shared_ptr<Context>(new Context(index));
  }
};

namespace {

Holder& holder() {
  static Holder h;
  return h;
}

void probe_locked(Holder& h) {
  if (h.probed) return;
  h.info = hw::probe_vulkan(hw::system_loader());
  h.stack = hw::check_vulkan_stack(h.info);
  h.probed = true;
}

// "vulkan:0 llvmpipe (LLVM 15.0.6, 256 bits) (cpu); vulkan:1 ...": the devices vulkan:N counts.
std::string listing_locked(const Holder& h) {
  std::string out;
  for (size_t i = 0; i < h.info.devices.size(); ++i)
    out += (i ? "; vulkan:" : "vulkan:") + std::to_string(i) + " " + h.info.devices[i].name + " (" +
           h.info.devices[i].type + ")";
  return out;
}

void check_index_locked(const Holder& h, int index) {
  PI_CHECK(index < static_cast<int>(h.info.devices.size()), InvalidArgument, "vulkan:", index,
           " names no device: the Vulkan devices here are ", listing_locked(h));
}

// The context for `index` (-1: the one already started, else the automatic choice), starting it
// on first use. One device per process: a second, different index is an error naming both.
std::shared_ptr<Context> start(int index) {
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  probe_locked(h);
  PI_CHECK(h.stack.usable, ProviderUnavailable, "vulkan is not usable here: ", h.stack.reason);
  if (h.ctx) {
    PI_CHECK(index < 0 || index == h.ctx->device().index, ProviderUnavailable, "vulkan:", index,
             " cannot start: this process already uses ", h.ctx->device().str(), " (",
             h.ctx->describe(), ") and the Vulkan provider drives one device per process");
    return h.ctx;
  }
  if (index >= 0) check_index_locked(h, index);
  PI_CHECK(index >= 0 || h.auto_error.empty(), ProviderUnavailable,
           "vulkan is not usable here: ", h.auto_error);
  try {
    auto ctx = ContextFactory::make(index);
    auto alloc = std::make_shared<VulkanAllocator>(ctx);
    register_device(ctx->device(), {alloc, &copy_to_device, &copy_to_host, &copy_on_device});
    h.ctx = std::move(ctx);
    h.alloc = std::move(alloc);
    // Exit handlers run in reverse order of registration: this one, registered after the
    // driver's own (the context's creation registers them), drops the context before they tear
    // the driver down. The holder itself was constructed before the context, so its destructor
    // alone would run too late (LeakSanitizer: llvmpipe's allocations leaked).
    std::atexit([] {
      Holder& held = holder();
      std::lock_guard<std::mutex> lock(held.mu);
      held.release();
    });
  } catch (const Error& e) {
    if (index < 0) h.auto_error = e.what();
    throw;
  }
  return h.ctx;
}

// Tensor::to(vulkan:N) before any session: start device N (which registers it).
const bool starter = [] {
  register_device_starter(DeviceKind::Vulkan, [](int index) {
    try {
      start(index);
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  });
  return true;
}();

}  // namespace

Status status(int index) {
  try {
    start(index);
    return {true, ""};
  } catch (const Error& e) {
    std::string why = e.what();
    // Drop start()'s prefix: the provider's probe reason is doctor's text itself.
    const std::string prefix = "vulkan is not usable here: ";
    if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    return {false, why};
  }
}

void check_device_index(int index) {
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  probe_locked(h);
  if (h.stack.usable) check_index_locked(h, index);
}

std::string device_listing() {
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  probe_locked(h);
  return listing_locked(h);
}

std::shared_ptr<Context> Context::get(int index) { return start(index); }

bool Context::started() {
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  return h.ctx != nullptr;
}

std::shared_ptr<Allocator> device_allocator(int index) {
  start(index);
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  return h.alloc;
}

Context::Context(int requested) {
  std::string why;
  lib_ = hw::system_loader().open({"libvulkan.so.1", "libvulkan.so"}, &why);
  PI_CHECK(lib_ != nullptr, ProviderUnavailable, "the Vulkan loader does not load: ", why);
  f_.vkGetInstanceProcAddr = lib_->fn<PFN_vkGetInstanceProcAddr>("vkGetInstanceProcAddr");
  PI_CHECK(f_.vkGetInstanceProcAddr, ProviderUnavailable, "libvulkan has no vkGetInstanceProcAddr");
#define PI_VK_LOAD(name) \
  f_.name = reinterpret_cast<PFN_##name>(f_.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
  PI_VK_GLOBAL_FNS(PI_VK_LOAD)
#undef PI_VK_LOAD
  PI_CHECK(f_.vkCreateInstance && f_.vkEnumerateInstanceVersion, ProviderUnavailable,
           "the Vulkan loader is older than Vulkan 1.1 (the shaders need 1.1)");
  uint32_t version = 0;
  check(f_.vkEnumerateInstanceVersion(&version), "vkEnumerateInstanceVersion");
  PI_CHECK(version >= VK_API_VERSION_1_1, ProviderUnavailable,
           "the Vulkan loader is older than Vulkan 1.1 (the shaders need 1.1)");

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "polyinfer";
  app.pEngineName = "polyinfer";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  const VkResult r = f_.vkCreateInstance(&ci, nullptr, &instance_);
  PI_CHECK(r == VK_SUCCESS, ProviderUnavailable, "vkCreateInstance failed (VkResult ",
           static_cast<int>(r), ")");
#define PI_VK_LOAD(name) \
  f_.name = reinterpret_cast<PFN_##name>(f_.vkGetInstanceProcAddr(instance_, #name));
  PI_VK_INSTANCE_FNS(PI_VK_LOAD)
#undef PI_VK_LOAD
  try {
    create_device(requested);
  } catch (...) {
    if (device_) f_.vkDestroyDevice(device_, nullptr);
    if (f_.vkDestroyInstance) f_.vkDestroyInstance(instance_, nullptr);
    throw;
  }
}

void Context::create_device(int requested) {
#define PI_VK_REQUIRE(name) \
  PI_CHECK(f_.name != nullptr, ProviderUnavailable, "the Vulkan loader has no " #name);
  PI_VK_INSTANCE_FNS(PI_VK_REQUIRE)
  uint32_t n = 0;
  check(f_.vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(n);
  VkResult er = f_.vkEnumeratePhysicalDevices(instance_, &n, devices.data());
  PI_CHECK(er == VK_SUCCESS || er == VK_INCOMPLETE, ProviderUnavailable,
           "vkEnumeratePhysicalDevices failed (VkResult ", static_cast<int>(er), ")");
  devices.resize(std::min<size_t>(n, devices.size()));

  // Why device i cannot be used ("" when it can): the shaders need Vulkan 1.1 and a queue
  // family with compute.
  const auto unusable = [&](size_t i, VkPhysicalDeviceProperties* p, int* family) {
    f_.vkGetPhysicalDeviceProperties(devices[i], p);
    if (p->apiVersion < VK_API_VERSION_1_1) return std::string("it supports only Vulkan 1.0");
    uint32_t qn = 0;
    f_.vkGetPhysicalDeviceQueueFamilyProperties(devices[i], &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qs(qn);
    f_.vkGetPhysicalDeviceQueueFamilyProperties(devices[i], &qn, qs.data());
    *family = -1;
    for (uint32_t q = 0; q < qn && *family < 0; ++q)
      if (qs[q].queueFlags & VK_QUEUE_COMPUTE_BIT) *family = static_cast<int>(q);
    return *family < 0 ? std::string("it has no compute queue") : std::string();
  };
  VkPhysicalDeviceProperties best_props{};
  if (requested >= 0) {
    // vulkan:N: that device or an error (the callers checked N against the enumeration).
    PI_CHECK(static_cast<size_t>(requested) < devices.size(), InvalidArgument, "vulkan:", requested,
             ": the Vulkan loader finds ", devices.size(), " device(s)");
    int family = -1;
    const std::string why = unusable(static_cast<size_t>(requested), &best_props, &family);
    PI_CHECK(why.empty(), ProviderUnavailable, "vulkan:", requested,
             " cannot run the shaders: ", why);
    physical_ = devices[static_cast<size_t>(requested)];
    queue_family_ = static_cast<uint32_t>(family);
    index_ = requested;
  } else {
    // discrete > integrated > virtual > cpu; the first of a kind wins. Only Vulkan 1.1 devices
    // with a compute queue count.
    int best = -1;
    for (size_t i = 0; i < devices.size(); ++i) {
      VkPhysicalDeviceProperties p{};
      int family = -1;
      if (!unusable(i, &p, &family).empty() || type_rank(p.deviceType) <= best) continue;
      best = type_rank(p.deviceType);
      physical_ = devices[i];
      queue_family_ = static_cast<uint32_t>(family);
      index_ = static_cast<int>(i);
      best_props = p;
    }
    PI_CHECK(physical_ != VK_NULL_HANDLE, ProviderUnavailable,
             "no Vulkan 1.1 device with a compute queue among the ", devices.size(), " found");
  }
  description_ = std::string(best_props.deviceName,
                             strnlen(best_props.deviceName, sizeof best_props.deviceName)) +
                 " (" + type_name(best_props.deviceType) + "), Vulkan " +
                 std::to_string(VK_API_VERSION_MAJOR(best_props.apiVersion)) + "." +
                 std::to_string(VK_API_VERSION_MINOR(best_props.apiVersion)) + "." +
                 std::to_string(VK_API_VERSION_PATCH(best_props.apiVersion));
  max_groups_ = std::min<uint32_t>(best_props.limits.maxComputeWorkGroupCount[0], 65535);
  device_max_groups_ = max_groups_;
  max_storage_buffers_ = best_props.limits.maxPerStageDescriptorStorageBuffers;
  PI_CHECK(best_props.limits.maxPushConstantsSize >= 128, ProviderUnavailable,
           "the Vulkan device allows only ", best_props.limits.maxPushConstantsSize,
           " bytes of push constants (128 needed)");
  f_.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_props_);
  // Read once, when the device starts: a later change would leave blocks of both kinds.
  init_memory(best_props.deviceType, best_props.limits.maxStorageBufferRange);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  // Float16 tensors need 16-bit storage (core in Vulkan 1.1, optional); arithmetic stays float32,
  // so shaderFloat16 is not asked for.
  VkPhysicalDevice16BitStorageFeatures s16{};
  s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &s16;
  if (f_.vkGetPhysicalDeviceFeatures2) f_.vkGetPhysicalDeviceFeatures2(physical_, &features);
  storage16_ = s16.storageBuffer16BitAccess == VK_TRUE;
  VkPhysicalDevice16BitStorageFeatures enable16{};
  enable16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  enable16.storageBuffer16BitAccess = storage16_ ? VK_TRUE : VK_FALSE;
  if (storage16_) description_ += ", 16-bit storage";
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &enable16;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  const VkResult r = f_.vkCreateDevice(physical_, &dci, nullptr, &device_);
  PI_CHECK(r == VK_SUCCESS, ProviderUnavailable, "vkCreateDevice failed (VkResult ",
           static_cast<int>(r), ")");
#define PI_VK_LOAD(name) \
  f_.name = reinterpret_cast<PFN_##name>(f_.vkGetDeviceProcAddr(device_, #name));
  PI_VK_DEVICE_FNS(PI_VK_LOAD)
#undef PI_VK_LOAD
  PI_VK_DEVICE_FNS(PI_VK_REQUIRE)
#undef PI_VK_REQUIRE
  f_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family_;
  check(f_.vkCreateCommandPool(device_, &pci, nullptr, &command_pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = command_pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  check(f_.vkAllocateCommandBuffers(device_, &cai, &cmd_), "vkAllocateCommandBuffers");
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kMaxBindings};
  VkDescriptorPoolCreateInfo dpi{};
  dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpi.maxSets = kSetsPerPool;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  check(f_.vkCreateDescriptorPool(device_, &dpi, nullptr, &descriptor_pool_),
        "vkCreateDescriptorPool");
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  check(f_.vkCreateFence(device_, &fci, nullptr, &fence_), "vkCreateFence");
}

Context::~Context() {
  try {
    flush();
  } catch (const Error&) {
    // A lost device at exit: destroy what is left regardless.
  }
  f_.vkDeviceWaitIdle(device_);
  sub_->clear();
  if (staging_.buffer) {
    f_.vkDestroyBuffer(device_, staging_.buffer, nullptr);
    f_.vkFreeMemory(device_, staging_.memory, nullptr);  // unmaps too
  }
  for (auto& [name, p] : pipelines_) {
    f_.vkDestroyPipeline(device_, p->pipeline, nullptr);
    f_.vkDestroyPipelineLayout(device_, p->layout, nullptr);
    f_.vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
  }
  f_.vkDestroyFence(device_, fence_, nullptr);
  f_.vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
  f_.vkDestroyCommandPool(device_, command_pool_, nullptr);
  f_.vkDestroyDevice(device_, nullptr);
  f_.vkDestroyInstance(instance_, nullptr);
}

const Pipeline& Context::pipeline(const std::string& name, uint32_t bindings, uint32_t push_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pipelines_.find(name);
  if (it != pipelines_.end()) {
    PI_CHECK(it->second->bindings == bindings && it->second->push_bytes == push_bytes, Internal,
             "Vulkan: shader '", name, "' asked for with another layout");
    return *it->second;
  }
  auto sit = shaders().find(name);
  PI_CHECK(sit != shaders().end(), Internal, "Vulkan: no embedded shader '", name, "'");
  PI_CHECK(bindings <= kMaxBindings && bindings <= max_storage_buffers_, Internal,
           "Vulkan: shader '", name, "' binds ", bindings, " buffers");
  auto p = std::make_unique<Pipeline>();
  p->bindings = bindings;
  p->push_bytes = push_bytes;
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sli{};
  sli.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  sli.bindingCount = bindings;
  sli.pBindings = b.data();
  check(f_.vkCreateDescriptorSetLayout(device_, &sli, nullptr, &p->set_layout),
        "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pli{};
  pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p->set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  VkResult r = f_.vkCreatePipelineLayout(device_, &pli, nullptr, &p->layout);
  VkShaderModule module = VK_NULL_HANDLE;
  if (r == VK_SUCCESS) {
    VkShaderModuleCreateInfo smi{};
    smi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    smi.codeSize = sit->second.count * sizeof(uint32_t);
    smi.pCode = sit->second.words;
    r = f_.vkCreateShaderModule(device_, &smi, nullptr, &module);
  }
  if (r == VK_SUCCESS) {
    VkComputePipelineCreateInfo cpi{};
    cpi.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module;
    cpi.stage.pName = "main";
    cpi.layout = p->layout;
    r = f_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cpi, nullptr, &p->pipeline);
    f_.vkDestroyShaderModule(device_, module, nullptr);
  }
  if (r != VK_SUCCESS) {
    if (p->layout) f_.vkDestroyPipelineLayout(device_, p->layout, nullptr);
    f_.vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    fail(ErrorCode::Internal, "Vulkan: creating the pipeline of shader '", name,
         "' failed (VkResult ", static_cast<int>(r), ")");
  }
  return *(pipelines_[name] = std::move(p));
}

void Context::begin_locked() {
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(f_.vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
  recording_ = true;
}

void Context::dispatch(const Pipeline& pl, const std::vector<VkBuffer>& buffers, const void* push,
                       uint32_t gx, uint32_t gy, uint32_t gz) {
  PI_CHECK(buffers.size() == pl.bindings, Internal, "Vulkan: dispatch with ", buffers.size(),
           " buffers for ", pl.bindings, " bindings");
  std::lock_guard<std::mutex> lock(mu_);
  if (sets_used_ == kSetsPerPool) flush_locked();
  if (!recording_) begin_locked();
  VkDescriptorSetAllocateInfo dai{};
  dai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dai.descriptorPool = descriptor_pool_;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &pl.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(f_.vkAllocateDescriptorSets(device_, &dai, &set), "vkAllocateDescriptorSets");
  ++sets_used_;
  VkDescriptorBufferInfo infos[kMaxBindings]{};
  VkWriteDescriptorSet writes[kMaxBindings]{};
  for (uint32_t i = 0; i < pl.bindings; ++i) {
    infos[i] = {buffers[i], 0, VK_WHOLE_SIZE};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  f_.vkUpdateDescriptorSets(device_, pl.bindings, writes, 0, nullptr);
  barrier_locked();
  f_.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pl.pipeline);
  f_.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pl.layout, 0, 1, &set, 0,
                             nullptr);
  f_.vkCmdPushConstants(cmd_, pl.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, pl.push_bytes, push);
  const auto clamp = [this](uint32_t g) { return std::max<uint32_t>(1, std::min(g, max_groups_)); };
  f_.vkCmdDispatch(cmd_, clamp(gx), clamp(gy), clamp(gz));
  ++commands_;
}

void Context::barrier_locked() {
  if (commands_ == 0) return;
  // Every command sees the writes of the ones before it and does not overwrite what they have
  // yet to read (a pool reuses memory within a run; a copy may land where a kernel read).
  constexpr VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  f_.vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Context::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  flush_locked();
}

void Context::flush_locked() {
  if (!recording_) return;
  recording_ = false;
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  f_.vkCmdPipelineBarrier(cmd_,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  check(f_.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  check(f_.vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
  check(f_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  check(f_.vkResetFences(device_, 1, &fence_), "vkResetFences");
  check(f_.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  check(f_.vkResetDescriptorPool(device_, descriptor_pool_, 0), "vkResetDescriptorPool");
  commands_ = 0;
  sets_used_ = 0;
  staging_used_ = 0;
}

}  // namespace polyinfer::vulkan
