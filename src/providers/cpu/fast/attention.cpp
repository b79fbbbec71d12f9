// ONNX Attention (opset 23) and ai.polyinfer Attention (the same operator, for models below
// opset 23: what the optimizer's fuse-attention pass emits) on AVX2+FMA or AVX-512, in the
// form encoders take: float32 3-D Q [B, Sq, H·D], K [B, Sk, H·D], V [B, Sk, H·Dv], as many
// key/value heads as query heads, no mask, no cache, not causal, no softcap, only
// Y [B, Sq, H·Dv] wanted, Dv a multiple of 8. Y = softmax(scale · Q Kᵀ) V head by head; scale
// defaults to 1/sqrt(D).
//
// Why: BERT-base's attention ran as 9 nodes per layer — three Transposes splitting the heads
// (one of them Kᵀ), two batched MatMuls on oneDNN, the scaling Mul, Softmax, the Transpose
// merging the heads — each writing its [heads, S, S] or [S, H·D] result to memory and the next
// reading it back. Here the heads are read in place from the projections' [B, S, H·D] outputs
// and the scores of a block of query rows stay in L1/L2.
//
// The computation, per task (one batch entry and head): Kᵀ is packed as W-key panels
// ([Sk/W][D][W], zeros past Sk) and V as W-column panels ([Dv/W][Sk][W]); then for each block
// of query rows the GEMM register tile computes the scores (A: Q's rows, in place), each row is
// scaled and run through a softmax, and the tile computes the rows of Y from the probabilities
// and V's panels, written straight into the head's columns of Y. Heads are tasks taken by
// whichever thread is free. W is 16 on avx2_util.h's 6x16 ymm tile, 32 on avx512_gemm.h's 8x32
// zmm tile where the GEMM runs zmm tiles (with a 16-lane softmax).
//
// Anything else (masks, a cache or nonpad_kv_seqlen, causal, a window, softcap, a softmax
// precision other than float, other dtypes or ranks, grouped heads) is the reference
// kernel's (reference/attention.cpp), chosen at creation where the attributes say so and at run
// time where the shapes do.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_gemm.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"

