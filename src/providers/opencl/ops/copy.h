// The strided copy that the data-movement kernels share (kernels/copy.cl): Transpose, Concat
// (layout.cpp), Slice (slice.cpp), Split (split.cpp), Expand and Tile (expand_tile.cpp) are each
// an iteration shape with the source's and the destination's element strides in it. Strides may
// be negative (a Slice with negative steps) or 0 (a broadcast dimension): the kernel sums them in
// 32-bit unsigned arithmetic, which wraps to the same index.
#pragma once

#include <vector>

#include "core/shape_util.h"
#include "providers/opencl/ops/common.h"
#include "runtime/host_constants.h"

namespace polyinfer::opencl {

struct CopyParams {
  uint32_t n, rank, off_x, off_y;
  uint32_t dims[kMaxRank], sx[kMaxRank], sy[kMaxRank];
};
static_assert(sizeof(CopyParams) == 88, "matches CopyParams in copy.cl");

inline std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

// The copy moves bits and never converts: one variant per element size (move_options).
inline cl_kernel copy_kernel(Context& ctx, DType dtype = DType::Float32) {
  return ctx.kernel("copy", "copy", move_options(dtype));
}

// Enqueues one copy of `dims` elements (rank <= 6) from x (strides sx, from element x0) to y
// (strides sy, from element y0); x and y share the kernel's dtype.
inline void enqueue_copy(Context& ctx, cl_kernel kernel, const Tensor& x, const Tensor& y,
                         const Shape& dims, const std::vector<int64_t>& sx,
                         const std::vector<int64_t>& sy, int64_t y0, int64_t x0 = 0) {
  const int64_t n = shape_numel(dims);
  if (n == 0) return;
  PI_CHECK(dims.size() <= kMaxRank, Internal, "OpenCL copy: rank ", dims.size());
  CopyParams p{};
  const BufferRef rx = ctx.find(x.raw_data()), ry = ctx.find(y.raw_data());
  p.n = u32(n);
  p.rank = u32(static_cast<int64_t>(dims.size()));
  p.off_x = element_offset(rx, x.dtype()) + u32(x0);
  p.off_y = element_offset(ry, y.dtype()) + u32(y0);
  for (size_t d = 0; d < dims.size(); ++d) {
    p.dims[d] = u32(dims[d]);
    p.sx[d] = u32(sx[d]);
    p.sy[d] = u32(sy[d]);
  }
  ctx.dispatch(kernel, {rx.buffer, ry.buffer}, &p, sizeof p, groups_for(n, ctx));
}

}  // namespace polyinfer::opencl
