// What every Vulkan kernel shares: the creation-time refusals (float32, or float16 where the
// kernel has a float16 shader variant and the device 16-bit storage; known dtype; rank limit),
// the run-time checks that repeat them, and the mapping of a tensor to the element offset in its
// buffer that the shaders take as a push constant.
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

// The element offset of a tensor of `dtype` (float32 or float16) inside its buffer.
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
