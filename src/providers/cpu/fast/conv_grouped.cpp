// ai.polyinfer NhwcFusedConv for grouped convolutions with few channels per group on AVX2+FMA:
// ResNeXt's 32 groups of 4 (its first stage), 8 and 16 channels, RegNet's groups of 8.
// X [N, H, W, G * ci], W [G * co, ci, kH, kW], Y [N, OH, OW, G * co], any window.
//
// Why: oneDNN 2.6 has no channels-last AVX2 kernel for 4 channels per group (it fell back to its
// gemm convolution at a few GFLOP/s) and runs groups of 8 slowly (docs/kernels.md).
//
// The computation: per output pixel block and group, the sums over the taps and the group's
// input channels are FMAs of one broadcast input value with a vector of the group's output
// channels (weights packed [G][kH][kW][ci][co]); a block of pixels shares each weight load. With
// 4 channels per group (co = 4), a vector holds two groups: one load of 8 input channels (4 of
// each group) and four in-lane permutes give each lane its own group's channel. Border pixels,
// whose windows leave the image, run one at a time over their valid taps. Threads split the
// output rows.
#include <algorithm>
#include <cstring>

#include "ops/window.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"

namespace polyinfer::fast {
namespace {

struct Plan {
  const float* x;
  const float* z;  // residual shaped as Y, or null
  float* y;
  const float* w;     // packed, see above (pairs of groups when co = 4)
  const float* bias;  // M values (zeros when the node has none)
  FusedActivation act;
  int64_t N, H, W, C, M, OH, OW, KH, KW, sh, sw, dh, dw, top, left;
  int64_t groups;  // the channels per group are the block functions' template arguments
};

#ifdef PI_X86_AVX2

// The taps of output pixel column ox that fall inside the image: kx in [*k0, *k1).
void valid_kx(const Plan& q, int64_t ox, int64_t* k0, int64_t* k1) {
  const int64_t ix0 = ox * q.sw - q.left;
  *k0 = 0;
  while (*k0 < q.KW && ix0 + *k0 * q.dw < 0) ++*k0;
  *k1 = q.KW;
  while (*k1 > *k0 && ix0 + (*k1 - 1) * q.dw >= q.W) --*k1;
}

// Sums kept apart: a pixel's sum over the taps and channels is one chain of dependent FMAs
// (5 cycles each), so a block of few pixels keeps kChains(P * V) partial sums per output
// vector, channel c adding into chain c % chains, and adds them at the end: one pixel at a
// time with a single chain ran at a tenth of the FMA peak.
constexpr int chains_for(int vectors, int channels) {
  int a = 1;
  while (a < channels && a * vectors < 8) a *= 2;
  return a;
}

// Store of P pixels' V vectors of output channels [m0, m0 + 8V): residual and activation.
template <ActKind K, int P, int V>
PI_AVX2 void finish(const Plan& q, __m256 (&acc)[P][V], int64_t pix0, int64_t m0) {
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      const int64_t at = (pix0 + p) * q.M + m0 + v * 8;
      __m256 r = acc[p][v];
      if (q.z) r = _mm256_add_ps(r, _mm256_loadu_ps(q.z + at));
      _mm256_storeu_ps(q.y + at, avx2::activate_as<K>(r, q.act));
    }
}

// co = 8V channels per group of CI inputs: P pixels (columns ox0..) of output row oy, image n,
// whose taps [ky0, ky1) x [kx0, kx1) are all inside the image.
template <ActKind K, int P, int V, int CI>
PI_AVX2 void block(const Plan& q, int64_t n, int64_t oy, int64_t ox0, int64_t ky0, int64_t ky1,
                   int64_t kx0, int64_t kx1) {
  constexpr int A = chains_for(P * V, CI);
  const int64_t pix0 = (n * q.OH + oy) * q.OW + ox0, step = q.sw * q.C;
  for (int64_t g = 0; g < q.groups; ++g) {
    __m256 acc[A][P][V];
#pragma GCC unroll 8
    for (int a = 0; a < A; ++a)
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p)
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v)
          acc[a][p][v] = a ? _mm256_setzero_ps() : _mm256_loadu_ps(q.bias + g * 8 * V + v * 8);
    for (int64_t ky = ky0; ky < ky1; ++ky) {
      const int64_t iy = oy * q.sh - q.top + ky * q.dh;
      const float* row = q.x + ((n * q.H + iy) * q.W) * q.C + g * CI;
      for (int64_t kx = kx0; kx < kx1; ++kx) {
        const float* wt = q.w + ((g * q.KH + ky) * q.KW + kx) * CI * 8 * V;
        const float* xp = row + ((ox0 * q.sw - q.left) + kx * q.dw) * q.C;
        // A pointer per pixel, so that channel c is a constant displacement: with xp + p *
        // step + c GCC hoisted all P x CI offsets out of the loops and spilled them, one stack
        // load per FMA.
        const float* xq[P];
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) xq[p] = xp + p * step;
#pragma GCC unroll 16
        for (int c = 0; c < CI; ++c) {
          __m256 wv[V];
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) wv[v] = _mm256_load_ps(wt + (c * V + v) * 8);
#pragma GCC unroll 8
          for (int p = 0; p < P; ++p) {
            const __m256 b = _mm256_broadcast_ss(xq[p] + c);
#pragma GCC unroll 2
            for (int v = 0; v < V; ++v)
              acc[c % A][p][v] = _mm256_fmadd_ps(b, wv[v], acc[c % A][p][v]);
          }
        }
      }
    }
