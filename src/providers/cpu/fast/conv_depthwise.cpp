// ai.polyinfer NhwcFusedConv for depthwise convolutions (group = C = M) on AVX-512: square
// windows of 3x3 or 5x5, equal strides of 1 or 2, undilated, any padding, bias, residual Z and
// fused activation. X [N, H, W, C], W [C, 1, k, k], Y [N, OH, OW, C].
//
// Why: oneDNN 2.6's depthwise kernel (brdgmm_dw) splits the work among threads its own way, so
// at 2 threads its 14x14 and 7x7 layers ran no faster than at 1, while the 1x1 layers around
// them give each thread a contiguous share of the pixels; this kernel splits rows as they do
// (docs/kernels.md has the figures).
//
// The computation: per output row and block of 8 output pixels, for each 16 channels, 8 sums
// in zmm registers; for each window row, the block's input pixels (7 * stride + k of them) are
// loaded once, each feeding the up-to-k sums whose windows cover it, with the window row's
// k weight vectors. A pixel outside the image (the padding) reads a vector of zeros, so
// borders run the same FMAs as the interior; a window row outside the image is skipped. The
// last block of a row may hold fewer than 8 pixels (its extra sums are dropped), the last 16
// channels fewer than 16: only there do loads and stores go under masks, which cost more than
// plain ones on Zen 4. Threads split the output rows in contiguous shares.
#include <algorithm>
#include <cstring>
#include <string>

#include "ops/activation.h"
#include "ops/window.h"
#include "providers/cpu/fast/avx512_gemm.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"

