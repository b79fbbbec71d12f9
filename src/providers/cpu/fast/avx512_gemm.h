// The AVX-512 GEMM register tiles: avx2_util.h's gemm_rows for 32-column panels in zmm
// registers, for kernels that pack their weights [N/32][K][32] where the CPU has AVX-512, and
// gemm_rows16 for the AVX2 tile's own 16-column panels (below).
//
// Why: the 6x16 ymm tile falls short of the FMA peak when its weights come from memory. A tile
// of up to 8 rows x 32 columns reads each panel line once per 16 FMAs instead of once per 12
// and each row's broadcast once per two zmm FMAs, and the first row tile of a panel asks the
// memory for a line every 16 cycles instead of every 6: it runs a transformer's GEMMs faster,
// even on a Zen 4 core, whose FMA peak is AVX2's (docs/kernels.md has the figures).
#pragma once

#include "providers/cpu/fast/avx512_math.h"

#ifdef PI_X86_AVX2

#define PI_X86_AVX512_GEMM 1

namespace polyinfer::fast::avx512 {

inline constexpr int64_t kPanel = 32;  // columns per packed panel
inline constexpr int kTileRows = 8;    // rows per register tile: 16 zmm accumulators

// Row tiles of up to kTileRows rows, as even as can be (avx2::tile_rows gives tile t's rows):
// 128 rows are 16 tiles of 8.
inline int64_t row_tiles(int64_t n) { return (n + kTileRows - 1) / kTileRows; }

// The mask of the first k of 16 lanes (none for k <= 0, all for k >= 16).
inline __mmask16 lanes16(int k) {
  return static_cast<__mmask16>(k >= 16 ? 0xFFFF : k <= 0 ? 0 : (1u << k) - 1);
}

// One vector of a tile's epilogue: c[0, 16) = act(v + z[0, 16)) for the `live` lanes; z null
// for none. All lanes live (the common case) go without masks: a masked load or store costs
// more on Zen 4 (docs/kernels.md).
template <ActKind kAct>
PI_AVX512 inline __attribute__((always_inline)) void store16(__m512 v, float* c, const float* z,
                                                             __mmask16 live,
                                                             const FusedActivation* act) {
  if (live == kAll) {
    if (z) v = _mm512_add_ps(v, _mm512_loadu_ps(z));
    if constexpr (kAct != ActKind::None) v = activate_as<kAct>(v, *act);
    _mm512_storeu_ps(c, v);
    return;
  }
  if (z) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(live, z));
  if constexpr (kAct != ActKind::None) v = activate_as<kAct>(v, *act, live);
  _mm512_mask_storeu_ps(c, live, v);
}

// One vector into two planes of 8 columns (avx2::gemm_rows's `hi` layout): c[0, 8) and, when
// `both`, c[hi, hi + 8) = act(v + z at the same places); z null for none. The halves are
// stored through zero-masked extracts: a masked 512-bit store of the upper half is slow on Zen 4
// (docs/kernels.md), and GCC 12's plain casts trip -Wmaybe-uninitialized.
template <ActKind kAct>
PI_AVX512 inline __attribute__((always_inline)) void store16_planes(__m512 v, float* c, int64_t hi,
                                                                    const float* z, bool both,
                                                                    const FusedActivation* act) {
  if (z)
    v = _mm512_add_ps(
        v, _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(0x00FF, z), both ? 0xFF00 : 0, z + hi - 8));
  if constexpr (kAct != ActKind::None) v = activate_as<kAct>(v, *act);
  const __m512d d = _mm512_castps_pd(v);
  _mm256_storeu_pd(reinterpret_cast<double*>(c), _mm512_maskz_extractf64x4_pd(0xF, d, 0));
  if (both)
    _mm256_storeu_pd(reinterpret_cast<double*>(c + hi), _mm512_maskz_extractf64x4_pd(0xF, d, 1));
}

