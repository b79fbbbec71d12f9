// Shared pieces of the CPU provider's FAST-tier elementwise/normalization kernels (this folder).
//
// What a fast kernel here does, and how it stays exactly as safe as the reference one:
//   - It covers float32 only. At creation it refuses (info.unsupported) what static types or
//     attributes already rule out, so the reference kernel is placed instead (and the placement
//     report says "reference").
//   - Anything only known at run time (a dtype the importer could not infer, a broadcast or axis
//     the fast path does not cover) goes to a reference kernel the fast one created beside itself
//     (RefFallback), so every input the reference accepts is still accepted, with the same errors.
//   - Loops over large tensors are split over ctx.threads() OpenMP threads (parallel_for); tensors
//     below a grain stay serial so tiny ops pay no fork/join.
//   - Inner loops are plain `#pragma omp simd` loops compiled several times (PI_FAST_CLONES:
//     AVX-512, AVX2+FMA, baseline x86-64) and picked by the loader for the CPU it runs on.
//
// Vector math (fast_exp, fast_tanh, fast_erf) is branch-free float code that vectorizes; accuracy
// against the C library is tested in tests/unit/fast_unary_test.cpp.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "providers/cpu/fast/math_coefficients.h"
#include "runtime/kernel.h"

// Compiles a function for AVX-512, AVX2+FMA and baseline x86-64; the dynamic loader picks one
// (GNU ifunc). Elsewhere (other CPUs, other compilers) it is the plain function.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define PI_FAST_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PI_FAST_CLONES
#endif

// Code between PI_FAST_MATH_BEGIN and PI_FAST_MATH_END is compiled without -ftrapping-math: the
// vectorizer may then evaluate both sides of `x < 0 ? a * x : x` and blend (floating-point
// exceptions are observed by nothing in polyinfer). Values are unchanged: IEEE semantics, NaN and
// signed zeros stay as written. Functions inlined into each other must share the setting (GCC
// does not inline across differing optimize options), hence one region around the vector math
// here and one around each file's loops, which call nothing from outside a region.
#if defined(__GNUC__) && !defined(__clang__)
#define PI_FAST_MATH_BEGIN _Pragma("GCC push_options") _Pragma("GCC optimize(\"no-trapping-math\")")
#define PI_FAST_MATH_END _Pragma("GCC pop_options")
#else
#define PI_FAST_MATH_BEGIN
#define PI_FAST_MATH_END
#endif

namespace polyinfer::fast {

// The name fast kernels report from impl(): "fast:" and the instruction set PI_FAST_CLONES picks
// on this CPU ("avx512", "avx2", "baseline"; "portable" where there are no clones), so a
// placement report shows which loops ran.
inline std::string impl_name() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
  static const std::string name = __builtin_cpu_supports("x86-64-v4")   ? "fast:avx512"
                                  : __builtin_cpu_supports("x86-64-v3") ? "fast:avx2"
                                                                        : "fast:baseline";
#else
  static const std::string name = "fast:portable";
#endif
  return name;
}

// The first 64-byte boundary at or after p: scratch buffers over-allocated by 16 floats hold
// cache-line-aligned panels (the packed-panel loads of avx2_util.h need 32 bytes).
inline float* align64(float* p) {
  return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63});
}

// Elements per thread below which a loop is not worth splitting (fork/join costs ~1-5 us).
constexpr int64_t kGrain = 1 << 14;

// f(begin, end) over [0, n), split into contiguous chunks over at most `threads` threads, each
// chunk at least `grain` elements long (so small n runs serially on the caller's thread).
template <class F> void parallel_for(int64_t n, int threads, int64_t grain, const F& f) {
  const int64_t by_size = grain > 0 ? n / grain : n;
  const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, by_size)));
  if (nt <= 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
    const int64_t b = n * t / k, e = n * (t + 1) / k;
    if (b < e) f(b, e);
  }
}

