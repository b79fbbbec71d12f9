#include "providers/cpu/fast/packed_gemm.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/unaligned.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/avx512_gemm.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

constexpr int64_t kBlock = 16;           // output columns per panel of the AVX2 tile
constexpr int kRows = 6;                 // rows per AVX2 register tile
constexpr int64_t kMaxRows = 192;        // rows per block (a multiple of both tiles' rows)
constexpr int64_t kKc = 4096;            // K per block
constexpr int64_t kGroupsPerThread = 4;  // panel groups per thread (packed_gemm.h)
constexpr int64_t kOneRowBlock = 128;    // one_row's depth per partial sum

struct Plan {
  const float* a;
  const float* z;  // residual, laid out as y, or null
  float* y;
  const float* w;     // [N/width][K][width]
  const float* bias;  // [N/width * width]
  FusedActivation act;
  int64_t P, K, N;  // rows, depth, columns
  int64_t width;    // columns per panel: kBlock, or avx512::kPanel
  int64_t pb, panels, groups;
  bool pairs;  // two 32-column panels per tile (avx512::gemm_rows_pair)
};

#ifdef PI_X86_AVX2

// One row against 64 columns at once (the classifiers' last Gemm): 4 panels of 16 or 2 of 32,
// kPer = W / 8 vectors per panel. A lone row's register tile has 2 sums, each waiting on the
// last FMA (5 cycles), and ran a classifier's layer behind oneDNN's; 8 sums keep the FMAs and
// the weights' stream busy (ymm on either layout: memory-bound).
// The sums are made in blocks of kOneRowBlock and then added: one float32 sum over all of K
// put ResNet-50's logits (up to ~110) 1.4e-4 from ORT's, blocks 4e-5 (oneDNN's 5e-5).
// One pass of kNv vectors (kNv / kPer panels side by side). The count is a template argument
// so that the sums live in registers: with it read at run time the compiler kept them on the
// stack, each FMA waiting on a store and a load (an unrolled GRU's 384 x 128 step: 3.3 us).
template <int kPer, int kNv> PI_AVX2 void one_row_pass(const Plan& q, int64_t mb) {
  constexpr int kW = 8 * kPer;  // columns per panel
  const float* w = q.w + mb * q.K * kW;
  // The blocks' totals wait in memory: 8 sums and 8 totals in registers would be 16 ymm plus
  // the broadcast row value, one more than AVX2 has, and the compiler spilled inside the loop.
  alignas(32) float acc[kNv * 8] = {};
  // The sums are named variables, not an array: GCC kept an array of them in memory across
  // the loop's iterations, a store of each sum on every step.
  const __m256 zero = _mm256_setzero_ps();
  for (int64_t k0 = 0; k0 < q.K; k0 += kOneRowBlock) {
    const int64_t k1 = std::min(q.K, k0 + kOneRowBlock);
    __m256 p0 = zero, p1 = zero, p2 = zero, p3 = zero, p4 = zero, p5 = zero, p6 = zero, p7 = zero;
    for (int64_t k = k0; k < k1; ++k) {
      const __m256 x = _mm256_broadcast_ss(q.a + k);
      // Vector v of the pass: panel v / kPer, its (v % kPer)-th 8 columns; one prefetch of a
      // cache line per two vectors.
#define PI_ONE_ROW_FMA(v, p)                                                                  \
  if constexpr (kNv > v) {                                                                    \
    const float* b = w + ((v) / kPer * q.K + k) * kW + (v) % kPer * 8;                        \
    if constexpr ((v) % 2 == 0)                                                               \
      _mm_prefetch(reinterpret_cast<const char*>(b + avx2::kGemmPrefetch * kW), _MM_HINT_T0); \
    p = _mm256_fmadd_ps(x, _mm256_load_ps(b), p);                                             \
  }
      PI_ONE_ROW_FMA(0, p0)
      PI_ONE_ROW_FMA(1, p1)
      PI_ONE_ROW_FMA(2, p2)
      PI_ONE_ROW_FMA(3, p3)
      PI_ONE_ROW_FMA(4, p4)
      PI_ONE_ROW_FMA(5, p5)
      PI_ONE_ROW_FMA(6, p6)
      PI_ONE_ROW_FMA(7, p7)
#undef PI_ONE_ROW_FMA
    }
    const __m256 part[8] = {p0, p1, p2, p3, p4, p5, p6, p7};
    for (int v = 0; v < kNv; ++v)
      _mm256_store_ps(acc + v * 8, _mm256_add_ps(_mm256_load_ps(acc + v * 8), part[v]));
  }
  for (int v = 0; v < kNv; ++v) {
    const int64_t n0 = mb * kW + v * 8;  // the panels of a pass are adjacent columns
    if (n0 >= q.N) break;
    // The last vector of an N that is not a multiple of 8 goes under a mask (bias_ is
    // zero-padded to whole panels; z and y end at N).
    const __m256i live = avx2::lane_mask(static_cast<int>(std::min<int64_t>(8, q.N - n0)));
    __m256 y = _mm256_add_ps(_mm256_load_ps(acc + v * 8), _mm256_loadu_ps(q.bias + n0));
    if (q.z) y = _mm256_add_ps(y, _mm256_maskload_ps(q.z + n0, live));
    _mm256_maskstore_ps(q.y + n0, live, avx2::activate(y, q.act));
  }
}

