// ai.polyinfer NhwcPointwiseDepthwiseConv on AVX2+FMA: a 1x1 convolution (the "expansion" of a
// MobileNetV2 inverted-residual block) and the 3x3 depthwise convolution that reads it, computed
// together so that the expanded activations never leave the cache:
//   Y = act(DepthwiseConv3x3(pointwise_act(Conv1x1(X, W1) + B1), W2) + B2)
// with X [N, H, W, C], W1 [E, C, 1, 1], W2 [E, 1, 3, 3], Y [N, OH, OW, E], E a multiple of 8.
//
// Why: the expansion writes E channels per pixel (6x the block's input) and the depthwise
// convolution reads them back at once; on oneDNN they are two passes over a tensor of up to
// 1.8 MB (MobileNetV2's 56x56x144), both bound by memory in the model (docs/kernels.md).
//
// The computation, per task (an image, a band of output rows and a range of 16-channel blocks):
// expanded rows are computed one input row at a time into a ring of three rows (any three
// consecutive input rows have distinct row % 3, so both stride 1 and stride 2 find their rows),
// with the 6x16 GEMM register tile of avx2_util.h over the pixels (bias and the pointwise
// activation applied in registers), or avx512_gemm.h's 16-column zmm tiles on the zmm GEMM
// (`fast:avx512-pointwise-depthwise`; a 32-column tile was no faster). A ring row is stored as
// planes of 8 channels ([E/8][W][8])
// with zero borders as wide as the padding, and rows above or below the image read a plane of
// zeros, so the depthwise loop has no bounds tests: per output pixel and 8 channels, 9 FMAs
// from the three rows with the 9 weights held in registers. Rows at band edges are computed by
// both bands; with many channel blocks the threads split the channels instead, which repeats
// nothing.
//
// The unfused pair stays available: where this kernel declines, the split form in
// providers/cpu/reference/pointwise_depthwise.cpp runs the two convolutions on their own kernels.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/unaligned.h"
#include "ops/activation.h"
#include "ops/window.h"
#include "providers/cpu/fast/activation_pass.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_gemm.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"

namespace polyinfer::fast {
namespace {

constexpr int64_t kBlock = 16;  // expanded channels per GEMM column block

// One run's sizes.
struct Geometry {
  int64_t N, H, W, C, E;
  int64_t OH, OW, sh, sw;
  int64_t top, left;  // padding before the first row and column
  int64_t WP;         // a ring row's width in pixels: left border, W, right border
};

// One run, as the tasks see it.
struct Plan {
  const float* x;
  float* y;
  const float* w1;                 // [E/16][C][16]
  const float* b1;                 // [E/16 * 16]
  const float* w2;                 // [9][E]
  const float* b2;                 // [E]
  FusedActivation act1, act2;      // applied in the kernels' registers
  FusedActivation after1, after2;  // applied by the activation pass to a row still in cache
  Geometry g;
  int64_t blocks;  // 16-channel blocks of E
  int64_t bands;   // output row bands per image
  int64_t groups;  // channel block ranges
  bool zmm;        // the expansion on avx512_gemm.h's 16-column zmm tile
};

#ifdef PI_X86_AVX2

// One output row of the depthwise convolution for 8 channels: r[0..2] are those channels' planes
// of the three input rows of the window (bordered, 8 floats per pixel: pixel ox * SW of a plane
// starts the window of output ox), weights w[tap * E], bias b, output y (pixels E floats apart).
// kU outputs at a time keep kU FMA chains in flight; the planes make every tap's address a
// constant offset from one pointer per row (a channels-last ring took 35-45% longer: an index
// register per tap, and half of each loaded line belonged to the next pass).
template <ActKind K, int SW, int kU>
PI_AVX2 inline __attribute__((always_inline)) void dw_row_as(const float* const r[3], int64_t ow,
                                                             const float* w, int64_t E,
                                                             const float* b,
                                                             const FusedActivation& act, float* y) {
  __m256 wt[9];
  for (int t = 0; t < 9; ++t) wt[t] = _mm256_loadu_ps(w + t * E);
  const __m256 bias = _mm256_loadu_ps(b);
  int64_t ox = 0;
  for (; ox + kU <= ow; ox += kU) {
    __m256 acc[kU];
#pragma GCC unroll 8
    for (int u = 0; u < kU; ++u) acc[u] = bias;
#pragma GCC unroll 3
    for (int ky = 0; ky < 3; ++ky) {
      const float* q = r[ky] + ox * SW * 8;
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; ++kx)
#pragma GCC unroll 8
        for (int u = 0; u < kU; ++u)
          acc[u] = _mm256_fmadd_ps(_mm256_load_ps(q + (u * SW + kx) * 8), wt[ky * 3 + kx], acc[u]);
    }
#pragma GCC unroll 8
    for (int u = 0; u < kU; ++u)
      _mm256_storeu_ps(y + (ox + u) * E, avx2::activate_as<K>(acc[u], act));
  }
  for (; ox < ow; ++ox) {
    __m256 acc = bias;
#pragma GCC unroll 3
    for (int ky = 0; ky < 3; ++ky)
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; ++kx)
        acc = _mm256_fmadd_ps(_mm256_load_ps(r[ky] + (ox * SW + kx) * 8), wt[ky * 3 + kx], acc);
    _mm256_storeu_ps(y + ox * E, avx2::activate_as<K>(acc, act));
  }
}

