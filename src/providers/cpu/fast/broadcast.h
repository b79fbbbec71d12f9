// Numpy broadcasting of N inputs for the fast elementwise kernels of other arities than Add's
// (fast/binary.cpp explains the scheme): Max/Min, Pow, the comparisons and logic, Where, Expand.
//
// The broadcast is collapsed first: output dimensions of extent 1 are dropped and neighbours
// where the same inputs have the full extent are merged, so [N,C,H,W] vs [1,C,1,1] becomes
// [N | C | H*W]. The innermost collapsed dimension is a run along which each input is either
// contiguous (stride 1) or one value (stride 0); for_each_run hands a kernel whole runs, several
// along the next dimension out at once, with the inputs' offsets.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {

// The size of one element of t where it is a plain fixed-size value of 1, 2, 4 or 8 bytes (not
// strings, not the packed 2-, 4- and 6-bit types): what the kernels that only move elements
// (Where, Expand, Split) take; 0 otherwise.
inline size_t plain_element_size(DType t) {
  switch (t) {
    case DType::Undefined:
    case DType::String:
    case DType::Complex128:
    case DType::UInt4:
    case DType::Int4:
    case DType::Float4E2M1:
    case DType::UInt2:
    case DType::Int2:
    case DType::Float6E2M3:
    case DType::Float6E3M2: return 0;
    default: return dtype_size(t);
  }
}

template <size_t N> struct BroadcastPlan {
  std::vector<int64_t> dims;                    // collapsed extents, outermost first
  std::vector<std::array<int64_t, N>> strides;  // per dimension, each input's element stride
  // Whether input j is contiguous along the run (else one value per run).
  bool vec(size_t j) const { return strides.back()[j] != 0; }
  // Each input's stride from one run to the next (along the dimension outside the run).
  int64_t row_stride(size_t j) const { return dims.size() > 1 ? strides[dims.size() - 2][j] : 0; }
};

template <size_t N>
BroadcastPlan<N> plan_broadcast(const std::array<const Shape*, N>& in, const Shape& out) {
  const size_t r = out.size();
  std::vector<int64_t> ext;
  std::vector<std::array<bool, N>> full;
  for (size_t d = 0; d < r; ++d) {
    if (out[d] == 1) continue;
    std::array<bool, N> f{};
    for (size_t j = 0; j < N; ++j) {
      const Shape& s = *in[j];
      const size_t o = r - s.size();
      f[j] = d >= o && s[d - o] == out[d];
    }
    if (!ext.empty() && full.back() == f) {
      ext.back() *= out[d];
    } else {
      ext.push_back(out[d]);
      full.push_back(f);
    }
  }
  if (ext.empty()) {  // one element
    ext.push_back(1);
    full.push_back({});
    full.back().fill(true);
  }
  BroadcastPlan<N> p;
  p.dims = ext;
  p.strides.assign(ext.size(), {});
  std::array<int64_t, N> run{};
  run.fill(1);
  for (size_t i = ext.size(); i-- > 0;)
    for (size_t j = 0; j < N; ++j)
      if (full[i][j]) p.strides[i][j] = run[j], run[j] *= ext[i];
  return p;
}

// f(off, y, rows, len) for the runs covering outputs [0, n) (n = the product of p.dims), split
// over threads: `rows` runs of `len` outputs from output y on (rows > 1 only for whole runs);
// off[j] is input j's offset of the first output, and the next run starts row_stride(j) later.
template <size_t N, class F>
void for_each_run(const BroadcastPlan<N>& p, int64_t n, int threads, int64_t grain, const F& f) {
  const size_t k = p.dims.size() - 1;
  const int64_t inner = p.dims[k];
  const int64_t rows_dim = k > 0 ? p.dims[k - 1] : 1;
  parallel_for(n, threads, grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(k);
    std::array<int64_t, N> off{};
    int64_t row = begin / inner, col = begin - row * inner;
    for (size_t d = k; d-- > 0;) {
      idx[d] = row % p.dims[d];
      row /= p.dims[d];
      for (size_t j = 0; j < N; ++j) off[j] += idx[d] * p.strides[d][j];
    }
    for (int64_t i = begin; i < end;) {
      int64_t rows = 1, len = std::min(inner - col, end - i);
      if (col == 0 && k > 0)
        rows = std::max<int64_t>(1, std::min(rows_dim - idx[k - 1], (end - i) / inner));
      if (rows > 1) len = inner;
      std::array<int64_t, N> o = off;
      for (size_t j = 0; j < N; ++j) o[j] += p.strides[k][j] ? col : 0;
      f(o, i, rows, len);
      i += rows * len;
      col = 0;
      if (k == 0) continue;
      for (size_t j = 0; j < N; ++j) off[j] += p.strides[k - 1][j] * rows;
      idx[k - 1] += rows;
      for (size_t d = k; d-- > 0;) {
        if (idx[d] < p.dims[d]) break;
        for (size_t j = 0; j < N; ++j) off[j] -= p.strides[d][j] * p.dims[d];
        idx[d] = 0;
        if (d == 0) break;
        for (size_t j = 0; j < N; ++j) off[j] += p.strides[d - 1][j];
        ++idx[d - 1];
      }
    }
  });
}

}  // namespace polyinfer::fast
