// Swish (opset 24) and SwiGLU (opset 28), the Swish-gated activations.
//
//   Swish(x)     = x * sigmoid(alpha * x)
//   SwiGLU(A, B) = Swish(A) * B        (A and B of one shape: no broadcasting, no split)
//
// Both operators are defined by function bodies (CastLike, Mul, Sigmoid, Mul), each step of which
// rounds to T; for float16 and bfloat16 the kernels round where those steps do, so they give what
// the expanded function gives.
#include <cmath>
#include <string>

#include "core/dispatch.h"
#include "polyinfer/tensor.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Split at 0 so that exp never overflows: both branches only exponentiate non-positive values.
template <class C> C sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  const C e = std::exp(x);
  return e / (C(1) + e);
}

// Rounds v to T and back: a no-op for float and double.
template <class T> compute_t<T> round_to(compute_t<T> v) {
  return static_cast<compute_t<T>>(static_cast<T>(v));
}

template <class T> compute_t<T> swish(T x, float alpha) {
  using C = compute_t<T>;
  const C a = round_to<T>(static_cast<C>(alpha));  // CastLike(alpha, X)
  const C v = static_cast<C>(x);
  return v * round_to<T>(sigmoid(round_to<T>(a * v)));
}

class SwishKernel final : public Kernel {
 public:
  explicit SwishKernel(const KernelInfo& info) : alpha_(info.attr_float("alpha", 1.0f)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::string who = ctx.node().label();
    dispatch(FloatTypes{}, x.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.output(0, x.dtype(), x.shape());
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = static_cast<T>(swish(in[i], alpha_));
    });
  }

 private:
  float alpha_;
};

class SwiGluKernel final : public Kernel {
 public:
  explicit SwiGluKernel(const KernelInfo& info) : alpha_(info.attr_float("alpha", 1.0f)) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const std::string who = ctx.node().label();
    PI_CHECK(a.dtype() == b.dtype(), InvalidArgument, who, ": A is ", a.describe(), " but B is ",
             b.describe(), "; both must have the same dtype");
    PI_CHECK(a.shape() == b.shape(), ShapeMismatch, who, ": A is ", a.describe(), " but B is ",
             b.describe(),
             "; SwiGLU does not broadcast, so both must have the same shape (split a ",
             "packed projection into A and B with Split or Slice first)");
    dispatch(FloatTypes{}, a.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      Tensor& y = ctx.output(0, a.dtype(), a.shape());
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0, n = a.numel(); i < n; ++i)
        out[i] = static_cast<T>(round_to<T>(swish(pa[i], alpha_)) * static_cast<C>(pb[i]));
    });
  }

 private:
  float alpha_;
};

}  // namespace

PI_CPU_KERNEL(Swish, 24, 28, SwishKernel);
PI_CPU_KERNEL(SwiGLU, 28, 28, SwiGluKernel);

}  // namespace polyinfer