#pragma GCC unroll 8
    for (int a = 1; a < A; ++a)
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p)
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) acc[0][p][v] = _mm256_add_ps(acc[0][p][v], acc[a][p][v]);
    finish<K, P, V>(q, acc[0], pix0, g * 8 * V);
  }
}

// co = ci = 4: pairs of groups, one vector of 8 output channels per pixel (see the top).
template <ActKind K, int P>
PI_AVX2 void pair_block(const Plan& q, int64_t n, int64_t oy, int64_t ox0, int64_t ky0, int64_t ky1,
                        int64_t kx0, int64_t kx1) {
  constexpr int A = chains_for(P, 4);
  const int64_t pix0 = (n * q.OH + oy) * q.OW + ox0;
  for (int64_t pr = 0; pr < q.groups / 2; ++pr) {
    __m256 acc[A][P][1];
#pragma GCC unroll 4
    for (int a = 0; a < A; ++a)
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p)
        acc[a][p][0] = a ? _mm256_setzero_ps() : _mm256_loadu_ps(q.bias + pr * 8);
    for (int64_t ky = ky0; ky < ky1; ++ky) {
      const int64_t iy = oy * q.sh - q.top + ky * q.dh;
      const float* row = q.x + ((n * q.H + iy) * q.W) * q.C + pr * 8;
      for (int64_t kx = kx0; kx < kx1; ++kx) {
        const float* wt = q.w + ((pr * q.KH + ky) * q.KW + kx) * 32;
        const __m256 w[4] = {_mm256_load_ps(wt), _mm256_load_ps(wt + 8), _mm256_load_ps(wt + 16),
                             _mm256_load_ps(wt + 24)};
        const float* xp = row + ((ox0 * q.sw - q.left) + kx * q.dw) * q.C;
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
          const __m256 xv = _mm256_loadu_ps(xp + p * q.sw * q.C);
          const __m256 x4[4] = {_mm256_permute_ps(xv, 0x00), _mm256_permute_ps(xv, 0x55),
                                _mm256_permute_ps(xv, 0xAA), _mm256_permute_ps(xv, 0xFF)};
#pragma GCC unroll 4
          for (int c = 0; c < 4; ++c)
            acc[c % A][p][0] = _mm256_fmadd_ps(x4[c], w[c], acc[c % A][p][0]);
        }
      }
    }
#pragma GCC unroll 4
    for (int a = 1; a < A; ++a)
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) acc[0][p][0] = _mm256_add_ps(acc[0][p][0], acc[a][p][0]);
    finish<K, P, 1>(q, acc[0], pix0, pr * 8);
  }
}

using BlockFn = void (*)(const Plan&, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t);

// The block functions of one form by pixel count: [0] for 1 pixel, [1] for kSizes[1], ...
// A 7x7 or 14x14 output row has few interior pixels: blocks of 4 and 2 fill it in (one pixel
// at a time ran those layers several times slower).
struct Blocks {
  BlockFn fn[4];
  int size[4];  // pixels of fn[i], descending: fn[3] is one pixel
};

// Output row (n, oy): pixels whose windows fit the image in x in blocks, largest first; the
// rest one at a time over their valid taps.
PI_AVX2 void run_row(const Plan& q, int64_t n, int64_t oy, const Blocks& b) {
  int64_t ky0 = 0, ky1 = q.KH;
  while (ky0 < q.KH && oy * q.sh - q.top + ky0 * q.dh < 0) ++ky0;
  while (ky1 > ky0 && oy * q.sh - q.top + (ky1 - 1) * q.dh >= q.H) --ky1;
  for (int64_t ox = 0; ox < q.OW;) {
    int64_t k0, k1;
    valid_kx(q, ox, &k0, &k1);
    int i = 0;
    if (k0 == 0 && k1 == q.KW)
      while (i < 3 && !(ox + b.size[i] <= q.OW &&
                        (ox + b.size[i] - 1) * q.sw - q.left + (q.KW - 1) * q.dw < q.W))
        ++i;
    else
      i = 3;
    b.fn[i](q, n, oy, ox, ky0, ky1, k0, k1);
    ox += b.size[i];
  }
}

