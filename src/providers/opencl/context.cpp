#include "providers/opencl/context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/device_registry.h"
#include "hw/report.h"

namespace polyinfer::opencl {

std::string error_name(cl_int code) {
  const char* name = nullptr;
  switch (code) {
    case CL_DEVICE_NOT_FOUND: name = "CL_DEVICE_NOT_FOUND"; break;
    case CL_DEVICE_NOT_AVAILABLE: name = "CL_DEVICE_NOT_AVAILABLE"; break;
    case CL_COMPILER_NOT_AVAILABLE: name = "CL_COMPILER_NOT_AVAILABLE"; break;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: name = "CL_MEM_OBJECT_ALLOCATION_FAILURE"; break;
    case CL_OUT_OF_RESOURCES: name = "CL_OUT_OF_RESOURCES"; break;
    case CL_OUT_OF_HOST_MEMORY: name = "CL_OUT_OF_HOST_MEMORY"; break;
    case CL_BUILD_PROGRAM_FAILURE: name = "CL_BUILD_PROGRAM_FAILURE"; break;
    case CL_MAP_FAILURE: name = "CL_MAP_FAILURE"; break;
    case CL_INVALID_VALUE: name = "CL_INVALID_VALUE"; break;
    case CL_INVALID_DEVICE: name = "CL_INVALID_DEVICE"; break;
    case CL_INVALID_BINARY: name = "CL_INVALID_BINARY"; break;
    case CL_INVALID_BUILD_OPTIONS: name = "CL_INVALID_BUILD_OPTIONS"; break;
    case CL_INVALID_PROGRAM_EXECUTABLE: name = "CL_INVALID_PROGRAM_EXECUTABLE"; break;
    case CL_INVALID_KERNEL_NAME: name = "CL_INVALID_KERNEL_NAME"; break;
    case CL_INVALID_ARG_INDEX: name = "CL_INVALID_ARG_INDEX"; break;
    case CL_INVALID_ARG_VALUE: name = "CL_INVALID_ARG_VALUE"; break;
    case CL_INVALID_ARG_SIZE: name = "CL_INVALID_ARG_SIZE"; break;
    case CL_INVALID_KERNEL_ARGS: name = "CL_INVALID_KERNEL_ARGS"; break;
    case CL_INVALID_WORK_GROUP_SIZE: name = "CL_INVALID_WORK_GROUP_SIZE"; break;
    case CL_INVALID_WORK_ITEM_SIZE: name = "CL_INVALID_WORK_ITEM_SIZE"; break;
    case CL_INVALID_GLOBAL_WORK_SIZE: name = "CL_INVALID_GLOBAL_WORK_SIZE"; break;
    case CL_INVALID_BUFFER_SIZE: name = "CL_INVALID_BUFFER_SIZE"; break;
    case CL_INVALID_MEM_OBJECT: name = "CL_INVALID_MEM_OBJECT"; break;
    default: break;
  }
  return (name ? std::string(name) : std::string("OpenCL error")) + " (" + std::to_string(code) +
         ")";
}

void check(cl_int r, const char* what) {
  PI_CHECK(r == CL_SUCCESS, Internal, "OpenCL: ", what, " failed: ", error_name(r));
}

namespace {

constexpr cl_uint kMaxPlatforms = 64;
constexpr cl_uint kMaxDevices = 64;

// A string property of a device or platform; "" when the query fails.
template <class Get, class Handle, class What>
std::string info_string(Get get, Handle h, What what) {
  size_t size = 0;
  if (get(h, what, 0, nullptr, &size) != CL_SUCCESS || size == 0 || size > 65536) return "";
  std::string s(size, '\0');
  if (get(h, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(strnlen(s.c_str(), size));
  return s;
}

template <class T> T device_value(const Fns& f, cl_device_id d, cl_device_info what, T fallback) {
  T v{};
  return f.clGetDeviceInfo(d, what, sizeof v, &v, nullptr) == CL_SUCCESS ? v : fallback;
}

int type_rank(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return 3;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return 2;
  if (t & CL_DEVICE_TYPE_CPU) return 0;
  return 1;
}

const char* type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

// Every device in enumeration order (platforms in the loader's order, each platform's devices
// of every type), as hw::probe_opencl lists them: opencl:N counts in this order.
struct Enumerated {
  cl_platform_id platform;
  cl_device_id device;
};
std::vector<Enumerated> enumerate(const Fns& f) {
  std::vector<Enumerated> out;
  cl_uint n = 0;
  if (f.clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return out;
  std::vector<cl_platform_id> platforms(std::min(n, kMaxPlatforms));
  n = 0;
  if (f.clGetPlatformIDs(static_cast<cl_uint>(platforms.size()), platforms.data(), &n) !=
      CL_SUCCESS)
    return out;
  platforms.resize(std::min<size_t>(n, platforms.size()));
  for (cl_platform_id p : platforms) {
    cl_uint m = 0;
    if (f.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &m) != CL_SUCCESS || m == 0) continue;
    std::vector<cl_device_id> devices(std::min(m, kMaxDevices));
    m = 0;
    if (f.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, static_cast<cl_uint>(devices.size()),
                         devices.data(), &m) != CL_SUCCESS)
      continue;
    devices.resize(std::min<size_t>(m, devices.size()));
    for (cl_device_id d : devices)
      if (out.size() < kMaxDevices) out.push_back({p, d});
  }
  return out;
}

class OpenClAllocator final : public Allocator {
 public:
  explicit OpenClAllocator(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  Device device() const override { return ctx_->device(); }
  void* allocate(size_t bytes) override { return ctx_->allocate(bytes); }
  void deallocate(void* ptr, size_t) override { ctx_->deallocate(ptr); }

 private:
  std::shared_ptr<Context> ctx_;
};

void copy_to_device(const void* host_src, void* device_dst, size_t bytes) {
  Context::get()->upload(host_src, device_dst, bytes);
}
void copy_to_host(const void* device_src, void* host_dst, size_t bytes) {
  Context::get()->download(device_src, host_dst, bytes);
}
void copy_on_device(const void* device_src, void* device_dst, size_t bytes) {
  Context::get()->copy(device_src, device_dst, bytes);
}

// The process's one context and its allocator, made on first use for the device asked for
// first; the OpenCL stack is probed once (doctor's check). As for Vulkan, an exit handler drops
// the context before the driver's own exit handlers run.
struct Holder {
  std::mutex mu;
  bool probed = false;
  hw::OpenClInfo info;
  hw::StackCheck stack;
  std::shared_ptr<Context> ctx;
  std::shared_ptr<Allocator> alloc;
  std::string auto_error;
  void release() {
    if (ctx) unregister_device(ctx->device());
    alloc.reset();
    ctx.reset();
  }
  ~Holder() { release(); }
};

}  // namespace

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
  h.info = hw::probe_opencl(hw::system_loader());
  h.stack = hw::check_opencl_stack(h.info);
  h.probed = true;
}

std::string listing_locked(const Holder& h) {
  std::string out;
  for (size_t i = 0; i < h.info.devices.size(); ++i) {
    const hw::OpenClDevice& d = h.info.devices[i];
    out += (i ? "; opencl:" : "opencl:") + std::to_string(i) + " " + d.name + " (" + d.type + ", " +
           d.platform + ")";
  }
  return out;
}

void check_index_locked(const Holder& h, int index) {
  PI_CHECK(index < static_cast<int>(h.info.devices.size()), InvalidArgument, "opencl:", index,
           " names no device: the OpenCL devices here are ", listing_locked(h));
}

std::shared_ptr<Context> start(int index) {
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  probe_locked(h);
  PI_CHECK(h.stack.usable, ProviderUnavailable, "opencl is not usable here: ", h.stack.reason);
  if (h.ctx) {
    PI_CHECK(index < 0 || index == h.ctx->device().index, ProviderUnavailable, "opencl:", index,
             " cannot start: this process already uses ", h.ctx->device().str(), " (",
             h.ctx->describe(), ") and the OpenCL provider drives one device per process");
    return h.ctx;
  }
  if (index >= 0) check_index_locked(h, index);
  PI_CHECK(index >= 0 || h.auto_error.empty(), ProviderUnavailable,
           "opencl is not usable here: ", h.auto_error);
  try {
    auto ctx = ContextFactory::make(index);
    auto alloc = std::make_shared<OpenClAllocator>(ctx);
    register_device(ctx->device(), {alloc, &copy_to_device, &copy_to_host, &copy_on_device});
    h.ctx = std::move(ctx);
    h.alloc = std::move(alloc);
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

// Tensor::to(opencl:N) before any session: start device N (which registers it).
const bool starter = [] {
  register_device_starter(DeviceKind::OpenCL, [](int index) {
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
    const std::string prefix = "opencl is not usable here: ";
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

Context::Context(int index) {
  std::string why;
  lib_ = hw::system_loader().open({"libOpenCL.so.1", "libOpenCL.so"}, &why);
  PI_CHECK(lib_ != nullptr, ProviderUnavailable, "libOpenCL does not load: ", why);
#define PI_CL_LOAD(name)                                                                           \
  f_.name = lib_->fn<decltype(&::name)>(#name);                                                    \
  PI_CHECK(f_.name != nullptr, ProviderUnavailable, "the OpenCL loader ", lib_->path(), " lacks ", \
           #name, " (OpenCL 1.2)");
  PI_CL_FNS(PI_CL_LOAD)
#undef PI_CL_LOAD

  const std::vector<Enumerated> all = enumerate(f_);
  PI_CHECK(!all.empty(), ProviderUnavailable, "no OpenCL device");
  if (index < 0) {
    // The automatic choice: the first device of the best type.
    index = 0;
    for (size_t i = 1; i < all.size(); ++i)
      if (type_rank(device_value<cl_device_type>(f_, all[i].device, CL_DEVICE_TYPE, 0)) >
          type_rank(device_value<cl_device_type>(f_, all[index].device, CL_DEVICE_TYPE, 0)))
        index = static_cast<int>(i);
  }
  PI_CHECK(index < static_cast<int>(all.size()), InvalidArgument, "opencl:", index,
           " names no device (", all.size(), " here)");
  index_ = index;
  platform_ = all[index].platform;
  device_ = all[index].device;

  const std::string name = info_string(f_.clGetDeviceInfo, device_, CL_DEVICE_NAME);
  const std::string version = info_string(f_.clGetDeviceInfo, device_, CL_DEVICE_VERSION);
  const std::string driver = info_string(f_.clGetDeviceInfo, device_, CL_DRIVER_VERSION);
  const std::string platform = info_string(f_.clGetPlatformInfo, platform_, CL_PLATFORM_NAME);
  const std::string extensions = info_string(f_.clGetDeviceInfo, device_, CL_DEVICE_EXTENSIONS);
  type_ = type_name(device_value<cl_device_type>(f_, device_, CL_DEVICE_TYPE, 0));
  description_ = name + " (" + type_ + "), " + version + ", driver " + driver;
  cache_key_ = platform + '\n' + name + '\n' + version + '\n' + driver;
  PI_CHECK(device_value<cl_bool>(f_, device_, CL_DEVICE_COMPILER_AVAILABLE, CL_FALSE),
           ProviderUnavailable, "OpenCL device ", name,
           " has no compiler (CL_DEVICE_COMPILER_AVAILABLE is false): polyinfer builds its "
           "kernels from OpenCL C source");
  fp16_arithmetic_ = (" " + extensions + " ").find(" cl_khr_fp16 ") != std::string::npos;
  max_work_group_ = device_value<size_t>(f_, device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
  max_alloc_ = static_cast<size_t>(
      device_value<cl_ulong>(f_, device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE, cl_ulong{128} << 20));
  PI_CHECK(max_work_group_ >= 64, ProviderUnavailable, "OpenCL device ", name,
           " allows work-groups of only ", max_work_group_,
           " work-items (polyinfer's kernels "
           "use up to 256)");

  init_memory(device_value<cl_bool>(f_, device_, CL_DEVICE_HOST_UNIFIED_MEMORY, CL_FALSE));
  cl_int r = CL_SUCCESS;
  context_ = f_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &r);
  PI_CHECK(r == CL_SUCCESS && context_, ProviderUnavailable, "clCreateContext on ", name,
           " failed: ", error_name(r));
  queue_ = f_.clCreateCommandQueue(context_, device_, 0, &r);
  if (r != CL_SUCCESS || !queue_) {
    f_.clReleaseContext(context_);
    fail(ErrorCode::ProviderUnavailable, "clCreateCommandQueue on ", name,
         " failed: ", error_name(r));
  }
}

Context::~Context() {
  if (queue_) f_.clFinish(queue_);
  for (auto& [key, k] : kernels_) f_.clReleaseKernel(k);
  for (auto& [key, p] : programs_) f_.clReleaseProgram(p);
  if (sub_) sub_->clear();
  if (queue_) f_.clReleaseCommandQueue(queue_);
  if (context_) f_.clReleaseContext(context_);
}

void Context::dispatch(cl_kernel kernel, const std::vector<cl_mem>& buffers, const void* params,
                       size_t params_bytes, const size_t groups[3], const size_t local[3]) {
  size_t global[3];
  for (int d = 0; d < 3; ++d)
    global[d] = std::clamp<size_t>(groups[d], 1, max_groups_) * std::max<size_t>(local[d], 1);
  std::lock_guard<std::mutex> lock(mu_);
  cl_uint arg = 0;
  for (cl_mem b : buffers) check(f_.clSetKernelArg(kernel, arg++, sizeof b, &b), "clSetKernelArg");
  if (params_bytes) check(f_.clSetKernelArg(kernel, arg, params_bytes, params), "clSetKernelArg");
  const int dims = (groups[2] > 1 || local[2] > 1) ? 3 : (groups[1] > 1 || local[1] > 1) ? 2 : 1;
  check(f_.clEnqueueNDRangeKernel(queue_, kernel, static_cast<cl_uint>(dims), nullptr, global,
                                  local, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel");
}

void Context::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  check(f_.clFinish(queue_), "clFinish");
}

}  // namespace polyinfer::opencl
