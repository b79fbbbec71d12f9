// ai.polyinfer NhwcFusedConv for a network's stem on the AVX-512 register tile: few input
// channels (C <= 4: an image's RGB), group 1, undilated, windows of up to 9 taps (3x3), more than
// 16 outputs. X [N, H, W, C], W [M, C, kH, kW], Y [N, OH, OW, M], any strides and padding.
//
// Why: oneDNN JIT-compiles its brgconv for each stem at session creation and runs 3x3 stems
// no faster than this; a 7x7 window stays oneDNN's, whose tile holds more sums (docs/kernels.md).
//
// The computation: channels-last and undilated, the kW taps of one window row are kW * C
// consecutive floats of an input row, starting at (ox * sw - left) * C for output pixel ox. So
// the convolution is a GEMM whose A is read in place, one run of depth kW * C per window row:
// the register tile (up to 8 pixels x 32 outputs, sums in 16 zmm registers) broadcasts
// a[r * sw * C + j] for each of its pixels r and loads 32 packed weights ([M/32][kH][kW * C][32],
// zero-filled past M) per step, for each window row in turn, then runs avx512_gemm.h's epilogue
// (bias, residual Z, activation, masked stores). Input rows are copied once into a ring of kH
// zero-bordered rows (the padding; any kH consecutive rows have distinct row % kH); rows above
// or below the image read a row of zeros. Threads split the output rows.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/activation.h"
#include "ops/window.h"
#include "providers/cpu/fast/avx512_gemm.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"

namespace polyinfer::fast {
namespace {

constexpr int64_t kMaxTaps = 9;  // window taps at most (the choice table's stem rule)

// One run, as the tasks see it.
struct Plan {
  const float* x;
  const float* z;  // residual, laid out as y, or null
  float* y;
  const float* w;     // [M/32][kH][kW * C][32]
  const float* bias;  // [M/32 * 32]
  FusedActivation act;
  int64_t H, W, C, M, OH, OW, KH, KW, sh, sw, top, left;
  int64_t WP;  // a ring row's width in pixels: left border, W, right border
};

#ifdef PI_X86_AVX512_GEMM

// c[r][0, n) = act(bias + z[r] + sum over window rows ky and j < kwc of
// rows[ky][r * step + j] * b[(ky * kwc + j) * 32 + ...]) for R pixels of one output row.
template <int R, ActKind kAct>
PI_AVX512 void stem_rows(const float* const* rows, int64_t KH, int64_t kwc, int64_t step,
                         const float* b, const float* bias, const float* z, float* c, int64_t ldc,
                         const FusedActivation* act, int n) {
  constexpr int64_t kPanel = avx512::kPanel;
  __m512 acc[R][2];
  avx512::tile_start<R>(acc, bias);
  for (int64_t ky = 0; ky < KH; ++ky) {
    const float* w = b + ky * kwc * kPanel;
    for (int64_t j = 0; j < kwc; ++j) avx512::tile_step<R>(acc, rows[ky] + j, step, w + j * kPanel);
  }
  avx512::store_tile<R, kAct>(acc, c, ldc, z, act, n);
}

using StemRowsFn = void (*)(const float* const*, int64_t, int64_t, int64_t, const float*,
                            const float*, const float*, float*, int64_t, const FusedActivation*,
                            int);

template <ActKind kAct>
inline constexpr StemRowsFn kStemRowsAs[avx512::kTileRows + 1] = {nullptr,
                                                                  stem_rows<1, kAct>,
                                                                  stem_rows<2, kAct>,
                                                                  stem_rows<3, kAct>,
                                                                  stem_rows<4, kAct>,
                                                                  stem_rows<5, kAct>,
                                                                  stem_rows<6, kAct>,
                                                                  stem_rows<7, kAct>,
                                                                  stem_rows<8, kAct>};

// Output rows [r0, r1) of all images (row r is row r % OH of image r / OH).
PI_AVX512 void run_rows(const Plan& q, int64_t r0, int64_t r1) {
  const int64_t row = q.WP * q.C;  // floats per ring row
  thread_local std::vector<float> ring_buf, zero_buf;
  ring_buf.assign(static_cast<size_t>(q.KH * row), 0.f);  // the borders stay zero
  if (zero_buf.size() < static_cast<size_t>(row)) zero_buf.assign(static_cast<size_t>(row), 0.f);
  float* ring = ring_buf.data();
  int64_t held[kMaxTaps];  // image * H + row per slot (KH <= kMaxTaps, the constructor's rule)
  std::fill(held, held + q.KH, -1);
  const float* rows[kMaxTaps];  // the window's input rows, or the row of zeros
  const StemRowsFn* tile = avx2::with_activation(
      q.act.kind, "stem convolution",
      [](auto k) -> const StemRowsFn* { return kStemRowsAs<decltype(k)::value>; });
  const int64_t tiles = avx512::row_tiles(q.OW), kwc = q.KW * q.C, step = q.sw * q.C;
  const int64_t panels = (q.M + avx512::kPanel - 1) / avx512::kPanel;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / q.OH, oy = r % q.OH;
    for (int64_t ky = 0; ky < q.KH; ++ky) {
      const int64_t iy = oy * q.sh - q.top + ky;
      if (iy < 0 || iy >= q.H) {
        rows[ky] = zero_buf.data();
        continue;
      }
      float* slot = ring + iy % q.KH * row;
      rows[ky] = slot;
      if (held[iy % q.KH] == n * q.H + iy) continue;
      held[iy % q.KH] = n * q.H + iy;
      std::memcpy(slot + q.left * q.C, q.x + (n * q.H + iy) * q.W * q.C,
                  static_cast<size_t>(q.W * q.C) * sizeof(float));
    }
    float* y = q.y + r * q.OW * q.M;
    const float* z = q.z ? q.z + r * q.OW * q.M : nullptr;
    for (int64_t mb = 0; mb < panels; ++mb) {
      const int cols = static_cast<int>(std::min(avx512::kPanel, q.M - mb * avx512::kPanel));
      const float* w = q.w + mb * q.KH * kwc * avx512::kPanel;
      for (int64_t t = 0, ox = 0, np = 0; t < tiles; ++t, ox += np) {
        np = avx2::tile_rows(q.OW, tiles, t);
        const float* a[kMaxTaps];  // one per window row
        for (int64_t ky = 0; ky < q.KH; ++ky) a[ky] = rows[ky] + ox * step;
        const int64_t at = ox * q.M + mb * avx512::kPanel;
        tile[np](a, q.KH, kwc, step, w, q.bias + mb * avx512::kPanel, z ? z + at : nullptr, y + at,
                 q.M, &q.act, cols);
      }
    }
  }
}

#endif  // PI_X86_AVX512_GEMM

class NhwcStemConv final : public Kernel {
 public:
  explicit NhwcStemConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "stem convolution");
#ifdef PI_X86_AVX512_GEMM
    if (!avx512::supported())
#endif
      info.unsupported("stem convolution: needs AVX-512");
    a_ = NhwcConvArgs::read(info, "stem convolution");
    PI_CHECK(a_.attrs.group == 1 && a_.KH * a_.KW <= kMaxTaps, Internal, label_,
             ": the stem kernel takes group 1 and at most ", kMaxTaps, " taps");
    pack();
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  // Each output reads its own element of Z just before it is written.
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override { return "fast:avx512-stem"; }

