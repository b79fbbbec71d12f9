// ai.polyinfer NhwcFusedConv as a direct convolution with an AVX2+FMA register-blocked
// microkernel: X [N, H, W, C], W [M, C, kH, kW], Y [N, OH, OW, M], group 1, float32, kernels
// larger than 1x1 over at least 8 input channels.
//
// Opt-in (cpu:direct=on), kept for measurement: in the models measured it ran level with
// oneDNN's jit:avx2 (docs/kernels.md). The choice table's `direct` row (choice_tables.cpp)
// gives it only those shapes.
//
// The computation: each task is a tile of 6 output pixels (consecutive in Y, across rows) for one
// block of 16 output channels; a tile keeps its 6x16 sums in 12 ymm registers while the
// loop runs over the kernel taps and the input channels, broadcasting one input value per pixel
// and loading 16 weights per channel (12 FMAs per 8 loads). Weights are packed once, at creation,
// as [M/16][kH][kW][C][16] (zero-filled past M), so the loop reads them in order; the input
// channels are split into chunks whose weights fit in L1, with partial sums kept in Y between
// chunks. Padding is handled by copying X into a zero-bordered buffer first, so every tile runs
// the same loop with no bounds tests. Bias and residual Z start the sums, and the activation is
// applied before the last store; Z is read where Y then writes, so Y may take over Z's memory
// (inplace_input).
//
// Summation order differs from the reference kernel's (taps, then channels): results agree to
// float rounding, which tests/unit/conv_nhwc_test.cpp checks against the reference.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/activation.h"
#include "ops/window.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"

#ifdef PI_X86_AVX2
#define PI_DIRECT_CONV 1
#endif