// f(i) for each i in [0, n) on up to `threads` threads, each thread taking the next i when it
// is done with its last: for a few long tasks of equal work, where a thread slowed by the
// machine (another guest's load, an interrupt) would otherwise hold the others at the join.
template <class F> void parallel_tasks(int64_t n, int threads, const F& f) {
  const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, n)));
  if (nt <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) f(i);
}

// True when the statically known type of input i (if any) rules the float32 path out.
inline bool known_not_float(const KernelInfo& info, size_t i) {
  const ir::TypeInfo* t = info.input_type(i);
  return t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem != DType::Undefined &&
         t->elem != DType::Float32;
}

// Refuses the node at creation unless input 0 may be float32 (the reference kernel runs it).
inline void require_float_input(const KernelInfo& info, size_t i = 0) {
  if (known_not_float(info, i)) info.unsupported("the fast kernel for a non-float32 input");
}

// The reference-tier kernel of the same node, created beside a fast kernel for the inputs the
// fast path turns down at run time. An ai.polyinfer operator that is "the ONNX op X at opset V"
// (docs/optimizer.md) and has no reference kernel of its own falls back to X's at opset V.
class RefFallback {
 public:
  explicit RefFallback(const KernelInfo& info, const char* onnx_op = nullptr, int onnx_opset = 0) {
    const ir::Node& n = info.node();
    ref_ = make(info, n.domain, n.op_type, n.opset);
    if (!ref_ && onnx_op) ref_ = make(info, "", onnx_op, onnx_opset);
    // Without a reference kernel the fast one would have nothing to hand odd inputs to.
    if (!ref_) info.unsupported("a fast kernel without a reference kernel");
  }
  void run(KernelContext& ctx) {
    fell_back_ = true;
    ref_->run(ctx);
  }
  // What the owning fast kernel reports from impl(): its fast path, or — once a run has handed
  // its inputs to the reference kernel — that, so placement reports and tests see a fallback.
  // (The session refreshes the placement's impl after the first run.)
  std::string impl() const { return fell_back_ ? "reference (fast path declined)" : impl_name(); }

 private:
  static std::unique_ptr<Kernel> make(const KernelInfo& info, const std::string& domain,
                                      const std::string& op, int opset) {
    for (const KernelDef* d : find_kernels("cpu", domain, op, opset))
      if (d->tier == KernelTier::Reference) return d->make(info);
    return nullptr;
  }
  std::unique_ptr<Kernel> ref_;
  bool fell_back_ = false;
};

PI_FAST_MATH_BEGIN

// Always inlined: the vectorizer only sees through calls that are gone.
#define PI_FAST_INLINE inline __attribute__((always_inline))

// ---- Vector math: inline, branch-free float code that `#pragma omp simd` loops vectorize. ----

// exp(x), |rel err| < 2e-7 over the normal range (Cephes expf polynomial). Overflows to +inf
// above 88.72, returns denormals down to ~-103.3 and 0 below; NaN stays NaN.
PI_FAST_INLINE float fast_exp(float x) {
  const float hi = 88.7228390f, lo = -103.27892990f;
  const float xc = x > hi ? hi : (x < lo ? lo : x);
  // n = round(x / ln 2) with the 1.5*2^23 trick: the float sum holds n in its low mantissa bits.
  const float magic = 12582912.0f;
  const float t = xc * 1.44269504088896341f + magic;
  const int32_t n = __builtin_bit_cast(int32_t, t) - __builtin_bit_cast(int32_t, magic);
  const float nf = t - magic;
  // r = x - n ln2 in two steps (Cody-Waite) so r keeps its precision.
  float r = xc - nf * kLn2Hi;
  r = r - nf * kLn2Lo;
  float p = kExpP[0];
#pragma GCC unroll 8
  for (int i = 1; i < 6; ++i) p = p * r + kExpP[i];
  p = p * r * r + r + 1.0f;
  // 2^n as two factors so n in [-150, 128] never leaves the exponent range of either. Shifts are
  // unsigned: for NaN, n is garbage (the result is NaN anyway) and must not be UB.
  const int32_t h = n >> 1;
  const float s1 = __builtin_bit_cast(float, static_cast<uint32_t>(h + 127) << 23);
  const float s2 = __builtin_bit_cast(float, static_cast<uint32_t>(n - h + 127) << 23);
  const float y = p * s1 * s2;
  // NaN fails both comparisons and stays NaN through p.
  return x > hi ? __builtin_inff() : (x < lo ? 0.0f : y);
}

