// The Vulkan context's memory (context.h): the choice between mapped and device-local memory,
// the blocks the sub-allocator cuts tensors from, and the copies between host and device
// (memcpy in mapped mode; a staging buffer and vkCmdCopyBuffer in device mode).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "providers/vulkan/context.h"

namespace polyinfer::vulkan {
namespace {

constexpr size_t kAlign = 256;  // allocation granularity in bytes
// An ordinary block: large enough that a model's tensors and weights share a few, small enough
// that a mostly idle block does not hold much.
constexpr size_t kBlockBytes = size_t{64} << 20;
// The staging buffer of device mode: large enough that a copy of it outruns the submit and wait
// around it (PCIe moves 16 MiB in about a millisecond), small beside the device's memory.
constexpr size_t kStagingBytes = size_t{16} << 20;

// Memory types allowed by `bits` that have all of `required`, best `score` first (stable: the
// driver's order breaks ties). Allocation tries them in turn, so a full heap falls back to the
// next type.
template <class Score>
std::vector<uint32_t> memory_types(const VkPhysicalDeviceMemoryProperties& props, uint32_t bits,
                                   VkMemoryPropertyFlags required, Score score) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & required) == required)
      out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return score(props.memoryTypes[a].propertyFlags) > score(props.memoryTypes[b].propertyFlags);
  });
  return out;
}

constexpr VkMemoryPropertyFlags kHostCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

std::string mib(VkDeviceSize bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

MemoryChoice choose_memory(const VkPhysicalDeviceMemoryProperties& props, VkPhysicalDeviceType type,
                           const char* env) {
  const std::string want = env ? env : "";
  PI_CHECK(want.empty() || want == "auto" || want == "mapped" || want == "device",
           ProviderUnavailable, "POLYINFER_VULKAN_MEMORY=", want,
           " is not one of auto, mapped, device; unset it for the automatic choice");
  VkDeviceSize device_local = 0, visible_device_local = 0;
  bool host_coherent = false;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = props.memoryTypes[i].propertyFlags;
    const VkDeviceSize heap = props.memoryHeaps[props.memoryTypes[i].heapIndex].size;
    const bool local = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const bool visible = (f & kHostCoherent) == kHostCoherent;
    if (local) device_local = std::max(device_local, heap);
    if (visible) host_coherent = true;
    if (local && visible) visible_device_local = std::max(visible_device_local, heap);
  }
  if (want == "device")
    return {MemoryMode::Device,
            "forced by POLYINFER_VULKAN_MEMORY=device: tensors in memory the host does not map, "
            "copies through a staging buffer"};
  PI_CHECK(host_coherent || want != "mapped", ProviderUnavailable,
           "POLYINFER_VULKAN_MEMORY=mapped: the device has no host-visible coherent memory; "
           "unset it");
  if (want == "mapped")
    return {MemoryMode::Mapped,
            "forced by POLYINFER_VULKAN_MEMORY=mapped: host-visible memory, "
            "copies are memcpy"};
  if (device_local == 0)
    return {MemoryMode::Mapped,
            "the device has no device-local memory: host-visible memory, "
            "copies are memcpy"};
  if (visible_device_local * 2 >= device_local)
    return {
        MemoryMode::Mapped,
        std::string("its device-local memory is host-visible (") +
            (type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? "resizable BAR" : "unified memory") +
            "): copies are memcpy"};
  return {MemoryMode::Device,
          "only " + mib(visible_device_local) + " of its " + mib(device_local) +
              " of device-local memory is host-visible: tensors in device-local memory, copies "
              "through a staging buffer"};
}

void Context::init_memory(VkPhysicalDeviceType type, VkDeviceSize max_storage_range) {
  memory_ = choose_memory(memory_props_, type, std::getenv("POLYINFER_VULKAN_MEMORY"));
  // Kernels bind whole blocks: none may exceed what one storage-buffer binding covers.
  max_buffer_range_ = max_storage_range;
  sub_ = std::make_unique<SubAllocator>(
      kBlockBytes, max_buffer_range_, kAlign,
      [this](size_t size) { return create_block_locked(size); },
      [this](uintptr_t base) { destroy_block_locked(base); });
}

void* Context::allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  return reinterpret_cast<void*>(sub_->allocate(bytes));
}

std::string Context::memory_description() const {
  return std::string(memory_.mode == MemoryMode::Mapped ? "mapped" : "device") + " (" +
         memory_.why + ")";
}

