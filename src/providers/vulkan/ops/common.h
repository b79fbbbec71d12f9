// What every Vulkan kernel shares: the creation-time refusals (float32, or float16 where the
// kernel has a float16 shader variant and the device 16-bit storage, or any dtype of 1, 2, 4 or 8
// bytes for the data-movement kernels; known dtype; rank limit), the run-time checks that repeat
// them, and the mapping of a tensor to the element offset in its buffer that the shaders take as
// a push constant.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "providers/vulkan/context.h"
#include "runtime/host_constants.h"
#include "runtime/kernel.h"
#include "runtime/kernel_checks.h"

namespace polyinfer::vulkan {

constexpr int kMaxRank = 6;

// Refuses inputs that are not known, at creation, to be float32 tensors (of rank <= max_rank
// when the rank is known). An unknown dtype (inside a Loop body, say) is refused too: a refusal
// at run time could not fall back to the next provider. Inputs from `first_unchecked` on are not
// checked (shape inputs of Reshape, say). The reason names the op ("the Vulkan Softmax kernels
// are float32 only"): some Vulkan kernels take float16 too.
inline void require_float32(const KernelInfo& info, int max_rank = kMaxRank,
                            size_t first_unchecked = static_cast<size_t>(-1)) {
  require_input_dtype(info, DType::Float32, "Vulkan " + info.node().op_type, max_rank,
                      first_unchecked);
}

// require_float32 for kernels with a float16 shader variant (storage.glsl): the checked inputs
// are all float32, or all float16 on a device with 16-bit storage. Returns their dtype, which
// picks the shader (shader_for) and element size (element_offset).
inline DType require_float(const KernelInfo& info, int max_rank = kMaxRank,
                           size_t first_unchecked = static_cast<size_t>(-1)) {
  const DType dtype =
      require_one_input_dtype(info, {DType::Float32, DType::Float16},
                              "Vulkan " + info.node().op_type, max_rank, first_unchecked);
  if (dtype == DType::Float16 && !Context::get()->storage16())
    info.unsupported(
        "float16 tensors on a device without 16-bit storage "
        "(storageBuffer16BitAccess)");
  return dtype;
}

// The shader for tensors of `dtype`: "<name>", or its float16 variant "<name>_f16".
inline std::string shader_for(const std::string& name, DType dtype) {
  return dtype == DType::Float16 ? name + "_f16" : name;
}

// The dtypes the data-movement kernels (copy, gather, pad, where: shaders/move.glsl) take: they
// move elements as bits, so every dtype of whole elements of 1, 2, 4 or 8 bytes (integers, bool,
// the floats, complex64); not strings, complex128 or the packed sub-byte types.
inline const std::vector<DType>& movable_dtypes() {
  static const std::vector<DType> all = [] {
    std::vector<DType> v;
    for (int32_t t = 1; t <= kMaxDType; ++t) {
      const DType d = static_cast<DType>(t);
      if (d == DType::String || is_packed(d)) continue;
      const size_t s = dtype_size(d);
      if (s == 1 || s == 2 || s == 4 || s == 8) v.push_back(d);
    }
    return v;
  }();
  return all;
}

// require_float for the data-movement kernels: the checked inputs share one movable dtype
// (above); 2-byte elements need 16-bit storage. Returns the dtype (move_shader_for picks the
// variant by its size).
inline DType require_movable(const KernelInfo& info, int max_rank = kMaxRank,
                             size_t first_unchecked = static_cast<size_t>(-1)) {
  const std::string who = "Vulkan " + info.node().op_type;
  size_t first = 0;
  while (first < info.num_inputs() && first < first_unchecked && !info.has_input(first)) ++first;
  const DType dtype = known_dtype(info, first);
  const std::string takes = " (the " + who +
                            " kernel moves elements of 1, 2, 4 or 8 bytes: not strings, "
                            "complex128 or packed types)";
  if (dtype == DType::Undefined)
    info.unsupported("input " + std::to_string(first) + " of unknown dtype" + takes);
  const auto& ok = movable_dtypes();
  if (std::find(ok.begin(), ok.end(), dtype) == ok.end())
    info.unsupported(std::string("dtype ") + dtype_name(dtype) + takes);
  // The other checked inputs: the same dtype, and the rank limit.
  require_input_dtype(info, dtype, who, max_rank, first_unchecked);
  if (dtype_size(dtype) == 2 && !Context::get()->storage16())
    info.unsupported(std::string(dtype_name(dtype)) +
                     " tensors on a device without 16-bit storage (storageBuffer16BitAccess)");
  return dtype;
}

// The kind of a dtype for the shaders that compute on integers (elem.glsl's PI_KIND_*): 0 the
// unsigned integers, 1 the signed ones (8 to 64 bits), 2 float16 and float32, 3 bool; -1 for the
// dtypes they do not read.
inline int elem_kind(DType d) {
  switch (d) {
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return 0;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: return 1;
    case DType::Float16:
    case DType::Float32: return 2;
    case DType::Bool: return 3;
    default: return -1;
  }
}

// The variant of data-movement shader `name` for elements of `dtype` (move.glsl): "<name>" for
// 4 bytes, "<name>_f16" for 2, "<name>_b8" for 1, "<name>_b64" for 8.
inline std::string move_shader_for(const std::string& name, DType dtype) {
  switch (dtype_size(dtype)) {
    case 1: return name + "_b8";
    case 2: return name + "_f16";
    case 8: return name + "_b64";
    default: return name;
  }
}

// The same checks at run time (a model's declared types can be wrong): `dtype` is what the kernel
// was created for.
inline void check_input(const KernelContext& ctx, const Tensor& t, int max_rank = kMaxRank,
                        DType dtype = DType::Float32) {
  PI_CHECK(t.dtype() == dtype, UnsupportedOp, ctx.node().label(), ": dtype ", dtype_name(t.dtype()),
           " (this Vulkan kernel was created for ", dtype_name(dtype), ")");
  PI_CHECK(t.rank() <= max_rank, UnsupportedOp, ctx.node().label(), ": rank ", t.rank(),
           " (this Vulkan kernel takes rank <= ", max_rank, ")");
  PI_CHECK(t.numel() <= std::numeric_limits<int32_t>::max(), UnsupportedOp, ctx.node().label(),
           ": ", t.numel(), " elements (the Vulkan kernels index with 32 bits)");
}

// The element offset of a tensor of `dtype` (any whole-byte dtype) inside its buffer.
inline uint32_t element_offset(const BufferRef& r, DType dtype = DType::Float32) {
  const size_t size = dtype_size(dtype);
  PI_CHECK(r.offset % size == 0, Internal, "Vulkan: a ", dtype_name(dtype),
           " tensor at byte offset ", r.offset);
  const size_t e = r.offset / size;
  PI_CHECK(e <= std::numeric_limits<uint32_t>::max(), Internal, "Vulkan: a buffer offset of ",
           r.offset, " bytes does not fit 32 bits");
  return static_cast<uint32_t>(e);
}

// Workgroups of `group_size` threads for n items; the shaders loop (grid stride) past the limit.
inline uint32_t groups_for(int64_t n, const Context& c, int64_t group_size = 256) {
  const int64_t g = (n + group_size - 1) / group_size;
  return static_cast<uint32_t>(std::clamp<int64_t>(g, 1, c.max_groups()));
}

inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

}  // namespace polyinfer::vulkan