// The tile's epilogue: c[r][0, n) = act(acc[r] + z[r]) for R rows of up to 32 columns, 16 at a
// time on avx512_math.h's activations (a half-filled 16 through masks); z laid out as c, or
// null (it may be c itself: each output reads its own element just before writing it). Every
// index into acc is a constant, so the sums stay in registers: with a loop over the two halves
// (bounded by the live lanes) GCC kept a copy of all 16 on the stack, written before the K loop
// and read back here, which slows short-K tiles (a 3x3 stem's 27 steps) markedly.
template <int R, ActKind kAct>
PI_AVX512 inline __attribute__((always_inline)) void store_tile(const __m512 (&acc)[R][2], float* c,
                                                                int64_t ldc, const float* z,
                                                                const FusedActivation* act, int n) {
  if (n >= 32) {  // whole vectors: the common case, without masks
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m512 v0 = acc[r][0], v1 = acc[r][1];
      if (z) {
        v0 = _mm512_add_ps(v0, _mm512_loadu_ps(z + r * ldc));
        v1 = _mm512_add_ps(v1, _mm512_loadu_ps(z + r * ldc + 16));
      }
      if constexpr (kAct != ActKind::None) {
        v0 = activate_as<kAct>(v0, *act);
        v1 = activate_as<kAct>(v1, *act);
      }
      _mm512_storeu_ps(c + r * ldc, v0);
      _mm512_storeu_ps(c + r * ldc + 16, v1);
    }
    return;
  }
  const __mmask16 live0 = lanes16(n), live1 = lanes16(n - 16);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const int64_t at = r * ldc;
    store16<kAct>(acc[r][0], c + at, z ? z + at : nullptr, live0, act);
    if (live1) store16<kAct>(acc[r][1], c + at + 16, z ? z + at + 16 : nullptr, live1, act);
  }
}

// The tile's sums start from `bias` (32 floats, or null for zeros).
template <int R>
PI_AVX512 inline __attribute__((always_inline)) void tile_start(__m512 (&acc)[R][2],
                                                                const float* bias) {
  const __m512 b0 = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  const __m512 b1 = bias ? _mm512_loadu_ps(bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc[r][0] = b0;
    acc[r][1] = b1;
  }
}

// The weights a tile's caller runs next, fetched into L2 while this tile runs: `lines` (at most
// 2K) cache lines from `at`, two at a time, spread evenly over the tile's K steps (`next`: the
// step of the next two, in 16.16 fixed point). A tile whose weights come from memory asks for
// them all at once and runs at a fraction of the speed of the tiles after it, which find them
// in L2; fetched a share per tile ahead of the first, they arrive at the pace memory gives them
// (docs/kernels.md has the figures). Where the tiles are few against the weights, all of them
// wait on memory and the extra fetches only slow it (gemm_rows16_multi).
struct Ahead {
  const char* at;
  int64_t lines, every, next = 0, fetched = 0;
  Ahead(const float* p, int64_t n, int64_t K)
      : at(reinterpret_cast<const char*>(p)),
        lines(p ? n : 0),
        every(lines > 0 ? (K << 17) / lines : 0) {}
  PI_AVX512 inline __attribute__((always_inline)) void step(int64_t k) {
    if (fetched >= lines || (k << 16) < next) return;
    _mm_prefetch(at + fetched * 64, _MM_HINT_T1);
    if (fetched + 1 < lines) _mm_prefetch(at + fetched * 64 + 64, _MM_HINT_T1);
    fetched += 2;
    next += every;
  }
};

// A tile given weights to fetch ahead (Ahead): avx2::GemmRowsFn's parameters, then `ahead`
// (contiguous, or null) and its number of cache lines (at most 2K).
using GemmRowsAheadFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t,
                                 int64_t, const float*, const float*, const FusedActivation*, int,
                                 const float*, int64_t);

// One step of depth: acc[r] += a[r * lda] x the 32 weights at w (64-byte aligned): two loads
// and R broadcasts feed 2R FMAs.
template <int R>
PI_AVX512 inline __attribute__((always_inline)) void tile_step(__m512 (&acc)[R][2], const float* a,
                                                               int64_t lda, const float* w) {
  const __m512 w0 = _mm512_load_ps(w), w1 = _mm512_load_ps(w + 16);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512 x = _mm512_set1_ps(a[r * lda]);
    acc[r][0] = _mm512_fmadd_ps(x, w0, acc[r][0]);
    acc[r][1] = _mm512_fmadd_ps(x, w1, acc[r][1]);
  }
}