// With AVX2's 16 registers (9 weights held), 4 chains: half the 8 that two FMA pipes of
// latency 4 need; 8 spilled and ran slower.
template <ActKind K, int SW>
PI_AVX2 void dw_row(const float* const r[3], int64_t ow, const float* w, int64_t E, const float* b,
                    const FusedActivation& act, float* y) {
  dw_row_as<K, SW, 4>(r, ow, w, E, b, act, y);
}

// With AVX-512VL's 32 ymm registers, 8 chains (a few percent faster in the mobile models).
template <ActKind K, int SW>
PI_AVX512VL void dw_row8(const float* const r[3], int64_t ow, const float* w, int64_t E,
                         const float* b, const FusedActivation& act, float* y) {
  dw_row_as<K, SW, 8>(r, ow, w, E, b, act, y);
}

using DwRowFn = void (*)(const float* const*, int64_t, const float*, int64_t, const float*,
                         const FusedActivation&, float*);

template <int SW> DwRowFn dw_row_for(ActKind k, bool vl) {
  return avx2::with_activation(k, "pointwise-depthwise convolution", [vl](auto a) -> DwRowFn {
    return vl ? dw_row8<decltype(a)::value, SW> : dw_row<decltype(a)::value, SW>;
  });
}

// The channel blocks [ob0, ob1) of group `group` of p.groups.
void group_blocks(const Plan& p, int64_t group, int64_t* ob0, int64_t* ob1) {
  const int64_t per_group = (p.blocks + p.groups - 1) / p.groups;
  *ob0 = group * per_group;
  *ob1 = std::min(p.blocks, *ob0 + per_group);
}

