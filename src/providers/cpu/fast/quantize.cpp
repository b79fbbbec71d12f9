// Fast QuantizeLinear / DequantizeLinear between float32 and uint8/int8, DynamicQuantizeLinear
// and ai.polyinfer QLinearAdd: what is left of a quantized model between its integer kernels
// (float pooling, the network's input and output, dynamically quantized activations), one
// vectorized pass each. The reference kernels (reference/quantize.cpp) go through doubles and cost
// ~30x more per element.
//
// Same numbers as the reference: quantize divides in float (x / s, as the spec's reference does
// for float32), rounds half to even (rint in the default rounding mode; |x / s| < 2^24 is exact
// in float, larger values saturate either way), adds the zero point, saturates, and maps NaN to
// 0; dequantize computes float(q - zp) * s. Per-tensor and per-axis scales; anything else (other
// dtypes, bad shapes) goes to the reference kernel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

template <class Q>
PI_FAST_CLONES void quantize_run(const float* __restrict x, Q* __restrict y, int64_t n, float s,
                                 float zp) {
  constexpr float lo = std::is_signed_v<Q> ? -128.f : 0.f, hi = std::is_signed_v<Q> ? 127.f : 255.f;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = __builtin_rintf(x[i] / s) + zp;
    const float c = v < lo ? lo : (v > hi ? hi : v);
    y[i] = static_cast<Q>(v == v ? c : 0.f);
  }
}

template <class Q>
PI_FAST_CLONES void dequantize_run(const Q* __restrict x, float* __restrict y, int64_t n, float s,
                                   int32_t zp) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(int32_t(x[i]) - zp) * s;
}

// ai.polyinfer QLinearAdd on one 8-bit type: the reference's float formula, vectorized. Without
// contraction: an FMA of a·sa + b·sb would round once where the float nodes it replaces (two
// DequantizeLinear, an Add) round three times, and results would differ in the last step.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
template <class Q>
PI_FAST_CLONES void qadd_run(const Q* __restrict a, const Q* __restrict b, Q* __restrict c,
                             int64_t n, float sa, int32_t za, float sb, int32_t zb, float sc,
                             float zc) {
  constexpr float lo = std::is_signed_v<Q> ? -128.f : 0.f, hi = std::is_signed_v<Q> ? 127.f : 255.f;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v =
        static_cast<float>(int32_t(a[i]) - za) * sa + static_cast<float>(int32_t(b[i]) - zb) * sb;
    const float r = __builtin_rintf(v / sc) + zc;
    const float k = r < lo ? lo : (r > hi ? hi : r);
    c[i] = static_cast<Q>(r == r ? k : 0.f);
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

// The range of x[0, n) merged into lo, hi; NaN is skipped (as std::min / std::max in the
// reference kernel skip it when it is the second argument).
PI_FAST_CLONES void min_max(const float* __restrict x, int64_t n, float& lo, float& hi) {
  float l = lo, h = hi;
#pragma omp simd reduction(min : l) reduction(max : h)
  for (int64_t i = 0; i < n; ++i) {
    l = x[i] < l ? x[i] : l;
    h = h < x[i] ? x[i] : h;
  }
  lo = l;
  hi = h;
}

PI_FAST_MATH_END

// Scale and zero point per block: `count` parameters, each applying to `inner` consecutive
// elements, repeated `outer` times (per tensor: count 1, inner = numel).
struct Blocks {
  int64_t outer = 1, count = 1, inner = 1;
};

// The blocks for x and scale (float32) / zero point (`qtype`, or absent), or false when the
// parameters are not a form the fast path takes (the reference kernel reports bad ones).
bool blocks_of(const Tensor& x, const Tensor& s, const Tensor* zp, DType qtype, int64_t axis,
               Blocks& b) {
  if (s.dtype() != DType::Float32) return false;
  if (zp && (zp->dtype() != qtype || zp->shape() != s.shape())) return false;
  if (s.numel() == 1 && s.rank() <= 1) {
    b.inner = x.numel();
    return true;
  }
  if (s.rank() != 1 || axis < -x.rank() || axis >= x.rank()) return false;
  const int a = static_cast<int>(axis < 0 ? axis + x.rank() : axis);
  if (s.numel() != x.dim(a)) return false;
  b.count = s.numel();
  for (int d = 0; d < a; ++d) b.outer *= x.dim(d);
  for (int d = a + 1; d < x.rank(); ++d) b.inner *= x.dim(d);
  return true;
}

// f(block_begin, block_len, parameter index) over every block, split over threads.
template <class F> void for_blocks(const Blocks& b, int threads, const F& f) {
  const int64_t nb = b.outer * b.count;
  parallel_for(nb * b.inner, threads, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo / std::max<int64_t>(b.inner, 1); k < nb; ++k) {
      const int64_t s = std::max(lo, k * b.inner), e = std::min(hi, (k + 1) * b.inner);
      if (s >= e) break;
      f(s, e - s, k % b.count);
    }
  });
}

