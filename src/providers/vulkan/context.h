// The Vulkan provider's one process-wide device: libvulkan opened with dlopen (the binary runs
// where it is absent), an instance, the chosen physical device with a compute queue, memory, the
// cached pipelines, and the command buffer that kernels record into.
//
// Memory: blocks of 64 MiB (a larger request gets a block its size; none above
// maxStorageBufferRange), each a VkBuffer, sub-allocated first-fit at 256-byte steps
// (suballocator.h). Each block has a host address range, so tensors, views and the session's
// arena are plain pointer arithmetic and find() maps any pointer inside a live block back to
// (VkBuffer, byte offset). Two kinds of blocks, chosen once per device (choose_memory):
// - mapped: host-visible, host-coherent memory mapped for its whole life (llvmpipe, integrated
//   GPUs, resizable BAR); the address range is the mapping, copies are memcpy.
// - device: device-local memory the host cannot read (a discrete GPU without resizable BAR);
//   the address range is reserved host address space that is never accessible (mmap PROT_NONE),
//   so a stray host access faults at once instead of reading garbage. Copies go through a
//   host-visible staging buffer, recorded with vkCmdCopyBuffer into the command stream.
//
// Execution: dispatch() and the copies record into an open command buffer, each ordered after
// the commands before it by a barrier; nothing runs until flush(), which submits once and waits.
// Host reads of device memory (download, freeing a buffer, Provider::synchronize) flush first.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hw/system.h"
#include "polyinfer/tensor.h"
#include "runtime/suballocator.h"

namespace polyinfer::vulkan {

// One X(name) per Vulkan function, several to a line.
// clang-format off
// Global-level functions (from vkGetInstanceProcAddr(NULL, ...)).
#define PI_VK_GLOBAL_FNS(X) X(vkCreateInstance) X(vkEnumerateInstanceVersion)
// Instance-level functions.
#define PI_VK_INSTANCE_FNS(X)                                                            \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)    \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties)     \
  X(vkCreateDevice) X(vkGetDeviceProcAddr) X(vkGetPhysicalDeviceFeatures2)
// Device-level functions (from vkGetDeviceProcAddr: no loader trampoline).
#define PI_VK_DEVICE_FNS(X)                                                              \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer)            \
  X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory)                   \
  X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout) \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines)       \
  X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool)              \
  X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)         \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)             \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer)                  \
  X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) \
  X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCreateFence) X(vkDestroyFence)         \
  X(vkResetFences) X(vkWaitForFences) X(vkQueueSubmit) X(vkDeviceWaitIdle)
// clang-format on

struct Fns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define PI_VK_FIELD(name) PFN_##name name = nullptr;
  PI_VK_GLOBAL_FNS(PI_VK_FIELD)
  PI_VK_INSTANCE_FNS(PI_VK_FIELD)
  PI_VK_DEVICE_FNS(PI_VK_FIELD)
#undef PI_VK_FIELD
};

// A compute pipeline with `bindings` storage buffers (set 0, bindings 0..n-1) and a push-constant
// block; created once per process per shader and kept until exit.
struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  uint32_t push_bytes = 0;
};

// Where a device pointer lives: its buffer and the byte offset in it.
struct BufferRef {
  VkBuffer buffer = VK_NULL_HANDLE;
  size_t offset = 0;
};

// Whether the Vulkan provider can run here on device `index` (-1: the device already started,
// else the automatic choice), and if not why: the doctor's check of the Vulkan stack
// (hw::check_vulkan_stack, the same text), then the index, then this context's own setup.
// Starts the device when it can.
// How device memory is kept (see above), chosen once per device when its context starts.
enum class MemoryMode { Mapped, Device };

// The choice and why, from the device's memory types and POLYINFER_VULKAN_MEMORY (auto when
// empty or null; mapped or device force one). auto takes mapped when a device-local type is also
// host-visible and coherent with a heap at least half the largest device-local heap (unified
// memory, llvmpipe, resizable BAR), or when the device has no device-local memory at all; else
// device (a discrete GPU whose host-visible device-local window is the 256 MiB BAR). Throws
// ProviderUnavailable for another value of the variable, and for mapped on a device with no
// host-visible coherent memory.
struct MemoryChoice {
  MemoryMode mode = MemoryMode::Mapped;
  std::string why;
};
MemoryChoice choose_memory(const VkPhysicalDeviceMemoryProperties& props, VkPhysicalDeviceType type,
                           const char* env);