template <int kPer> PI_AVX2 void one_row_as(const Plan& q, int64_t m0, int64_t m1) {
  constexpr int kStep = 8 / kPer;  // panels per pass
  for (int64_t mb = m0; mb < m1; mb += kStep) {
    const int64_t panels = std::min<int64_t>(kStep, m1 - mb);
    switch (panels) {  // the last pass may hold fewer panels
      case 1: one_row_pass<kPer, kPer>(q, mb); break;
      case 2: one_row_pass<kPer, 2 * kPer>(q, mb); break;
      case 3:
        if constexpr (kStep >= 3) one_row_pass<kPer, 3 * kPer>(q, mb);
        break;
      default:
        if constexpr (kStep >= 4) one_row_pass<kPer, 4 * kPer>(q, mb);
        break;
    }
  }
}

// d[k * ld + j] = b[j * K + k] for the panel's `cols` (up to ld) rows of a transposed B, in 8x8
// blocks through registers where 8 rows and 8 columns are whole (element by element it showed in
// session creation). `b` may lie at any address.
PI_AVX2 void pack_transposed(const float* b, int64_t K, int64_t cols, int64_t ld, float* d) {
  const int64_t k8 = K / 8 * 8, j8 = cols / 8 * 8;
  for (int64_t j = 0; j < j8; j += 8)
    for (int64_t k = 0; k < k8; k += 8) avx2::transpose8x8(b + j * K + k, K, d + k * ld + j, ld);
  const UnalignedFloats src(b);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t k = j < j8 ? k8 : 0; k < K; ++k) d[k * ld + j] = src[j * K + k];
}

