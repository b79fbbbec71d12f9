// Fast float32 element-wise math and activations: Relu, LeakyRelu, Sigmoid, HardSigmoid,
// HardSwish, Mish, Tanh, Erf, Exp, Sqrt, Clip and Gelu (ONNX opset 20); ai.polyinfer's Gelu,
// HardSwish and Mish (the later-opset operators the optimizer emits below their opsets).
//
// Each is one `#pragma omp simd` loop compiled per ISA (PI_FAST_CLONES) and split over threads
// for large tensors. Exp, Sigmoid, Tanh, Erf and Mish use fast_util.h's vector approximations
// (within a few float ulps of the C library; tested in fast_unary_test.cpp). Gelu is computed
// without cancellation where the reference formula has it: the tanh form as x * sigmoid(2u)
// (= 0.5 x (1 + tanh u)), the exact form below x = -3 (where 1 + erf(x / sqrt 2) < 2.7e-3 and
// fast_erf's absolute error, < 3e-7, would no longer be small next to it) as
// fast_gelu_erf_tail's exp(-x^2 / 2) series, in vector code too.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

// y[i] = f(x[i]) with up to two float parameters p0, p1 (alpha, beta, min, max).
using MapFn = void (*)(const float*, float*, int64_t, float, float);

// v limited to [0, 1] as the reference writes it (NaN stays NaN).
inline float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

#define PI_FAST_UNARY_LOOP(NAME, EXPR)                                                          \
  PI_FAST_CLONES void NAME##_loop(const float* __restrict in, float* __restrict out, int64_t n, \
                                  float p0, float p1) {                                         \
    _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) {                                       \
      const float x = in[i];                                                                    \
      out[i] = (EXPR);                                                                          \
    }                                                                                           \
  }

PI_FAST_UNARY_LOOP(relu, x < 0.0f ? 0.0f : x)
PI_FAST_UNARY_LOOP(leaky_relu, x < 0.0f ? p0 * x : x)
PI_FAST_UNARY_LOOP(sigmoid, fast_sigmoid(x))
PI_FAST_UNARY_LOOP(hard_sigmoid, clamp01(p0* x + p1))
PI_FAST_UNARY_LOOP(hard_swish, x* clamp01(x / 6.0f + 0.5f))
PI_FAST_UNARY_LOOP(tanh, fast_tanh(x))
PI_FAST_UNARY_LOOP(erf, fast_erf(x))
PI_FAST_UNARY_LOOP(exp, fast_exp(x))
// Clip as numpy.clip: max then min, so lo > hi gives hi everywhere; NaN stays NaN.
PI_FAST_UNARY_LOOP(clip, (x < p0 ? p0 : x) > p1 ? p1 : (x < p0 ? p0 : x))
// 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
PI_FAST_UNARY_LOOP(gelu_tanh,
                   x* fast_sigmoid(2.0f * 0.79788456080286535588f * (x + 0.044715f * x * x * x)))
PI_FAST_UNARY_LOOP(mish, fast_mish(x))

// Gelu, erf form: 64 at a time, the x < -3 lanes redone by the tail formula where a block has
// any (0.1% of a unit normal: most blocks skip that loop).
PI_FAST_CLONES void gelu_erf_loop(const float* __restrict in, float* __restrict out, int64_t n,
                                  float, float) {
  constexpr int64_t kBlock = 64;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = b + kBlock < n ? b + kBlock : n;
    int low = 0;
#pragma omp simd reduction(| : low)
    for (int64_t i = b; i < e; ++i) {
      const float x = in[i];
      out[i] = 0.5f * x * (1.0f + fast_erf(x * 0.70710678118654752440f));
      low |= x < -3.0f;
    }
    if (!low) continue;
#pragma omp simd
    for (int64_t i = b; i < e; ++i) {
      const float x = in[i];
      const float t = fast_gelu_erf_tail(x);
      out[i] = x < -3.0f ? t : out[i];
    }
  }
}

// GCC keeps sqrt's errno path here despite no-math-errno in the pragma (so the loop stays
// scalar sqrtss); it is still threaded. An intrinsics version would be the next step.
PI_FAST_UNARY_LOOP(sqrt, __builtin_sqrtf(x))
#undef PI_FAST_UNARY_LOOP

PI_FAST_MATH_END

// The kernel shared by all of them; the per-operator part is which loop and which parameters.
class FastMapKernel : public Kernel {
 public:
  // `onnx_op`/`onnx_opset`: the ONNX op an ai.polyinfer op stands for (RefFallback).
  FastMapKernel(const KernelInfo& info, MapFn fn, float p0 = 0, float p1 = 0,
                const char* onnx_op = nullptr, int onnx_opset = 0)
      : ref_(info, onnx_op, onnx_opset), fn_(fn), p0_(p0), p1_(p1) {
    require_float_input(info, 0);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    // Parameters are locals: one kernel may serve concurrent runs of a session.
    float p0 = p0_, p1 = p1_;
    if (x.dtype() != DType::Float32 || !bounds(ctx, p0, p1)) return ref_.run(ctx);
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    const float* in = x.data<float>();
    float* out = y.data<float>();
    parallel_for(x.numel(), ctx.threads(), grain_,
                 [&](int64_t b, int64_t e) { fn_(in + b, out + b, e - b, p0, p1); });
  }

 protected:
  // Reads run-time parameters (Clip's min/max inputs) into p0/p1; false sends the node to the
  // reference kernel.
  virtual bool bounds(KernelContext&, float&, float&) { return true; }

