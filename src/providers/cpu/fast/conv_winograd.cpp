// ai.polyinfer NhwcFusedConv, 3x3 stride 1, as a Winograd F(2x2, 3x3) convolution on AVX2+FMA:
// X [N, H, W, C], W [M, C, 3, 3], Y [N, OH, OW, M], group 1, float32, C and M multiples of 8.
//
// Why: oneDNN 2.6 has Winograd kernels for AVX-512 only, and its direct convolution leaves no
// room on AVX2 (ORT's MLAS is as fast). F(2x2, 3x3) does the convolution with 16 multiplies per
// 2x2 output tile and input channel instead of 36, plus add-only transforms. F(4x4, 3x3) would
// save 4x, but its transforms' coefficients (up to 8 and 1/24) cost about a decimal digit of
// float32 accuracy, and polyinfer promises outputs within 1e-4 of ONNX Runtime's. On AVX-512,
// oneDNN's own Winograd transforms the weights at ~15 ms a layer at creation, 2.3x a ResNet-50
// session's creation; with fewer than 64 input channels oneDNN's direct convolution wins
// (the choice table's rule; docs/kernels.md has the figures).
//
// The algorithm (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2016), for
// one 4x4 input tile d and one 3x3 filter g: Y = A^T [(G g G^T) (.) (B^T d B)] A, with
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//   A^T = [1 1 1 0; 0 1 -1 -1].
// Summed over input channels, the 16 elementwise products become 16 independent matrix products
// [tiles x C] x [C x M], which is where the time goes.
//
// Layout and loops:
//   - At creation the filters are transformed and packed as U [16][M/16][C][16]
//     (zero-filled past M), so the GEMM reads 16 output channels' values per input channel in
//     order, and the original weights are released.
//   - A run splits the output tiles (2x2 pixels, counted across rows and images) into blocks of
//     TB tiles, sized so the block's transformed input V [16][TB][C] and its sums stay in L2.
//     Each task (a block, or a block and a range of 16-channel output blocks when there are
//     fewer blocks than threads want) transforms its tiles' input into V, then for each
//     16-channel output block: 16 GEMMs with a 6x16 register tile (12 ymm accumulators; one U
//     load pair per input channel feeds 12 FMAs) into a small buffer, and the output transform
//     from that buffer straight into Y with bias, residual Z and the activation applied on the
//     way. On the zmm tiles (`fast:avx512-winograd`) the GEMMs take four output blocks at a time
//     (gemm_rows16_multi, 6 rows x 64 columns, sums buffered as [tile][pos][64]: the 8x16 tile
//     is bound by its loads on cores with two zmm FMA pipes), two where fewer are left (8 rows x
//     32 columns), and a last block alone the 8x16 tile.
//   - Padding needs no copy: a tile that crosses the border loads zeros for the missing pixels.
//
// Accuracy: the transforms only add and halve, so results agree with the reference to float
// rounding (tests/unit/conv_nhwc_test.cpp checks against the reference kernel). The cost is at
// creation: U is 16/9 of the weights, written to fresh memory.
#include <unistd.h>
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

constexpr int64_t kBlock = 16;  // output channels per GEMM column block: two ymm vectors
constexpr int kRows = 6;        // tiles per register tile: 6 x 2 accumulators + 3 = 15 registers
constexpr int kPos = 16;        // the 4x4 transformed positions
constexpr int64_t kQuad = 4;    // output blocks per GEMM on avx512::gemm_rows16_multi, at most
// Bytes for the transformed input of one tile block and its sums: the core's L2 (512 KB on
// the AMD machine measured, up to 2 MB on Intel's), capped at 1 MB. The larger the block, the
// fewer times the transformed filters (4 MB for 256 channels, 16 MB for 512) stream through
// (the small maps' layers gain, the larger ones do not move: docs/kernels.md).
int64_t v_budget() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return std::clamp<int64_t>(l2 > 0 ? l2 : 512 * 1024, 256 * 1024, 1024 * 1024);
  }();
  return bytes;
}

