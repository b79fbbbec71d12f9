// ai.polyinfer NhwcFusedConv for grouped convolutions with as many inputs as outputs per group
// (4, 8, 16 or 32: ResNeXt's four stages, RegNet's groups of 8) on AVX-512, windows up to 7x7,
// any strides, dilations and padding. X [N, H, W, G * ci], W [G * co, ci, kH, kW],
// Y [N, OH, OW, G * co].
//
// Why: the AVX2 kernel (conv_grouped.cpp) feeds each FMA from a broadcast load, which runs at
// half the FMA peak on a Zen 4 core; an in-lane permute feeding a zmm FMA runs near it
// (docs/kernels.md has the figures).
//
// The computation, per output row, in blocks of P (4-8) pixels, and per unit of 16 or 32
// output channels:
//   - 4 or 8 per group ("lanes"): a 128-bit lane of a zmm holds 4 outputs of one group, a zmm
//     4 groups. An input vector with each lane's group's channels 4h..4h+3 (one load for 4 per
//     group; for 8, two loads and one vshuff32x4 per half) gives, through an in-lane vpermilps
//     per channel, every lane its own group's channel: one shuffle feeds 1 (4 per group) or 2
//     (8 per group: outputs 0-3 and 4-7, each a zmm) FMAs. With 8 per group the sums' lanes
//     are not Y's order; the epilogue interleaves them (two vpermt2ps per pixel).
//   - 16 or 32 per group ("broadcast"): one group per unit, each input channel broadcast from
//     memory into one or two zmm FMAs.
// A pixel whose window column leaves the image (the padding, or past the row's end in the last
// block) reads a vector of zeros instead, so the border runs the same code; window rows
// outside the image are skipped. No load or FMA in the loops is masked except in a lanes
// form's last unit when it holds fewer than 4 groups (its loads would pass the tensor's end):
// masked loads and FMAs ran these layers 1.35-1.5x slower.
// The sums go through a small buffer to the epilogue (bias is their start; residual Z and
// activation there), so the FMA loops are compiled once per form and block size, not once per
// activation as well. Threads split the output rows in contiguous shares.
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

constexpr int kMaxP = 8;   // pixels per block
constexpr int kMaxK = 7;   // window side taken
constexpr int kUnit = 32;  // floats per pixel in the sums buffer (the widest unit)
// What a pixel outside the image reads: a unit's channels of zeros.
alignas(64) constexpr float kZeros[32] = {};

struct Plan {
  const float* x;
  const float* z;  // residual, laid out as y, or null
  float* y;
  const float* w;     // packed per form (pack() below)
  const float* bias;  // packed per form, zero-filled past M
  FusedActivation act;
  int64_t H, W, C, M, OH, OW, KH, KW, sh, sw, dh, dw, top, left;
  int64_t G, ci;  // groups, channels per group (in = out)
  int64_t units;  // per pixel: group quads (ci 4, 8) or groups (16, 32)
};

// Where each of a block's pixels reads for window column kx: at[kx][p], the pixel's offset in
// its input row (floats), and keep[kx][p], all lanes or none: a pixel outside the row reads
// kZeros instead (or, under a lanes form's masks, the row's first pixel under an empty one).
struct Taps {
  int64_t at[kMaxK][kMaxP];
  __mmask16 keep[kMaxK][kMaxP];
};

#ifdef PI_X86_AVX512_GEMM

// The FMA loops: sums[p][0, 16 or 32) of unit u for the block's P pixels, over the window rows
// `rows` (rows[ky]: input row of window row ky, its pixel 0 and channel 0; null outside). The
// lanes forms' kFull: the unit holds 4 groups (plain loads), else loads under masks.
using SumsFn = void (*)(const Plan&, const Taps&, const float* const*, int64_t u,
                        float (*sums)[kUnit]);

