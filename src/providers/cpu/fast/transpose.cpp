// Fast Transpose for 1-, 4- and 8-byte elements (float32, int32, int64, float64, the 8-bit
// values of quantized models...): a transpose only moves bits, so one code path per element
// size covers them.
//
// The permutation is first simplified: extent-1 dimensions are dropped and input dimensions that
// stay adjacent and in order in the output are merged. NCHW→NHWC becomes [N, C, HW]→[N, HW, C],
// [B,S,H,D]→[B,H,S,D] becomes a swap of S and H with D-long rows. Then:
//   - if the input's last dimension stays last, each output row is one contiguous copy;
//   - otherwise the two dimensions that are innermost in the input and in the output are
//     transposed in 32x32 tiles (both sides stay in cache), for every index of the other ones;
//     4-byte elements go through 8x8 register transposes inside a tile where the CPU has AVX2;
//   - when the output's innermost dimension is 2-4 wide and follows the input's last one (a
//     channel shuffle, an RGB image into channels last), rows are interleaved into one run,
//     3 rows of 4-byte elements by lane permutes on AVX2.
// Work is split over threads by rows / tiles.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PI_FAST_TRANSPOSE_AVX2 1
#endif

#include "core/shape_util.h"
#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

constexpr int64_t kTile = 32;

#ifdef PI_FAST_TRANSPOSE_AVX2
// dst[j * 3 + k] = src[k * sa + j] for j < n, k < 3 (an image's 3 channel planes into RGB
// pixels), 8 pixels per step: output vector v holds stream positions 8v..8v+7, position q is
// channel q % 3 of pixel q / 3, so one lane permutation by q / 3 of each plane and two blends by
// q % 3 build it (the compiler's own vectorization of the loop ran at a third of memory speed).
__attribute__((target("avx2"))) void interleave3(const uint32_t* src, int64_t sa, uint32_t* dst,
                                                 int64_t n) {
  const __m256i idx[3] = {_mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2),
                          _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5),
                          _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7)};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + j));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + sa + j));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * sa + j));
    __m256i* out = reinterpret_cast<__m256i*>(dst + j * 3);
    // Lanes from b where q % 3 == 1, from c where q % 3 == 2 (q = 8v + lane).
    _mm256_storeu_si256(
        out, _mm256_blend_epi32(_mm256_blend_epi32(_mm256_permutevar8x32_epi32(a, idx[0]),
                                                   _mm256_permutevar8x32_epi32(b, idx[0]), 0x92),
                                _mm256_permutevar8x32_epi32(c, idx[0]), 0x24));
    _mm256_storeu_si256(
        out + 1,
        _mm256_blend_epi32(_mm256_blend_epi32(_mm256_permutevar8x32_epi32(a, idx[1]),
                                              _mm256_permutevar8x32_epi32(b, idx[1]), 0x24),
                           _mm256_permutevar8x32_epi32(c, idx[1]), 0x49));
    _mm256_storeu_si256(
        out + 2,
        _mm256_blend_epi32(_mm256_blend_epi32(_mm256_permutevar8x32_epi32(a, idx[2]),
                                              _mm256_permutevar8x32_epi32(b, idx[2]), 0x49),
                           _mm256_permutevar8x32_epi32(c, idx[2]), 0x92));
  }
  for (; j < n; ++j)
    for (int k = 0; k < 3; ++k) dst[j * 3 + k] = src[k * sa + j];
}

inline bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

// The permutation after dropping extent-1 dims and merging dims that stay adjacent.
struct Simplified {
  Shape dims;                 // input extents
  std::vector<int64_t> perm;  // output dim i is input dim perm[i]
};

