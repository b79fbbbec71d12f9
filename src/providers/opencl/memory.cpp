// The OpenCL context's memory (context.h): the choice between host-shared and device buffers,
// the blocks the sub-allocator cuts tensors from, and the copies between host and device.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "providers/opencl/context.h"

namespace polyinfer::opencl {
namespace {

constexpr size_t kAlign = 256;  // allocation granularity in bytes
// An ordinary block: large enough that a model's tensors and weights share a few, small enough
// that a mostly idle block does not hold much (the Vulkan provider's figure).
constexpr size_t kBlockBytes = size_t{64} << 20;

}  // namespace

MemoryChoice choose_memory(bool host_unified, const char* env) {
  const std::string want = env ? env : "";
  PI_CHECK(want.empty() || want == "auto" || want == "mapped" || want == "device",
           ProviderUnavailable, "POLYINFER_OPENCL_MEMORY=", want,
           " is not one of auto, mapped, device; unset it for the automatic choice");
  if (want == "device")
    return {MemoryMode::Device,
            "forced by POLYINFER_OPENCL_MEMORY=device: device buffers, copies by "
            "clEnqueueRead/WriteBuffer"};
  if (want == "mapped")
    return {MemoryMode::Mapped,
            "forced by POLYINFER_OPENCL_MEMORY=mapped: host-allocated buffers, copies map them"};
  if (host_unified)
    return {MemoryMode::Mapped,
            "the device shares the host's memory: host-allocated buffers, copies map them "
            "(zero-copy)"};
  return {MemoryMode::Device,
          "the device has memory of its own: device buffers, copies by "
          "clEnqueueRead/WriteBuffer"};
}

void Context::init_memory(bool host_unified) {
  memory_ = choose_memory(host_unified, std::getenv("POLYINFER_OPENCL_MEMORY"));
  sub_ = std::make_unique<SubAllocator>(
      kBlockBytes, max_alloc_, kAlign, [this](size_t size) { return create_block_locked(size); },
      [this](uintptr_t base) { destroy_block_locked(base); });
}

std::string Context::memory_description() const {
  return std::string(memory_.mode == MemoryMode::Mapped ? "mapped" : "device") + " (" +
         memory_.why + ")";
}

void* Context::allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  return reinterpret_cast<void*>(sub_->allocate(bytes));
}

void Context::deallocate(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  sub_->deallocate(reinterpret_cast<uintptr_t>(ptr));
}

uintptr_t Context::create_block_locked(size_t size) {
  const cl_mem_flags flags =
      CL_MEM_READ_WRITE | (memory_.mode == MemoryMode::Mapped ? CL_MEM_ALLOC_HOST_PTR : 0);
  cl_int r = CL_SUCCESS;
  Block b;
  b.size = size;
  b.buffer = f_.clCreateBuffer(context_, flags, size, nullptr, &r);
  PI_CHECK(r == CL_SUCCESS && b.buffer, OutOfMemory, "OpenCL: clCreateBuffer of ", size,
           " bytes failed: ", error_name(r));
  // Addresses only: never readable or writable, and no memory behind them (MAP_NORESERVE).
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  b.reserved = (size + page - 1) / page * page;
  void* base =
      mmap(nullptr, b.reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    f_.clReleaseMemObject(b.buffer);
    fail(ErrorCode::OutOfMemory, "OpenCL: no host address range of ", b.reserved,
         " bytes to reserve for a device block");
  }
  const auto addr = reinterpret_cast<uintptr_t>(base);
  blocks_[addr] = b;
  return addr;
}

void Context::destroy_block_locked(uintptr_t base) {
  auto it = blocks_.find(base);
  if (it == blocks_.end()) return;
  // Commands still queued that use the buffer keep it alive until they finish.
  f_.clReleaseMemObject(it->second.buffer);
  munmap(reinterpret_cast<void*>(base), it->second.reserved);
  blocks_.erase(it);
}

BufferRef Context::find(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  return find_locked(ptr);
}

BufferRef Context::find_locked(const void* ptr) const {
  uintptr_t base = 0;
  size_t offset = 0;
  PI_CHECK(sub_->find(reinterpret_cast<uintptr_t>(ptr), &base, &offset), Internal,
           "OpenCL: a tensor's pointer is not device memory");
  return {blocks_.at(base).buffer, offset};
}

Context::MemoryStats Context::memory_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {sub_->blocks(), sub_->used_bytes(), sub_->reserved_bytes(), sub_->block_bytes(),
          max_alloc_ / kAlign * kAlign};
}

void Context::upload(const void* host_src, void* device_dst, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const BufferRef dst = find_locked(device_dst);
  if (memory_.mode == MemoryMode::Device) {
    check(f_.clEnqueueWriteBuffer(queue_, dst.buffer, CL_TRUE, dst.offset, bytes, host_src, 0,
                                  nullptr, nullptr),
          "clEnqueueWriteBuffer");
    return;
  }
  cl_int r = CL_SUCCESS;
  void* p = f_.clEnqueueMapBuffer(queue_, dst.buffer, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION,
                                  dst.offset, bytes, 0, nullptr, nullptr, &r);
  check(r, "clEnqueueMapBuffer (upload)");
  std::memcpy(p, host_src, bytes);
  check(f_.clEnqueueUnmapMemObject(queue_, dst.buffer, p, 0, nullptr, nullptr),
        "clEnqueueUnmapMemObject");
}

void Context::download(const void* device_src, void* host_dst, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const BufferRef src = find_locked(device_src);
  if (memory_.mode == MemoryMode::Device) {
    check(f_.clEnqueueReadBuffer(queue_, src.buffer, CL_TRUE, src.offset, bytes, host_dst, 0,
                                 nullptr, nullptr),
          "clEnqueueReadBuffer");
    return;
  }
  cl_int r = CL_SUCCESS;
  void* p = f_.clEnqueueMapBuffer(queue_, src.buffer, CL_TRUE, CL_MAP_READ, src.offset, bytes, 0,
                                  nullptr, nullptr, &r);
  check(r, "clEnqueueMapBuffer (download)");
  std::memcpy(host_dst, p, bytes);
  check(f_.clEnqueueUnmapMemObject(queue_, src.buffer, p, 0, nullptr, nullptr),
        "clEnqueueUnmapMemObject");
}

void Context::copy(const void* device_src, void* device_dst, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const BufferRef src = find_locked(device_src), dst = find_locked(device_dst);
  check(f_.clEnqueueCopyBuffer(queue_, src.buffer, dst.buffer, src.offset, dst.offset, bytes, 0,
                               nullptr, nullptr),
        "clEnqueueCopyBuffer");
}

}  // namespace polyinfer::opencl