  void run(KernelContext& ctx) override {
    const NhwcConvArgs::Run r = a_.begin(ctx, label_);
    if (r.y.numel() == 0) return;
#ifdef PI_X86_AVX512_GEMM
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
           r.g.pad_begin[0],
           r.g.pad_begin[1],
           0};
    // Wide enough for the last window (its right end may pass the padded width when the stride
    // skips the last columns; those read zeros too).
    q.WP = std::max(q.left + r.W, (q.OW - 1) * q.sw + q.KW);
    parallel_for(r.N * q.OH, ctx.threads(), 1, [&](int64_t b, int64_t e) { run_rows(q, b, e); });
#endif
  }

 private:
  void pack() {
    const int64_t M = a_.M, C = a_.C, KH = a_.KH, KW = a_.KW, P = avx512::kPanel;
    const int64_t panels = (M + P - 1) / P, K = KH * KW * C;
    w_ = Tensor::zeros(DType::Float32, {panels * K * P});
    bias_ = Tensor::zeros(DType::Float32, {panels * P});
    float* d = w_.data<float>();
    // Depth index (ky * kW + kx) * C + c: a window row's taps in X's order.
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t ky = 0; ky < KH; ++ky)
          for (int64_t kx = 0; kx < KW; ++kx)
            d[(m / P * K + (ky * KW + kx) * C + c) * P + m % P] =
                a_.weights[((m * C + c) * KH + ky) * KW + kx];
    if (a_.bias) std::memcpy(bias_.data<float>(), a_.bias, static_cast<size_t>(M) * sizeof(float));
    a_.weights = {};  // the originals are released once packed
    a_.bias = nullptr;
  }

  std::string label_;
  NhwcConvArgs a_;
  Tensor w_, bias_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "stem", NhwcStemConv);

}  // namespace
}  // namespace polyinfer::fast