// One run's sizes.
struct Geometry {
  int64_t N, H, W, C, M;
  int64_t top, left;  // padding before the first row and column
  int64_t OH, OW;
  int64_t TH, TW;  // tiles per column and per row
};

#ifdef PI_X86_AVX2

// V[pos][t][c0..c0+8) for one tile: the 4x4 input window at (y0, x0) of image n (zeros outside
// the image), transformed by B^T d B. `ldv` is the distance between positions (TB * C).
PI_AVX2 void input_tile(const float* x, const Geometry& g, int64_t n, int64_t y0, int64_t x0,
                        int64_t c0, float* v, int64_t ldv) {
  __m256 d[4][4];
  const bool inside = y0 >= 0 && x0 >= 0 && y0 + 4 <= g.H && x0 + 4 <= g.W;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int64_t yy = y0 + i, xx = x0 + j;
      d[i][j] = inside || (yy >= 0 && yy < g.H && xx >= 0 && xx < g.W)
                    ? _mm256_loadu_ps(x + ((n * g.H + yy) * g.W + xx) * g.C + c0)
                    : _mm256_setzero_ps();
    }
  __m256 t[4][4];  // B^T d: along the columns
  for (int j = 0; j < 4; ++j) {
    t[0][j] = _mm256_sub_ps(d[0][j], d[2][j]);
    t[1][j] = _mm256_add_ps(d[1][j], d[2][j]);
    t[2][j] = _mm256_sub_ps(d[2][j], d[1][j]);
    t[3][j] = _mm256_sub_ps(d[1][j], d[3][j]);
  }
  for (int i = 0; i < 4; ++i) {  // (B^T d) B: along the rows
    _mm256_storeu_ps(v + (i * 4 + 0) * ldv, _mm256_sub_ps(t[i][0], t[i][2]));
    _mm256_storeu_ps(v + (i * 4 + 1) * ldv, _mm256_add_ps(t[i][1], t[i][2]));
    _mm256_storeu_ps(v + (i * 4 + 2) * ldv, _mm256_sub_ps(t[i][2], t[i][1]));
    _mm256_storeu_ps(v + (i * 4 + 3) * ldv, _mm256_sub_ps(t[i][1], t[i][3]));
  }
}

// What the output transform of one tile needs besides its 16 transformed sums.
struct OutArgs {
  const float* bias;  // 8 values for this vector of output channels
  const float* z;     // the residual at (n, 0, 0, the vector's first channel), or null
  float* y;           // the output at the same place
  __m256i lanes;      // the vector's output channels that exist
  bool partial;
  FusedActivation act;
};

// Y's 2x2 pixels of one tile at (y0, x0) of image n for 8 output channels, from the transformed
// sums m[pos * ms] (pos = 0..15): A^T m A, plus bias and Z, then the activation. Pixels past
// the output's edge (odd OH or OW) are not stored.
PI_AVX2 void output_tile(const float* m, int64_t ms, const Geometry& g, int64_t n, int64_t y0,
                         int64_t x0, const OutArgs& a) {
  __m256 s[2][4];  // A^T m: along the columns
  for (int j = 0; j < 4; ++j) {
    const __m256 m0 = _mm256_loadu_ps(m + (0 * 4 + j) * ms);
    const __m256 m1 = _mm256_loadu_ps(m + (1 * 4 + j) * ms);
    const __m256 m2 = _mm256_loadu_ps(m + (2 * 4 + j) * ms);
    const __m256 m3 = _mm256_loadu_ps(m + (3 * 4 + j) * ms);
    s[0][j] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
    s[1][j] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
  }
  const __m256 bias = _mm256_loadu_ps(a.bias);
  for (int i = 0; i < 2; ++i) {
    if (y0 + i >= g.OH) break;
    const __m256 out[2] = {_mm256_add_ps(_mm256_add_ps(s[i][0], s[i][1]), s[i][2]),
                           _mm256_sub_ps(_mm256_sub_ps(s[i][1], s[i][2]), s[i][3])};
    for (int j = 0; j < 2; ++j) {
      if (x0 + j >= g.OW) break;
      const int64_t at = ((n * g.OH + y0 + i) * g.OW + x0 + j) * g.M;
      __m256 r = _mm256_add_ps(out[j], bias);
      if (a.z)
        r = _mm256_add_ps(
            r, a.partial ? _mm256_maskload_ps(a.z + at, a.lanes) : _mm256_loadu_ps(a.z + at));
      r = avx2::activate(r, a.act);
      if (a.partial) _mm256_maskstore_ps(a.y + at, a.lanes, r);
      else
        _mm256_storeu_ps(a.y + at, r);
    }
  }
}