namespace polyinfer::fast {
namespace {

constexpr int kBlock = 8;                         // output pixels per register block
constexpr int64_t kMaxK = 5;                      // window side taken
constexpr int64_t kLanes = 16;                    // channels per vector
alignas(64) constexpr float kZeros[kLanes] = {};  // what a padding pixel reads (whole vectors)

struct Plan {
  const float* x;
  const float* z;  // residual, laid out as y, or null
  float* y;
  const float* w;     // [C/16][k * k][16], zero-filled past C
  const float* bias;  // [C/16 * 16]
  FusedActivation act;
  int64_t H, W, C, OH, OW, K, S, top, left;
};

#ifdef PI_X86_AVX512_GEMM

// One block of 8 output pixels from ox0 (n of them live) and 16 channels from c0: rows[ky] is
// input row oy * S - top + ky (its pixel 0, channel 0), or null outside the image; for an edge
// block, at[i] and keep[i] place its input pixels (dw_row). kFull: all 16 channels live, so
// no load or store goes under a mask.
template <int K, int S, ActKind kAct, bool kFull>
PI_AVX512 inline __attribute__((always_inline)) void dw_block(const Plan& q,
                                                              const float* const* rows, float* y,
                                                              const float* z, int64_t ox0, int n,
                                                              bool edge, const int64_t* at,
                                                              const __mmask16* keep, int64_t c0) {
  constexpr int kIn = (kBlock - 1) * S + K;  // input pixels a block's windows cover
  const int64_t ix0 = ox0 * S - q.left;
  const __mmask16 live = kFull ? avx512::kAll : avx512::lanes16(static_cast<int>(q.C - c0));
  const float* w = q.w + c0 * K * K;
  __m512 acc[kBlock];
  const __m512 b = _mm512_load_ps(q.bias + c0);
#pragma GCC unroll 8
  for (int j = 0; j < kBlock; ++j) acc[j] = b;
  for (int ky = 0; ky < K; ++ky) {
    if (!rows[ky]) continue;
    const float* row = rows[ky] + c0;
    __m512 in[kIn];
    if (edge) {
#pragma GCC unroll 24
      for (int i = 0; i < kIn; ++i)
        in[i] = kFull ? _mm512_loadu_ps(keep[i] ? row + at[i] : kZeros)
                      : _mm512_maskz_loadu_ps(live & keep[i], row + at[i]);
    } else {
      const float* p = row + ix0 * q.C;
#pragma GCC unroll 24
      for (int i = 0; i < kIn; ++i)
        in[i] = kFull ? _mm512_loadu_ps(p + i * q.C) : _mm512_maskz_loadu_ps(live, p + i * q.C);
    }
#pragma GCC unroll 5
    for (int kx = 0; kx < K; ++kx) {
      const __m512 wv = _mm512_load_ps(w + (ky * K + kx) * kLanes);
#pragma GCC unroll 8
      for (int j = 0; j < kBlock; ++j) acc[j] = _mm512_fmadd_ps(in[j * S + kx], wv, acc[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kBlock; ++j) {
    if (j >= n) break;
    const int64_t at_y = (ox0 + j) * q.C + c0;
    if constexpr (kFull) {  // store16's unmasked path, spelt out: through store16 the 14x14
      __m512 v = acc[j];    // layers ran 5-6% slower alone (two runs of 4)
      if (z) v = _mm512_add_ps(v, _mm512_loadu_ps(z + at_y));
      if constexpr (kAct != ActKind::None) v = avx512::activate_as<kAct>(v, q.act);
      _mm512_storeu_ps(y + at_y, v);
    } else {
      avx512::store16<kAct>(acc[j], y + at_y, z ? z + at_y : nullptr, live, &q.act);
    }
  }
}

// One output row, blocks of 8 pixels, each over all channels 16 at a time (dw_block).
template <int K, int S, ActKind kAct>
PI_AVX512 void dw_row(const Plan& q, const float* const* rows, float* y, const float* z) {
  constexpr int kIn = (kBlock - 1) * S + K;
  const int64_t full = q.C / kLanes * kLanes;  // channels in whole vectors
  for (int64_t ox0 = 0; ox0 < q.OW; ox0 += kBlock) {
    const int n = static_cast<int>(std::min<int64_t>(kBlock, q.OW - ox0));
    const int64_t ix0 = ox0 * S - q.left;
    const bool edge = ix0 < 0 || ix0 + kIn > q.W;  // some of the inputs are padding
    // For an edge block, each input pixel's offset in its row and whether it is in the image
    // (else it reads kZeros, or pixel 0 under an empty mask in the last 16 channels).
    int64_t at[kIn];
    __mmask16 keep[kIn];
    if (edge)
      for (int i = 0; i < kIn; ++i) {
        const int64_t ix = ix0 + i;
        const bool inside = ix >= 0 && ix < q.W;
        at[i] = inside ? ix * q.C : 0;
        keep[i] = inside ? 0xFFFF : 0;
      }
    for (int64_t c0 = 0; c0 < full; c0 += kLanes)
      dw_block<K, S, kAct, true>(q, rows, y, z, ox0, n, edge, at, keep, c0);
    if (full < q.C) dw_block<K, S, kAct, false>(q, rows, y, z, ox0, n, edge, at, keep, full);
  }
}

using RowFn = void (*)(const Plan&, const float* const*, float*, const float*);

template <int K, int S> RowFn row_for(ActKind kind) {
  return avx2::with_activation(kind, "depthwise convolution",
                               [](auto k) -> RowFn { return dw_row<K, S, decltype(k)::value>; });
}

RowFn row_fn(const Plan& q) {
  const ActKind a = q.act.kind;
  if (q.K == 3) return q.S == 1 ? row_for<3, 1>(a) : row_for<3, 2>(a);
  return q.S == 1 ? row_for<5, 1>(a) : row_for<5, 2>(a);
}

// Output rows [r0, r1) of all images (row r is row r % OH of image r / OH). (The channels
// outermost, so that a window's K input rows of 16 channels stay in L1 for the next output
// rows, ran alone slower: 14x14x384 32 against 27 us, 7x7x960 21 against 16.)
void run_rows(const Plan& q, int64_t r0, int64_t r1) {
  const RowFn row_of = row_fn(q);
  const float* rows[kMaxK];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / q.OH, oy = r % q.OH;
    for (int64_t ky = 0; ky < q.K; ++ky) {
      const int64_t iy = oy * q.S - q.top + ky;
      rows[ky] = iy < 0 || iy >= q.H ? nullptr : q.x + (n * q.H + iy) * q.W * q.C;
    }
    const int64_t at = r * q.OW * q.C;
    row_of(q, rows, q.y + at, q.z ? q.z + at : nullptr);
  }
}

#endif  // PI_X86_AVX512_GEMM

class NhwcDepthwiseConv final : public Kernel {
 public:
  explicit NhwcDepthwiseConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "depthwise convolution");
#ifdef PI_X86_AVX512_GEMM
    if (!avx512::supported())
#endif
      info.unsupported("depthwise convolution: needs AVX-512");
    a_ = NhwcConvArgs::read(info, "depthwise convolution");
    PI_CHECK(a_.C == 1 && a_.attrs.group == a_.M && a_.KH == a_.KW && a_.KH <= kMaxK, Internal,
             label_,
             ": the depthwise kernel takes one input channel per group and square "
             "windows up to ",
             kMaxK, "x", kMaxK);
    pack();
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  // Each output reads its own element of Z just before it is written.
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override { return "fast:avx512-depthwise"; }

  void run(KernelContext& ctx) override {
    const NhwcConvArgs::Run r = a_.begin(ctx, label_);
    if (r.y.numel() == 0) return;
#ifdef PI_X86_AVX512_GEMM
    const Plan q{r.x.data<float>(),
                 r.z,
                 r.y.data<float>(),
                 w_.data<float>(),
                 bias_.data<float>(),
                 a_.act,
                 r.H,
                 r.W,
                 a_.M,
                 r.g.out[0],
                 r.g.out[1],
                 a_.KH,
                 r.g.strides[0],
                 r.g.pad_begin[0],
                 r.g.pad_begin[1]};
    parallel_for(r.N * q.OH, ctx.threads(), 1, [&](int64_t b, int64_t e) { run_rows(q, b, e); });
#endif
  }

 private:
  void pack() {
    const int64_t C = a_.M, KK = a_.KH * a_.KW, blocks = (C + kLanes - 1) / kLanes;
    w_ = Tensor::zeros(DType::Float32, {blocks * KK * kLanes});
    bias_ = Tensor::zeros(DType::Float32, {blocks * kLanes});
    float* d = w_.data<float>();
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < KK; ++t)
        d[(c / kLanes * KK + t) * kLanes + c % kLanes] = a_.weights[c * KK + t];
    if (a_.bias) std::memcpy(bias_.data<float>(), a_.bias, static_cast<size_t>(C) * sizeof(float));
    a_.weights = {};  // the originals are released once packed
    a_.bias = nullptr;
  }

  std::string label_;
  NhwcConvArgs a_;
  Tensor w_, bias_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "depthwise", NhwcDepthwiseConv);

}  // namespace
}  // namespace polyinfer::fast