// Task `task` = (image, band, channel group): expanded rows are computed one input row at a time
// into a ring of three bordered rows.
PI_AVX2 void run_ring_task(const Plan& p, int64_t task) {
  const Geometry& g = p.g;
  const int64_t band = task / p.groups % p.bands, n = task / (p.groups * p.bands);
  int64_t ob0, ob1;
  group_blocks(p, task % p.groups, &ob0, &ob1);
  const int64_t per_band = (g.OH + p.bands - 1) / p.bands;
  const int64_t oy0 = band * per_band, oy1 = std::min(g.OH, oy0 + per_band);
  if (ob0 >= ob1 || oy0 >= oy1) return;
  const int64_t e0 = ob0 * kBlock, ew = std::min(g.E, ob1 * kBlock) - e0;  // channels here
  // A ring row holds one plane [WP][8] per 8 channels; WP is even, so planes stay 64-byte
  // aligned.
  const int64_t plane = g.WP * 8, row = ew / 8 * plane;

  thread_local std::vector<float> ring_buf, zero_buf;
  ring_buf.assign(static_cast<size_t>(3 * row + 16), 0.f);  // the borders stay zero
  if (zero_buf.size() < static_cast<size_t>(plane + 16))
    zero_buf.assign(static_cast<size_t>(plane + 16), 0.f);
  float* ring = align64(ring_buf.data());
  const float* zeros = align64(zero_buf.data());
  int64_t held[3] = {-1, -1, -1};  // the input row each ring slot holds
  const bool vl = p.zmm && avx512::vl_supported();
  const DwRowFn dw = g.sw == 1 ? dw_row_for<1>(p.act2.kind, vl) : dw_row_for<2>(p.act2.kind, vl);

  const int64_t tiles = p.zmm ? avx512::row_tiles(g.W) : avx2::row_tiles(g.W);
  // The pointwise weights ([C][16] per block, C = 16-24 in MobileNetV2) stay in L1.
  const avx2::GemmRowsFn* gemm =
      p.zmm ? avx512::gemm_rows16_for(&p.act1) : avx2::gemm_rows_for(&p.act1, false);
  // 4 or 2 blocks per call on the multi-panel tile (AVX-512): fewer loads per FMA than the 8x16
  // tile (docs/kernels.md).
  const avx2::GemmRowsFn* multi4 = p.zmm ? avx512::gemm_rows16_multi_for<4>(&p.act1) : nullptr;
  const avx2::GemmRowsFn* multi2 = p.zmm ? avx512::gemm_rows16_multi_for<2>(&p.act1) : nullptr;
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    const float* slots[3];  // the window's rows, or null for a row of zeros
    for (int ky = 0; ky < 3; ++ky) {
      const int64_t iy = oy * g.sh - g.top + ky;
      slots[ky] = nullptr;
      if (iy < 0 || iy >= g.H) continue;
      float* slot = ring + (iy % 3) * row;
      slots[ky] = slot;
      if (held[iy % 3] == iy) continue;
      held[iy % 3] = iy;
      const float* xr = p.x + (n * g.H + iy) * g.W * g.C;
      // Where the CPU has AVX-512, 4 (else 2) blocks at a time, a last one alone.
      for (int64_t ob = ob0, span = 1; ob < ob1; ob += span) {
        const int64_t left = ob1 - ob;
        span = !multi4 ? 1 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
        const avx2::GemmRowsFn* tile = span == 4 ? multi4 : span == 2 ? multi2 : gemm;
        const int64_t span_tiles = span == 4 ? avx2::row_tiles(g.W) : tiles;
        const int cols = static_cast<int>(std::min<int64_t>(span * kBlock, g.E - ob * kBlock));
        float* out = slot + (ob - ob0) * 2 * plane + g.left * 8;
        for (int64_t t = 0, px = 0, rows = 0; t < span_tiles; ++t, px += rows) {
          rows = avx2::tile_rows(g.W, span_tiles, t);
          tile[rows](xr + px * g.C, g.C, p.w1 + ob * g.C * kBlock, g.C, out + px * 8, 8, plane,
                     p.b1 + ob * kBlock, nullptr, &p.act1, cols);
        }
      }
      // Plane by plane: the borders stay zero (Sigmoid(0) is not).
      if (p.after1.kind != ActKind::None)
        for (int64_t c = 0; c < ew; c += 8)
          activate_in_place(slot + c / 8 * plane + g.left * 8, g.W * 8, p.after1, 1);
    }
    float* yr = p.y + (n * g.OH + oy) * g.OW * g.E + e0;
    for (int64_t c = 0; c < ew; c += 8) {
      const float* r[3];
      for (int ky = 0; ky < 3; ++ky) r[ky] = slots[ky] ? slots[ky] + c / 8 * plane : zeros;
      dw(r, g.OW, p.w2 + e0 + c, g.E, p.b2 + e0 + c, p.act2, yr + c);
    }
    if (p.after2.kind == ActKind::None) continue;
    if (ew == g.E) {
      activate_in_place(yr, g.OW * g.E, p.after2, 1);
    } else {
      for (int64_t ox = 0; ox < g.OW; ++ox) activate_in_place(yr + ox * g.E, ew, p.after2, 1);
    }
  }
}