  RefFallback ref_;
  MapFn fn_;
  float p0_, p1_;
  int64_t grain_ = kGrain;
};

struct FastRelu final : FastMapKernel {
  explicit FastRelu(const KernelInfo& i) : FastMapKernel(i, relu_loop) {}
};
struct FastLeakyRelu final : FastMapKernel {
  explicit FastLeakyRelu(const KernelInfo& i)
      : FastMapKernel(i, leaky_relu_loop, i.attr_float("alpha", 0.01f)) {}
};
struct FastSigmoid final : FastMapKernel {
  explicit FastSigmoid(const KernelInfo& i) : FastMapKernel(i, sigmoid_loop) { grain_ /= 4; }
};
struct FastHardSigmoid final : FastMapKernel {
  explicit FastHardSigmoid(const KernelInfo& i)
      : FastMapKernel(i, hard_sigmoid_loop, i.attr_float("alpha", 0.2f),
                      i.attr_float("beta", 0.5f)) {}
};
// ai.polyinfer HardSwish and Mish are the opset-14 / opset-18 operators (RefFallback's).
struct FastHardSwish final : FastMapKernel {
  explicit FastHardSwish(const KernelInfo& i)
      : FastMapKernel(i, hard_swish_loop, 0, 0, "HardSwish", 14) {}
};
struct FastMish final : FastMapKernel {
  explicit FastMish(const KernelInfo& i) : FastMapKernel(i, mish_loop, 0, 0, "Mish", 18) {
    grain_ /= 4;
  }
};
struct FastTanh final : FastMapKernel {
  explicit FastTanh(const KernelInfo& i) : FastMapKernel(i, tanh_loop) { grain_ /= 4; }
};
struct FastErf final : FastMapKernel {
  explicit FastErf(const KernelInfo& i) : FastMapKernel(i, erf_loop) { grain_ /= 4; }
};
struct FastExp final : FastMapKernel {
  explicit FastExp(const KernelInfo& i) : FastMapKernel(i, exp_loop) { grain_ /= 4; }
};
struct FastSqrt final : FastMapKernel {
  explicit FastSqrt(const KernelInfo& i) : FastMapKernel(i, sqrt_loop) {}
};

class FastGelu final : public FastMapKernel {
 public:
  explicit FastGelu(const KernelInfo& i) : FastMapKernel(i, pick(i), 0, 0, "Gelu", 20) {
    grain_ /= 4;
  }

 private:
  static MapFn pick(const KernelInfo& i) {
    const std::string mode = i.attr_string("approximate", "none");
    if (mode == "tanh") return gelu_tanh_loop;
    if (mode != "none") i.unsupported("approximate=" + mode);
    return gelu_erf_loop;
  }
};

// Clip: min/max are attributes up to opset 6..10, optional scalar inputs from opset 11.
class FastClip final : public FastMapKernel {
 public:
  explicit FastClip(const KernelInfo& i)
      : FastMapKernel(i, clip_loop, i.attr_float("min", std::numeric_limits<float>::lowest()),
                      i.attr_float("max", std::numeric_limits<float>::max())),
        attr_form_(i.opset() < 11) {}

 private:
  bool bounds(KernelContext& ctx, float& lo, float& hi) override {
    if (attr_form_) return true;
    lo = std::numeric_limits<float>::lowest();
    hi = std::numeric_limits<float>::max();
    return read(ctx, 1, lo) && read(ctx, 2, hi);
  }
  // An optional bound input: absent keeps v; a float32 one-element tensor sets it; anything
  // else (the reference kernel's errors included) goes to the reference kernel.
  static bool read(KernelContext& ctx, size_t i, float& v) {
    if (!ctx.has_input(i)) return true;
    const Value& val = ctx.value(i);
    if (!val.is_tensor()) return false;
    const Tensor& t = val.tensor();
    if (t.dtype() != DType::Float32 || t.numel() != 1) return false;
    v = t.data<float>()[0];
    return true;
  }
  bool attr_form_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Relu, 6, 28, FastRelu);
PI_CPU_FAST_KERNEL("", LeakyRelu, 6, 28, FastLeakyRelu);
PI_CPU_FAST_KERNEL("", Sigmoid, 6, 28, FastSigmoid);
PI_CPU_FAST_KERNEL("", HardSigmoid, 6, 28, FastHardSigmoid);
PI_CPU_FAST_KERNEL("", HardSwish, 14, 28, FastHardSwish);
PI_CPU_FAST_KERNEL("ai.polyinfer", HardSwish, 1, 1, FastHardSwish);
PI_CPU_FAST_KERNEL("", Mish, 18, 28, FastMish);
PI_CPU_FAST_KERNEL("ai.polyinfer", Mish, 1, 1, FastMish);
PI_CPU_FAST_KERNEL("", Tanh, 6, 28, FastTanh);
PI_CPU_FAST_KERNEL("", Erf, 9, 28, FastErf);
PI_CPU_FAST_KERNEL("", Exp, 6, 28, FastExp);
PI_CPU_FAST_KERNEL("", Sqrt, 6, 28, FastSqrt);
PI_CPU_FAST_KERNEL("", Clip, 6, 28, FastClip);
PI_CPU_FAST_KERNEL("", Gelu, 20, 28, FastGelu);
PI_CPU_FAST_KERNEL("ai.polyinfer", Gelu, 1, 1, FastGelu);

}  // namespace polyinfer::fast
