#include "providers/cuda/plugin/context.h"

#include <cstdio>
#include <cstring>

namespace polyinfer::cuda {
namespace {

// The oldest GPUs the built code runs on: compute_75 PTX (CMAKE_CUDA_ARCHITECTURES), which is
// also the oldest architecture CUDA 13 supports.
constexpr int kMinComputeCapability = 75;

std::string version3(int v) {  // cublasGetVersion: MAJOR*10000 + MINOR*100 + PATCH
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
         std::to_string(v % 100);
}

// What to do about a failure of the first CUDA runtime call: the NVIDIA stack check (doctor's)
// normally catches these before the plugin is asked, so this is the second line.
std::string first_call_hint(cudaError_t e) {
  switch (e) {
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver is missing or older than this CUDA runtime: install or upgrade "
             "the NVIDIA driver and check that nvidia-smi lists the GPU";
    case cudaErrorNoDevice:
      return "no CUDA GPU is visible: check nvidia-smi, CUDA_VISIBLE_DEVICES, and in a container "
             "start it with --gpus all";
    default: return "check nvidia-smi and `polyinfer doctor`";
  }
}

Context* g_context = nullptr;  // made once by init(), never destroyed (see CachingAllocator)

}  // namespace

std::string cuda_error_text(const char* what, cudaError_t e) {
  return std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

std::string cublas_error_text(const char* what, cublasStatus_t s) {
  return std::string(what) + " failed: " + cublasGetStatusName(s) + " (" +
         cublasGetStatusString(s) + ")";
}

std::string cudnn_error_text(const char* what, cudnnStatus_t s) {
  return std::string(what) + " failed: " + cudnnGetErrorString(s) + " (cudnnStatus " +
         std::to_string(static_cast<int>(s)) + ")";
}

std::string Context::init() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] {
    auto* c = new Context();
    reason = c->open();
    // A failed open leaves no usable context; what CUDA objects it made before failing stay with
    // CUDA until the process ends (destroying them could fail the same way).
    if (reason.empty()) g_context = c;
    else
      delete c;
  });
  return reason;
}

Context& Context::get() {
  const std::string why = init();
  PI_CHECK(g_context != nullptr, ProviderUnavailable, "cuda is not usable here: ", why);
  return *g_context;
}

std::string Context::open() {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return cuda_error_text("cudaGetDeviceCount", e) + ": " + first_call_hint(e);
  if (count == 0) return "the CUDA runtime sees no GPU: " + first_call_hint(cudaErrorNoDevice);
  if (const cudaError_t e = cudaSetDevice(0); e != cudaSuccess)
    return cuda_error_text("cudaSetDevice(0)", e) + ": " + first_call_hint(e);
  cudaDeviceProp p{};
  if (const cudaError_t e = cudaGetDeviceProperties(&p, 0); e != cudaSuccess)
    return cuda_error_text("cudaGetDeviceProperties(0)", e) + ": " + first_call_hint(e);
  const int cc = p.major * 10 + p.minor;
  const std::string name(p.name, strnlen(p.name, sizeof p.name));
  if (cc < kMinComputeCapability)
    return "GPU 0 (" + name + ") has compute capability " + std::to_string(p.major) + "." +
           std::to_string(p.minor) + "; this build's kernels need 7.5 or newer (CUDA 13's oldest)";
  max_grid_x_ = p.maxGridSize[0] > 0 ? p.maxGridSize[0] : 65535;
  compute_capability_ = cc;

  if (const cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
      e != cudaSuccess)
    return cuda_error_text("cudaStreamCreate", e);
  if (const cublasStatus_t s = cublasCreate(&cublas_); s != CUBLAS_STATUS_SUCCESS)
    return cublas_error_text("cublasCreate", s) + ": check that cuBLAS matches the CUDA runtime";
  if (const cublasStatus_t s = cublasSetStream(cublas_, stream_); s != CUBLAS_STATUS_SUCCESS)
    return cublas_error_text("cublasSetStream", s);
  // The handle's default math: each product names its compute type (gemm.cpp: CUBLAS_COMPUTE_32F,
  // which never means TF32 for float32 operands: the CPU kernels are the oracle, and TF32 would
  // differ from them by ~1e-3), and a pedantic handle might hold the 16-bit ones back from
  // Tensor Cores.
  // DISALLOW_REDUCED_PRECISION_REDUCTION: split-K sums of 16-bit products reduce in float32.
  if (const cublasStatus_t s = cublasSetMathMode(
          cublas_, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                             CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
      s != CUBLAS_STATUS_SUCCESS)
    return cublas_error_text("cublasSetMathMode", s);
  if (const cublasStatus_t s = cublasLtCreate(&cublaslt_); s != CUBLAS_STATUS_SUCCESS)
    return cublas_error_text("cublasLtCreate", s);
  // cuDNN's own version check: a libcudnn.so.9 of another minor than the headers still works
  // (cuDNN keeps ABI within a major), one of another major would not have loaded.
  cudnn_version_ = cudnnGetVersion();
  if (const cudnnStatus_t s = cudnnCreate(&cudnn_); s != CUDNN_STATUS_SUCCESS)
    return cudnn_error_text("cudnnCreate", s) +
           ": check that cuDNN 9 and its sub-libraries (libcudnn_cnn, libcudnn_ops, "
           "libcudnn_engines_*) are installed for this CUDA";
  if (const cudnnStatus_t s = cudnnSetStream(cudnn_, stream_); s != CUDNN_STATUS_SUCCESS)
    return cudnn_error_text("cudnnSetStream", s);
  if (const cudaError_t e = cudaMalloc(&lt_workspace_, kLtWorkspace); e != cudaSuccess)
    return cuda_error_text("cudaMalloc (cuBLASLt workspace)", e);
  // cuBLAS gets the same workspace (its calls and cuBLASLt's are ordered on the one stream):
  // with a workspace of its own choosing it may allocate mid-run, which a CUDA Graph capture
  // (capture.cpp) cannot record.
  if (const cublasStatus_t s = cublasSetWorkspace(cublas_, lt_workspace_, kLtWorkspace);
      s != CUBLAS_STATUS_SUCCESS)
    return cublas_error_text("cublasSetWorkspace", s);
  alloc_ = std::make_shared<CachingAllocator>(stream_);

  int rt = 0, blas = 0;
  cudaRuntimeGetVersion(&rt);
  cublasGetVersion(cublas_, &blas);
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB", static_cast<double>(p.totalGlobalMem) / (1 << 30));
  gpu_name_ = name;
  description_ = name + " (sm_" + std::to_string(cc) + ", " + mem + ", " +
                 std::to_string(p.multiProcessorCount) + " SMs), CUDA runtime " +
                 std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10) + ", cuBLAS " +
                 version3(blas) + ", cuDNN " + std::to_string(cudnn_version_ / 10000) + "." +
                 std::to_string(cudnn_version_ % 10000 / 100) + "." +
                 std::to_string(cudnn_version_ % 100);
  return "";
}

void Context::synchronize() { PI_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace polyinfer::cuda