#endif  // PI_X86_AVX2

class NhwcPointwiseDepthwise final : public Kernel {
 public:
  explicit NhwcPointwiseDepthwise(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "fused pointwise+depthwise convolution");
    require_float_input(info);
    const Tensor* w1 = info.constant_input(1);
    const Tensor* w2 = info.constant_input(3);
    if (!w1 || !w2 || w1->dtype() != DType::Float32 || w2->dtype() != DType::Float32 ||
        w1->rank() != 4 || w2->rank() != 4)
      info.unsupported("fused pointwise+depthwise convolution: constant float32 weights only");
    E_ = w1->shape()[0];
    C_ = w1->shape()[1];
    PI_CHECK(
        w1->shape()[2] == 1 && w1->shape()[3] == 1 && w2->shape()[0] == E_ && w2->shape()[1] == 1,
        InvalidModel, label_, ": weights ", shape_str(w1->shape()), " and ", shape_str(w2->shape()),
        " are not [E, C, 1, 1] and [E, 1, kH, kW]");
    attrs_ = WindowAttrs::parse(info);
    const bool undilated = std::all_of(attrs_.dilations.begin(), attrs_.dilations.end(),
                                       [](int64_t d) { return d == 1; });
    if (w2->shape()[2] != 3 || w2->shape()[3] != 3 || attrs_.group != E_ || !undilated)
      info.unsupported("fused pointwise+depthwise convolution: undilated 3x3 depthwise only");
    if (attrs_.strides.size() == 2 && attrs_.strides[1] > 2)
      info.unsupported("fused pointwise+depthwise convolution: horizontal stride 1 or 2 only");
    if (E_ % 8 != 0)
      info.unsupported("fused pointwise+depthwise convolution: E a multiple of 8 only");
    act1_ = FusedActivation::from(info, "pointwise_activation");
    act2_ = FusedActivation::from(info);
    if (!avx2::covers(act1_.kind) || !avx2::covers(act2_.kind))
      info.unsupported("fused pointwise+depthwise convolution: this activation");
    // Where the CPU has the AVX-512 activation pass for an activation (SiLU, Sigmoid), it runs
    // over each expanded row and each output row while they are in cache, instead of this
    // kernel's AVX2 epilogue, whose exp and division per 8 lanes cost more (docs/kernels.md).
    for (auto [act, after] : {std::pair{&act1_, &after1_}, std::pair{&act2_, &after2_}})
      if (activation_pass(act->kind)) std::swap(*act, *after);
    const Tensor* b1 = nullptr;
    const Tensor* b2 = nullptr;
    for (size_t i : {size_t{2}, size_t{4}}) {
      if (!info.has_input(i)) continue;
      const Tensor* b = info.constant_input(i);
      if (!b || b->dtype() != DType::Float32)
        info.unsupported("fused pointwise+depthwise convolution: non-constant bias");
      PI_CHECK(b->numel() == E_, ShapeMismatch, label_, ": bias ", i, " has ", b->numel(),
               " values for ", E_, " channels");
      (i == 2 ? b1 : b2) = b;
    }
    zmm_ = PackedGemm::wide(info.options().cpu);
    pack(*w1, b1, *w2, b2);
  }

  bool prepacked(size_t i) const override { return i >= 1 && i <= 4; }
  std::string impl() const override {
    std::string s = zmm_ ? "fast:avx512-pointwise-depthwise" : "fast:avx2-pointwise-depthwise";
    for (const FusedActivation* a : {&after1_, &after2_})
      if (const char* pass = activation_pass(a->kind)) s += std::string(" + ") + pass;
    return s;
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::Float32, InvalidArgument, label_, ": X must be float32, got ",
             dtype_name(x.dtype()));
    PI_CHECK(x.rank() == 4 && x.shape()[3] == C_, ShapeMismatch, label_, ": X has shape ",
             shape_str(x.shape()), " but the weights want [N, H, W, ", C_, "] (channels last)");
    const int64_t N = x.shape()[0], H = x.shape()[1], W = x.shape()[2];
    const WindowGeometry wg = window_geometry(attrs_, {H, W}, {3, 3}, label_);
    Geometry g{N,
               H,
               W,
               C_,
               E_,
               wg.out[0],
               wg.out[1],
               wg.strides[0],
               wg.strides[1],
               wg.pad_begin[0],
               wg.pad_begin[1],
               0};
    // Wide enough for the last window (its right end may pass the padded width when the stride
    // skips the last columns; those are zeros too).
    g.WP = (std::max(g.left + W, (g.OW - 1) * g.sw + 3) + 1) / 2 * 2;
    Tensor& y = ctx.output(0, DType::Float32, {N, g.OH, g.OW, E_});
    if (y.numel() == 0) return;