namespace polyinfer::fast {
namespace {

constexpr int64_t kBlock = 16;  // output channels per task: two ymm vectors
constexpr int kTile = 6;        // output pixels per tile: 6 x 2 accumulators + 3 = 15 registers

// What one run needs besides the tensors.
struct Geometry {
  int64_t C, M, KH, KW;
  int64_t sh, sw, dh, dw;
  int64_t HP, WP;  // the (padded) input's height and width
  int64_t OH, OW;
};

// One call of the microkernel: RW pixels x the block's channels, over one chunk of the input
// channels (a chunk's weights stay in L1 while the tiles sweep the pixels).
struct TileArgs {
  const float* const* origin;  // each pixel's window origin in the input, at the chunk's channel
  const int64_t* taps;         // the kernel taps' offsets from an origin (kH*kW of them)
  int ntaps;
  int64_t channels;    // input channels in this chunk
  int64_t tap_stride;  // floats between one tap's packed weights and the next's (C * kBlock)
  const float* w;      // the block's packed weights at the chunk's first channel
  const float* bias;   // kBlock values for this block (zeros without a bias)
  const float* z;      // the residual at the tile's first output value, or null
  float* y;            // the tile's first output value; pixels are `m` floats apart
  int64_t m;
  int valid;         // channels of the block that exist (the rest are not stored)
  bool first, last;  // the first chunk starts from bias (+ Z), later ones from the partial sums
                     // in Y; the last one applies the activation
  FusedActivation act;
};

#ifdef PI_DIRECT_CONV

using avx2::activate;
using avx2::lane_mask;

// One tile: RW output pixels (which may come from different rows: a tile runs on in the next
// row, so narrow outputs like 7x7 still fill whole tiles) x NV*8 output channels.
template <int RW, int NV> PI_AVX2 void tile(const TileArgs& a) {
  __m256 acc[RW][NV];
  const __m256i tail = lane_mask(a.valid - (NV - 1) * 8);  // the last vector's lanes
  const bool partial = a.valid < NV * 8;
  // Pixel r's vector v of p (pixels `m` floats apart), the last one masked when partial.
#define PI_LOAD(p, r, v)                                                      \
  (partial && (v) == NV - 1 ? _mm256_maskload_ps((p) + (r)*a.m + (v)*8, tail) \
                            : _mm256_loadu_ps((p) + (r)*a.m + (v)*8))
#pragma GCC unroll 8
  for (int r = 0; r < RW; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      if (a.first) {
        acc[r][v] = _mm256_loadu_ps(a.bias + v * 8);
        if (a.z) acc[r][v] = _mm256_add_ps(acc[r][v], PI_LOAD(a.z, r, v));
      } else {
        acc[r][v] = PI_LOAD(a.y, r, v);
      }
  for (int t = 0; t < a.ntaps; ++t) {
    const float* xp[RW];
#pragma GCC unroll 8
    for (int r = 0; r < RW; ++r) xp[r] = a.origin[r] + a.taps[t];
    const float* wp = a.w + t * a.tap_stride;
    for (int64_t c = 0; c < a.channels; ++c) {
      __m256 wv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) wv[v] = _mm256_load_ps(wp + c * kBlock + v * 8);
#pragma GCC unroll 8
      for (int r = 0; r < RW; ++r) {
        const __m256 b = _mm256_broadcast_ss(xp[r] + c);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(b, wv[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RW; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __m256 out = a.last ? activate(acc[r][v], a.act) : acc[r][v];
      float* yp = a.y + r * a.m + v * 8;
      if (partial && v == NV - 1) _mm256_maskstore_ps(yp, tail, out);
      else
        _mm256_storeu_ps(yp, out);
    }
}

#undef PI_LOAD

using TileFn = void (*)(const TileArgs&);

template <int NV>
constexpr TileFn kTiles[kTile + 1] = {nullptr,     tile<1, NV>, tile<2, NV>, tile<3, NV>,
                                      tile<4, NV>, tile<5, NV>, tile<6, NV>};

#endif  // PI_DIRECT_CONV

class NhwcDirectConv final : public Kernel {
 public:
  explicit NhwcDirectConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "direct NHWC convolution");
    a_ = NhwcConvArgs::read(info, "direct NHWC convolution");
    pack(a_.weights, a_.bias);
    a_.weights = {};  // the originals are released once packed
    a_.bias = nullptr;
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override { return "fast:avx2-direct"; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    a_.check_x(x, label_);
    const int64_t N = x.shape()[0], H = x.shape()[1], W = x.shape()[2];
    const WindowGeometry g = window_geometry(a_.attrs, {H, W}, {a_.KH, a_.KW}, label_);
    Geometry geo{a_.C,
                 a_.M,
                 a_.KH,
                 a_.KW,
                 g.strides[0],
                 g.strides[1],
                 g.dilations[0],
                 g.dilations[1],
                 H + g.pad_begin[0] + g.pad_end[0],
                 W + g.pad_begin[1] + g.pad_end[1],
                 g.out[0],
                 g.out[1]};
    Tensor& y = ctx.output(0, DType::Float32, {N, geo.OH, geo.OW, a_.M});
    const float* z = a_.residual(ctx, y, label_);
    if (y.numel() == 0) return;
    const float* xp = x.data<float>();
    const bool padded = geo.HP != H || geo.WP != W;
    if (padded) xp = pad_input(x, g, geo, ctx.threads());
    compute(xp, N, geo, z, y.data<float>(), ctx.threads());
  }

 private:
  void pack(UnalignedFloats w, const float* b) {
    const int64_t blocks = (a_.M + kBlock - 1) / kBlock, per_block = a_.KH * a_.KW * a_.C * kBlock;
    packed_ = Tensor::zeros(DType::Float32, {blocks * per_block});
    bias_ = Tensor::zeros(DType::Float32, {blocks * kBlock});
    float* p = packed_.data<float>();
    for (int64_t m = 0; m < a_.M; ++m) {
      float* pb = p + (m / kBlock) * per_block + m % kBlock;
      for (int64_t c = 0; c < a_.C; ++c)
        for (int64_t kh = 0; kh < a_.KH; ++kh)
          for (int64_t kw = 0; kw < a_.KW; ++kw)
            pb[((kh * a_.KW + kw) * a_.C + c) * kBlock] =
                w[((m * a_.C + c) * a_.KH + kh) * a_.KW + kw];
    }
    if (b) std::memcpy(bias_.data<float>(), b, static_cast<size_t>(a_.M) * sizeof(float));
  }

  // X copied into the middle of a zero-bordered [N, HP, WP, C] buffer: one per thread, shared by
  // every convolution that runs on it and grown to the largest, instead of one per kernel (a
  // ResNet-50 would hold ~10 MB of them). Each row is written whole, border included.
  static const float* pad_input(const Tensor& x, const WindowGeometry& g, const Geometry& geo,
                                int threads) {
    thread_local std::vector<float> scratch;
    const int64_t N = x.shape()[0], H = x.shape()[1], W = x.shape()[2], C = geo.C;
    const int64_t row = geo.WP * C, top = g.pad_begin[0], left = g.pad_begin[1];
    if (scratch.size() < static_cast<size_t>(N * geo.HP * row))
      scratch.resize(static_cast<size_t>(N * geo.HP * row));
    float* dst = scratch.data();
    const float* src = x.data<float>();
    parallel_for(N * geo.HP, threads, 64, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t n = i / geo.HP, h = i % geo.HP - top;
        float* d = dst + i * row;
        if (h < 0 || h >= H) {
          std::memset(d, 0, static_cast<size_t>(row) * sizeof(float));
          continue;
        }
        const size_t before = static_cast<size_t>(left * C), body = static_cast<size_t>(W * C);
        std::memset(d, 0, before * sizeof(float));
        std::memcpy(d + before, src + (n * H + h) * W * C, body * sizeof(float));
        std::memset(d + before + body, 0,
                    (static_cast<size_t>(row) - before - body) * sizeof(float));
      }
    });
    return dst;
  }

  void compute(const float* x, int64_t N, const Geometry& geo, const float* z, float* y,
               int threads) const {
#ifdef PI_DIRECT_CONV
    std::vector<int64_t> taps;
    for (int64_t kh = 0; kh < geo.KH; ++kh)
      for (int64_t kw = 0; kw < geo.KW; ++kw)
        taps.push_back((kh * geo.dh * geo.WP + kw * geo.dw) * geo.C);
    const int64_t blocks = (geo.M + kBlock - 1) / kBlock, plane = geo.OH * geo.OW;
    const int64_t pixels = N * plane, tiles = (pixels + kTile - 1) / kTile;
    const int64_t per_block = geo.KH * geo.KW * geo.C * kBlock;
    // Input channels per chunk: the chunk's weights (kH*kW taps x chunk x 16 floats) fit in
    // ~24 KB, well inside a 32 KB L1 beside the input rows the tiles read.
    const int64_t chunk = std::min<int64_t>(
        geo.C, std::max<int64_t>(8, 24576 / (geo.KH * geo.KW * kBlock * 4) / 8 * 8));
    // Tasks are (block, tile), block-major. A thread takes a contiguous run of tasks and, for
    // each block in it, sweeps its tiles once per channel chunk. A task is worth a thread once
    // there are ~100k FMAs.
    const int64_t tile_fmas = kTile * kBlock * geo.KH * geo.KW * geo.C;
    parallel_for(blocks * tiles, threads, std::max<int64_t>(1, 100000 / tile_fmas),
                 [&](int64_t b, int64_t e) {
                   const float* origin[kTile];
                   TileArgs a{origin,
                              taps.data(),
                              static_cast<int>(taps.size()),
                              0,
                              geo.C * kBlock,
                              nullptr,
                              nullptr,
                              nullptr,
                              nullptr,
                              geo.M,
                              0,
                              false,
                              false,
                              a_.act};
                   for (int64_t seg = b; seg < e;) {
                     const int64_t blk = seg / tiles, seg_end = std::min(e, (blk + 1) * tiles);
                     a.valid = static_cast<int>(std::min<int64_t>(kBlock, geo.M - blk * kBlock));
                     a.bias = bias_.data<float>() + blk * kBlock;
                     const TileFn* fns = a.valid > 8 ? kTiles<2> : kTiles<1>;
                     for (int64_t c0 = 0; c0 < geo.C; c0 += chunk) {
                       a.channels = std::min(chunk, geo.C - c0);
                       a.first = c0 == 0;
                       a.last = c0 + a.channels == geo.C;
                       a.w = packed_.data<float>() + blk * per_block + c0 * kBlock;
                       for (int64_t task = seg; task < seg_end; ++task) {
                         const int64_t first = (task - blk * tiles) * kTile;
                         const int rw = static_cast<int>(std::min<int64_t>(kTile, pixels - first));
                         for (int r = 0; r < rw; ++r) {
                           const int64_t q = first + r, n = q / plane, oh = q % plane / geo.OW,
                                         ow = q % geo.OW;
                           origin[r] =
                               x + ((n * geo.HP + oh * geo.sh) * geo.WP + ow * geo.sw) * geo.C + c0;
                         }
                         const int64_t yo = first * geo.M + blk * kBlock;
                         a.z = z ? z + yo : nullptr;
                         a.y = y + yo;
                         fns[rw](a);
                       }
                     }
                     seg = seg_end;
                   }
                 });
#else
    (void)x, (void)N, (void)geo, (void)z, (void)y, (void)threads;
#endif
  }

  std::string label_;
  NhwcConvArgs a_;
  Tensor packed_, bias_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "direct", NhwcDirectConv);

}  // namespace
}  // namespace polyinfer::fast