// tanh(x): a Cephes odd polynomial near 0, 1 - 2 / (exp(2|x|) + 1) beyond; |err| < ~3e-7 rel.
PI_FAST_INLINE float fast_tanh(float x) {
  const float ax = x < 0 ? -x : x;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  // From |x| = 10, 2 / (exp(2|x|) + 1) = 4e-9 is below half of 1's ulp (3e-8): the result is
  // exactly +-1. (A clamp at 9 left 3.05e-8, just over half, so it saturated at 0.99999994,
  // which 1 + tanh in a GELU turned into |x| * 3e-8 instead of 0 for large negative x.)
  const float e = fast_exp(2.0f * (ax > 10.0f ? 10.0f : ax));
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = x < 0 ? -big : big;
  return ax < 0.625f ? small : big;
}

// erf(x): x * P(x^2) / Q(x^2) on [-4, 4] (math_coefficients.h), +-1 beyond.
PI_FAST_INLINE float fast_erf(float x) {
  const float xc = x > 4.0f ? 4.0f : (x < -4.0f ? -4.0f : x);
  const float z = xc * xc;
  float p = kErfP[0];
#pragma GCC unroll 8
  for (int i = 1; i < 7; ++i) p = p * z + kErfP[i];
  float q = kErfQ[0];
#pragma GCC unroll 8
  for (int i = 1; i < 5; ++i) q = q * z + kErfQ[i];
  return xc * p / q;
}

// 1 / (1 + exp(-x)) without overflow trouble: exp(-x) = inf gives 0.
PI_FAST_INLINE float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

// Gelu (erf form) for x <= -3, where 1 + erf(x / sqrt 2) < 2.7e-3 would cancel: as
// -exp(-x^2 / 2) G(2 / x^2) / sqrt(2 pi) (math_coefficients.h), |rel err| < ~4e-7. x^2 is
// carried as h + l exactly (x split into 12-bit halves), since h's rounding alone would put
// x^2 / 2 · 6e-8 (6e-6 at x = -14) into the exponent. Below -20 the result is x · 0 (-0, NaN
// for -inf), as the reference formula gives.
PI_FAST_INLINE float fast_gelu_erf_tail(float x) {
  const float xc = x < -20.0f ? -20.0f : x;
  const float xh = __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, xc) & 0xFFFFF000u);
  const float xl = xc - xh;
  const float h = xc * xc;
  const float l = ((xh * xh - h) + 2.0f * xh * xl) + xl * xl;
  const float e = fast_exp(-0.5f * h) * (1.0f - 0.5f * l);
  const float u = 2.0f / h;
  float p = kGeluTailP[0];
#pragma GCC unroll 8
  for (int i = 1; i < 8; ++i) p = p * u + kGeluTailP[i];
  return x < -20.0f ? x * 0.0f : -kInvSqrt2Pi * e * p;
}

// Mish, x tanh(softplus(x)) = x n / (n + 2) with n = e^x (e^x + 2); x itself from 20 on
// (where n / (n + 2) is 1 in float). NaN stays NaN.
PI_FAST_INLINE float fast_mish(float x) {
  const float e = fast_exp(x < 20.0f ? x : 20.0f);
  const float n = e * (e + 2.0f);
  return x < 20.0f ? x * n / (n + 2.0f) : x;
}

PI_FAST_MATH_END

}  // namespace polyinfer::fast
