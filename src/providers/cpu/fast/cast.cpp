// Fast Cast among float32, int32, int64 and bool, and from int8/uint8 to those: dynamically
// quantized linear layers end in MatMulInteger → Cast(int32 → float) → Mul(scale), masks and
// indices go bool ↔ int64 ↔ float, and the reference kernel's per-element dispatch cost a tenth
// of a dynamically quantized BERT-base's run. One vectorized loop per pair, converting as the
// reference does: integers → float round to nearest even; float → integer truncates toward
// zero, saturates at the target's range and makes NaN 0; integer → integer wraps; anything →
// bool is `!= 0` (NaN is true); bool → number is 0 or 1. A cast to the input's own type returns
// the input. Other types go to the reference kernel.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

template <class D, class S> PI_FAST_INLINE D convert(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    // 2^31 and 2^63 are floats; the reference's limits (INT_MAX as a double) round up to them.
    constexpr float hi = -static_cast<float>(std::numeric_limits<D>::lowest());
    return v != v     ? D(0)
           : v >= hi  ? std::numeric_limits<D>::max()
           : v <= -hi ? std::numeric_limits<D>::lowest()
                      : static_cast<D>(v);
  } else {
    return static_cast<D>(v);  // bool → 0/1, int → float, integer wraps (C++20)
  }
}

template <class D, class S>
PI_FAST_CLONES void convert_loop(const S* __restrict x, D* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = convert<D>(x[i]);
}

PI_FAST_MATH_END

// A conversion of n elements from x to y (raw bytes of the two dtypes).
using CastFn = void (*)(const void*, void*, int64_t);

template <class D, class S> void cast_fn(const void* x, void* y, int64_t n) {
  convert_loop<D, S>(static_cast<const S*>(x), static_cast<D*>(y), n);
}

template <class D> CastFn from(DType s) {
  switch (s) {
    case DType::Float32: return cast_fn<D, float>;
    case DType::Int32: return cast_fn<D, int32_t>;
    case DType::Int64: return cast_fn<D, int64_t>;
    // Read as their bytes, 0 or 1: compilers do not vectorize a loop that loads bool (7x
    // slower from bool to float32 on AVX-512).
    case DType::Bool: return cast_fn<D, uint8_t>;
    case DType::Int8: return cast_fn<D, int8_t>;
    case DType::UInt8: return cast_fn<D, uint8_t>;
    default: return nullptr;
  }
}

CastFn pick(DType s, DType d) {
  switch (d) {
    case DType::Float32: return from<float>(s);
    case DType::Int32: return from<int32_t>(s);
    case DType::Int64: return from<int64_t>(s);
    case DType::Bool: return from<bool>(s);
    default: return nullptr;
  }
}

class FastCast final : public Kernel {
 public:
  explicit FastCast(const KernelInfo& info) : ref_(info) {
    const ir::Attribute* to = info.node().attr("to");
    if (!to || to->type != ir::Attribute::Type::Int || !pick(DType::Float32, DType(to->i)))
      info.unsupported("the fast kernel for casts to other than float32, int32, int64, bool");
    to_ = DType(to->i);
    const ir::TypeInfo* t = info.input_type(0);
    if (t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem != DType::Undefined &&
        t->elem != to_ && !pick(t->elem, to_))
      info.unsupported(std::string("the fast kernel for casts from ") + dtype_name(t->elem));
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == to_) return ctx.set_output(0, x);  // as the reference: no copy
    const CastFn fn = pick(x.dtype(), to_);
    if (!fn) return ref_.run(ctx);
    Tensor& y = ctx.output(0, to_, x.shape());
    const char* xp = static_cast<const char*>(x.raw_data());
    char* yp = static_cast<char*>(y.raw_data());
    const size_t xs = dtype_size(x.dtype()), ys = dtype_size(to_);
    parallel_for(x.numel(), ctx.threads(), kGrain,
                 [&](int64_t b, int64_t e) { fn(xp + b * xs, yp + b * ys, e - b); });
  }

 private:
  RefFallback ref_;
  DType to_ = DType::Float32;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Cast, 6, 28, FastCast);

}  // namespace polyinfer::fast