PI_AVX2 void run_task(const Plan& q, int64_t blk, int64_t group) {
  int64_t per_group = (q.panels + q.groups - 1) / q.groups;
  if (q.pairs) per_group += per_group % 2;  // whole pairs
  const int64_t m0 = group * per_group, m1 = std::min(q.panels, m0 + per_group);
  const int64_t p0 = blk * q.pb, np = std::min(q.pb, q.P - p0);
  if (m0 >= m1 || np <= 0) return;
  const bool wide = q.width == avx512::kPanel;
  if (q.P == 1 && q.K <= kKc) return wide ? one_row_as<4>(q, m0, m1) : one_row_as<2>(q, m0, m1);
  // Even tiles: BERT-base's 128 rows had a tile of 2, 2.9% of the run for 1.6% of the rows.
  const int64_t tiles = wide ? avx512::row_tiles(np) : avx2::row_tiles(np);
  const int64_t W = q.width;
  for (int64_t k0 = 0; k0 < q.K; k0 += kKc) {
    const int64_t kn = std::min(kKc, q.K - k0);
    const bool first = k0 == 0, last = k0 + kn == q.K;
    const FusedActivation* act = last ? &q.act : nullptr;
    const avx2::GemmRowsFn* gemm =
        wide ? avx512::gemm_rows_for(act) : avx2::gemm_rows_for(act, true);
    // A part-full last panel on the AVX-512 tile: only its live vectors (gemm_rows_narrow).
    const int tail = static_cast<int>(q.N - (q.panels - 1) * W);
    const avx2::GemmRowsFn* gemm_tail = wide ? avx512::gemm_rows_for(act, tail) : gemm;
    // Two full panels at once on the 6x64 tile where the plan says so (q.pairs).
    const avx512::GemmRowsAheadFn* gemm_pair = q.pairs ? avx512::gemm_rows_pair_for(act) : nullptr;
    const auto two_at = [&](int64_t mb) {
      return gemm_pair && mb + 1 < m1 && (mb + 2 < q.panels || tail == W);
    };
    for (int64_t mb = m0, span = 1; mb < m1; mb += span) {
      const bool two = two_at(mb);
      span = two ? 2 : 1;
      const int cols = static_cast<int>(std::min<int64_t>(span * W, q.N - mb * W));
      const avx2::GemmRowsFn* tile = mb == q.panels - 1 ? gemm_tail : gemm;
      const int64_t span_tiles = two ? avx2::row_tiles(np) : tiles;
      const int64_t hi = two ? q.K * W : 8;  // the pair's second panel, or the AVX2 tile's planes
      const float* w = q.w + (mb * q.K + k0) * W;
      // The pair's tiles fetch the next pair into L2 (gemm_rows_pair), each its share of the
      // lines (16 floats; 2 W / 16 per step, contiguous where K is one block), where two tiles or
      // more share them (at most 2 K lines each).
      const int64_t lines = kn * (2 * W / 16);
      const bool ahead = two && two_at(mb + 2) && kn == q.K && span_tiles >= 2;
      for (int64_t t = 0, p = 0, rows = 0; t < span_tiles; ++t, p += rows) {
        rows = avx2::tile_rows(np, span_tiles, t);
        const int64_t at = (p0 + p) * q.N + mb * W;
        float* y = q.y + at;
        const float* z = first ? (q.z ? q.z + at : nullptr) : y;
        const float* a = q.a + (p0 + p) * q.K + k0;
        const float* bias = first ? q.bias + mb * W : nullptr;
        if (!two) {
          tile[rows](a, q.K, w, kn, y, q.N, hi, bias, z, &q.act, cols);
          continue;
        }
        const int64_t l0 = lines * t / span_tiles, l1 = lines * (t + 1) / span_tiles;
        gemm_pair[rows](a, q.K, w, kn, y, q.N, hi, bias, z, &q.act, cols,
                        ahead ? w + 2 * hi + l0 * 16 : nullptr, ahead ? l1 - l0 : 0);
      }
    }
  }
}

#endif  // PI_X86_AVX2

}  // namespace

bool PackedGemm::wide(const CpuProviderOptions& options) {
#ifdef PI_X86_AVX2
  return avx512::supported() && options.gemm_tile != GemmTile::Avx2;
#else
  (void)options;
  return false;
#endif
}

PackedGemm::PackedGemm(const CpuProviderOptions& options, int64_t K, int64_t N, const float* bias,
                       float beta)
    : K_(K), N_(N) {
#ifdef PI_X86_AVX2
  if (wide(options)) {
    width_ = avx512::kPanel;
    pairs_ = options.gemm_tile != GemmTile::Avx512;
  }
#endif
  PI_CHECK(N % 8 == 0 || width_ != kBlock, Internal, "PackedGemm: N = ", N,
           " is not a multiple of 8 on the AVX2 tile (the kernel should have declined)");
  const int64_t panels = (N_ + width_ - 1) / width_;
  bias_ = Tensor::zeros(DType::Float32, {panels * width_});
  if (bias) {
    float* bp = bias_.data<float>();
    std::memcpy(bp, bias, static_cast<size_t>(N_) * sizeof(float));
    if (beta != 1.f)
      for (int64_t j = 0; j < N_; ++j) bp[j] *= beta;
  }
}

PackedGemm::PackedGemm(const CpuProviderOptions& options, const void* b, int64_t K, int64_t N,
                       bool trans_b, float alpha, const float* bias, float beta)
    : PackedGemm(options, K, N, bias, beta) {
  w_ = std::make_shared<const Tensor>(pack(b, trans_b, alpha));
}