uintptr_t Context::create_block_locked(size_t size) {
  const bool mapped = memory_.mode == MemoryMode::Mapped;
  Block b;
  b.size = size;
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
              VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = f_.vkCreateBuffer(device_, &bci, nullptr, &b.buffer);
  PI_CHECK(r == VK_SUCCESS, OutOfMemory, "Vulkan: vkCreateBuffer of ", size,
           " bytes failed (VkResult ", static_cast<int>(r), ")");
  VkMemoryRequirements req{};
  f_.vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  // Mapped: host-visible and coherent, device-local first (UMA, ReBAR). Device: device-local
  // that the host cannot see first (so the BAR window stays free), then any device-local type,
  // then anything (a full device spills to host memory: slow, but it runs).
  const std::vector<uint32_t> types =
      mapped ? memory_types(memory_props_, req.memoryTypeBits, kHostCoherent,
                            [](VkMemoryPropertyFlags f) {
                              return (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 1 : 0;
                            })
             : memory_types(memory_props_, req.memoryTypeBits, 0, [](VkMemoryPropertyFlags f) {
                 return ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 2 : 0) +
                        ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ? 0 : 1);
               });
  if (types.empty()) {
    f_.vkDestroyBuffer(device_, b.buffer, nullptr);
    fail(ErrorCode::OutOfMemory, "Vulkan: the device has no ",
         mapped ? "host-visible coherent " : "", "memory type for storage buffers");
  }
  r = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  for (uint32_t type : types) {
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    r = f_.vkAllocateMemory(device_, &mai, nullptr, &b.memory);
    if (r != VK_ERROR_OUT_OF_DEVICE_MEMORY && r != VK_ERROR_OUT_OF_HOST_MEMORY) break;
  }
  void* base = nullptr;
  if (r == VK_SUCCESS) r = f_.vkBindBufferMemory(device_, b.buffer, b.memory, 0);
  if (r == VK_SUCCESS && mapped) {
    r = f_.vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &base);
  } else if (r == VK_SUCCESS) {
    // Addresses only: never readable or writable, and no memory behind them (MAP_NORESERVE).
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    b.reserved = (size + page - 1) / page * page;
    base = mmap(nullptr, b.reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
      base = nullptr;
      b.reserved = 0;
    }
  }
  if (r != VK_SUCCESS || base == nullptr) {
    f_.vkDestroyBuffer(device_, b.buffer, nullptr);
    if (b.memory) f_.vkFreeMemory(device_, b.memory, nullptr);
    fail(ErrorCode::OutOfMemory, "Vulkan: allocating ", size, " bytes failed (",
         r != VK_SUCCESS ? "VkResult " + std::to_string(static_cast<int>(r))
                         : std::string("no host address range to reserve"),
         ")");
  }
  const auto addr = reinterpret_cast<uintptr_t>(base);
  blocks_[addr] = b;
  return addr;
}

void Context::destroy_block_locked(uintptr_t base) {
  auto it = blocks_.find(base);
  if (it == blocks_.end()) return;
  f_.vkDestroyBuffer(device_, it->second.buffer, nullptr);
  f_.vkFreeMemory(device_, it->second.memory, nullptr);  // unmaps too
  if (it->second.reserved) munmap(reinterpret_cast<void*>(base), it->second.reserved);
  blocks_.erase(it);
}

void Context::deallocate(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  // Recorded work may still use the memory: it must run before the range is handed out again
  // (a host copy into it would overwrite what a recorded kernel has yet to read) or its block is
  // freed.
  if (recording_) flush_locked();
  sub_->deallocate(reinterpret_cast<uintptr_t>(ptr));
}

BufferRef Context::find(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  return find_locked(ptr);
}

BufferRef Context::find_locked(const void* ptr) const {
  uintptr_t base = 0;
  size_t offset = 0;
  PI_CHECK(sub_->find(reinterpret_cast<uintptr_t>(ptr), &base, &offset), Internal,
           "Vulkan: a tensor's pointer is not device memory");
  return {blocks_.at(base).buffer, offset};
}

Context::MemoryStats Context::memory_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {sub_->blocks(), sub_->used_bytes(), sub_->reserved_bytes(), sub_->block_bytes(),
          max_buffer_range_ / kAlign * kAlign};
}