// One run, as the tasks see it.
struct Plan {
  const float* x;
  const float* z;
  float* y;
  const float* u;     // the packed transformed filters
  const float* bias;  // zero-filled to whole blocks
  FusedActivation act;
  Geometry g;
  int64_t blocks_m;   // 16-channel output blocks
  int64_t tb;         // tiles per block
  int64_t splits;     // output-block ranges per tile block
  int64_t per_split;  // output blocks per range
  bool zmm;           // the GEMMs on avx512_gemm.h's 16-column zmm tile
};

// Tasks [b, e): task = tile block * splits + range of output blocks.
PI_AVX2 void run_tasks(const Plan& p, int64_t b, int64_t e) {
  const Geometry& g = p.g;
  const int64_t tiles = g.N * g.TH * g.TW, ldv = p.tb * g.C;
  thread_local std::vector<float> v_buf, m_buf;
  v_buf.resize(static_cast<size_t>(kPos * ldv));
  m_buf.resize(static_cast<size_t>(p.tb * kPos * kBlock * (p.zmm ? kQuad : 1)));
  float* v = v_buf.data();
  float* mb = m_buf.data();
  for (int64_t task = b; task < e; ++task) {
    const int64_t blk = task / p.splits, split = task % p.splits;
    const int64_t t0 = blk * p.tb, nt = std::min(p.tb, tiles - t0);
    const int64_t ob0 = split * p.per_split, ob1 = std::min(p.blocks_m, ob0 + p.per_split);
    if (ob0 >= ob1 || nt <= 0) continue;
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t q = t0 + t, n = q / (g.TH * g.TW), ty = q / g.TW % g.TH, tx = q % g.TW;
      for (int64_t c = 0; c < g.C; c += 8)
        input_tile(p.x, g, n, 2 * ty - g.top, 2 * tx - g.left, c, v + t * g.C + c, ldv);
    }
    const int64_t row_tiles = p.zmm ? avx512::row_tiles(nt) : avx2::row_tiles(nt);
    const avx2::GemmRowsFn* gemm =
        p.zmm ? avx512::gemm_rows16_for(nullptr) : avx2::gemm_rows_for(nullptr, true);
    // `span` output blocks at a time where the CPU has AVX-512: 4, else 2 on the multi-panel
    // zmm tile, a last one alone; the sums go to m as [tile][pos][span * 16].
    for (int64_t ob = ob0, span = 1; ob < ob1; ob += span) {
      const int64_t left = ob1 - ob;
      span = !p.zmm ? 1 : left >= kQuad ? kQuad : left >= 2 ? 2 : 1;
      const int64_t w = span * kBlock;
      const avx2::GemmRowsFn* multi = span == kQuad ? avx512::gemm_rows16_multi_for<4>(nullptr)
                                      : span == 2   ? avx512::gemm_rows16_multi_for<2>(nullptr)
                                                    : nullptr;
      const int64_t multi_tiles =
          span == kQuad ? avx2::row_tiles(nt) : avx512::row_tiles(nt);  // 6 or 8 rows
      for (int pos = 0; pos < kPos; ++pos) {
        const float* u = p.u + (pos * p.blocks_m + ob) * g.C * kBlock;
        if (multi) {
          for (int64_t i = 0, r = 0, rows = 0; i < multi_tiles; ++i, r += rows) {
            rows = avx2::tile_rows(nt, multi_tiles, i);
            multi[rows](v + pos * ldv + r * g.C, g.C, u, g.C, mb + (r * kPos + pos) * w, kPos * w,
                        8, nullptr, nullptr, nullptr, static_cast<int>(w));
          }
          continue;
        }
        for (int64_t i = 0, r = 0, rows = 0; i < row_tiles; ++i, r += rows) {
          rows = avx2::tile_rows(nt, row_tiles, i);
          gemm[rows](v + pos * ldv + r * g.C, g.C, u, g.C, mb + (r * kPos + pos) * w, kPos * w, 8,
                     nullptr, nullptr, nullptr, kBlock);
        }
      }
      for (int64_t j = 0; j < span; ++j) {
        const int valid = static_cast<int>(std::min<int64_t>(kBlock, g.M - (ob + j) * kBlock));
        for (int half = 0; half * 8 < valid; ++half) {
          const int lanes = std::min(8, valid - half * 8);
          const int64_t ch = (ob + j) * kBlock + half * 8;
          const OutArgs a{p.bias + ch, p.z ? p.z + ch : nullptr,
                          p.y + ch,    avx2::lane_mask(lanes),
                          lanes < 8,   p.act};
          for (int64_t t = 0; t < nt; ++t) {
            const int64_t q = t0 + t, n = q / (g.TH * g.TW), ty = q / g.TW % g.TH, tx = q % g.TW;
            output_tile(mb + t * kPos * w + j * kBlock + half * 8, w, g, n, 2 * ty, 2 * tx, a);
          }
        }
      }
    }
  }
}