Simplified simplify(const Shape& shape, const std::vector<int64_t>& perm) {
  const size_t r = shape.size();
  // Input dims that are not 1, renumbered 0..k-1 (so dims around a dropped one become adjacent).
  std::vector<int64_t> compact(r, -1);
  Shape kept;
  for (size_t d = 0; d < r; ++d)
    if (shape[d] != 1) compact[d] = static_cast<int64_t>(kept.size()), kept.push_back(shape[d]);
  // Their output order.
  std::vector<int64_t> order;
  for (size_t i = 0; i < r; ++i)
    if (compact[perm[i]] >= 0) order.push_back(compact[perm[i]]);
  // Groups of output-consecutive dims that are input-consecutive too, in output order.
  std::vector<std::vector<int64_t>> groups;
  for (int64_t d : order) {
    if (!groups.empty() && groups.back().back() + 1 == d) {
      groups.back().push_back(d);
    } else {
      groups.push_back({d});
    }
  }
  // Number the groups by their input position.
  std::vector<size_t> by_input(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) by_input[i] = i;
  std::sort(by_input.begin(), by_input.end(),
            [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  Simplified s;
  s.dims.resize(groups.size());
  s.perm.resize(groups.size());
  for (size_t k = 0; k < by_input.size(); ++k) {
    int64_t e = 1;
    for (int64_t d : groups[by_input[k]]) e *= kept[d];
    s.dims[k] = e;
    s.perm[by_input[k]] = static_cast<int64_t>(k);
  }
  return s;
}

// Offsets in input and output of the flat index `idx` over the dims `which` (outer to inner).
struct Walk {
  std::vector<int64_t> ext, in_stride, out_stride;
  void offsets(int64_t idx, int64_t& in_off, int64_t& out_off) const {
    in_off = out_off = 0;
    for (size_t d = ext.size(); d-- > 0;) {
      const int64_t q = idx % ext[d];
      idx /= ext[d];
      in_off += q * in_stride[d];
      out_off += q * out_stride[d];
    }
  }
};

// dst[j * NA + k] = src[k * sa + j] for j < n, k < NA: NA input rows interleaved into one
// output run. With NA a constant the compiler unrolls k and vectorizes over j with shuffles;
// the tiled path below would handle these 2- to 4-wide tiles one element at a time.
template <int NA, class T>
PI_FAST_CLONES void interleave(const T* src, int64_t sa, T* dst, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    for (int k = 0; k < NA; ++k) dst[j * NA + k] = src[k * sa + j];
}

template <class T> void interleave_rows(int64_t na, const T* src, int64_t sa, T* dst, int64_t n) {
#ifdef PI_FAST_TRANSPOSE_AVX2
  if constexpr (std::is_same_v<T, uint32_t>) {
    if (na == 3 && has_avx2()) return interleave3(src, sa, dst, n);
  }
#endif
  switch (na) {
    case 2: return interleave<2>(src, sa, dst, n);
    case 3: return interleave<3>(src, sa, dst, n);
    default: return interleave<4>(src, sa, dst, n);
  }
}

template <class T> void transpose(const T* in, T* out, const Simplified& s, int threads) {
  const size_t r = s.dims.size();
  const std::vector<int64_t> is = strides_of(s.dims);
  Shape od(r);
  for (size_t i = 0; i < r; ++i) od[i] = s.dims[s.perm[i]];
  const std::vector<int64_t> os = strides_of(od);
  if (s.perm[r - 1] == static_cast<int64_t>(r - 1)) {  // rows stay contiguous
    const int64_t inner = s.dims[r - 1];
    Walk w;
    for (size_t i = 0; i + 1 < r; ++i) {
      w.ext.push_back(od[i]);
      w.in_stride.push_back(is[s.perm[i]]);
      w.out_stride.push_back(os[i]);
    }
    const int64_t rows = shape_numel(od) / inner;
    parallel_for(rows, threads, std::max<int64_t>(1, kGrain / inner), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        int64_t io, oo;
        w.offsets(row, io, oo);
        std::memcpy(out + oo, in + io, static_cast<size_t>(inner) * sizeof(T));
      }
    });
    return;
  }
  // Output dim a = r-1 (output stride 1) reads input stride sa; output dim b reads the input's
  // last dim (input stride 1) and writes output stride tb.
  const size_t a = r - 1;
  size_t b = 0;
  while (s.perm[b] != static_cast<int64_t>(r - 1)) ++b;
  const int64_t na = od[a], nb = od[b], sa = is[s.perm[a]], tb = os[b];
  Walk w;
  for (size_t i = 0; i < r; ++i) {
    if (i == a || i == b) continue;
    w.ext.push_back(od[i]);
    w.in_stride.push_back(is[s.perm[i]]);
    w.out_stride.push_back(os[i]);
  }
  const int64_t batches = shape_numel(w.ext);
  // A short output row (ShuffleNet's channel shuffle in NHWC: [.., g, C/g] → [.., C/g, g] with g
  // = 2): when that row sits right after the input's last dimension in the output, each batch is
  // na input rows interleaved into one contiguous run.
  // Each batch's run is cut into pieces of at least kGrain elements, so that one large batch
  // (an image's NCHW -> NHWC with 3 channels) is shared by the threads too.
  if (na <= 4 && b + 1 == a && tb == na) {
    const int64_t piece = std::max<int64_t>(kGrain / na, 1);
    const int64_t pieces = (nb + piece - 1) / piece;
    parallel_for(batches * pieces, threads, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t it = lo; it < hi; ++it) {
        int64_t io, oo;
        w.offsets(it / pieces, io, oo);
        const int64_t j0 = it % pieces * piece, n = std::min(piece, nb - j0);
        interleave_rows(na, in + io + j0, sa, out + oo + j0 * na, n);
      }
    });
    return;
  }
  const int64_t tiles_b = (nb + kTile - 1) / kTile;
  const int64_t items = batches * tiles_b;  // one item: a kTile-wide strip of b, all of a
  const int64_t per_item = kTile * na;