namespace polyinfer::fast {
namespace {

constexpr int64_t kRowBlock = 48;  // query rows whose scores are held at once (both tiles' rows)

struct Plan {
  const float *q, *k, *v;
  float* y;
  int64_t B, H, Sq, Sk, D, Dv;
  float scale;
};

#ifdef PI_X86_AVX2

// Per thread: the head's packed Kᵀ and V, and a block of scores and probabilities.
struct Scratch {
  std::vector<float> buf;
  float* get(size_t n) {
    if (buf.size() < n + 16) buf.resize(n + 16);
    return align64(buf.data());
  }
};

// Kᵀ's panel j: row d holds K[Wj .. Wj + W - 1][d], zeros for keys past Sk (8x8 transposes
// where 8 keys and 8 dimensions are whole, element by element elsewhere).
PI_AVX2 void pack_keys(const float* k, int64_t ldk, int64_t keys, int64_t D, int64_t W,
                       float* panel) {
  for (int64_t i0 = 0; i0 < W; i0 += 8) {
    const int64_t n = std::clamp<int64_t>(keys - i0, 0, 8);
    int64_t d0 = 0;
    if (n == 8)
      for (; d0 + 8 <= D; d0 += 8)
        avx2::transpose8x8(k + i0 * ldk + d0, ldk, panel + d0 * W + i0, W);
    for (int64_t d = d0; d < D; ++d)
      for (int64_t i = 0; i < 8; ++i) panel[d * W + i0 + i] = i < n ? k[(i0 + i) * ldk + d] : 0.f;
  }
}

// V's panel j: row s holds V[s][Wj .. Wj + W - 1], zeros past Dv (cols a multiple of 8).
PI_AVX2 void pack_values(const float* v, int64_t ldv, int64_t Sk, int64_t cols, int64_t W,
                         float* panel) {
  const __m256 zero = _mm256_setzero_ps();
  for (int64_t s = 0; s < Sk; ++s, panel += W, v += ldv)
    for (int64_t c = 0; c < W; c += 8)
      _mm256_store_ps(panel + c, c < cols ? _mm256_loadu_ps(v + c) : zero);
}

// p[0, n) = softmax(scale · s[0, n)): the unfused graph's Mul, then Softmax (max-subtracted,
// exp8, scaled by 1/sum). Rows are padded to whole vectors: lanes past n become -inf, so they
// count in neither the max nor the sum (their probabilities, never read, are 0).
PI_AVX2 void softmax_scaled(float* s, float* p, int64_t n, float scale) {
  const __m256 k = _mm256_set1_ps(scale), ninf = _mm256_set1_ps(-__builtin_inff());
  const int64_t whole = n / 8 * 8;
  const __m256 tail = _mm256_castsi256_ps(avx2::lane_mask(static_cast<int>(n - whole)));
  __m256 m = ninf;
  for (int64_t i = 0; i < n; i += 8) {
    __m256 x = _mm256_mul_ps(_mm256_loadu_ps(s + i), k);
    if (i == whole) x = _mm256_blendv_ps(ninf, x, tail);
    _mm256_storeu_ps(s + i, x);
    m = _mm256_max_ps(m, x);
  }
  m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
  m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
  __m256 sum = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 e = avx2::exp8(_mm256_sub_ps(_mm256_loadu_ps(s + i), m));
    _mm256_storeu_ps(p + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  __m256 t = _mm256_add_ps(sum, _mm256_permute2f128_ps(sum, sum, 1));
  t = _mm256_hadd_ps(t, t);
  t = _mm256_hadd_ps(t, t);
  const __m256 inv = _mm256_div_ps(_mm256_set1_ps(1.f), t);
  for (int64_t i = 0; i < n; i += 8)
    _mm256_storeu_ps(p + i, _mm256_mul_ps(_mm256_loadu_ps(p + i), inv));
}

#ifdef PI_X86_AVX512

// softmax_scaled on 16 lanes. The row is read three times (max, exponentials, scaling by the
// sum's reciprocal) as in the AVX2 form; the last 16 lanes go under a mask.
PI_AVX512 void softmax_scaled16(float* s, float* p, int64_t n, float scale) {
  const auto live = [n](int64_t i) {
    return n - i >= 16 ? avx512::kAll : static_cast<__mmask16>((1u << (n - i)) - 1);
  };
  const __m512 k = _mm512_set1_ps(scale), ninf = _mm512_set1_ps(-__builtin_inff());
  __m512 m = ninf;
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 x = _mm512_mask_mul_ps(ninf, live(i), _mm512_loadu_ps(s + i), k);
    _mm512_storeu_ps(s + i, x);
    m = avx512::max16(m, x);
  }
  const __m512 mx = _mm512_set1_ps(avx512::hmax16(m));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 e =
        _mm512_maskz_mov_ps(live(i), avx512::exp16(_mm512_sub_ps(_mm512_loadu_ps(s + i), mx)));
    _mm512_storeu_ps(p + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  const __m512 inv = _mm512_set1_ps(1.f / avx512::hsum16(sum));
  for (int64_t i = 0; i < n; i += 16)
    _mm512_storeu_ps(p + i, _mm512_mul_ps(_mm512_loadu_ps(p + i), inv));
}

#endif

// The register tile a head runs on: its panel width, its tiles by row count, how it cuts rows
// into tiles, and the softmax of the same vector width.
struct Tile {
  int64_t width;
  const avx2::GemmRowsFn* gemm;
  int64_t (*row_tiles)(int64_t);
  void (*softmax)(float* s, float* p, int64_t n, float scale);
};

PI_AVX2 void run_head(const Plan& p, const Tile& tile, int64_t b, int64_t h) {
  const int64_t W = tile.width, HD = p.H * p.D, HDv = p.H * p.Dv;
  const int64_t kp = (p.Sk + W - 1) / W, vp = (p.Dv + W - 1) / W;
  const int64_t ld = kp * W;  // a row of scores, padded to whole panels
  thread_local Scratch scratch;
  float* kt = scratch.get(static_cast<size_t>(kp * p.D * W + vp * p.Sk * W + 2 * kRowBlock * ld));
  float* vpk = kt + kp * p.D * W;
  float* scores = vpk + vp * p.Sk * W;
  float* probs = scores + kRowBlock * ld;
  const float* k = p.k + b * p.Sk * HD + h * p.D;
  const float* v = p.v + b * p.Sk * HDv + h * p.Dv;
  for (int64_t j = 0; j < kp; ++j)
    pack_keys(k + j * W * HD, HD, std::min(W, p.Sk - j * W), p.D, W, kt + j * p.D * W);
  for (int64_t j = 0; j < vp; ++j)
    pack_values(v + j * W, HDv, p.Sk, std::min(W, p.Dv - j * W), W, vpk + j * p.Sk * W);
  for (int64_t r0 = 0; r0 < p.Sq; r0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, p.Sq - r0);
    const int64_t tiles = tile.row_tiles(rows);
    const float* q = p.q + (b * p.Sq + r0) * HD + h * p.D;
    for (int64_t j = 0; j < kp; ++j)
      for (int64_t t = 0, r = 0, n = 0; t < tiles; ++t, r += n) {
        n = avx2::tile_rows(rows, tiles, t);
        tile.gemm[n](q + r * HD, HD, kt + j * p.D * W, p.D, scores + r * ld + j * W, ld, 8, nullptr,
                     nullptr, nullptr, static_cast<int>(W));
      }
    for (int64_t r = 0; r < rows; ++r) tile.softmax(scores + r * ld, probs + r * ld, p.Sk, p.scale);
    float* y = p.y + (b * p.Sq + r0) * HDv + h * p.Dv;
    for (int64_t j = 0; j < vp; ++j) {
      const int cols = static_cast<int>(std::min(W, p.Dv - j * W));
      for (int64_t t = 0, r = 0, n = 0; t < tiles; ++t, r += n) {
        n = avx2::tile_rows(rows, tiles, t);
        tile.gemm[n](probs + r * ld, ld, vpk + j * p.Sk * W, p.Sk, y + r * HDv + j * W, HDv, 8,
                     nullptr, nullptr, nullptr, cols);
      }
    }
  }
}

// The widest tile the options allow on this CPU (as for the packed MatMul: packed_gemm.h).
Tile best_tile(const CpuProviderOptions& options) {
#ifdef PI_X86_AVX512_GEMM
  if (PackedGemm::wide(options))
    return {avx512::kPanel, avx512::gemm_rows_for(nullptr), avx512::row_tiles, softmax_scaled16};
#endif
  // Fetching ahead pays even here (~4% of the blocks): packed keys and values together take
  // twice L1.
  return {16, avx2::gemm_rows_for(nullptr, true), avx2::row_tiles, softmax_scaled};
}

#endif  // PI_X86_AVX2

class FastAttention final : public Kernel {
 public:
  explicit FastAttention(const KernelInfo& info) : ref_(info, "Attention", 23) {
    require_avx2_kernel(info, "fast attention");
    require_float_input(info, 0);
    for (size_t i = 3; i < info.num_inputs(); ++i)
      if (info.has_input(i)) info.unsupported("fast attention: a mask or a key/value cache");
    for (size_t i = 1; i < info.num_outputs(); ++i)
      if (info.has_output(i)) info.unsupported("fast attention: outputs other than Y");
    if (info.attr_int("is_causal", 0) != 0) info.unsupported("fast attention: is_causal");
    if (info.attr_float("softcap", 0.f) != 0.f) info.unsupported("fast attention: softcap");
    for (const char* w : {"left_window_size", "right_window_size"})
      if (info.attr_int(w, -1) != -1) info.unsupported(std::string("fast attention: ") + w);
    // The softmax runs in float32, the default precision of the float32 inputs it takes.
    if (info.attr_int("softmax_precision", 1) != 1)
      info.unsupported("fast attention: softmax_precision other than float");
    heads_ = info.attr_int("q_num_heads", 0);
    if (heads_ <= 0 || info.attr_int("kv_num_heads", 0) != heads_)
      info.unsupported("fast attention: 3-D inputs with as many key/value heads as query heads");
    if (info.has_attr("scale")) scale_ = info.attr_float("scale");
#ifdef PI_X86_AVX2
    tile_ = best_tile(info.options().cpu);
#endif
  }