// c[r][0, n) = act(bias + z[r] + sum over k of a[r * lda + k] * b[k * 32 + j]) for R rows
// (R <= 8) and n columns (1 to 32) of a 32-wide packed B ([K][32], 64-byte aligned).
// `bias` (32 floats) or null for zeros; `z`, laid out as c, or null (z may be c itself: a sum
// continued over a further block of K). The epilogue (store_tile) runs once per tile, after K
// FMAs per output. Same signature as avx2::GemmRowsFn; `hi` is unused (a row's columns are
// contiguous).
template <int R, ActKind kAct>
PI_AVX512 void gemm_rows(const float* a, int64_t lda, const float* b, int64_t K, float* c,
                         int64_t ldc, int64_t /*hi*/, const float* bias, const float* z,
                         const FusedActivation* act, int n) {
  __m512 acc[R][2];
  tile_start<R>(acc, bias);
  for (int64_t k = 0; k < K; ++k) tile_step<R>(acc, a + k, lda, b + k * kPanel);
  store_tile<R, kAct>(acc, c, ldc, z, act, n);
}

template <ActKind kAct>
inline constexpr avx2::GemmRowsFn kGemmRowsAs[kTileRows + 1] = {nullptr,
                                                                gemm_rows<1, kAct>,
                                                                gemm_rows<2, kAct>,
                                                                gemm_rows<3, kAct>,
                                                                gemm_rows<4, kAct>,
                                                                gemm_rows<5, kAct>,
                                                                gemm_rows<6, kAct>,
                                                                gemm_rows<7, kAct>,
                                                                gemm_rows<8, kAct>};

// The tiles by row count (index 0 unused) for activation `act` (null: none), one that
// avx2::covers() accepts.
inline const avx2::GemmRowsFn* gemm_rows_for(const FusedActivation* act) {
  return avx2::with_activation(
      act ? act->kind : ActKind::None, "avx512 gemm_rows",
      [](auto k) -> const avx2::GemmRowsFn* { return kGemmRowsAs<decltype(k)::value>; });
}

// gemm_rows over two adjacent panels at once: c[r][0, n) for R rows (R <= 6) and n columns
// (33 to 64) of the panel at b and the one `stride` floats further (a packing's next panel;
// GemmRowsAheadFn, `hi` carrying that stride); `bias` 64 floats or null. Four loads and R
// broadcasts feed 4R FMAs (8x32: 2 and 8 for 16): on a core with two zmm FMA pipes the 8x32
// tile is bound by its loads, and 6x64 runs faster; the caller's next pair fetched ahead
// (`ahead`) helps where the weights come from memory (docs/kernels.md has the figures).
inline constexpr int64_t kPairPrefetch = 16;

template <int R, ActKind kAct>
PI_AVX512 void gemm_rows_pair(const float* a, int64_t lda, const float* b, int64_t K, float* c,
                              int64_t ldc, int64_t stride, const float* bias, const float* z,
                              const FusedActivation* act, int n, const float* ahead,
                              int64_t ahead_lines) {
  __m512 acc0[R][2], acc1[R][2];
  tile_start<R>(acc0, bias);
  tile_start<R>(acc1, bias ? bias + kPanel : nullptr);
  const float* b1 = b + stride;
  Ahead next(ahead, ahead_lines, K);
  for (int64_t k = 0; k < K; ++k) {
    const __m512 w0 = _mm512_load_ps(b + k * kPanel), w1 = _mm512_load_ps(b + k * kPanel + 16);
    const __m512 w2 = _mm512_load_ps(b1 + k * kPanel), w3 = _mm512_load_ps(b1 + k * kPanel + 16);
    // Both panels' lines kPairPrefetch steps ahead: faster than the hardware prefetcher alone
    // (8 and 32 steps measured the same, 64 slower; docs/kernels.md).
    for (const float* w : {b + (k + kPairPrefetch) * kPanel, b1 + (k + kPairPrefetch) * kPanel}) {
      _mm_prefetch(reinterpret_cast<const char*>(w), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(w + 16), _MM_HINT_T0);
    }
    next.step(k);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + k]);
      acc0[r][0] = _mm512_fmadd_ps(x, w0, acc0[r][0]);
      acc0[r][1] = _mm512_fmadd_ps(x, w1, acc0[r][1]);
      acc1[r][0] = _mm512_fmadd_ps(x, w2, acc1[r][0]);
      acc1[r][1] = _mm512_fmadd_ps(x, w3, acc1[r][1]);
    }
  }
  store_tile<R, kAct>(acc0, c, ldc, z, act, static_cast<int>(kPanel));
  store_tile<R, kAct>(acc1, c + kPanel, ldc, z ? z + kPanel : nullptr, act,
                      n - static_cast<int>(kPanel));
}