// Throws Internal naming `what` unless `r` is VK_SUCCESS.
void check(VkResult r, const char* what);

struct Status {
  bool usable = false;
  std::string reason;
};
Status status(int index = -1);

// Throws InvalidArgument listing the devices when the Vulkan stack works and `index` names none
// of them (vulkan:N counts in the loader's enumeration order, the one doctor lists). Starts
// nothing.
void check_device_index(int index);
// "vulkan:0 llvmpipe (LLVM 15.0.6, 256 bits) (cpu)"; the devices, "; "-separated.
std::string device_listing();

struct ContextFactory;

class Context {
 public:
  // The process-wide context, created on first use for device `index` (-1: the one already
  // started, else the automatic choice: discrete > integrated > virtual > cpu, first of a kind);
  // registers Device{Vulkan, index} (allocator, copies) on creation. One device per process:
  // asking for another index once one is started throws ProviderUnavailable naming both. Throws
  // ProviderUnavailable with status()'s reason when Vulkan is not usable, and InvalidArgument
  // listing the devices for an index out of range.
  static std::shared_ptr<Context> get(int index = -1);
  // Whether a context exists (without starting one).
  static bool started();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // "llvmpipe (LLVM 15.0.6, 256 bits) (cpu), Vulkan 1.3.230".
  const std::string& describe() const { return description_; }
  // Device{Vulkan, N}: N is the device's place in the loader's enumeration.
  Device device() const { return {DeviceKind::Vulkan, index_}; }

  // How this device keeps tensors (see above) and why: "mapped (...)" or "device (...)".
  MemoryMode memory_mode() const { return memory_.mode; }
  std::string memory_description() const;

  // Device memory: at least `bytes`, 256-byte aligned, from a shared block (see above).
  void* allocate(size_t bytes);
  // Waits for recorded work first (it may still use the memory); frees an emptied block.
  void deallocate(void* ptr);
  // The buffer and byte offset of a pointer inside a live block; throws Internal otherwise.
  BufferRef find(const void* ptr) const;
  // The sub-allocator's state, for tests and diagnostics.
  struct MemoryStats {
    size_t blocks = 0;           // VkBuffers (and VkDeviceMemory allocations) alive
    size_t used_bytes = 0;       // in live allocations, rounded to 256
    size_t reserved_bytes = 0;   // in blocks
    size_t block_bytes = 0;      // the size of an ordinary block
    size_t max_block_bytes = 0;  // maxStorageBufferRange, rounded down to 256
  };
  MemoryStats memory_stats() const;

  // Copies between host memory and device memory (any pointer inside a live block; a range
  // never crosses blocks since it lies inside one tensor). Mapped: flush, then memcpy. Device:
  // upload copies into the staging buffer and records a vkCmdCopyBuffer after the commands
  // recorded so far, so it waits for nothing unless the staging buffer is full (then it flushes
  // and starts over); download records the copy into staging, flushes and reads it, a staging
  // buffer's worth at a time. Large copies go in chunks of the staging size.
  void upload(const void* host_src, void* device_dst, size_t bytes);
  void download(const void* device_src, void* host_dst, size_t bytes);
  // Device to device (Tensor::clone): recorded as a vkCmdCopyBuffer in either mode.
  void copy(const void* device_src, void* device_dst, size_t bytes);
  // Counts, for tests and diagnostics: copy commands recorded through the staging buffer, and
  // flushes that ran because it was full or to read a chunk back.
  struct CopyStats {
    size_t staged_chunks = 0;
    size_t staging_flushes = 0;
    size_t device_copies = 0;
    size_t staging_bytes = 0;  // the staging buffer's size (0 until first used)
  };
  CopyStats copy_stats() const;
  // Lowers (or, with 0, restores) the bytes of staging one chunk may use, so tests cross chunk
  // boundaries with small tensors.
  void limit_staging_for_testing(size_t bytes);