// 4 per group: unit u is groups 4u..4u+3, channels 16u..16u+15 of X and Y, in Y's order.
// Weights [units][kH * kW][4 inputs][16 lanes: 4 groups x 4 outputs].
template <int P, bool kFull>
PI_AVX512 void sums_lanes4(const Plan& q, const Taps& t, const float* const* rows, int64_t u,
                           float (*sums)[kUnit]) {
  const __mmask16 live = avx512::lanes16(static_cast<int>(q.C - u * 16));
  __m512 acc[P];
  const __m512 b = _mm512_load_ps(q.bias + u * 16);
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p] = b;
  const float* wu = q.w + u * q.KH * q.KW * 64;
  for (int64_t ky = 0; ky < q.KH; ++ky) {
    if (!rows[ky]) continue;
    const float* row = rows[ky] + u * 16;
    for (int64_t kx = 0; kx < q.KW; ++kx) {
      const float* w = wu + (ky * q.KW + kx) * 64;
      const __m512 w0 = _mm512_load_ps(w), w1 = _mm512_load_ps(w + 16), w2 = _mm512_load_ps(w + 32),
                   w3 = _mm512_load_ps(w + 48);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        const __m512 v = kFull ? _mm512_loadu_ps(t.keep[kx][p] ? row + t.at[kx][p] : kZeros)
                               : _mm512_maskz_loadu_ps(live & t.keep[kx][p], row + t.at[kx][p]);
        acc[p] = _mm512_fmadd_ps(_mm512_maskz_permute_ps(avx512::kAll, v, 0x00), w0, acc[p]);
        acc[p] = _mm512_fmadd_ps(_mm512_maskz_permute_ps(avx512::kAll, v, 0x55), w1, acc[p]);
        acc[p] = _mm512_fmadd_ps(_mm512_maskz_permute_ps(avx512::kAll, v, 0xAA), w2, acc[p]);
        acc[p] = _mm512_fmadd_ps(_mm512_maskz_permute_ps(avx512::kAll, v, 0xFF), w3, acc[p]);
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) _mm512_store_ps(sums[p], acc[p]);
}

// 8 per group: unit u is groups 4u..4u+3, channels 32u..32u+31. Sum vector j's lane 4i + o is
// group 4u + i's output 4j + o. Weights [units][kH * kW][8 inputs][2 j][16 lanes], bias
// [units][2 j][16 lanes]. An input pixel's two loads hold channels 0-7 of groups 0, 1 and of
// groups 2, 3; vshuff32x4 picks each group's channels 0-3 (h = 0) or 4-7 (h = 1).
template <int P, bool kFull>
PI_AVX512 void sums_lanes8(const Plan& q, const Taps& t, const float* const* rows, int64_t u,
                           float (*sums)[kUnit]) {
  const int lc = static_cast<int>(q.C - u * 32);  // live channels of the unit
  const __mmask16 live0 = avx512::lanes16(lc), live1 = avx512::lanes16(lc - 16);
  __m512 acc[P][2];
  const __m512 b0 = _mm512_load_ps(q.bias + u * 32), b1 = _mm512_load_ps(q.bias + u * 32 + 16);
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    acc[p][0] = b0;
    acc[p][1] = b1;
  }
  const float* wu = q.w + u * q.KH * q.KW * 256;
  for (int64_t ky = 0; ky < q.KH; ++ky) {
    if (!rows[ky]) continue;
    const float* row = rows[ky] + u * 32;
    for (int64_t kx = 0; kx < q.KW; ++kx) {
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const float* w = wu + (ky * q.KW + kx) * 256 + h * 128;
        __m512 wv[4][2];
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          wv[c][0] = _mm512_load_ps(w + c * 32);
          wv[c][1] = _mm512_load_ps(w + c * 32 + 16);
        }
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
          const __mmask16 k = t.keep[kx][p];
          __m512 l0, l1;
          if constexpr (kFull) {
            const float* px = k ? row + t.at[kx][p] : kZeros;
            l0 = _mm512_loadu_ps(px);
            l1 = _mm512_loadu_ps(px + 16);
          } else {
            l0 = _mm512_maskz_loadu_ps(live0 & k, row + t.at[kx][p]);
            l1 = _mm512_maskz_loadu_ps(live1 & k, row + t.at[kx][p] + 16);
          }
          const __m512 x = h ? _mm512_maskz_shuffle_f32x4(avx512::kAll, l0, l1, 0xDD)
                             : _mm512_maskz_shuffle_f32x4(avx512::kAll, l0, l1, 0x88);
#pragma GCC unroll 4
          for (int c = 0; c < 4; ++c) {
            const __m512 bc = c == 0   ? _mm512_maskz_permute_ps(avx512::kAll, x, 0x00)
                              : c == 1 ? _mm512_maskz_permute_ps(avx512::kAll, x, 0x55)
                              : c == 2 ? _mm512_maskz_permute_ps(avx512::kAll, x, 0xAA)
                                       : _mm512_maskz_permute_ps(avx512::kAll, x, 0xFF);
            acc[p][0] = _mm512_fmadd_ps(bc, wv[c][0], acc[p][0]);
            acc[p][1] = _mm512_fmadd_ps(bc, wv[c][1], acc[p][1]);
          }
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    _mm512_store_ps(sums[p], acc[p][0]);
    _mm512_store_ps(sums[p] + 16, acc[p][1]);
  }
}