inline constexpr int kPairRows = 6;  // rows per tile of gemm_rows_pair: 24 zmm accumulators

template <ActKind kAct>
inline constexpr GemmRowsAheadFn kGemmRowsPairAs[kPairRows + 1] = {nullptr,
                                                                   gemm_rows_pair<1, kAct>,
                                                                   gemm_rows_pair<2, kAct>,
                                                                   gemm_rows_pair<3, kAct>,
                                                                   gemm_rows_pair<4, kAct>,
                                                                   gemm_rows_pair<5, kAct>,
                                                                   gemm_rows_pair<6, kAct>};

// The two-panel tiles by row count (index 0 unused) for activation `act` (null: none).
inline const GemmRowsAheadFn* gemm_rows_pair_for(const FusedActivation* act) {
  return avx2::with_activation(
      act ? act->kind : ActKind::None, "avx512 gemm_rows_pair",
      [](auto k) -> const GemmRowsAheadFn* { return kGemmRowsPairAs<decltype(k)::value>; });
}

// gemm_rows for the last panel of an N that leaves it kCols = 8, 16 or 24 columns wide (n <=
// kCols live), same packing and signature: per row a ymm, a zmm, or a zmm and a ymm of sums,
// so no FMA runs on the panel's zero columns. A zmm FMA takes both 256-bit halves of a Zen 4
// core's FMA pipes: 24 columns cost 3/4 of 32 (docs/kernels.md has the figures).
template <int R, int kCols, ActKind kAct>
PI_AVX512 void gemm_rows_narrow(const float* a, int64_t lda, const float* b, int64_t K, float* c,
                                int64_t ldc, int64_t /*hi*/, const float* bias, const float* z,
                                const FusedActivation* act, int n) {
  static_assert(kCols == 8 || kCols == 16 || kCols == 24, "whole ymm vectors");
  constexpr bool kZmm = kCols >= 16, kYmm = kCols % 16 == 8;
  constexpr int kY = kZmm ? 16 : 0;  // the ymm's first column
  __m512 acc[kZmm ? R : 1];
  __m256 acc_y[kYmm ? R : 1];
  const __m512 b0 = bias && kZmm ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  const __m256 b1 = bias && kYmm ? _mm256_loadu_ps(bias + kY) : _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if constexpr (kZmm) acc[r] = b0;
    if constexpr (kYmm) acc_y[r] = b1;
  }
  for (int64_t k = 0; k < K; ++k) {
    const float* w = b + k * kPanel;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float x = a[r * lda + k];
      if constexpr (kZmm) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(x), _mm512_load_ps(w), acc[r]);
      if constexpr (kYmm)
        acc_y[r] = _mm256_fmadd_ps(_mm256_set1_ps(x), _mm256_load_ps(w + kY), acc_y[r]);
    }
  }
  const __mmask16 live_y = lanes16(n - kY);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const int64_t at = r * ldc;
    if constexpr (kZmm) store16<kAct>(acc[r], c + at, z ? z + at : nullptr, lanes16(n), act);
    if constexpr (kYmm) {
      if (!live_y) continue;
      // The activation on the low half of a zmm, the store a ymm one (a 512-bit store under
      // a half mask is slow on Zen 4).
      __m512 v = _mm512_castpd_ps(
          _mm512_maskz_insertf64x4(0xFF, _mm512_setzero_pd(), _mm256_castps_pd(acc_y[r]), 0));
      if (z) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(live_y, z + at + kY));
      if constexpr (kAct != ActKind::None) v = activate_as<kAct>(v, *act, live_y);
      const __m256 y = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 0));
      if (n - kY >= 8) _mm256_storeu_ps(c + at + kY, y);
      else
        _mm256_maskstore_ps(c + at + kY, avx2::lane_mask(n - kY), y);
    }
  }
}

