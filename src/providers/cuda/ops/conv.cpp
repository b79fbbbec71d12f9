// Conv and ai.polyinfer FusedConv (act(Conv(X, W, B) + Z)) on CUDA through cuDNN's convolution
// API, float32, float16 and bfloat16: 1-D (as 2-D with one row), 2-D and 3-D, groups, strides,
// dilations, pads and auto_pad. The window arithmetic is the CPU kernels' (WindowAttrs,
// conv_geometry), and cuDNN's own output size is checked against it before anything runs.
//
// Per call: Z (when given) is copied into Y and cuDNN accumulates onto it (beta = 1); the bias
// is added by cudnnAddTensor; the activation runs in place with the element-wise kernel. One
// convolution and up to three light passes, every one of them an ordinary, separately checked
// call (cudnnConvolutionBiasActivationForward fuses only Relu, and only for one algorithm).
//
// Pads: cuDNN takes one pad per axis for both ends. Asymmetric 1-D/2-D pads (auto_pad SAME with
// an odd total, or explicit ones) are applied by copying X into a zero-padded scratch tensor
// and convolving it without padding; asymmetric 3-D pads are refused (at creation when the
// pads are explicit, at run time for auto_pad).
//
// Math: float32 convolutions use CUDNN_FMA_MATH (plain fp32, no TF32), like the matrix products:
// the CPU is the oracle; where the session allows TF32 (SessionOptions::allow_tf32, compute
// capability 8.0 on) they take Tensor Core math too, tuned under their own key ("tf32"), and
// the impl says "+tf32". Float16 and bfloat16 ones accumulate in float32 (cuDNN's
// PSEUDO_HALF_CONFIG and PSEUDO_BFLOAT16_CONFIG) with Tensor Core math allowed, which is what they
// are for; each pass (convolution with Z, bias, activation) rounds its result once.
//
// Algorithm: chosen by timing (cudnnFindConvolutionForwardAlgorithmEx) the first time a kernel
// sees a shape, with up to kMaxTuningWorkspace of scratch memory, and remembered in the tuning
// cache (runtime/tuning_cache.h) under $POLYINFER_CUDA_TUNING_CACHE or
// <cache dir>/cuda-conv-tuning.json, keyed by shapes, attributes, dtype, math, GPU name and
// cuDNN version; a later process reads the winner instead of timing again.
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "core/shape_util.h"
#include "ops/window.h"
#include "providers/cuda/ops/nn_kernels.h"
#include "providers/cuda/ops/op_util.h"
#include "runtime/tuning_cache.h"