// CI = CO = 16 or 32 per group: unit u is group u, in Y's order. Weights [G][kH * kW][CI][CO].
template <int P, int CI>
PI_AVX512 void sums_broadcast(const Plan& q, const Taps& t, const float* const* rows, int64_t u,
                              float (*sums)[kUnit]) {
  constexpr int V = CI / 16;  // output vectors per pixel
  __m512 acc[P][V];
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    const __m512 b = _mm512_load_ps(q.bias + u * CI + v * 16);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  const float* wu = q.w + u * q.KH * q.KW * CI * CI;
  for (int64_t ky = 0; ky < q.KH; ++ky) {
    if (!rows[ky]) continue;
    const float* row = rows[ky] + u * CI;
    for (int64_t kx = 0; kx < q.KW; ++kx) {
      const float* w = wu + (ky * q.KW + kx) * CI * CI;
      const float* px[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) px[p] = t.keep[kx][p] ? row + t.at[kx][p] : kZeros;
#pragma GCC unroll 16
      for (int c = 0; c < CI; ++c) {
        __m512 wv[V];
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) wv[v] = _mm512_load_ps(w + c * CI + v * 16);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
          const __m512 xb = _mm512_set1_ps(px[p][c]);
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) acc[p][v] = _mm512_fmadd_ps(xb, wv[v], acc[p][v]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) _mm512_store_ps(sums[p] + v * 16, acc[p][v]);
}

// The epilogue of unit u for a block's first n pixels from pixel pix0 (Y's flat pixel index):
// kWidth channels from ch0 (the live ones up to M), interleaved from the lanes8 order first
// where kInterleave, then residual, activation and the store.
template <ActKind kAct, int kWidth, bool kInterleave>
PI_AVX512 void finish(const Plan& q, const float (*sums)[kUnit], int n, int64_t pix0, int64_t ch0) {
  const int lc = static_cast<int>(q.M - ch0);
  const __mmask16 live0 = avx512::lanes16(lc), live1 = avx512::lanes16(lc - 16);
  // Y's channels 0-15 of the unit are sum lanes 0-3 of j = 0, 1, then 4-7 of j = 0, 1;
  // 16-31 likewise from lanes 8-15 (vpermt2ps: indices 16-31 name the second vector).
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int p = 0; p < n; ++p) {
    const int64_t at = (pix0 + p) * q.M + ch0;
    __m512 v0 = _mm512_load_ps(sums[p]);
    __m512 v1 = kWidth == 32 ? _mm512_load_ps(sums[p] + 16) : v0;
    if constexpr (kInterleave) {
      const __m512 a = v0;
      v0 = _mm512_maskz_permutex2var_ps(avx512::kAll, a, lo, v1);
      v1 = _mm512_maskz_permutex2var_ps(avx512::kAll, a, hi, v1);
    }
    avx512::store16<kAct>(v0, q.y + at, q.z ? q.z + at : nullptr, live0, &q.act);
    if (kWidth == 32 && live1)
      avx512::store16<kAct>(v1, q.y + at + 16, q.z ? q.z + at + 16 : nullptr, live1, &q.act);
  }
}