template <int kCols, ActKind kAct>
inline constexpr avx2::GemmRowsFn kGemmRowsNarrowAs[kTileRows + 1] = {
    nullptr,
    gemm_rows_narrow<1, kCols, kAct>,
    gemm_rows_narrow<2, kCols, kAct>,
    gemm_rows_narrow<3, kCols, kAct>,
    gemm_rows_narrow<4, kCols, kAct>,
    gemm_rows_narrow<5, kCols, kAct>,
    gemm_rows_narrow<6, kCols, kAct>,
    gemm_rows_narrow<7, kCols, kAct>,
    gemm_rows_narrow<8, kCols, kAct>};

// The tiles by row count (index 0 unused) for a panel of n live columns (1 to 32) and
// activation `act` (null: none): gemm_rows_narrow's where n <= 24, else gemm_rows'.
inline const avx2::GemmRowsFn* gemm_rows_for(const FusedActivation* act, int n) {
  if (n > 24) return gemm_rows_for(act);
  return avx2::with_activation(act ? act->kind : ActKind::None, "avx512 gemm_rows_narrow",
                               [n](auto k) -> const avx2::GemmRowsFn* {
                                 constexpr ActKind kAct = decltype(k)::value;
                                 return n > 16  ? kGemmRowsNarrowAs<24, kAct>
                                        : n > 8 ? kGemmRowsNarrowAs<16, kAct>
                                                : kGemmRowsNarrowAs<8, kAct>;
                               });
}

// gemm_rows for one 16-column panel of the AVX2 tile's packing ([K][16], 64-byte aligned) in
// zmm registers, up to 8 rows (n <= 16 columns; `hi` as avx2::gemm_rows's: 8 for contiguous
// columns, else planes of 8 with n 8 or 16). It runs a narrow 1x1 convolution (16 outputs)
// faster than the 6x16 ymm tile: 8 rows of 16 FMAs per call instead of 6 of 12 halve the calls
// and their bias, epilogue and pointer setup per FMA; 10-14 rows ran slower again (the compiler
// keeps a pointer per row; docs/kernels.md has the figures).
template <int R, ActKind kAct>
PI_AVX512 void gemm_rows16(const float* a, int64_t lda, const float* b, int64_t K, float* c,
                           int64_t ldc, int64_t hi, const float* bias, const float* z,
                           const FusedActivation* act, int n) {
  __m512 acc[R];
  const __m512 b0 = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r] = b0;
  for (int64_t k = 0; k < K; ++k) {
    const __m512 w = _mm512_load_ps(b + k * 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r * lda + k]), w, acc[r]);
  }
  if (hi != 8) {  // planes of 8 columns
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      store16_planes<kAct>(acc[r], c + r * ldc, hi, z ? z + r * ldc : nullptr, n > 8, act);
    return;
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    store16<kAct>(acc[r], c + r * ldc, z ? z + r * ldc : nullptr, lanes16(n), act);
}

template <ActKind kAct>
inline constexpr avx2::GemmRowsFn kGemmRows16As[kTileRows + 1] = {nullptr,
                                                                  gemm_rows16<1, kAct>,
                                                                  gemm_rows16<2, kAct>,
                                                                  gemm_rows16<3, kAct>,
                                                                  gemm_rows16<4, kAct>,
                                                                  gemm_rows16<5, kAct>,
                                                                  gemm_rows16<6, kAct>,
                                                                  gemm_rows16<7, kAct>,
                                                                  gemm_rows16<8, kAct>};

// The 16-column tiles by row count (index 0 unused) for activation `act` (null: none).
inline const avx2::GemmRowsFn* gemm_rows16_for(const FusedActivation* act) {
  return avx2::with_activation(
      act ? act->kind : ActKind::None, "avx512 gemm_rows16",
      [](auto k) -> const avx2::GemmRowsFn* { return kGemmRows16As<decltype(k)::value>; });
}

