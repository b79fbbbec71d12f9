// The OpenCL context's programs (context.h): built from the embedded OpenCL C (kernels.h) once
// per process, their binaries cached on disk so that the next process does not compile.
//
// The cache file is <polyinfer cache dir>/opencl/<hash>.bin, the hash over the platform, device,
// device version and driver version (a driver update compiles afresh), the build options and the
// source. A file that is missing, unreadable or refused by the driver (CL_INVALID_BINARY) only
// means compiling from source, which then writes it anew. POLYINFER_OPENCL_CACHE=off disables
// the cache.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "providers/opencl/context.h"
#include "providers/opencl/kernels.h"
#include "runtime/cache_file.h"

namespace polyinfer::opencl {
namespace {

constexpr size_t kMaxBinaryBytes = size_t{256} << 20;

uint64_t fnv1a(const std::string& s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string cache_dir() {
  const char* off = std::getenv("POLYINFER_OPENCL_CACHE");
  if (off && (std::strcmp(off, "off") == 0 || std::strcmp(off, "0") == 0)) return "";
  const std::string base = polyinfer_cache_dir();
  return base.empty() ? "" : base + "/opencl";
}

}  // namespace

cl_program Context::build_locked(const std::string& name, const std::string& options) {
  const auto& sources = kernel_sources();
  const auto it = sources.find(name);
  PI_CHECK(it != sources.end(), Internal, "OpenCL: no program named ", name);
  // The preludes every program shares: common.cl, then activation.cl (the fused activations).
  std::string source = sources.at("common") + "\n";
  if (auto act = sources.find("activation"); act != sources.end() && name != "activation")
    source += act->second + "\n";
  source += it->second;
  const std::string opts = "-cl-std=CL1.2 " + options;

  const std::string dir = cache_dir();
  program_stats_.cache_dir = dir;
  char hex[17];
  std::snprintf(
      hex, sizeof hex, "%016llx",
      static_cast<unsigned long long>(fnv1a(source, fnv1a(opts + '\n', fnv1a(cache_key_ + '\n')))));
  const std::string path = dir.empty() ? "" : dir + "/" + name + "-" + hex + ".bin";

  cl_int r = CL_SUCCESS;
  if (!path.empty()) {
    const std::string binary = read_small_file(path, kMaxBinaryBytes);
    if (!binary.empty()) {
      const size_t size = binary.size();
      const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
      cl_int status = CL_SUCCESS;
      cl_program p =
          f_.clCreateProgramWithBinary(context_, 1, &device_, &size, &bytes, &status, &r);
      if (p && r == CL_SUCCESS && status == CL_SUCCESS &&
          f_.clBuildProgram(p, 1, &device_, opts.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        ++program_stats_.from_cache;
        return p;
      }
      if (p) f_.clReleaseProgram(p);
    }
  }

  const char* text = source.c_str();
  const size_t length = source.size();
  cl_program p = f_.clCreateProgramWithSource(context_, 1, &text, &length, &r);
  PI_CHECK(r == CL_SUCCESS && p, Internal, "OpenCL: clCreateProgramWithSource (", name,
           ") failed: ", error_name(r));
  r = f_.clBuildProgram(p, 1, &device_, opts.c_str(), nullptr, nullptr);
  if (r != CL_SUCCESS) {
    size_t size = 0;
    std::string log;
    if (f_.clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) ==
            CL_SUCCESS &&
        size > 0 && size < (size_t{1} << 20)) {
      log.resize(size);
      f_.clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      log.resize(strnlen(log.c_str(), size));
    }
    f_.clReleaseProgram(p);
    fail(ErrorCode::UnsupportedOp, "the OpenCL driver could not build program ", name, " (",
         options.empty() ? "no options" : options, "): ", error_name(r),
         log.empty() ? "" : "; build log: " + log.substr(0, 2000));
  }
  ++program_stats_.compiled;

  if (!path.empty()) {
    size_t size = 0;
    if (f_.clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) ==
            CL_SUCCESS &&
        size > 0 && size <= kMaxBinaryBytes) {
      std::string binary(size, '\0');
      unsigned char* out = reinterpret_cast<unsigned char*>(binary.data());
      if (f_.clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof out, &out, nullptr) == CL_SUCCESS)
        write_file_atomically(path, binary);  // a failure only means no cache next time
    }
  }
  return p;
}

cl_kernel Context::kernel(const std::string& program, const std::string& entry,
                          const std::string& options) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = program + '\n' + options + '\n' + entry;
  if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
  const std::string pkey = program + '\n' + options;
  auto pit = programs_.find(pkey);
  if (pit == programs_.end()) pit = programs_.emplace(pkey, build_locked(program, options)).first;
  cl_int r = CL_SUCCESS;
  cl_kernel k = f_.clCreateKernel(pit->second, entry.c_str(), &r);
  PI_CHECK(r == CL_SUCCESS && k, Internal, "OpenCL: clCreateKernel ", entry, " of program ",
           program, " failed: ", error_name(r));
  kernels_.emplace(key, k);
  return k;
}

Context::ProgramStats Context::program_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ProgramStats s = program_stats_;
  if (s.cache_dir.empty()) s.cache_dir = cache_dir();
  return s;
}

}  // namespace polyinfer::opencl