using FinishFn = void (*)(const Plan&, const float (*)[kUnit], int, int64_t, int64_t);

// The smallest block (block_pixels below): 4 to 8 pixels are compiled.
constexpr int kMinP = 4;

template <int P> SumsFn sums_for(int64_t ci, bool full) {
  switch (ci) {
    case 4: return full ? sums_lanes4<P, true> : sums_lanes4<P, false>;
    case 8: return full ? sums_lanes8<P, true> : sums_lanes8<P, false>;
    case 16: return sums_broadcast<P, 16>;
    default: return sums_broadcast<P, 32>;
  }
}

SumsFn sums_fn(int64_t ci, int p, bool full) {
  switch (p) {
    case 4: return sums_for<4>(ci, full);
    case 5: return sums_for<5>(ci, full);
    case 6: return sums_for<6>(ci, full);
    case 7: return sums_for<7>(ci, full);
    default: return sums_for<8>(ci, full);
  }
}

FinishFn finish_fn(ActKind kind, int64_t ci) {
  return avx2::with_activation(kind, "grouped convolution", [ci](auto k) -> FinishFn {
    constexpr ActKind kAct = decltype(k)::value;
    if (ci == 4 || ci == 16) return finish<kAct, 16, false>;
    return ci == 8 ? finish<kAct, 32, true> : finish<kAct, 32, false>;
  });
}

// The row's blocks: as few as blocks of up to 8 allow, as even as can be (56 columns: 7 of 8;
// 28, 14, 7: blocks of 7), at least 4 pixels each (fewer would leave too few sums to cover
// the FMA latency; a narrower row computes the block's extra pixels and drops them).
int block_pixels(int64_t ow) {
  const int64_t blocks = (ow + kMaxP - 1) / kMaxP;
  return static_cast<int>(std::max<int64_t>(kMinP, (ow + blocks - 1) / blocks));
}

// Output rows [r0, r1) of all images (row r is row r % OH of image r / OH).
void run_rows(const Plan& q, int64_t r0, int64_t r1) {
  const int P = block_pixels(q.OW);
  // The lanes forms' last unit may hold fewer than 4 groups: it loads under masks.
  const SumsFn sums_full = sums_fn(q.ci, P, true);
  const SumsFn sums_last = q.ci <= 8 && q.G % 4 ? sums_fn(q.ci, P, false) : sums_full;
  const FinishFn finish_of = finish_fn(q.act.kind, q.ci);
  const int64_t per_unit = q.ci <= 8 ? q.ci * 4 : q.ci;  // Y's channels per unit
  alignas(64) float sums[kMaxP][kUnit];
  Taps t;
  const float* rows[kMaxK];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / q.OH, oy = r % q.OH;
    for (int64_t ky = 0; ky < q.KH; ++ky) {
      const int64_t iy = oy * q.sh - q.top + ky * q.dh;
      rows[ky] = iy < 0 || iy >= q.H ? nullptr : q.x + (n * q.H + iy) * q.W * q.C;
    }
    for (int64_t ox0 = 0; ox0 < q.OW; ox0 += P) {
      const int live = static_cast<int>(std::min<int64_t>(P, q.OW - ox0));
      for (int64_t kx = 0; kx < q.KW; ++kx)
        for (int p = 0; p < P; ++p) {
          const int64_t ix = (ox0 + p) * q.sw - q.left + kx * q.dw;
          const bool inside = p < live && ix >= 0 && ix < q.W;
          t.at[kx][p] = inside ? ix * q.C : 0;
          t.keep[kx][p] = inside ? 0xFFFF : 0;
        }
      const int64_t pix0 = r * q.OW + ox0;
      for (int64_t u = 0; u < q.units; ++u) {
        (u + 1 < q.units ? sums_full : sums_last)(q, t, rows, u, sums);
        finish_of(q, sums, live, pix0, u * per_unit);
      }
    }
  }
}