// gemm_rows16 over kP (2 or 4) 16-column panels at once, packed one after the other ([kP][K]
// [16]): c[r][0, n) for R rows and n columns (1 to 16 kP); `bias` 16 kP floats or null; `hi`
// as gemm_rows16's, 8 for contiguous columns, else planes of 8 columns hi floats apart (panel v
// at c + 2 v hi; n then a multiple of 8). kP loads and R broadcasts feed kP R FMAs where
// gemm_rows16's 8 rows take 1 load and 8 broadcasts per 8 FMAs: on an Intel core with two zmm
// FMA pipes and two loads per cycle that tile is bound by its loads, and its 8 sums barely
// cover the FMA latency (Winograd's GEMMs). Up to 6 rows of 4 panels or 8 of 2: 24 or 16 sums.
// The weights are fetched 16 steps ahead, which speeds layers whose weights come from memory.
// The next weights are not fetched into L2 (Ahead): where the row tiles are few against the
// weights (a 7x7 map: 3 row tiles per 128 KB), all of them wait on memory, not the first
// alone, and the extra fetches made those layers slower (docs/kernels.md has the figures).
template <int R, int kP, ActKind kAct>
PI_AVX512 void gemm_rows16_multi(const float* a, int64_t lda, const float* b, int64_t K, float* c,
                                 int64_t ldc, int64_t hi, const float* bias, const float* z,
                                 const FusedActivation* act, int n) {
  static_assert(kP == 2 || kP == 4, "two or four panels");
  __m512 acc[R][kP];
#pragma GCC unroll 4
  for (int v = 0; v < kP; ++v) {
    const __m512 b0 = bias ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][v] = b0;
  }
  const int64_t stride = K * 16;
  for (int64_t k = 0; k < K; ++k) {
    __m512 w[kP];
#pragma GCC unroll 4
    for (int v = 0; v < kP; ++v) {
      w[v] = _mm512_load_ps(b + v * stride + k * 16);
      _mm_prefetch(reinterpret_cast<const char*>(b + v * stride + (k + 16) * 16), _MM_HINT_T0);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 4
      for (int v = 0; v < kP; ++v) acc[r][v] = _mm512_fmadd_ps(x, w[v], acc[r][v]);
    }
  }
  if (hi != 8) {  // planes of 8 columns
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < kP; ++v) {
        if (n <= 16 * v) break;
        const int64_t at = r * ldc + 2 * v * hi;
        store16_planes<kAct>(acc[r][v], c + at, hi, z ? z + at : nullptr, n > 16 * v + 8, act);
      }
    return;
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kP; ++v) {
      const __mmask16 live = lanes16(n - 16 * v);
      if (live)
        store16<kAct>(acc[r][v], c + r * ldc + 16 * v, z ? z + r * ldc + 16 * v : nullptr, live,
                      act);
    }
}

// Rows per tile of gemm_rows16_multi over kP panels.
inline constexpr int multi_rows(int kP) { return kP == 4 ? 6 : 8; }

template <int kP, ActKind kAct>
inline constexpr avx2::GemmRowsFn kGemmRows16MultiAs[9] = {nullptr,
                                                           gemm_rows16_multi<1, kP, kAct>,
                                                           gemm_rows16_multi<2, kP, kAct>,
                                                           gemm_rows16_multi<3, kP, kAct>,
                                                           gemm_rows16_multi<4, kP, kAct>,
                                                           gemm_rows16_multi<5, kP, kAct>,
                                                           gemm_rows16_multi<6, kP, kAct>,
                                                           gemm_rows16_multi<7, kP, kAct>,
                                                           gemm_rows16_multi<8, kP, kAct>};

template <ActKind kAct>  // four panels: up to 6 rows
inline constexpr avx2::GemmRowsFn kGemmRows16MultiAs<4, kAct>[9] = {nullptr,
                                                                    gemm_rows16_multi<1, 4, kAct>,
                                                                    gemm_rows16_multi<2, 4, kAct>,
                                                                    gemm_rows16_multi<3, 4, kAct>,
                                                                    gemm_rows16_multi<4, 4, kAct>,
                                                                    gemm_rows16_multi<5, 4, kAct>,
                                                                    gemm_rows16_multi<6, 4, kAct>,
                                                                    nullptr,
                                                                    nullptr};

// The kP-panel 16-column tiles by row count (index 0 unused; up to multi_rows(kP)) for
// activation `act` (null: none).
template <int kP> inline const avx2::GemmRowsFn* gemm_rows16_multi_for(const FusedActivation* act) {
  return avx2::with_activation(
      act ? act->kind : ActKind::None, "avx512 gemm_rows16_multi",
      [](auto k) -> const avx2::GemmRowsFn* { return kGemmRows16MultiAs<kP, decltype(k)::value>; });
}

}  // namespace polyinfer::fast::avx512

#endif  // PI_X86_AVX2