  // The cached pipeline for shader `name` (shaders.h); created on first request.
  const Pipeline& pipeline(const std::string& name, uint32_t bindings, uint32_t push_bytes);
  // Records one dispatch of `groups` workgroups (x only) into the open command buffer, with a
  // barrier after earlier dispatches. `buffers` bind to 0..n-1; `push` is pipeline.push_bytes.
  void dispatch(const Pipeline& pipeline, const std::vector<VkBuffer>& buffers, const void* push,
                uint32_t groups) {
    dispatch(pipeline, buffers, push, groups, 1, 1);
  }
  // The same with a 3-D grid of workgroups; each count is clamped to [1, max_groups()] (every
  // device allows 65535 in each dimension), so shaders that may see more loop.
  void dispatch(const Pipeline& pipeline, const std::vector<VkBuffer>& buffers, const void* push,
                uint32_t gx, uint32_t gy, uint32_t gz);
  // Submits what was recorded (if anything) and waits for it.
  void flush();
  // The most workgroups a dispatch may ask for in x.
  uint32_t max_groups() const { return max_groups_; }
  // Lowers (or, with 0, restores) that limit: lets tests drive the shaders' loops past the last
  // workgroup with small inputs instead of 65536 workgroups, which take seconds on llvmpipe.
  void limit_groups_for_testing(uint32_t n) {
    max_groups_ = n ? std::min(n, device_max_groups_) : device_max_groups_;
  }
  // Storage buffers one shader may bind (maxPerStageDescriptorStorageBuffers; Vulkan promises 4,
  // desktop devices and llvmpipe allow far more). Kernels needing more refuse at creation.
  uint32_t max_storage_buffers() const { return max_storage_buffers_; }
  // Whether shaders may read and write float16 tensors: the device's storageBuffer16BitAccess
  // (VkPhysicalDevice16BitStorageFeatures), enabled at device creation when supported. Kernels
  // of float16 nodes refuse without it, so those nodes fall back.
  bool storage16() const { return storage16_; }

 private:
  friend struct ContextFactory;
  explicit Context(int requested);  // throws ProviderUnavailable with the reason
  void create_device(int requested);
  // The memory mode and the sub-allocator, once the device's properties are known (memory.cpp).
  void init_memory(VkPhysicalDeviceType type, VkDeviceSize max_storage_range);
  void begin_locked();
  void flush_locked();

  // Makes a block of `size` bytes and returns its address (the sub-allocator's create): the
  // mapping, or a reserved range in device mode.
  uintptr_t create_block_locked(size_t size);
  void destroy_block_locked(uintptr_t base);
  BufferRef find_locked(const void* ptr) const;
  // A barrier after everything recorded so far (none before the first command), so that the
  // next dispatch or copy sees its writes and does not overwrite what it has yet to read.
  void barrier_locked();
  void ensure_staging_locked();
  size_t staging_cap_locked() const;

  struct Block {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    size_t size = 0;
    size_t reserved = 0;  // bytes of reserved address space (device mode), else 0
  };

  std::unique_ptr<hw::Library> lib_;
  Fns f_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  int index_ = 0;  // in the enumeration
  VkPhysicalDeviceMemoryProperties memory_props_{};
  uint32_t max_groups_ = 65535;
  uint32_t device_max_groups_ = 65535;
  uint32_t max_storage_buffers_ = 4;
  bool storage16_ = false;
  std::string description_;
  MemoryChoice memory_;

  mutable std::mutex mu_;
  size_t max_buffer_range_ = 0;        // maxStorageBufferRange
  std::map<uintptr_t, Block> blocks_;  // by mapped address
  std::unique_ptr<SubAllocator> sub_;  // hands out pieces of blocks_
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  Block staging_;  // host-visible, mapped; device mode only, made on first use
  char* staging_ptr_ = nullptr;
  size_t staging_used_ = 0;   // bytes taken by recorded uploads since the last flush
  size_t staging_limit_ = 0;  // bytes a chunk may use (tests lower it)
  CopyStats copy_stats_;
  bool recording_ = false;
  uint32_t commands_ = 0;   // dispatches and copies recorded since the last flush
  uint32_t sets_used_ = 0;  // descriptor sets taken from the pool since the last flush
};

// The allocator of the device Context::get(index) starts (the provider's; also registered with
// the device).
std::shared_ptr<Allocator> device_allocator(int index = -1);

}  // namespace polyinfer::vulkan