#ifdef PI_X86_AVX2
    const int threads = ctx.threads();
    Plan p{x.data<float>(),
           y.data<float>(),
           w1_.data<float>(),
           b1_.data<float>(),
           w2_.data<float>(),
           b2_.data<float>(),
           act1_,
           act2_,
           after1_,
           after2_,
           g,
           (E_ + kBlock - 1) / kBlock,
           1,
           1,
           zmm_};
    // Threads split the output rows when there are enough that the rows expanded twice at band
    // edges are few (2 of 56 at 2 threads), else the channel blocks (which repeat nothing but
    // share out unevenly: 144 channels are 9 blocks, split 5:4 at 2 threads).
    if (threads > 1 && g.OH >= 8 * threads) p.bands = threads;
    else if (threads > 1)
      p.groups = std::min<int64_t>(threads, p.blocks);
    parallel_for(N * p.bands * p.groups, threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) run_ring_task(p, t);
    });
#endif
  }

 private:
  void pack(const Tensor& w1, const Tensor* b1, const Tensor& w2, const Tensor* b2) {
    const int64_t blocks = (E_ + kBlock - 1) / kBlock;
    w1_ = Tensor::zeros(DType::Float32, {blocks * C_ * kBlock});
    b1_ = Tensor::zeros(DType::Float32, {blocks * kBlock});
    w2_ = Tensor::empty(DType::Float32, {9 * E_});
    b2_ = Tensor::zeros(DType::Float32, {E_});
    const UnalignedFloats s1(w1.peek_bytes());  // read in place, never copied whole first
    float* d1 = w1_.data<float>();
    for (int64_t e = 0; e < E_; ++e)
      for (int64_t c = 0; c < C_; ++c)
        d1[(e / kBlock * C_ + c) * kBlock + e % kBlock] = s1[e * C_ + c];
    const UnalignedFloats s2(w2.peek_bytes());
    float* d2 = w2_.data<float>();
    for (int64_t e = 0; e < E_; ++e)
      for (int t = 0; t < 9; ++t) d2[t * E_ + e] = s2[e * 9 + t];
    if (b1) std::memcpy(b1_.data<float>(), b1->data<float>(), E_ * sizeof(float));
    if (b2) std::memcpy(b2_.data<float>(), b2->data<float>(), E_ * sizeof(float));
  }

  std::string label_;
  WindowAttrs attrs_;
  int64_t E_ = 0, C_ = 0;
  FusedActivation act1_, act2_;      // in the kernel's registers
  FusedActivation after1_, after2_;  // by the activation pass (kind None where unused)
  bool zmm_ = false;                 // the expansion on the 16-column zmm tile (avx512_gemm.h)
  Tensor w1_, b1_, w2_, b2_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcPointwiseDepthwiseConv, 1, 1, "pointwise_depthwise",
                 NhwcPointwiseDepthwise);

}  // namespace
}  // namespace polyinfer::fast