#endif  // PI_X86_AVX512_GEMM

class NhwcGroupedConvAvx512 final : public Kernel {
 public:
  explicit NhwcGroupedConvAvx512(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "AVX-512 grouped convolution");
    a_ = NhwcConvArgs::read(info, "AVX-512 grouped convolution");
#ifdef PI_X86_AVX512_GEMM
    if (!avx512::supported())
#endif
      info.unsupported("AVX-512 grouped convolution: needs AVX-512");
    const int64_t G = a_.attrs.group;
    PI_CHECK(G > 1 && a_.M % G == 0 && a_.M / G == a_.C && a_.C <= 32 && a_.KH <= 7 && a_.KW <= 7,
             Internal, label_,
             ": the AVX-512 grouped kernel takes as many outputs as inputs per group, up to 32, "
             "and windows up to 7x7");
    pack();
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  // Each output reads its own element of Z just before it is written.
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override { return "fast:avx512-grouped"; }

  void run(KernelContext& ctx) override {
    const NhwcConvArgs::Run r = a_.begin(ctx, label_);
    if (r.y.numel() == 0) return;
#ifdef PI_X86_AVX512_GEMM
    const int64_t G = a_.attrs.group;
    const Plan q{r.x.data<float>(),
                 r.z,
                 r.y.data<float>(),
                 w_.data<float>(),
                 bias_.data<float>(),
                 a_.act,
                 r.H,
                 r.W,
                 a_.C * G,
                 a_.M,
                 r.g.out[0],
                 r.g.out[1],
                 a_.KH,
                 a_.KW,
                 r.g.strides[0],
                 r.g.strides[1],
                 r.g.dilations[0],
                 r.g.dilations[1],
                 r.g.pad_begin[0],
                 r.g.pad_begin[1],
                 G,
                 a_.C,
                 units()};
    parallel_for(r.N * q.OH, ctx.threads(), 1, [&](int64_t b, int64_t e) { run_rows(q, b, e); });
#endif
  }

 private:
  int64_t units() const {
    const int64_t G = a_.attrs.group;
    return a_.C <= 8 ? (G + 3) / 4 : G;
  }

  // The packings of the three forms (see the sums functions), zero-filled past the groups.
  void pack() {
    const int64_t ci = a_.C, taps = a_.KH * a_.KW, U = units();
    const int64_t per_unit = ci <= 8 ? ci * 4 : ci;  // Y's channels per unit
    w_ = Tensor::zeros(DType::Float32, {U * taps * ci * per_unit});
    bias_ = Tensor::zeros(DType::Float32, {U * per_unit});
    float* w = w_.data<float>();
    float* b = bias_.data<float>();
    for (int64_t m = 0; m < a_.M; ++m) {
      const int64_t g = m / ci, o = m % ci;
      // The output's place in its unit's vectors: lanes8 keeps outputs 0-3 of the unit's four
      // groups in vector 0 and 4-7 in vector 1; the other forms keep Y's order.
      int64_t u = g, lane = o;
      if (ci == 4) u = g / 4, lane = g % 4 * 4 + o;
      if (ci == 8) u = g / 4, lane = o / 4 * 16 + g % 4 * 4 + o % 4;
      b[u * per_unit + lane] = a_.bias ? a_.bias[m] : 0.f;
      for (int64_t c = 0; c < ci; ++c)
        for (int64_t tp = 0; tp < taps; ++tp)
          w[((u * taps + tp) * ci + c) * per_unit + lane] = a_.weights[(m * ci + c) * taps + tp];
    }
    a_.weights = {};  // the originals are released once packed
    a_.bias = nullptr;
  }

  std::string label_;
  NhwcConvArgs a_;
  Tensor w_, bias_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "grouped_avx512", NhwcGroupedConvAvx512);

}  // namespace
}  // namespace polyinfer::fast