bool is_8bit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// Opset 21+ attributes this path leaves to the reference kernel: blocked quantization, and a
// division in other than float32 (QuantizeLinear's `precision`, 23+). output_dtype names the
// output type without a zero point.
bool plain_quantization(const KernelInfo& info) {
  const int64_t p = info.attr_int("precision", 0);
  return info.attr_int("block_size", 0) == 0 && (p == 0 || p == int64_t(DType::Float32));
}

class FastQuantizeLinear final : public Kernel {
 public:
  explicit FastQuantizeLinear(const KernelInfo& info)
      : ref_(info),
        axis_(info.attr_int("axis", 1)),
        output_dtype_(static_cast<DType>(info.attr_int("output_dtype", 0))),
        plain_(plain_quantization(info)) {
    require_float_input(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& s = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const DType qt = zp                                  ? zp->dtype()
                     : output_dtype_ != DType::Undefined ? output_dtype_
                                                         : DType::UInt8;
    Blocks b;
    if (!plain_ || x.dtype() != DType::Float32 || !is_8bit(qt) ||
        (zp && output_dtype_ != DType::Undefined && output_dtype_ != qt) ||
        !blocks_of(x, s, zp, qt, axis_, b))
      return ref_.run(ctx);
    Tensor& y = ctx.output(0, qt, x.shape());
    const float* xp = x.data<float>();
    const float* sp = s.data<float>();
    for_blocks(b, ctx.threads(), [&](int64_t at, int64_t n, int64_t p) {
      if (qt == DType::UInt8)
        quantize_run<uint8_t>(xp + at, y.data<uint8_t>() + at, n, sp[p],
                              zp ? float(zp->data<uint8_t>()[p]) : 0.f);
      else
        quantize_run<int8_t>(xp + at, y.data<int8_t>() + at, n, sp[p],
                             zp ? float(zp->data<int8_t>()[p]) : 0.f);
    });
  }

 private:
  RefFallback ref_;
  int64_t axis_;
  DType output_dtype_;
  bool plain_;
};

class FastDequantizeLinear final : public Kernel {
 public:
  explicit FastDequantizeLinear(const KernelInfo& info)
      : ref_(info),
        axis_(info.attr_int("axis", 1)),
        plain_(info.attr_int("block_size", 0) == 0 &&
               (info.attr_int("output_dtype", 0) == 0 ||
                info.attr_int("output_dtype", 0) == int64_t(DType::Float32))) {}
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& s = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    Blocks b;
    if (!plain_ || !is_8bit(x.dtype()) || !blocks_of(x, s, zp, x.dtype(), axis_, b))
      return ref_.run(ctx);
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    const float* sp = s.data<float>();
    float* yp = y.data<float>();
    for_blocks(b, ctx.threads(), [&](int64_t at, int64_t n, int64_t p) {
      if (x.dtype() == DType::UInt8)
        dequantize_run<uint8_t>(x.data<uint8_t>() + at, yp + at, n, sp[p],
                                zp ? zp->data<uint8_t>()[p] : 0);
      else
        dequantize_run<int8_t>(x.data<int8_t>() + at, yp + at, n, sp[p],
                               zp ? zp->data<int8_t>()[p] : 0);
    });
  }

 private:
  RefFallback ref_;
  int64_t axis_;
  bool plain_;  // no blocks, float32 output
};

// The one value of a scalar quantization parameter (scale float32, zero point of type `q`).
bool scalar_param(const Tensor& t, DType q, double& v) {
  if (t.numel() != 1 || t.rank() > 1 || t.dtype() != q) return false;
  v = q == DType::Float32 ? t.data<float>()[0]
      : q == DType::UInt8 ? double(t.data<uint8_t>()[0])
                          : double(t.data<int8_t>()[0]);
  return true;
}