#endif  // PI_X86_AVX2

// pack()'s buffers: the taps of 16 filters over a chunk of input channels, [chunk][9][16], and
// their transforms, [16 positions][chunk][16] with each position's rows padded by one vector so
// that loads from the one and stores to the other do not alias modulo 4 KB (that stalled the
// loop 7x when both strides were powers of two).
constexpr int64_t kChunk = 64;
constexpr int64_t kPosStride = kChunk * kBlock + kBlock;

// G g G^T for the 16 filters of one input channel: tap k of filter l at g[k * 16 + l], position
// p of its result at u[p * kPosStride + l].
#ifdef PI_X86_AVX2
PI_AVX2
#endif
void transform_filters(const float* __restrict g, float* __restrict u) {
  // Lanes innermost: as an outer loop they were left scalar (a sixth of ResNet-50's session
  // creation went here).
  float t[4][3][kBlock];  // G g: the rows of each 3x3 filter combined
  for (int k = 0; k < 3; ++k)
    for (int64_t l = 0; l < kBlock; ++l) {
      const float g0 = g[k * kBlock + l], g1 = g[(3 + k) * kBlock + l];
      const float g2 = g[(6 + k) * kBlock + l];
      t[0][k][l] = g0;
      t[1][k][l] = 0.5f * (g0 + g1 + g2);
      t[2][k][l] = 0.5f * (g0 - g1 + g2);
      t[3][k][l] = g2;
    }
  for (int i = 0; i < 4; ++i)  // (G g) G^T: then the columns
    for (int64_t l = 0; l < kBlock; ++l) {
      u[(i * 4 + 0) * kPosStride + l] = t[i][0][l];
      u[(i * 4 + 1) * kPosStride + l] = 0.5f * (t[i][0][l] + t[i][1][l] + t[i][2][l]);
      u[(i * 4 + 2) * kPosStride + l] = 0.5f * (t[i][0][l] - t[i][1][l] + t[i][2][l]);
      u[(i * 4 + 3) * kPosStride + l] = t[i][2][l];
    }
}