void Context::ensure_staging_locked() {
  if (staging_.buffer) return;
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = kStagingBytes;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  Block b;
  b.size = kStagingBytes;
  check(f_.vkCreateBuffer(device_, &bci, nullptr, &b.buffer), "vkCreateBuffer (staging)");
  VkMemoryRequirements req{};
  f_.vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  // Host memory the device reads and writes over the bus: cached (read-backs are read by the
  // CPU) and not device-local (the BAR window is better left to the driver).
  const std::vector<uint32_t> types =
      memory_types(memory_props_, req.memoryTypeBits, kHostCoherent, [](VkMemoryPropertyFlags f) {
        return ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 2 : 0) +
               ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 0 : 1);
      });
  VkResult r = VK_ERROR_OUT_OF_HOST_MEMORY;
  for (uint32_t type : types) {
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    r = f_.vkAllocateMemory(device_, &mai, nullptr, &b.memory);
    if (r == VK_SUCCESS) break;
  }
  void* p = nullptr;
  if (r == VK_SUCCESS) r = f_.vkBindBufferMemory(device_, b.buffer, b.memory, 0);
  if (r == VK_SUCCESS) r = f_.vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &p);
  if (r != VK_SUCCESS || p == nullptr) {
    f_.vkDestroyBuffer(device_, b.buffer, nullptr);
    if (b.memory) f_.vkFreeMemory(device_, b.memory, nullptr);
    fail(ErrorCode::OutOfMemory, "Vulkan: the ", kStagingBytes >> 20,
         " MiB staging buffer could not be made (",
         types.empty() ? "no host-visible coherent "
                         "memory type"
                       : "VkResult " + std::to_string(static_cast<int>(r)),
         ")");
  }
  staging_ = b;
  staging_ptr_ = static_cast<char*>(p);
  copy_stats_.staging_bytes = kStagingBytes;
}

size_t Context::staging_cap_locked() const {
  return staging_limit_ ? std::min(staging_limit_, staging_.size) : staging_.size;
}

void Context::upload(const void* host_src, void* device_dst, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const BufferRef dst = find_locked(device_dst);
  if (memory_.mode == MemoryMode::Mapped) {
    flush_locked();
    std::memcpy(device_dst, host_src, bytes);
    return;
  }
  ensure_staging_locked();
  const char* src = static_cast<const char*>(host_src);
  const size_t cap = staging_cap_locked();
  for (size_t done = 0; done < bytes;) {
    if (staging_used_ >= cap) {
      // Recorded copies still read the staging buffer: run them before it is written again.
      flush_locked();
      ++copy_stats_.staging_flushes;
    }
    const size_t at = staging_used_, n = std::min(bytes - done, cap - at);
    std::memcpy(staging_ptr_ + at, src + done, n);
    if (!recording_) begin_locked();
    barrier_locked();
    const VkBufferCopy region{at, dst.offset + done, n};
    f_.vkCmdCopyBuffer(cmd_, staging_.buffer, dst.buffer, 1, &region);
    ++commands_;
    ++copy_stats_.staged_chunks;
    staging_used_ = std::min(cap, (at + n + kAlign - 1) / kAlign * kAlign);
    done += n;
  }
}

void Context::download(const void* device_src, void* host_dst, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const BufferRef src = find_locked(device_src);
  if (memory_.mode == MemoryMode::Mapped) {
    flush_locked();
    std::memcpy(host_dst, device_src, bytes);
    return;
  }
  ensure_staging_locked();
  char* dst = static_cast<char*>(host_dst);
  const size_t cap = staging_cap_locked();
  for (size_t done = 0; done < bytes;) {
    if (staging_used_ >= cap) {
      flush_locked();
      ++copy_stats_.staging_flushes;
    }
    // Behind the uploads recorded so far (they still read their part of the staging buffer).
    const size_t at = staging_used_, n = std::min(bytes - done, cap - at);
    if (!recording_) begin_locked();
    barrier_locked();
    const VkBufferCopy region{src.offset + done, at, n};
    f_.vkCmdCopyBuffer(cmd_, src.buffer, staging_.buffer, 1, &region);
    ++commands_;
    ++copy_stats_.staged_chunks;
    flush_locked();
    ++copy_stats_.staging_flushes;
    std::memcpy(dst + done, staging_ptr_ + at, n);
    done += n;
  }
}

void Context::copy(const void* device_src, void* device_dst, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const BufferRef src = find_locked(device_src), dst = find_locked(device_dst);
  PI_CHECK(src.buffer != dst.buffer || src.offset + bytes <= dst.offset ||
               dst.offset + bytes <= src.offset,
           Internal, "Vulkan: a device copy onto an overlapping range");
  if (!recording_) begin_locked();
  barrier_locked();
  const VkBufferCopy region{src.offset, dst.offset, bytes};
  f_.vkCmdCopyBuffer(cmd_, src.buffer, dst.buffer, 1, &region);
  ++commands_;
  ++copy_stats_.device_copies;
}

Context::CopyStats Context::copy_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return copy_stats_;
}

void Context::limit_staging_for_testing(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  flush_locked();
  staging_limit_ = bytes;
}

}  // namespace polyinfer::vulkan