PackedGemm::PackedGemm(const KernelInfo& info, size_t input, const void* b, int64_t K, int64_t N,
                       bool trans_b, float alpha, const float* bias, float beta)
    : PackedGemm(info.options().cpu, K, N, bias, beta) {
  // Everything the panels depend on besides the weight; alpha by its bits (folded in exactly).
  uint32_t alpha_bits = 0;
  std::memcpy(&alpha_bits, &alpha, sizeof alpha_bits);
  const std::string key = "fast.packed_gemm:" + std::to_string(K) + "x" + std::to_string(N) + ":w" +
                          std::to_string(width_) + (trans_b ? ":t" : ":n") + ":a" +
                          std::to_string(alpha_bits);
  w_ = info.shared_prepack(input, key, [&] { return pack(b, trans_b, alpha); });
}

Tensor PackedGemm::pack(const void* b, bool trans_b, float alpha) const {
  const UnalignedFloats src(b);
  const int64_t W = width_, panels = (N_ + W - 1) / W;
  // Panel by panel, so the writes run in order (row by row they went to N/W places at once);
  // N is a multiple of 8, so only the last panel may be part full (zeros past N).
  Tensor w = Tensor::empty(DType::Float32, {panels * K_ * W});
  float* d = w.data<float>();
  for (int64_t nb = 0; nb < panels; ++nb, d += K_ * W) {
    const int64_t n0 = nb * W, cols = std::min(W, N_ - n0);
    if (trans_b) {
#ifdef PI_X86_AVX2
      pack_transposed(static_cast<const float*>(src.at(n0 * K_)), K_, cols, W, d);
#endif
    } else {
      for (int64_t k = 0; k < K_; ++k)
        std::memcpy(d + k * W, src.at(k * N_ + n0), static_cast<size_t>(cols) * sizeof(float));
    }
    if (cols < W)
      for (int64_t k = 0; k < K_; ++k)
        std::memset(d + k * W + cols, 0, static_cast<size_t>(W - cols) * sizeof(float));
    if (alpha != 1.f)
      for (int64_t i = 0; i < K_ * W; ++i) d[i] *= alpha;
  }
  return w;
}

const char* PackedGemm::isa() const { return width_ == kBlock ? "avx2" : "avx512"; }

void PackedGemm::run(const float* a, const float* z, float* y, int64_t P,
                     const FusedActivation& act, int threads, Split few_blocks) const {
#ifdef PI_X86_AVX2
  Plan q{a,
         z,
         y,
         w_->data<float>(),
         bias_.data<float>(),
         act,
         P,
         K_,
         N_,
         width_,
         0,
         (N_ + width_ - 1) / width_,
         1,
         pairs_};
  const int64_t tile = width_ == kBlock ? kRows : avx512::kTileRows;
  int64_t blocks = (q.P + kMaxRows - 1) / kMaxRows;
  if (threads > 1 && blocks > 1) blocks = (blocks + threads - 1) / threads * threads;
  q.pb = ((q.P + blocks - 1) / blocks + tile - 1) / tile * tile;
  blocks = (q.P + q.pb - 1) / q.pb;
  const bool few = blocks < 2 * threads;
  if (few && few_blocks == Split::Rows && threads > 1 && q.P >= threads * tile) {
    q.pb = (q.P + threads - 1) / threads;  // one share per thread (the tiles even out its rows)
    blocks = (q.P + q.pb - 1) / q.pb;
  } else if (few) {
    q.groups = std::min<int64_t>(q.panels, kGroupsPerThread * threads);
    parallel_tasks(blocks * q.groups, threads,
                   [&](int64_t t) { run_task(q, t / q.groups, t % q.groups); });
    return;
  }
  // Contiguous shares of the row blocks, one per thread (packed_gemm.h).
  parallel_for(blocks, threads, 1, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) run_task(q, blk, 0);
  });
#else
  (void)a, (void)z, (void)y, (void)P, (void)act, (void)threads, (void)few_blocks;
#endif
}

}  // namespace polyinfer::fast