  std::string impl() const override {
    if (declined_) return ref_.impl();
#ifdef PI_X86_AVX2
    if (tile_.width == avx512::kPanel) return "fast:avx512-attention";
#endif
    return "fast:avx2-attention";
  }

  void run(KernelContext& ctx) override {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    const bool fits = q.dtype() == DType::Float32 && k.dtype() == DType::Float32 &&
                      v.dtype() == DType::Float32 && q.rank() == 3 && k.rank() == 3 &&
                      v.rank() == 3 && q.dim(0) == k.dim(0) && v.dim(0) == q.dim(0) &&
                      k.dim(1) == v.dim(1) && k.dim(1) > 0 && q.dim(2) == k.dim(2) &&
                      q.dim(2) % heads_ == 0 && v.dim(2) % heads_ == 0 &&
                      (v.dim(2) / heads_) % 8 == 0 && q.dim(2) > 0;
    // The reference kernel runs (and reports in its words) everything else.
    if (!fits) {
      declined_ = true;
      return ref_.run(ctx);
    }
    const int64_t B = q.dim(0), Sq = q.dim(1), Sk = k.dim(1), D = q.dim(2) / heads_,
                  Dv = v.dim(2) / heads_;
    Tensor& y = ctx.output(0, DType::Float32, {B, Sq, heads_ * Dv});
    if (y.numel() == 0) return;
#ifdef PI_X86_AVX2
    const Plan p{q.data<float>(),
                 k.data<float>(),
                 v.data<float>(),
                 y.data<float>(),
                 B,
                 heads_,
                 Sq,
                 Sk,
                 D,
                 Dv,
                 scale_ ? *scale_ : 1.0f / std::sqrt(static_cast<float>(D))};
    parallel_tasks(B * heads_, ctx.threads(),
                   [&](int64_t t) { run_head(p, tile_, t / heads_, t % heads_); });
#endif
  }

 private:
  RefFallback ref_;
  int64_t heads_ = 0;
  std::optional<float> scale_;
  bool declined_ = false;  // a run went to the reference kernel (impl() says so)
#ifdef PI_X86_AVX2
  Tile tile_{};
#endif
};

PI_CPU_CANDIDATE("", Attention, 23, 28, "attention", FastAttention);
PI_CPU_CANDIDATE("ai.polyinfer", Attention, 1, 1, "attention", FastAttention);

}  // namespace
}  // namespace polyinfer::fast
