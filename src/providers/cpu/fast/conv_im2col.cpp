// ai.polyinfer NhwcFusedConv as im2col + GEMM on AVX2+FMA: X [N, H, W, C], W [M, C, kH, kW],
// Y [N, OH, OW, M], group 1, M a multiple of 8, any window, stride, padding and dilation.
//
// Why: oneDNN 2.6's jit:avx2 and gemm convolutions ran ResNet-50's strided 3x3 layers at 47-77
// GFLOP/s on an AVX2 machine; this GEMM runs them faster. Where oneDNN runs AVX-512 its kernels
// win, but for narrow 1x1 layers (16 or fewer outputs: brgconv_1x1's weakest shapes), which
// run here with X itself as A, no copy, on avx512_gemm.h's 16-column zmm tile. Which shapes
// come here is the choice table's (choice_tables.cpp; docs/kernels.md has the figures).
//
// The computation: K = kH * kW * C, ordered (ky, kx, c) so that each tap of an output pixel is
// a contiguous run of X's channels. W is packed once as [M/16][K][16]. Each task takes a block
// of output pixels; for each block of K (sized so the pixels' rows of it fit in L2 with room to
// spare) it copies those rows out of X (zeros for padding), then runs the 6x16 register tile of
// avx2_util.h over every 16-column panel: the first K block starts from the bias and the
// residual Z, later ones continue the sums left in Y, and the last applies the activation.
// Where there are fewer pixel blocks than threads, the threads split the panels instead.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/activation.h"
#include "ops/window.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_gemm.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"

namespace polyinfer::fast {
namespace {

constexpr int64_t kBlock = 16;          // output channels per panel
constexpr int kRows = 6;                // pixels per register tile
constexpr int64_t kABytes = 96 * 1024;  // a K block of a pixel block's rows

// One run, as the tasks see it.
struct Plan {
  const float* x;
  const float* z;  // residual, or null
  float* y;
  const float* w;     // [M/16][K][16]
  const float* bias;  // [M/16 * 16]
  FusedActivation act;
  int64_t H, W, C, M, OH, OW, KH, KW;
  int64_t sh, sw, dh, dw, top, left;
  int64_t K, P;    // K = KH * KW * C, P = N * OH * OW
  int64_t pb, kc;  // pixels per block (a multiple of kRows), K per block
  int64_t panels, groups;
  bool direct;  // a 1x1 window at unit strides, unpadded: A is X itself
  bool zmm;     // the narrow form on avx512_gemm.h's 16-column tile
};

#ifdef PI_X86_AVX2

// a[p][0, k1 - k0) = im2col row of output pixel p0 + p over K range [k0, k1). Positions are
// stepped, not divided: a 64-bit division per tap cost more than copying a stem's 3 channels.
void gather(const Plan& q, int64_t p0, int64_t np, int64_t k0, int64_t k1, float* a) {
  const int64_t lda = k1 - k0, t0 = k0 / q.C, t1 = (k1 + q.C - 1) / q.C;
  int64_t n = p0 / (q.OH * q.OW), oy = p0 / q.OW % q.OH, ox = p0 % q.OW;
  for (int64_t p = 0; p < np; ++p) {
    float* row = a + p * lda;
    const float* image = q.x + n * q.H * q.W * q.C;
    int64_t ky = t0 / q.KW, kx = t0 % q.KW;
    // Taps overlapping [k0, k1): tap t covers [t * C, (t + 1) * C).
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c0 = std::max(k0, t * q.C) - t * q.C;
      const int64_t c1 = std::min(k1, (t + 1) * q.C) - t * q.C;
      float* dst = row + t * q.C + c0 - k0;
      const int64_t iy = oy * q.sh - q.top + ky * q.dh, ix = ox * q.sw - q.left + kx * q.dw;
      const bool inside = iy >= 0 && iy < q.H && ix >= 0 && ix < q.W;
      const float* src = inside ? image + (iy * q.W + ix) * q.C + c0 : nullptr;
      if (c1 - c0 < 16) {  // a stem's 3 channels: a call per tap would cost more than the copy
        for (int64_t c = 0; c < c1 - c0; ++c) dst[c] = inside ? src[c] : 0.f;
      } else if (inside) {
        std::memcpy(dst, src, static_cast<size_t>(c1 - c0) * sizeof(float));
      } else {
        std::memset(dst, 0, static_cast<size_t>(c1 - c0) * sizeof(float));
      }
      if (++kx == q.KW) kx = 0, ++ky;
    }
    if (++ox == q.OW) {
      ox = 0;
      if (++oy == q.OH) oy = 0, ++n;
    }
  }
}

// Pixel block `blk`, panels of group `group`.
PI_AVX2 void run_task(const Plan& q, int64_t blk, int64_t group) {
  const int64_t per_group = (q.panels + q.groups - 1) / q.groups;
  const int64_t m0 = group * per_group, m1 = std::min(q.panels, m0 + per_group);
  const int64_t p0 = blk * q.pb, np = std::min(q.pb, q.P - p0);
  if (m0 >= m1 || np <= 0) return;
  thread_local std::vector<float> a_buf;
  const size_t a_size = static_cast<size_t>(q.pb * q.kc);
  if (a_buf.size() < a_size) a_buf.resize(a_size);
  float* a = a_buf.data();
  const int64_t tiles = q.zmm ? avx512::row_tiles(np) : avx2::row_tiles(np);
  for (int64_t k0 = 0; k0 < q.K; k0 += q.kc) {
    const int64_t k1 = std::min(q.K, k0 + q.kc), kn = k1 - k0;
    const bool first = k0 == 0, last = k1 == q.K;
    const float* rows_a = a;
    int64_t lda = kn;
    if (q.direct) {
      rows_a = q.x + p0 * q.C + k0;
      lda = q.C;
    } else {
      gather(q, p0, np, k0, k1, a);
    }
    const FusedActivation* act = last ? &q.act : nullptr;
    const avx2::GemmRowsFn* gemm =
        q.zmm ? avx512::gemm_rows16_for(act) : avx2::gemm_rows_for(act, true);
    for (int64_t mb = m0; mb < m1; ++mb) {
      const int cols = static_cast<int>(std::min<int64_t>(kBlock, q.M - mb * kBlock));
      const float* w = q.w + (mb * q.K + k0) * kBlock;
      for (int64_t t = 0, p = 0, rows = 0; t < tiles; ++t, p += rows) {
        rows = avx2::tile_rows(np, tiles, t);
        const int64_t at = (p0 + p) * q.M + mb * kBlock;
        const float* z = first ? (q.z ? q.z + at : nullptr) : q.y + at;
        gemm[rows](rows_a + p * lda, lda, w, kn, q.y + at, q.M, 8,
                   first ? q.bias + mb * kBlock : nullptr, z, &q.act, cols);
      }
    }
  }
}

#endif  // PI_X86_AVX2

class NhwcIm2colConv final : public Kernel {
 public:
  explicit NhwcIm2colConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "im2col convolution");
    a_ = NhwcConvArgs::read(info, "im2col convolution");
    PI_CHECK(a_.attrs.group == 1 && a_.M % 8 == 0, Internal, label_,
             ": the im2col kernel takes group 1 and outputs in multiples of 8");
    // A 1x1 window at unit strides, unpadded, reads X as A in place: there the zmm tile runs.
    const auto all = [](const std::vector<int64_t>& v, int64_t x) {
      return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
    };
    zmm_ = a_.KH * a_.KW == 1 && all(a_.attrs.strides, 1) && all(a_.attrs.pads, 0) &&
           PackedGemm::wide(info.options().cpu);
    pack();
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override { return zmm_ ? "fast:avx512-im2col" : "fast:avx2-im2col"; }

