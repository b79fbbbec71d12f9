// Fast Cast of 32- and 8-bit integers to float32: dynamically quantized linear layers end in
// MatMulInteger → Cast(int32 → float) → Mul(scale), and the reference kernel's per-element
// dispatch cost a tenth of a dynamically quantized BERT-base's run. One vectorized conversion,
// the same one the reference makes (static_cast, round to nearest even). Other casts go to the
// reference kernel.
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

template <class S>
PI_FAST_CLONES void to_float(const S* __restrict x, float* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x[i]);
}

PI_FAST_MATH_END

class FastCast final : public Kernel {
 public:
  explicit FastCast(const KernelInfo& info) : ref_(info) {
    const ir::Attribute* to = info.node().attr("to");
    if (!to || to->type != ir::Attribute::Type::Int || to->i != 1)
      info.unsupported("the fast kernel for casts to other than float32");
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Int32 && t != DType::Int8 && t != DType::UInt8) return ref_.run(ctx);
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    float* yp = y.data<float>();
    parallel_for(x.numel(), ctx.threads(), kGrain, [&](int64_t b, int64_t e) {
      if (t == DType::Int32) to_float(x.data<int32_t>() + b, yp + b, e - b);
      else if (t == DType::Int8)
        to_float(x.data<int8_t>() + b, yp + b, e - b);
      else
        to_float(x.data<uint8_t>() + b, yp + b, e - b);
    });
  }

 private:
  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Cast, 6, 28, FastCast);

}  // namespace polyinfer::fast
