// Fast Pow (opset 7+) of a float32 base: x^2 in audio front ends (power spectra, the square in
// a hand-written variance), x^0.5 and x^-0.5 in hand-written norms, 1/x.
//
// An exponent of one element (any numeric dtype) that does not widen the output picks a loop:
//   2: x * x in float (the exact product rounded once: the reference's double pow rounded to
//      float, bit for bit); 1: a copy; 0: ones (NaN too, as pow does); -1: 1 / x in float (also
//      bit for bit: a double quotient rounded to float is the float quotient);
//   0.5: sqrt(x) + 0 (pow(-0, 0.5) is +0, pow(-inf, 0.5) +inf), bit for bit;
//   -0.5: 1 / sqrt(x) in double, rounded once to float, with pow's -0 and -inf cases;
//   3 and other integers up to 64 in magnitude: products in double (repeated squaring, a
//      quotient for a negative exponent), rounded once: within one float rounding of pow;
//   anything else: std::pow in double per element, as the reference computes it.
// sqrt goes through intrinsics (AVX-512, AVX2, scalar): GCC keeps sqrt's errno path in plain
// loops. A float32 exponent tensor of more elements broadcasts (fast/broadcast.h) and takes
// std::pow per element. Other base dtypes, other exponent tensors and opset 1 (legacy broadcast)
// go to the reference kernel.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/shape_util.h"
#include "providers/cpu/fast/broadcast.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

PI_FAST_CLONES void pow_square(const float* __restrict x, float* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
}

PI_FAST_CLONES void pow_recip(const float* __restrict x, float* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / x[i];
}

PI_FAST_CLONES void pow_cube(const float* __restrict x, float* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i];
    y[i] = static_cast<float>(d * d * d);
  }
}

// x^e for an integer e, |e| <= 64, by repeated squaring in double, a block at a time.
PI_FAST_CLONES void pow_int(const float* __restrict x, float* __restrict y, int64_t n, int64_t e) {
  constexpr int64_t kBlock = 256;
  double d[kBlock], r[kBlock];
  const uint64_t u0 = static_cast<uint64_t>(e < 0 ? -e : e);
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
#pragma omp simd
    for (int64_t i = 0; i < m; ++i) d[i] = x[b + i], r[i] = 1.0;
    for (uint64_t u = u0; u; u >>= 1) {
      if (u & 1) {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) r[i] *= d[i];
      }
      if (u > 1) {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) d[i] *= d[i];
      }
    }
    if (e < 0) {
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) y[b + i] = static_cast<float>(1.0 / r[i]);
    } else {
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) y[b + i] = static_cast<float>(r[i]);
    }
  }
}

PI_FAST_MATH_END

// The -0.5 and 0.5 cases element by element (loop tails, CPUs without AVX2).
inline float sqrt_one(float x) { return x == -INFINITY ? INFINITY : std::sqrt(x) + 0.0f; }
inline float rsqrt_one(float x) {
  return x == -INFINITY ? 0.0f
                        : static_cast<float>(1.0 / (std::sqrt(static_cast<double>(x)) + 0.0));
}

#if defined(__x86_64__) && defined(__GNUC__)
// The masked forms with every lane set: GCC 12's plain forms pass an undefined vector through
// and trip -Wmaybe-uninitialized (GCC bug 105593), as avx512_math.h explains.
__attribute__((target("avx512f"))) void sqrt_avx512(const float* x, float* y, int64_t n) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY), inf = _mm512_set1_ps(INFINITY);
  const __m512 zero = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 s = _mm512_add_ps(_mm512_mask_sqrt_ps(v, 0xFFFF, v), zero);
    const __mmask16 m = _mm512_cmp_ps_mask(v, ninf, _CMP_EQ_OQ);
    _mm512_storeu_ps(y + i, _mm512_mask_blend_ps(m, s, inf));
  }
  for (; i < n; ++i) y[i] = sqrt_one(x[i]);
}

// Eight floats at a time, as eight doubles in a zmm.
__attribute__((target("avx512f"))) void rsqrt_avx512(const float* x, float* y, int64_t n) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m512d d = _mm512_maskz_cvtps_pd(0xFF, v);
    const __m512d s = _mm512_add_pd(_mm512_mask_sqrt_pd(d, 0xFF, d), zero);
    const __m256 r = _mm512_maskz_cvtpd_ps(0xFF, _mm512_div_pd(one, s));
    _mm256_storeu_ps(y + i,
                     _mm256_blendv_ps(r, _mm256_setzero_ps(), _mm256_cmp_ps(v, ninf, _CMP_EQ_OQ)));
  }
  for (; i < n; ++i) y[i] = rsqrt_one(x[i]);
}

__attribute__((target("avx2"))) void sqrt_avx2(const float* x, float* y, int64_t n) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY), inf = _mm256_set1_ps(INFINITY);
  const __m256 zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 s = _mm256_add_ps(_mm256_sqrt_ps(v), zero);
    const __m256 m = _mm256_cmp_ps(v, ninf, _CMP_EQ_OQ);
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(s, inf, m));
  }
  for (; i < n; ++i) y[i] = sqrt_one(x[i]);
}