  void run(KernelContext& ctx) override {
    const NhwcConvArgs::Run r = a_.begin(ctx, label_);
    if (r.y.numel() == 0) return;
#ifdef PI_X86_AVX2
    const int threads = ctx.threads();
    Plan q{r.x.data<float>(),
           r.z,
           r.y.data<float>(),
           w_.data<float>(),
           bias_.data<float>(),
           a_.act,
           r.H,
           r.W,
           a_.C,
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
           a_.KH * a_.KW * a_.C,
           r.N * r.g.out[0] * r.g.out[1],
           0,
           0,
           (a_.M + kBlock - 1) / kBlock,
           1,
           false,
           false};
    q.direct = q.KH * q.KW == 1 && q.sh == 1 && q.sw == 1 && q.top == 0 && q.left == 0 &&
               q.OH == r.H && q.OW == r.W;
    q.zmm = q.direct && zmm_;
    // Pixel blocks of up to 96 (16 register tiles), as many as a multiple of the threads and of
    // even size (ResNet-50's 196 pixels as 96 + 96 + 4 left one thread a third of the work at
    // 2 threads); K blocks whose rows of the block stay in L2 while every panel passes.
    int64_t blocks = (q.P + 95) / 96;
    if (threads > 1 && blocks > 1) blocks = (blocks + threads - 1) / threads * threads;
    q.pb = ((q.P + blocks - 1) / blocks + kRows - 1) / kRows * kRows;
    blocks = (q.P + q.pb - 1) / q.pb;
    q.kc = std::min(q.K, std::max<int64_t>(64, kABytes / (q.pb * 4)));
    if (blocks < 2 * threads) q.groups = std::min<int64_t>(q.panels, threads);
    parallel_for(blocks * q.groups, threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) run_task(q, t / q.groups, t % q.groups);
    });
#endif
  }

 private:
  void pack() {
    const int64_t M = a_.M, C = a_.C, taps = a_.KH * a_.KW, K = taps * C;
    const int64_t panels = (M + kBlock - 1) / kBlock;
    w_ = Tensor::zeros(DType::Float32, {panels * K * kBlock});
    bias_ = Tensor::zeros(DType::Float32, {panels * kBlock});
    float* d = w_.data<float>();
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t t = 0; t < taps; ++t)
          d[(m / kBlock * K + t * C + c) * kBlock + m % kBlock] =
              a_.weights[(m * C + c) * taps + t];
    if (a_.bias) std::memcpy(bias_.data<float>(), a_.bias, static_cast<size_t>(M) * sizeof(float));
    a_.weights = {};  // the originals are released once packed
    a_.bias = nullptr;
  }

  std::string label_;
  NhwcConvArgs a_;
  bool zmm_ = false;  // a 1x1 window on the 16-column zmm tile (avx512_gemm.h)
  Tensor w_, bias_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "im2col", NhwcIm2colConv);

}  // namespace
}  // namespace polyinfer::fast