#ifdef PI_FAST_TRANSPOSE_AVX2
  const bool vec = std::is_same_v<T, uint32_t> && has_avx2();
#endif
  const int64_t grain = std::max<int64_t>(1, kGrain / per_item);
  parallel_for(items, threads, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t it = lo; it < hi; ++it) {
      int64_t io, oo;
      w.offsets(it / tiles_b, io, oo);
      const int64_t b0 = (it % tiles_b) * kTile, b1 = std::min(nb, b0 + kTile);
      for (int64_t a0 = 0; a0 < na; a0 += kTile) {
        const int64_t a1 = std::min(na, a0 + kTile);
        for (int64_t jb = b0; jb < b1; jb += 8) {  // 8 output rows at a time
          const int64_t je = std::min(b1, jb + 8);
          int64_t ja = a0;
#ifdef PI_FAST_TRANSPOSE_AVX2
          if constexpr (std::is_same_v<T, uint32_t>) {
            if (vec && je - jb == 8)
              for (; ja + 8 <= a1; ja += 8)
                avx2::transpose8x8(reinterpret_cast<const float*>(in + io + ja * sa + jb), sa,
                                   reinterpret_cast<float*>(out + oo + jb * tb + ja), tb);
          }
#endif
          for (int64_t j = jb; j < je; ++j) {  // what the 8x8 blocks left over
            const T* src = in + io + j;
            T* dst = out + oo + j * tb;
            for (int64_t k = ja; k < a1; ++k) dst[k] = src[k * sa];
          }
        }
      }
    }
  });
}

class FastTransposeKernel final : public Kernel {
 public:
  explicit FastTransposeKernel(const KernelInfo& info)
      : ref_(info), perm_(info.attr_ints("perm")), has_perm_(info.has_attr("perm")) {}
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const size_t esize = dtype_size(x.dtype());
    const int r = x.rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(r);
      for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
    }
    // Strings, bool, 2-byte types and any bad perm (its error message) go to the reference.
    if (x.dtype() == DType::String || x.dtype() == DType::Bool ||
        (esize != 1 && esize != 4 && esize != 8) || !valid(perm, r))
      return ref_.run(ctx);
    Shape out(r);
    for (int i = 0; i < r; ++i) out[i] = x.shape()[perm[i]];
    Tensor& y = ctx.output(0, x.dtype(), out);
    if (x.numel() == 0) return;
    const Simplified s = simplify(x.shape(), perm);
    if (s.dims.size() <= 1) {  // the identity in disguise
      std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
      return;
    }
    if (esize == 1) {
      transpose(static_cast<const uint8_t*>(x.raw_data()), static_cast<uint8_t*>(y.raw_data()), s,
                ctx.threads());
    } else if (esize == 4) {
      transpose(static_cast<const uint32_t*>(x.raw_data()), static_cast<uint32_t*>(y.raw_data()), s,
                ctx.threads());
    } else {
      transpose(static_cast<const uint64_t*>(x.raw_data()), static_cast<uint64_t*>(y.raw_data()), s,
                ctx.threads());
    }
  }

 private:
  static bool valid(const std::vector<int64_t>& perm, int r) {
    if (static_cast<int>(perm.size()) != r) return false;
    std::vector<bool> seen(r, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= r || seen[p]) return false;
      seen[p] = true;
    }
    return true;
  }

  RefFallback ref_;
  std::vector<int64_t> perm_;
  bool has_perm_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Transpose, 1, 28, FastTransposeKernel);

}  // namespace polyinfer::fast
