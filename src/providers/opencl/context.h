// The OpenCL provider's one process-wide device: libOpenCL opened with dlopen (api.h), the chosen
// device with one OpenCL context and one in-order command queue, its memory, and the compiled
// programs.
//
// Memory: blocks of 64 MiB (a larger request gets a block its size; none above the device's
// CL_DEVICE_MAX_MEM_ALLOC_SIZE), each one cl_mem, sub-allocated first-fit at 256-byte steps
// (runtime/suballocator.h). Each block has a reserved host address range that is never readable
// or writable (mmap PROT_NONE), so tensors, views and the session's arena are plain pointer
// arithmetic and find() maps any pointer inside a live block back to (cl_mem, byte offset); a
// stray host access faults at once instead of reading garbage. Kernels take the block and an
// element offset, so no sub-buffer alignment rule applies. Two kinds of blocks, chosen once per
// device (choose_memory):
// - mapped: CL_MEM_ALLOC_HOST_PTR on a device that shares memory with the host (integrated GPUs,
//   PoCL): copies map the range (no copy on such devices), memcpy and unmap.
// - device: ordinary device buffers (discrete GPUs); copies are clEnqueueRead/WriteBuffer, which
//   stage through pinned memory inside the driver.
//
// Execution: dispatch() and the copies enqueue on the in-order queue; nothing waits until the
// host needs a result (a read-back; Provider::synchronize). Programs are built once per process
// and device, and their binaries cached on disk (program.cpp), so a second process does not
// compile.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hw/system.h"
#include "polyinfer/tensor.h"
#include "providers/opencl/api.h"
#include "runtime/suballocator.h"

namespace polyinfer::opencl {

// Where a device pointer lives: its buffer and the byte offset in it.
struct BufferRef {
  cl_mem buffer = nullptr;
  size_t offset = 0;
};

// How device memory is kept (see above), chosen once per device when its context starts.
enum class MemoryMode { Mapped, Device };

// The choice and why, from whether the device shares the host's memory
// (CL_DEVICE_HOST_UNIFIED_MEMORY) and POLYINFER_OPENCL_MEMORY (auto when empty or null; mapped or
// device force one). Throws ProviderUnavailable for another value of the variable.
struct MemoryChoice {
  MemoryMode mode = MemoryMode::Mapped;
  std::string why;
};
MemoryChoice choose_memory(bool host_unified, const char* env);

struct Status {
  bool usable = false;
  std::string reason;
};
// Whether the OpenCL provider can run here on device `index` (-1: the device already started,
// else the automatic choice), and if not why: doctor's check of the OpenCL stack
// (hw::check_opencl_stack, the same text), then the index, then this context's own setup.
// Starts the device when it can.
Status status(int index = -1);

// Throws InvalidArgument listing the devices when the OpenCL stack works and `index` names none
// of them (opencl:N counts platforms in the loader's order, then each platform's devices: the
// order doctor lists). Starts nothing.
void check_device_index(int index);
// "opencl:0 pthread-skylake-avx512-AMD EPYC (cpu, Portable Computing Language)"; the devices,
// "; "-separated.
std::string device_listing();

struct ContextFactory;

class Context {
 public:
  // The process-wide context, created on first use for device `index` (-1: the one already
  // started, else the automatic choice: gpu > accelerator > other > cpu, first of a kind);
  // registers Device{OpenCL, index} (allocator, copies) on creation. One device per process:
  // asking for another index once one is started throws ProviderUnavailable naming both. Throws
  // ProviderUnavailable with status()'s reason when OpenCL is not usable, and InvalidArgument
  // listing the devices for an index out of range.
  static std::shared_ptr<Context> get(int index = -1);
  // Whether a context exists (without starting one).
  static bool started();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // "pthread-skylake-avx512-AMD EPYC (cpu), OpenCL 3.0 PoCL ..., driver 3.1+debian".
  const std::string& describe() const { return description_; }
  // Device{OpenCL, N}: N is the device's place in the enumeration (see check_device_index).
  Device device() const { return {DeviceKind::OpenCL, index_}; }
  // The device's type: "gpu", "cpu", "accelerator" or "other".
  const std::string& device_type() const { return type_; }

  // How this device keeps tensors (see above) and why: "mapped (...)" or "device (...)".
  MemoryMode memory_mode() const { return memory_.mode; }
  std::string memory_description() const;

  // Device memory: at least `bytes`, 256-byte aligned, from a shared block (see above).
  void* allocate(size_t bytes);
  // Frees at once: the queue is in order, so commands already enqueued that use the range run
  // before anything enqueued later reuses it, and OpenCL keeps a released buffer alive until
  // the commands using it are done.
  void deallocate(void* ptr);
  // The buffer and byte offset of a pointer inside a live block; throws Internal otherwise.
  BufferRef find(const void* ptr) const;
  // The sub-allocator's state, for tests and diagnostics.
  struct MemoryStats {
    size_t blocks = 0;           // cl_mem blocks alive
    size_t used_bytes = 0;       // in live allocations, rounded to 256
    size_t reserved_bytes = 0;   // in blocks
    size_t block_bytes = 0;      // the size of an ordinary block
    size_t max_block_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE, rounded down to 256
  };
  MemoryStats memory_stats() const;