__attribute__((target("avx2"))) void rsqrt_avx2(const float* x, float* y, int64_t n) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    const __m128 rl = _mm256_cvtpd_ps(_mm256_div_pd(one, _mm256_add_pd(_mm256_sqrt_pd(lo), zero)));
    const __m128 rh = _mm256_cvtpd_ps(_mm256_div_pd(one, _mm256_add_pd(_mm256_sqrt_pd(hi), zero)));
    const __m256 r = _mm256_set_m128(rh, rl);
    const __m256 m = _mm256_cmp_ps(v, ninf, _CMP_EQ_OQ);
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(r, _mm256_setzero_ps(), m));
  }
  for (; i < n; ++i) y[i] = rsqrt_one(x[i]);
}
#endif

using MapFn = void (*)(const float*, float*, int64_t);

void sqrt_scalar(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sqrt_one(x[i]);
}
void rsqrt_scalar(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = rsqrt_one(x[i]);
}

// The widest of the loops above this CPU runs.
MapFn pick_sqrt(bool recip) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) return recip ? rsqrt_avx512 : sqrt_avx512;
  if (__builtin_cpu_supports("avx2")) return recip ? rsqrt_avx2 : sqrt_avx2;
#endif
  return recip ? rsqrt_scalar : sqrt_scalar;
}

class FastPowKernel final : public Kernel {
 public:
  explicit FastPowKernel(const KernelInfo& info) : ref_(info) {
    if (info.opset() < 7) info.unsupported("the fast kernel for opset 1 (legacy broadcast)");
    require_float_input(info, 0);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& e = ctx.input(1);
    if (x.dtype() != DType::Float32 || !is_numeric(e.dtype())) return ref_.run(ctx);
    const std::string who = ctx.node().label();
    const Shape shape = broadcast_shapes(x.shape(), e.shape(), who.c_str());
    if (e.numel() == 1 && shape == x.shape())
      return run_scalar(ctx, x, read_scalar(e, who.c_str()));
    if (e.dtype() != DType::Float32) return ref_.run(ctx);
    Tensor& y = ctx.output(0, DType::Float32, shape);
    if (y.numel() == 0) return;
    const BroadcastPlan<2> p = plan_broadcast<2>({&x.shape(), &e.shape()}, shape);
    const int64_t va = p.vec(0), vb = p.vec(1), ra = p.row_stride(0), rb = p.row_stride(1);
    const float* pa = x.data<float>();
    const float* pb = e.data<float>();
    float* py = y.data<float>();
    for_each_run(p, y.numel(), ctx.threads(), kGrain / 16,
                 [&](const std::array<int64_t, 2>& o, int64_t i, int64_t rows, int64_t len) {
                   for (int64_t r = 0; r < rows; ++r) {
                     const float* a = pa + o[0] + r * ra;
                     const float* b = pb + o[1] + r * rb;
                     float* yr = py + i + r * len;
                     for (int64_t j = 0; j < len; ++j)
                       yr[j] = static_cast<float>(std::pow(static_cast<double>(a[j * va]),
                                                           static_cast<double>(b[j * vb])));
                   }
                 });
  }

 private:
  static bool is_numeric(DType t) {
    return t == DType::Float32 || t == DType::Float64 || t == DType::Int32 || t == DType::Int64;
  }

  void run_scalar(KernelContext& ctx, const Tensor& x, double e) {
    Tensor& y = ctx.output(0, DType::Float32, x.shape());
    const int64_t n = y.numel();
    if (n == 0) return;
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const int threads = ctx.threads();
    auto map = [&](auto fn, int64_t grain) {
      parallel_for(n, threads, grain, [&](int64_t b, int64_t end) { fn(px + b, py + b, end - b); });
    };
    if (e == 2) return map(pow_square, kGrain);
    if (e == 1)
      return map([](const float* a, float* b, int64_t m) { std::memcpy(b, a, m * 4); }, kGrain * 4);
    if (e == 0)
      return map([](const float*, float* b, int64_t m) { std::fill(b, b + m, 1.0f); }, kGrain * 4);
    if (e == -1) return map(pow_recip, kGrain);
    if (e == 3) return map(pow_cube, kGrain);
    if (e == 0.5 || e == -0.5) return map(pick_sqrt(e < 0), kGrain);
    if (e == std::trunc(e) && std::fabs(e) <= 64) {
      const int64_t k = static_cast<int64_t>(e);
      return map([k](const float* a, float* b, int64_t m) { pow_int(a, b, m, k); }, kGrain / 4);
    }
    map(
        [e](const float* a, float* b, int64_t m) {
          for (int64_t i = 0; i < m; ++i)
            b[i] = static_cast<float>(std::pow(static_cast<double>(a[i]), e));
        },
        kGrain / 16);
  }

  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Pow, 7, 28, FastPowKernel);

}  // namespace polyinfer::fast
