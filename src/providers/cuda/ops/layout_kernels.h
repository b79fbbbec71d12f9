// Launchers of the data-movement kernels in layout.cu (Transpose, Slice, Split, the reductions'
// reordering; Gather). Plain types only, so the .cu file needs none of the runtime's headers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "providers/cuda/ops/elem.h"

namespace polyinfer::cuda {

constexpr int kLayoutMaxRank = 8;

// A strided view of an input: element i of the (packed) output, unravelled over `dims`, reads
// input element base + sum(idx[d] * stride[d]). Strides may be 0 (broadcast) or negative
// (Slice with negative steps).
struct StridedView {
  int rank = 0;
  int64_t dims[kLayoutMaxRank] = {};
  int64_t stride[kLayoutMaxRank] = {};
  int64_t base = 0;
};
// Elements of `elem_bytes` (1, 2, 4 or 8) bytes: a copy moves bits, so the type does not matter.
void launch_strided_copy(size_t elem_bytes, const void* x, void* y, int64_t n, const StridedView& v,
                         int max_grid, cudaStream_t stream);

// y [outer, n_idx, inner] = x [outer, dim, inner] at indices[i] (int64 when `wide`, else int32;
// already checked on the host to lie in [-dim, dim), negatives counting from the end); elements
// of `elem_bytes` (1, 2, 4 or 8) bytes.
void launch_gather(size_t elem_bytes, const void* x, const void* indices, bool wide, void* y,
                   int64_t outer, int64_t dim, int64_t n_idx, int64_t inner, int max_grid,
                   cudaStream_t stream);

// Pad: output element i, unravelled over odims, reads input coordinate c - before[d] on each
// axis, mapped by `mode` (0 constant, 1 reflect, 2 edge, 3 wrap: ops/pad.h's PadMode
// and pad_source); outside the input in constant mode the output is `value`.
struct PadView {
  int rank = 0;
  int mode = 0;
  int64_t odims[kLayoutMaxRank] = {};
  int64_t before[kLayoutMaxRank] = {};
  int64_t idims[kLayoutMaxRank] = {};
  int64_t xstride[kLayoutMaxRank] = {};
};
void launch_pad(Elem e, const void* x, void* y, int64_t n, const PadView& v, float value,
                int max_grid, cudaStream_t stream);

// Resize over the last two axes of [planes, h, w] -> [planes, oh, ow]: for output row r the
// taps are idx[2r], idx[2r+1] with weights wt[2r], wt[2r+1]; for column c the same at 2(oh + c).
// idx -1 marks a coordinate outside the crop (tf_crop_and_resize): the output is `extrapolation`.
// x and y of type `e`, blended in float32 and rounded once.
void launch_resize(Elem e, const void* x, void* y, int64_t planes, int64_t h, int64_t w, int64_t oh,
                   int64_t ow, const int32_t* idx, const float* wt, float extrapolation,
                   int max_grid, cudaStream_t stream);

}  // namespace polyinfer::cuda