  // Copies between host memory and device memory (any pointer inside a live block; a range never
  // crosses blocks since it lies inside one tensor). Both wait for the commands enqueued before
  // them (the queue is in order) and return once the host side may be reused.
  void upload(const void* host_src, void* device_dst, size_t bytes);
  void download(const void* device_src, void* host_dst, size_t bytes);
  // Device to device (Tensor::clone): enqueued, no wait.
  void copy(const void* device_src, void* device_dst, size_t bytes);

  // The kernel `entry` of program `program` (kernels.h) built with `options` ("-DPI_FP16", say):
  // the program is built on first request (from the disk cache when it holds this device's
  // binary) and kept for the process; the kernel object too. Throws UnsupportedOp with the build
  // log when the driver cannot build it, so a kernel's creation fails and the node falls back.
  cl_kernel kernel(const std::string& program, const std::string& entry,
                   const std::string& options = "");
  // Enqueues `kernel` over `groups` work-groups of `local` work-items in each dimension (x, y,
  // z; global size = groups x local), its arguments the buffers in order, then `params` (a
  // struct passed by value; none when `params_bytes` is 0). Work-group counts are clamped to
  // [1, max_groups()], so kernels that may see more loop over their groups.
  void dispatch(cl_kernel kernel, const std::vector<cl_mem>& buffers, const void* params,
                size_t params_bytes, const size_t groups[3], const size_t local[3]);
  // One dimension: `groups` work-groups of `local` work-items.
  void dispatch(cl_kernel kernel, const std::vector<cl_mem>& buffers, const void* params,
                size_t params_bytes, size_t groups, size_t local = 256) {
    const size_t g[3] = {groups, 1, 1}, l[3] = {local, 1, 1};
    dispatch(kernel, buffers, params, params_bytes, g, l);
  }
  // Waits for everything enqueued.
  void flush();

  // The most work-groups a dispatch asks for in one dimension (OpenCL itself has no small
  // limit; kernels loop past this one so tests can drive their loops with small inputs).
  size_t max_groups() const { return max_groups_; }
  // Lowers (or, with 0, restores) that limit.
  void limit_groups_for_testing(size_t n) { max_groups_ = n ? n : kDefaultMaxGroups; }
  // CL_DEVICE_MAX_WORK_GROUP_SIZE: kernels needing larger work-groups refuse at creation.
  size_t max_work_group() const { return max_work_group_; }
  // Whether the device computes in float16 (cl_khr_fp16). Float16 tensors do not need it: the
  // kernels load and store them with vload_half/vstore_half (core OpenCL) and compute in float32.
  bool fp16_arithmetic() const { return fp16_arithmetic_; }

  // Programs built since the context started: compiled from source, or read from the disk cache.
  struct ProgramStats {
    size_t compiled = 0;
    size_t from_cache = 0;
    std::string cache_dir;  // "" when there is none (no $XDG_CACHE_HOME or $HOME)
  };
  ProgramStats program_stats() const;

 private:
  friend struct ContextFactory;
  static constexpr size_t kDefaultMaxGroups = size_t{1} << 24;
  explicit Context(int index);  // throws ProviderUnavailable with the reason
  // The memory mode and the sub-allocator, once the device's properties are known (memory.cpp).
  void init_memory(bool host_unified);
  cl_program build_locked(const std::string& name, const std::string& options);
  uintptr_t create_block_locked(size_t size);
  void destroy_block_locked(uintptr_t base);
  BufferRef find_locked(const void* ptr) const;

  struct Block {
    cl_mem buffer = nullptr;
    size_t size = 0;
    size_t reserved = 0;  // bytes of reserved address space
  };

  std::unique_ptr<hw::Library> lib_;
  Fns f_;
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  int index_ = 0;
  std::string type_;
  std::string description_;
  std::string cache_key_;  // device, platform and driver: the part of a binary's key they give
  MemoryChoice memory_;
  size_t max_groups_ = kDefaultMaxGroups;
  size_t max_work_group_ = 1;
  size_t max_alloc_ = 0;
  bool fp16_arithmetic_ = false;

  mutable std::mutex mu_;
  std::map<uintptr_t, Block> blocks_;  // by reserved address
  std::unique_ptr<SubAllocator> sub_;
  std::map<std::string, cl_program> programs_;  // by name and options
  std::map<std::string, cl_kernel> kernels_;    // by program, options and entry
  ProgramStats program_stats_;
};

// The allocator of the device Context::get(index) starts (the provider's; also registered with
// the device).
std::shared_ptr<Allocator> device_allocator(int index = -1);

}  // namespace polyinfer::opencl
