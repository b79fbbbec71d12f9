// ai.polyinfer NhwcFusedConv as im2col + GEMM on AVX2+FMA, for convolutions the other
// specialized kernels leave to oneDNN where oneDNN 2.6's jit:avx2 runs slowly: strided 3x3
// layers. X [N, H, W, C], W [M, C, kH, kW], Y [N, OH, OW, M], group 1, any stride, padding and
// dilation, at least 16 input channels, M a multiple of 8, kernels larger than 1x1 (3x3 only
// when strided: Winograd's otherwise; one narrow 1x1 form below).
//
// Why: in ResNet-50 on an AVX2 machine (one thread) oneDNN ran the stride-2 3x3 layers at
// 57-77 GFLOP/s, alone or in the model (layer4.0, a 7x7 output of 512 channels: 57), and its
// own gemm convolution was no better (47-62). Here, in the model: layer2.0/3.0/4.0 3.0-3.3 /
// 3.2-3.3 / 4.0-4.1 ms on oneDNN against 2.7-2.9 / 2.7-2.9 / 3.2-3.4. Not for stems: with 3
// input channels the copy of each pixel's taps cost more than oneDNN's whole convolution
// (MobileNetV2's 3x3 stem 1.1 ms against 0.29; ResNet-50's 7x7 one 6.3 against 3.0).
// One 1x1 form too, where oneDNN runs AVX-512 code: unit strides, unpadded, at most 16 outputs
// (the first blocks of MobileNetV2/V3, MNASNet, EfficientNet at 112x112), with X itself as A,
// no copy. On a Zen 4 core, alternated in the model: MobileNetV2's 32->16 0.196 -> 0.130 ms,
// MobileNetV3's 16->16 with its residual 0.132 -> 0.082, EfficientNet-B0's 32->16 0.143 ->
// 0.125 (brgconv_1x1 runs such narrow layers at ~50 GFLOP/s). There it runs avx512_gemm.h's
// 16-column zmm tile (`fast:avx512-im2col`; MobileNetV2's 0.179 -> 0.138 ms against the ymm
// tile; POLYINFER_AVX512_GEMM=0 keeps the ymm one).
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

#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_gemm.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"
#include "providers/cpu/onednn/onednn.h"
#include "providers/cpu/ops/conv_util.h"
#include "providers/cpu/ops/fused_activation.h"

namespace polyinfer::fast {
namespace {

using cpu::FusedActivation;

constexpr int64_t kBlock = 16;        // output channels per panel
constexpr int kRows = 6;              // pixels per register tile
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
  int64_t K, P;       // K = KH * KW * C, P = N * OH * OW
  int64_t pb, kc;     // pixels per block (a multiple of kRows), K per block
  int64_t panels, groups;
  bool direct;        // a 1x1 window at unit strides, unpadded: A is X itself
  bool zmm;           // the narrow form on avx512_gemm.h's 16-column tile
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
  static constexpr const char* kEnv = "POLYINFER_IM2COL_CONV";

 public:
  // What the constructor refuses first: grouped, 1x1 (but narrow ones), 3x3 at stride 1, and
  // everything else where oneDNN's AVX-512 kernels are faster.
  static bool may_take(const KernelInfo& info) {
    const auto o = conv_outline(info);
    if (o && narrow_pointwise(*o)) return true;
    if (onednn_avx512_convolutions_win(kEnv)) return false;
    return !o || (o->group == 1 && o->kh * o->kw != 1 &&
                  !(o->kh == 3 && o->kw == 3 && o->unit_strides));
  }

  // The one 1x1 form taken: unit strides, at most 16 outputs (one panel), where oneDNN runs
  // AVX-512 code. X is then the GEMM's A as it is. brgconv_1x1 is at its weakest there (a Zen 4
  // core: MobileNetV2's 112x112 32->16 layer at 52 GFLOP/s, against 100+ for wide ones); on
  // oneDNN's AVX2 kernels it was not measured.
  static bool narrow_pointwise(const ConvOutline& o) {
    return o.group == 1 && o.kh == 1 && o.kw == 1 && o.unit_strides && o.m <= kBlock &&
           cpu::onednn::avx512_kernels();
  }

  explicit NhwcIm2colConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "im2col convolution", kEnv);
    const auto o = conv_outline(info);
    const bool narrow = o && narrow_pointwise(*o);
    if (!narrow && onednn_avx512_convolutions_win(kEnv))
      info.unsupported("im2col convolution: oneDNN's AVX-512 kernels are faster here");
    a_ = NhwcConvArgs::read(info, "im2col convolution");
    if (a_.attrs.group != 1) info.unsupported("im2col convolution: grouped convolution");
    const bool unpadded = std::all_of(a_.attrs.pads.begin(), a_.attrs.pads.end(),
                                      [](int64_t p) { return p == 0; });
    if (a_.KH * a_.KW == 1 && !(narrow && unpadded))
      info.unsupported("im2col convolution: 1x1 kernel (oneDNN's) but unpadded ones of at most "
                       "16 outputs on AVX-512");
    if (a_.C < 16) info.unsupported("im2col convolution: fewer than 16 input channels");
    const bool strided = std::any_of(a_.attrs.strides.begin(), a_.attrs.strides.end(),
                                     [](int64_t s) { return s != 1; });
    if (a_.KH == 3 && a_.KW == 3 && !strided)
      info.unsupported("im2col convolution: 3x3 stride 1 (Winograd's or oneDNN's)");
    if (a_.M % 8 != 0)
      info.unsupported("im2col convolution: output channels a multiple of 8 only");
    zmm_ = narrow && PackedGemm::wide();
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
    Plan q{r.x.data<float>(), r.z, r.y.data<float>(), w_.data<float>(), bias_.data<float>(),
           a_.act, r.H, r.W, a_.C, a_.M, r.g.out[0], r.g.out[1], a_.KH, a_.KW, r.g.strides[0],
           r.g.strides[1], r.g.dilations[0], r.g.dilations[1], r.g.pad_begin[0],
           r.g.pad_begin[1], a_.KH * a_.KW * a_.C, r.N * r.g.out[0] * r.g.out[1], 0, 0,
           (a_.M + kBlock - 1) / kBlock, 1, false, false};
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
  bool zmm_ = false;  // the narrow 1x1 form on the 16-column zmm tile (avx512_gemm.h)
  Tensor w_, bias_;
};

PI_REGISTER_KERNEL_TIER("cpu", "ai.polyinfer", NhwcFusedConv, 1, 1, NhwcIm2colConv,
                        Specialized);

}  // namespace
}  // namespace polyinfer::fast