namespace polyinfer::cuda {
namespace {

// The most scratch memory timing may give an algorithm (cuDNN's fastest algorithms for large
// convolutions want tens of MiB); also capped at a quarter of the GPU's free memory.
constexpr size_t kMaxTuningWorkspace = size_t{256} << 20;

const char* algo_name(int a) {
  static const char* const names[] = {
      "implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling",
      "winograd",      "winograd_nonfused"};
  return a >= 0 && a < 8 ? names[a] : "unknown";
}

// The process's tuning cache.
TuningCache& tuning_cache() {
  static TuningCache cache(
      tuning_cache_path(std::getenv("POLYINFER_CUDA_TUNING_CACHE"), "cuda-conv-tuning.json"));
  return cache;
}

// Prints the cache's notes (a file it ignored, one it could not write) not printed yet: the
// cache is only ever an optimization, so they are said on stderr and nothing fails.
void print_new_notes() {
  static std::mutex mu;
  static size_t shown = 0;
  const std::vector<std::string> notes = tuning_cache().notes();
  std::lock_guard<std::mutex> lock(mu);
  for (; shown < notes.size(); ++shown) std::cerr << "polyinfer: note: " << notes[shown] << "\n";
}

// cuDNN descriptors, destroyed with the plan (host objects only).
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  Descriptors() {
    PI_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    PI_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    PI_CUDNN_CHECK(cudnnCreateTensorDescriptor(&b));
    PI_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    PI_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  }
  ~Descriptors() {
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (b) cudnnDestroyTensorDescriptor(b);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

// Packed NCHW strides of `dims`.
std::vector<int> packed_strides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

int as_int(int64_t v, const std::string& who, const char* what) {
  PI_CHECK(v >= 0 && v <= 0x7fffffff, UnsupportedOp, who, ": ", what, " ", v,
           " is beyond cuDNN's int range");
  return static_cast<int>(v);
}

cudnnDataType_t cudnn_type(DType d) {
  return d == DType::Float16    ? CUDNN_DATA_HALF
         : d == DType::BFloat16 ? CUDNN_DATA_BFLOAT16
                                : CUDNN_DATA_FLOAT;
}

void set_tensor(cudnnTensorDescriptor_t d, DType t, const std::vector<int>& dims) {
  const std::vector<int> s = packed_strides(dims);
  PI_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d, cudnn_type(t), static_cast<int>(dims.size()),
                                            dims.data(), s.data()));
}

// Everything that depends on the input's shape: descriptors, the padded input's geometry and
// the algorithm with its workspace.
struct Plan {
  Descriptors d;
  bool explicit_pad = false;       // X is first copied into a zero-padded scratch tensor
  std::vector<int64_t> pad_begin;  // per spatial axis of the (2-D) padding copy
  Shape padded;                    // X's shape after that copy
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace = 0;
  std::string impl;
};

class ConvKernel : public Kernel {
 public:
  ConvKernel(const KernelInfo& info, bool fused)
      : ctx_(Context::get()), attrs_(WindowAttrs::parse(info)) {
    for (size_t i = 0; i < 2; ++i) {
      const int r = known_rank(info, i);
      if (r >= 0 && (r < 3 || r > 5))
        info.unsupported("Conv input of rank " + std::to_string(r) +
                         " (the CUDA kernel does 1-D, 2-D and 3-D convolutions)");
    }
    dtype_ = require_float(info, 4, -1, /*library=*/true);
    tf32_ = tf32_for(info, dtype_);
    if (fused) has_act_ = unary_of(act_ = FusedActivation::from(info), &act_op_);
    const auto& p = attrs_.pads;
    if (p.size() == 6 && (p[0] != p[3] || p[1] != p[4] || p[2] != p[5]))
      info.unsupported(
          "asymmetric pads in a 3-D convolution (cuDNN takes one pad per axis; "
          "the CUDA kernel pads explicitly in 1-D and 2-D only)");
  }
  std::string impl() const override { return impl_; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    const Tensor& w = kc.input(1);
    check_dtype(kc, x, dtype_);
    check_dtype(kc, w, dtype_);
    PI_CHECK(x.rank() >= 3 && x.rank() <= 5, UnsupportedOp, who, ": input ", x.describe(),
             " (the CUDA kernel does 1-D, 2-D and 3-D convolutions)");
    const WindowGeometry g = conv_geometry(attrs_, x.shape(), w.shape(), who);
    const int64_t N = x.dim(0), M = w.dim(0);
    const Tensor* b = kc.has_input(2) ? &kc.input(2) : nullptr;
    if (b) {
      check_dtype(kc, *b, dtype_);
      PI_CHECK(b->shape() == Shape{M}, ShapeMismatch, who, ": bias must be ", dtype_name(dtype_),
               "[", M, "], got ", b->describe());
    }
    Shape ys{N, M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    const Tensor* z = kc.has_input(3) ? &kc.input(3) : nullptr;
    if (z) {
      check_dtype(kc, *z, dtype_);
      PI_CHECK(z->shape() == ys, ShapeMismatch, who, ": Z ", z->describe(),
               " must have the output's shape ", shape_str(ys));
    }
    Tensor& y = kc.output(0, dtype_, ys);
    if (y.numel() == 0) return;
    void* py = y.raw_data();
    const Elem e = elem_of(dtype_);
    const cudaStream_t stream = ctx_.stream();

    // The convolution proper (Y = conv(X, W) + Z). No input channels (or taps): Y = Z or 0.
    if (x.numel() == 0 || w.numel() == 0) {
      if (z)
        PI_CUDA_CHECK(
            cudaMemcpyAsync(py, z->raw_data(), y.nbytes(), cudaMemcpyDeviceToDevice, stream));
      else
        PI_CUDA_CHECK(cudaMemsetAsync(py, 0, y.nbytes(), stream));
      impl_ = "cuda:conv-empty";
    } else {
      Plan& plan = plan_for(kc, x, w, g, y);
      const void* px = x.raw_data();
      Scratch padded(ctx_, plan.explicit_pad ? padded_bytes(plan) : 0);
      if (plan.explicit_pad) px = pad_input(plan, x, padded);
      if (z)
        PI_CUDA_CHECK(
            cudaMemcpyAsync(py, z->raw_data(), y.nbytes(), cudaMemcpyDeviceToDevice, stream));
      Scratch ws(ctx_, plan.workspace);
      const float one = 1.0f, beta = z ? 1.0f : 0.0f;
      PI_CUDNN_CHECK(cudnnConvolutionForward(ctx_.cudnn(), &one, plan.d.x, px, plan.d.w,
                                             w.raw_data(), plan.d.conv, plan.algo, ws.get(),
                                             ws.size(), &beta, plan.d.y, py));
      if (b) {
        const float add = 1.0f;
        PI_CUDNN_CHECK(
            cudnnAddTensor(ctx_.cudnn(), &add, plan.d.b, b->raw_data(), &add, plan.d.y, py));
        b = nullptr;  // added
      }
      impl_ = plan.impl;
    }
    if (b) {
      // The empty convolution's bias: broadcast-added per channel with the element-wise kernel.
      Broadcast bc;
      bc.rank = 3;
      bc.dims[0] = N;
      bc.dims[1] = M;
      bc.dims[2] = y.numel() / (N * M);
      bc.stride_a[0] = M * bc.dims[2];
      bc.stride_a[1] = bc.dims[2];
      bc.stride_a[2] = 1;
      bc.stride_b[1] = 1;
      Scratch sum(ctx_, y.nbytes());
      launch_binary(BinaryOp::Add, e, py, b->raw_data(), sum.get(), y.numel(), &bc,
                    ctx_.max_grid_x(), stream);
      PI_CUDA_CHECK(cudaMemcpyAsync(py, sum.get(), y.nbytes(), cudaMemcpyDeviceToDevice, stream));
    }
    if (has_act_) {
      launch_unary(act_op_, e, py, py, y.numel(), act_.alpha, act_.beta, ctx_.max_grid_x(), stream);
      if (impl_.find("+act") == std::string::npos) impl_ += "+act";
    }
    check_launch(who.c_str());
  }

 private:
  // The plan for this input shape, made (and the algorithm timed or read from the cache) the
  // first time the shape is seen.
  Plan& plan_for(KernelContext& kc, const Tensor& x, const Tensor& w, const WindowGeometry& g,
                 const Tensor& y) {
    const std::string shape_key = shape_str(x.shape()) + shape_str(w.shape());
    if (const auto it = plans_.find(shape_key); it != plans_.end()) return *it->second;
    const std::string who = kc.node().label();
    auto plan = std::make_unique<Plan>();
    Plan& p = *plan;
    bool symmetric = true;
    for (int d = 0; d < g.rank; ++d) symmetric &= g.pad_begin[d] == g.pad_end[d];
    p.padded = x.shape();
    std::vector<int64_t> pads = g.pad_begin;
    if (!symmetric) {
      PI_CHECK(g.rank <= 2, UnsupportedOp, who, ": asymmetric pads ", shape_str(g.pad_begin), " / ",
               shape_str(g.pad_end), " in a 3-D convolution (cuDNN takes one pad per axis)");
      p.explicit_pad = true;
      p.pad_begin = g.pad_begin;
      for (int d = 0; d < g.rank; ++d) {
        p.padded[2 + d] += g.pad_begin[d] + g.pad_end[d];
        pads[d] = 0;
      }
    }
    // cuDNN wants at least 4-D tensors: 1-D is 2-D with one row.
    std::vector<int> xd, wd, yd, pad, stride, dil;
    for (int64_t v : p.padded) xd.push_back(as_int(v, who, "input dimension"));
    for (int64_t v : w.shape()) wd.push_back(as_int(v, who, "weight dimension"));
    for (int64_t v : y.shape()) yd.push_back(as_int(v, who, "output dimension"));
    for (int d = 0; d < g.rank; ++d) {
      pad.push_back(as_int(pads[d], who, "pad"));
      stride.push_back(as_int(g.strides[d], who, "stride"));
      dil.push_back(as_int(g.dilations[d], who, "dilation"));
    }
    if (g.rank == 1) {
      xd.insert(xd.begin() + 2, 1);
      wd.insert(wd.begin() + 2, 1);
      yd.insert(yd.begin() + 2, 1);
      pad.insert(pad.begin(), 0);
      stride.insert(stride.begin(), 1);
      dil.insert(dil.begin(), 1);
    }
    const int nd = static_cast<int>(xd.size());
    set_tensor(p.d.x, dtype_, xd);
    set_tensor(p.d.y, dtype_, yd);
    std::vector<int> bd(static_cast<size_t>(nd), 1);
    bd[1] = yd[1];
    set_tensor(p.d.b, dtype_, bd);
    PI_CUDNN_CHECK(
        cudnnSetFilterNdDescriptor(p.d.w, cudnn_type(dtype_), CUDNN_TENSOR_NCHW, nd, wd.data()));
    // The compute type is float32 for every storage type (the PSEUDO_* configurations).
    PI_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(p.d.conv, nd - 2, pad.data(), stride.data(),
                                                   dil.data(), CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT));
    PI_CUDNN_CHECK(cudnnSetConvolutionGroupCount(p.d.conv, static_cast<int>(attrs_.group)));
    PI_CUDNN_CHECK(cudnnSetConvolutionMathType(
        p.d.conv, tensor_cores() ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    // cuDNN's output size must be the CPU geometry's: a disagreement would write past Y.
    std::vector<int> cd(static_cast<size_t>(nd));
    PI_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(p.d.conv, p.d.x, p.d.w, nd, cd.data()));
    PI_CHECK(cd == yd, Internal, who, ": cuDNN's output shape differs from the ONNX geometry's ",
             shape_str(y.shape()), " (a bug in the CUDA Conv kernel)");

    ConvTuningKey key;
    key.x = p.padded;
    key.w = w.shape();
    key.strides = g.strides;
    key.dilations = g.dilations;
    key.pads = pads;
    key.group = attrs_.group;
    key.dtype = dtype_name(dtype_);
    key.math = tf32_ ? "tf32" : tensor_cores() ? "tensor_op" : "fma";
    key.device = ctx_.gpu_name();
    key.library = "cudnn " + std::to_string(ctx_.cudnn_version());
    const std::string tkey = conv_tuning_key(key);
    bool chosen = false;
    if (const auto hit = tuning_cache().find(tkey);
        hit && hit->algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT) {
      // A cached winner is checked against this cuDNN: an algorithm it no longer supports for
      // the shape is timed again.
      const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(hit->algo);
      size_t bytes = 0;
      if (cudnnGetConvolutionForwardWorkspaceSize(ctx_.cudnn(), p.d.x, p.d.w, p.d.conv, p.d.y, algo,
                                                  &bytes) == CUDNN_STATUS_SUCCESS) {
        p.algo = algo;
        p.workspace = bytes;
        chosen = true;
      }
    }
    if (!chosen) chosen = time_algorithms(p, x, w, y, tkey);
    if (!chosen) heuristic_algorithm(who, p);
    print_new_notes();
    p.impl = std::string("cuda:cudnn:") + algo_name(p.algo) + (p.explicit_pad ? "+pad" : "") +
             (tf32_ ? "+tf32" : "");
    return *plans_.emplace(shape_key, std::move(plan)).first->second;
  }

  // Tensor Core math: for the 16-bit types, and for float32 only where TF32 is allowed.
  bool tensor_cores() const { return dtype_ != DType::Float32 || tf32_; }

  size_t padded_bytes(const Plan& p) const {
    return size_t(shape_numel(p.padded)) * dtype_size(dtype_);
  }

  // X copied into `buf` with the plan's zero padding (1-D or 2-D); returns buf's data.
  const void* pad_input(const Plan& p, const Tensor& x, const Scratch& buf) {
    const bool two_d = p.padded.size() == 4;
    launch_pad_planes(elem_of(dtype_), x.raw_data(), buf.get(), x.dim(0) * x.dim(1),
                      two_d ? x.dim(2) : 1, x.shape().back(), two_d ? p.pad_begin[0] : 0,
                      p.pad_begin.back(), two_d ? p.padded[2] : 1, p.padded.back(),
                      ctx_.max_grid_x(), ctx_.stream());
    check_launch("Conv explicit padding");
    return buf.get();
  }

  // Times every algorithm on the real tensors (cudnnFindConvolutionForwardAlgorithmEx writes Y;
  // Z and the bias are applied after) and stores the fastest; false when none ran.
  bool time_algorithms(Plan& p, const Tensor& x, const Tensor& w, const Tensor& y,
                       const std::string& tkey) {
    size_t free_b = 0, total_b = 0;
    PI_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t limit = std::min(kMaxTuningWorkspace, free_b / 4);
    std::unique_ptr<Scratch> ws;
    try {
      ws = std::make_unique<Scratch>(ctx_, limit);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::OutOfMemory) throw;
      limit = 0;  // time the algorithms that need no scratch memory
      ws = std::make_unique<Scratch>(ctx_, 0);
    }
    // The padded input for timing: a zero-padded copy is what the runs convolve.
    Scratch padded(ctx_, p.explicit_pad ? padded_bytes(p) : 0);
    const void* px = p.explicit_pad ? pad_input(p, x, padded) : x.raw_data();
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
    int found = 0;
    // A configuration cuDNN cannot time (NOT_SUPPORTED for every algorithm, say) is left to its
    // heuristic; the failure is said once, since the run then goes on with an untimed choice.
    const cudnnStatus_t st = cudnnFindConvolutionForwardAlgorithmEx(
        ctx_.cudnn(), p.d.x, px, p.d.w, w.raw_data(), p.d.conv, p.d.y,
        const_cast<void*>(y.raw_data()), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf, ws->get(),
        limit);
    if (st != CUDNN_STATUS_SUCCESS) {
      std::cerr << "polyinfer: note: "
                << cudnn_error_text("cudnnFindConvolutionForwardAlgorithmEx", st) << " for " << tkey
                << "; using cuDNN's heuristic choice\n";
      return false;
    }
    // Sorted fastest first; only successes within the workspace, and for float32 no Tensor Core
    // (TF32) math unless allowed.
    for (int i = 0; i < found; ++i) {
      const auto& r = perf[i];
      if (r.status != CUDNN_STATUS_SUCCESS || r.memory > limit || r.time < 0) continue;
      if (!tensor_cores() && (r.mathType == CUDNN_TENSOR_OP_MATH ||
                              r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
        continue;
      p.algo = r.algo;
      p.workspace = r.memory;
      // The runs use the math the timing measured (cuDNN's advice after Find).
      PI_CUDNN_CHECK(cudnnSetConvolutionMathType(p.d.conv, r.mathType));
      tuning_cache().store(tkey,
                           {static_cast<int64_t>(r.algo), r.memory, static_cast<double>(r.time)});
      return true;
    }
    return false;
  }

  // cuDNN's heuristic ranking, when timing found nothing usable (not persisted).
  void heuristic_algorithm(const std::string& who, Plan& p) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
    int found = 0;
    PI_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(ctx_.cudnn(), p.d.x, p.d.w, p.d.conv,
                                                          p.d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                          &found, perf));
    for (int i = 0; i < found; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxTuningWorkspace) {
        p.algo = perf[i].algo;
        p.workspace = perf[i].memory;
        return;
      }
    fail(ErrorCode::Internal, who, ": cuDNN has no forward algorithm for this convolution");
  }

  Context& ctx_;
  DType dtype_ = DType::Float32;
  bool tf32_ = false;  // tf32_for()
  WindowAttrs attrs_;
  FusedActivation act_;
  bool has_act_ = false;
  UnaryOp act_op_ = UnaryOp::Relu;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  std::string impl_ = "cuda:cudnn";
};

struct PlainConvKernel final : ConvKernel {
  explicit PlainConvKernel(const KernelInfo& info) : ConvKernel(info, false) {}
};
struct FusedConvKernel final : ConvKernel {
  explicit FusedConvKernel(const KernelInfo& info) : ConvKernel(info, true) {}
};

PI_CUDA_KERNEL(Conv, 1, 28, PlainConvKernel);
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", FusedConv, 1, 1, FusedConvKernel);

}  // namespace
}  // namespace polyinfer::cuda
