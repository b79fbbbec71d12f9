// What every OpenCL kernel shares: the creation-time refusals (float32 or float16 for the float
// kernels, any dtype of 1, 2, 4 or 8 bytes for the data-movement kernels; known dtype; rank
// limit), the run-time checks that repeat them, the build options that pick a program's variant,
// and the element offset of a tensor in its block that the kernels take in their parameters.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "providers/opencl/context.h"
#include "runtime/kernel.h"
#include "runtime/kernel_checks.h"

namespace polyinfer::opencl {

constexpr int kMaxRank = 6;

// Refuses inputs that are not known, at creation, to be float32 (of rank <= max_rank when the
// rank is known); an unknown dtype too, since a refusal at run time could not fall back. Inputs
// from `first_unchecked` on are not checked.
inline void require_float32(const KernelInfo& info, int max_rank = kMaxRank,
                            size_t first_unchecked = static_cast<size_t>(-1)) {
  require_input_dtype(info, DType::Float32, "OpenCL " + info.node().op_type, max_rank,
                      first_unchecked);
}

// require_float32 for kernels with a float16 variant (common.cl's PI_FP16): the checked inputs
// are all float32 or all float16 (every device: float16 is only stored, with the core
// vload_half/vstore_half). Returns their dtype, which picks the variant (float_options).
inline DType require_float(const KernelInfo& info, int max_rank = kMaxRank,
                           size_t first_unchecked = static_cast<size_t>(-1)) {
  return require_one_input_dtype(info, {DType::Float32, DType::Float16},
                                 "OpenCL " + info.node().op_type, max_rank, first_unchecked);
}

// The build options of a float kernel's variant for tensors of `dtype`.
inline std::string float_options(DType dtype) { return dtype == DType::Float16 ? "-DPI_FP16" : ""; }

// The dtypes the data-movement kernels take: whole elements of 1, 2, 4 or 8 bytes (integers,
// bool, the floats, complex64); not strings, complex128 or the packed sub-byte types.
inline bool movable(DType d) {
  if (d == DType::String || d == DType::Undefined || is_packed(d)) return false;
  const size_t s = dtype_size(d);
  return s == 1 || s == 2 || s == 4 || s == 8;
}

// require_float for the data-movement kernels: the checked inputs share one movable dtype.
// Returns it (move_options picks the variant by its size).
inline DType require_movable(const KernelInfo& info, int max_rank = kMaxRank,
                             size_t first_unchecked = static_cast<size_t>(-1)) {
  const std::string who = "OpenCL " + info.node().op_type;
  size_t first = 0;
  while (first < info.num_inputs() && first < first_unchecked && !info.has_input(first)) ++first;
  const DType dtype = known_dtype(info, first);
  const std::string takes = " (the " + who +
                            " kernel moves elements of 1, 2, 4 or 8 bytes: not strings, "
                            "complex128 or packed types)";
  if (dtype == DType::Undefined)
    info.unsupported("input " + std::to_string(first) + " of unknown dtype" + takes);
  if (!movable(dtype)) info.unsupported(std::string("dtype ") + dtype_name(dtype) + takes);
  require_input_dtype(info, dtype, who, max_rank, first_unchecked);
  return dtype;
}

// The build options of a data-movement kernel for elements of `dtype` (common.cl's PI_ELEM).
inline std::string move_options(DType dtype) {
  switch (dtype_size(dtype)) {
    case 1: return "-DPI_ELEM=uchar";
    case 2: return "-DPI_ELEM=ushort";
    case 8: return "-DPI_ELEM=ulong";
    default: return "";
  }
}

// The same checks at run time (a model's declared types can be wrong): `dtype` is what the kernel
// was created for.
inline void check_input(const KernelContext& ctx, const Tensor& t, int max_rank = kMaxRank,
                        DType dtype = DType::Float32) {
  PI_CHECK(t.dtype() == dtype, UnsupportedOp, ctx.node().label(), ": dtype ", dtype_name(t.dtype()),
           " (this OpenCL kernel was created for ", dtype_name(dtype), ")");
  PI_CHECK(t.rank() <= max_rank, UnsupportedOp, ctx.node().label(), ": rank ", t.rank(),
           " (this OpenCL kernel takes rank <= ", max_rank, ")");
  PI_CHECK(t.numel() <= std::numeric_limits<int32_t>::max(), UnsupportedOp, ctx.node().label(),
           ": ", t.numel(), " elements (the OpenCL kernels index with 32 bits)");
}

// The element offset of a tensor of `dtype` inside its block.
inline uint32_t element_offset(const BufferRef& r, DType dtype = DType::Float32) {
  const size_t size = dtype_size(dtype);
  PI_CHECK(r.offset % size == 0, Internal, "OpenCL: a ", dtype_name(dtype),
           " tensor at byte offset ", r.offset);
  const size_t e = r.offset / size;
  PI_CHECK(e <= std::numeric_limits<uint32_t>::max(), Internal, "OpenCL: a buffer offset of ",
           r.offset, " bytes does not fit 32 bits");
  return static_cast<uint32_t>(e);
}

// Work-groups of `group_size` work-items for n items; kernels loop (grid stride) past the limit.
inline size_t groups_for(int64_t n, const Context& c, int64_t group_size = 256) {
  const int64_t g = (n + group_size - 1) / group_size;
  return static_cast<size_t>(std::clamp<int64_t>(g, 1, static_cast<int64_t>(c.max_groups())));
}

inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

}  // namespace polyinfer::opencl