// taps[(c * 9 + k) * 16 + m] = w[((m0 + m) * C + c0 + c) * 9 + k] for m < mn, c < cn. Each
// filter's 9 * cn taps are one run of W, so for 16 filters this is a 16 x 9cn transpose, done
// in 8x8 register blocks (element by element it showed in session creation).
// W may lie at any address (unaligned loads); the caller zero-fills the filters past mn. (C is
// a multiple of 8, so the scalar loop only takes blocks of fewer than 16 filters.)
#ifdef PI_X86_AVX2
PI_AVX2
#endif
void gather_taps(UnalignedFloats w, int64_t C, int64_t m0, int64_t mn, int64_t c0, int64_t cn,
                 float* taps) {
  const int64_t run = 9 * cn, stride = 9 * C, first = c0 * 9;
  int64_t done = 0;
#ifdef PI_X86_AVX2
  if (mn == kBlock) {
    done = run / 8 * 8;
    for (int64_t m = 0; m < kBlock; m += 8)
      for (int64_t j = 0; j < done; j += 8)
        avx2::transpose8x8(static_cast<const float*>(w.at((m0 + m) * stride + first + j)), stride,
                           taps + j * kBlock + m, kBlock);
  }
#endif
  for (int64_t m = 0; m < mn; ++m)
    for (int64_t j = done; j < run; ++j) taps[j * kBlock + m] = w[(m0 + m) * stride + first + j];
}

class NhwcWinogradConv final : public Kernel {
 public:
  explicit NhwcWinogradConv(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "Winograd convolution");
    a_ = NhwcConvArgs::read(info, "Winograd convolution");
    const auto ones = [](const std::vector<int64_t>& v) {
      return std::all_of(v.begin(), v.end(), [](int64_t s) { return s == 1; });
    };
    PI_CHECK(a_.KH == 3 && a_.KW == 3 && a_.attrs.group == 1 && ones(a_.attrs.strides) &&
                 ones(a_.attrs.dilations) && a_.C % 8 == 0 && a_.M % 8 == 0,
             Internal, label_,
             ": the Winograd kernel takes 3x3 stride 1, undilated, group 1, channels in 8s");
    zmm_ = PackedGemm::wide(info.options().cpu);
    pack(a_.weights, a_.bias);
    a_.weights = {};  // the originals are released once packed
    a_.bias = nullptr;
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  int inplace_input() const override { return a_.has_z ? 3 : -1; }
  std::string impl() const override { return zmm_ ? "fast:avx512-winograd" : "fast:avx2-winograd"; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    a_.check_x(x, label_);
    const int64_t N = x.shape()[0], H = x.shape()[1], W = x.shape()[2];
    const WindowGeometry wg = window_geometry(a_.attrs, {H, W}, {3, 3}, label_);
    const int64_t OH = wg.out[0], OW = wg.out[1];
    const Geometry g{
        N, H, W, a_.C, a_.M, wg.pad_begin[0], wg.pad_begin[1], OH, OW, (OH + 1) / 2, (OW + 1) / 2};
    Tensor& y = ctx.output(0, DType::Float32, {N, OH, OW, a_.M});
    const float* z = a_.residual(ctx, y, label_);
    if (y.numel() == 0) return;
    compute(x.data<float>(), g, z, y.data<float>(), ctx.threads());
  }

 private:
  // U [16][M/16][C][16] = G g G^T for every filter.
  void pack(UnalignedFloats w, const float* b) {
    const int64_t blocks = (a_.M + kBlock - 1) / kBlock;
    packed_ = Tensor::empty(DType::Float32, {kPos * blocks * a_.C * kBlock});
    bias_ = Tensor::zeros(DType::Float32, {blocks * kBlock});
    float* u = packed_.data<float>();
    // Through small buffers, so the transform runs over 16 filters as vector lanes and U is
    // written as 16 runs of consecutive floats: written directly, the 16 positions' streams lie
    // a multiple of 4 KB apart for 256+ channels and thrash the cache.
    std::vector<float> taps(static_cast<size_t>(kChunk * 9 * kBlock));
    std::vector<float> chunk(static_cast<size_t>(kPos * kPosStride));
    for (int64_t mb = 0; mb < blocks; ++mb)
      for (int64_t c0 = 0; c0 < a_.C; c0 += kChunk) {
        const int64_t cn = std::min(kChunk, a_.C - c0), m0 = mb * kBlock;
        const int64_t mn = std::min(kBlock, a_.M - m0);
        if (mn < kBlock) std::fill(taps.begin(), taps.end(), 0.f);
        gather_taps(w, a_.C, m0, mn, c0, cn, taps.data());
        for (int64_t c = 0; c < cn; ++c)
          transform_filters(taps.data() + c * 9 * kBlock, chunk.data() + c * kBlock);
        for (int pos = 0; pos < kPos; ++pos)
          std::memcpy(u + ((pos * blocks + mb) * a_.C + c0) * kBlock,
                      chunk.data() + pos * kPosStride,
                      static_cast<size_t>(cn * kBlock) * sizeof(float));
      }
    if (b) std::memcpy(bias_.data<float>(), b, static_cast<size_t>(a_.M) * sizeof(float));
  }