class FastQLinearAdd final : public Kernel {
 public:
  explicit FastQLinearAdd(const KernelInfo& info) : ref_(info) {}
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    const DType t = a.dtype();
    double sa, za, sb, zb, sc, zc;
    if (!is_8bit(t) || b.dtype() != t || a.shape() != b.shape() ||
        !scalar_param(ctx.input(1), DType::Float32, sa) || !scalar_param(ctx.input(2), t, za) ||
        !scalar_param(ctx.input(4), DType::Float32, sb) || !scalar_param(ctx.input(5), t, zb) ||
        !scalar_param(ctx.input(6), DType::Float32, sc) || !scalar_param(ctx.input(7), t, zc))
      return ref_.run(ctx);  // mixed types or bad parameters: the reference computes or reports
    Tensor& c = ctx.output(0, t, a.shape());
    parallel_for(a.numel(), ctx.threads(), kGrain, [&](int64_t lo, int64_t hi) {
      if (t == DType::UInt8)
        qadd_run<uint8_t>(a.data<uint8_t>() + lo, b.data<uint8_t>() + lo, c.data<uint8_t>() + lo,
                          hi - lo, float(sa), int32_t(za), float(sb), int32_t(zb), float(sc),
                          float(zc));
      else
        qadd_run<int8_t>(a.data<int8_t>() + lo, b.data<int8_t>() + lo, c.data<int8_t>() + lo,
                         hi - lo, float(sa), int32_t(za), float(sb), int32_t(zb), float(sc),
                         float(zc));
    });
  }

 private:
  RefFallback ref_;
};

// DynamicQuantizeLinear (the activations of dynamically quantized linear layers): the range in
// one vectorized pass, then quantize_run; the reference kernel's formulas, so the same bytes.
class FastDynamicQuantizeLinear final : public Kernel {
 public:
  explicit FastDynamicQuantizeLinear(const KernelInfo& info) : ref_(info) {
    require_float_input(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32) return ref_.run(ctx);
    const float* xp = x.data<float>();
    const int64_t n = x.numel();
    // The range always includes 0 so that 0 is exactly representable.
    const int threads = std::max(1, ctx.threads());
    std::vector<float> lo(threads, 0.f), hi(threads, 0.f);
    parallel_for(n, threads, kGrain, [&](int64_t b, int64_t e) {
      const int t = omp_get_thread_num();
      min_max(xp + b, e - b, lo[t], hi[t]);
    });
    float l = 0, h = 0;
    for (int t = 0; t < threads; ++t) {
      l = std::min(l, lo[t]);
      h = std::max(h, hi[t]);
    }
    const float scale = (h - l) / 255.0f;
    uint8_t zp = 0;
    if (scale != 0) {
      // saturate_round of the reference: round half to even in double, clamp to [0, 255].
      const double r = std::nearbyint(double(0.0f - l / scale));
      zp = std::isnan(r) ? 0 : uint8_t(std::clamp(r, 0.0, 255.0));
    }
    Tensor& y = ctx.output(0, DType::UInt8, x.shape());
    uint8_t* yp = y.data<uint8_t>();
    if (scale == 0) {
      std::fill(yp, yp + n, zp);
    } else {
      parallel_for(n, threads, kGrain, [&](int64_t b, int64_t e) {
        quantize_run<uint8_t>(xp + b, yp + b, e - b, scale, float(zp));
      });
    }
    if (ctx.wants_output(1)) ctx.output(1, DType::Float32, {}).data<float>()[0] = scale;
    if (ctx.wants_output(2)) ctx.output(2, DType::UInt8, {}).data<uint8_t>()[0] = zp;
  }

 private:
  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", DynamicQuantizeLinear, 11, 28, FastDynamicQuantizeLinear);
PI_CPU_FAST_KERNEL("ai.polyinfer", QLinearAdd, 1, 1, FastQLinearAdd);
PI_CPU_FAST_KERNEL("", QuantizeLinear, 10, 28, FastQuantizeLinear);
PI_CPU_FAST_KERNEL("", DequantizeLinear, 10, 28, FastDequantizeLinear);

}  // namespace polyinfer::fast