template <ActKind K, int CI> Blocks blocks_as(int64_t co) {
  if (co == 8)
    return {{block<K, 8, 1, CI>, block<K, 4, 1, CI>, block<K, 2, 1, CI>, block<K, 1, 1, CI>},
            {8, 4, 2, 1}};
  return {{block<K, 4, 2, CI>, block<K, 3, 2, CI>, block<K, 2, 2, CI>, block<K, 1, 2, CI>},
          {4, 3, 2, 1}};
}

template <ActKind K> Blocks blocks_with(bool pairs, int64_t ci, int64_t co) {
  if (pairs)
    return {{pair_block<K, 6>, pair_block<K, 4>, pair_block<K, 2>, pair_block<K, 1>}, {6, 4, 2, 1}};
  switch (ci) {
    case 2: return blocks_as<K, 2>(co);
    case 4: return blocks_as<K, 4>(co);
    case 8: return blocks_as<K, 8>(co);
    case 16: return blocks_as<K, 16>(co);
    default: break;
  }
  fail(ErrorCode::Internal, "grouped convolution: no blocks for ", ci, " channels per group");
}

// The block functions for the node's activation (one avx2::covers() accepts) and form.
Blocks blocks_for(ActKind k, bool pairs, int64_t ci, int64_t co) {
  return avx2::with_activation(k, "grouped convolution", [&](auto a) {
    return blocks_with<decltype(a)::value>(pairs, ci, co);
  });
}

#endif  // PI_X86_AVX2

class NhwcGroupedConv final : public Kernel {
 public:
  explicit NhwcGroupedConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "grouped convolution");
    a_ = NhwcConvArgs::read(info, "grouped convolution");
    const int64_t G = a_.attrs.group;
    PI_CHECK(G > 1 && a_.M % G == 0, Internal, label_,
             ": the grouped kernel takes group > 1 dividing the outputs");
    co_ = a_.M / G;
    pairs_ = a_.C == 4 && co_ == 4 && G % 2 == 0;
    pack();
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override { return "fast:avx2-grouped"; }

  void run(KernelContext& ctx) override {
    const int64_t G = a_.attrs.group;
    const NhwcConvArgs::Run r = a_.begin(ctx, label_);
    if (r.y.numel() == 0) return;
#ifdef PI_X86_AVX2
    const Plan q{r.x.data<float>(),
                 r.z,
                 r.y.data<float>(),
                 w_.data<float>(),
                 bias_.data<float>(),
                 a_.act,
                 r.N,
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
                 G};
    const Blocks blocks = blocks_for(a_.act.kind, pairs_, a_.C, co_);
    parallel_for(r.N * q.OH, ctx.threads(), 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / q.OH, oy = r % q.OH;
        run_row(q, n, oy, blocks);
      }
    });
#endif
  }

 private:
  void pack() {
    const int64_t ci = a_.C, taps = a_.KH * a_.KW;
    w_ = Tensor::zeros(DType::Float32, {a_.M * ci * taps});
    bias_ = Tensor::zeros(DType::Float32, {a_.M});
    float* d = w_.data<float>();
    for (int64_t m = 0; m < a_.M; ++m) {
      const int64_t grp = m / co_, o = m % co_;
      for (int64_t c = 0; c < ci; ++c)
        for (int64_t t = 0; t < taps; ++t) {
          const float v = a_.weights[(m * ci + c) * taps + t];
          if (pairs_)  // [G/2][kH][kW][4 c][8 lanes: 4 outputs of group 2q, 4 of 2q + 1]
            d[((grp / 2 * taps + t) * 4 + c) * 8 + grp % 2 * 4 + o] = v;
          else  // [G][kH][kW][ci][co]
            d[((grp * taps + t) * ci + c) * co_ + o] = v;
        }
    }
    if (a_.bias)
      std::memcpy(bias_.data<float>(), a_.bias, static_cast<size_t>(a_.M) * sizeof(float));
    a_.weights = {};  // the originals are released once packed
    a_.bias = nullptr;
  }

  std::string label_;
  NhwcConvArgs a_;
  int64_t co_ = 0;
  bool pairs_ = false;
  Tensor w_, bias_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "grouped", NhwcGroupedConv);

}  // namespace
}  // namespace polyinfer::fast