  void compute(const float* x, const Geometry& g, const float* z, float* y, int threads) const {
#ifdef PI_X86_AVX2
    Plan p{x, z, y, packed_.data<float>(), bias_.data<float>(), a_.act, g, 0, 0, 0, 0, zmm_};
    const int64_t tiles = g.N * g.TH * g.TW;
    p.blocks_m = (g.M + kBlock - 1) / kBlock;
    // As many tiles per block as the budget allows, then spread evenly over the blocks (in whole
    // register tiles), so no block is a small remainder that rereads all the filters.
    // The budget holds a block's transformed input and its sums ([tb][pos][16 or 64]): counting
    // V alone left large maps of few channels with sums past L2 on the four-panel tile.
    const int64_t sums = kBlock * (zmm_ ? kQuad : 1);
    const int64_t most = std::max<int64_t>(kRows, v_budget() / (kPos * (g.C + sums) * 4));
    int64_t blocks_t = (tiles + most - 1) / most;
    // A multiple of the threads, so none waits on another's extra block (ResNet-50's 56x56
    // layers came to 7 blocks: 4 on one thread, 3 on the other).
    if (threads > 1 && blocks_t > 1) blocks_t = (blocks_t + threads - 1) / threads * threads;
    // Fewer tile blocks than threads: split the tiles rather than the output channels (below)
    // where that repeats less work: each thread then reads all the filters (16·M·C values)
    // instead of transforming all the input tiles (16·tiles·C), and has two register tiles of
    // them at least (DenseNet-121's 14x14 layers: 49 tiles, 32 outputs, 128 inputs).
    if (threads > 1 && blocks_t < threads && tiles >= 2 * kRows * threads && g.M <= tiles)
      blocks_t = threads;
    p.tb = ((tiles + blocks_t - 1) / blocks_t + kRows - 1) / kRows * kRows;
    // Fewer tile blocks than threads (small images, many channels): split the output channels
    // too, at the cost of transforming the block's input once per split. (Aiming at two tasks
    // per thread transformed the small maps' inputs twice as often, and was slower.)
    const int64_t want = threads;
    p.splits =
        std::min<int64_t>(p.blocks_m, std::max<int64_t>(1, (want + blocks_t - 1) / blocks_t));
    p.per_split = (p.blocks_m + p.splits - 1) / p.splits;
    const int64_t task_fmas = p.tb * kPos * g.C * p.per_split * kBlock;
    parallel_for(blocks_t * p.splits, threads, std::max<int64_t>(1, 200000 / task_fmas),
                 [&](int64_t b, int64_t e) { run_tasks(p, b, e); });
#else
    (void)x, (void)g, (void)z, (void)y, (void)threads;
#endif
  }

  bool zmm_ = false;  // the GEMMs on the 16-column zmm tile (avx512_gemm.h)
  std::string label_;
  NhwcConvArgs a_;
  Tensor packed_, bias_;
};

PI_CPU_CANDIDATE("ai.polyinfer", NhwcFusedConv, 1, 1, "winograd", NhwcWinogradConv);

}  // namespace
}  // namespace polyinfer::fast
