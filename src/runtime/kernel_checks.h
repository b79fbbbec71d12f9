// Creation-time checks that device providers' kernels share. A kernel refuses in its
// constructor what it cannot run (KernelInfo::unsupported), so the partitioner tries the next
// provider and reports the reason; a refusal at run time could not fall back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace polyinfer {

// Refuses a node whose present inputs among the first `count` are not known, at creation, to
// be tensors of `dtype` (an unknown dtype — inside a Loop body, say — is refused too), or whose
// rank is known and above `max_rank` (-1: any rank). `provider` names the kernels in the
// reason: "dtype int64 (the Vulkan kernels are float32 only)".
void require_input_dtype(const KernelInfo& info, DType dtype, const std::string& provider,
                         int max_rank = -1, size_t count = static_cast<size_t>(-1));

// require_input_dtype for kernels with a variant per dtype: the checked inputs (present ones
// among the first `count`) must share one dtype, known at creation and among `allowed`; returns
// it. The reason names the choices: "dtype int64 (the CUDA Relu kernel takes float32, float16
// or bfloat16)".
DType require_one_input_dtype(const KernelInfo& info, const std::vector<DType>& allowed,
                              const std::string& provider, int max_rank = -1,
                              size_t count = static_cast<size_t>(-1));

// The element type of input i when known at creation (constant or declared), else Undefined.
inline DType known_dtype(const KernelInfo& info, size_t i) {
  if (const Tensor* c = info.constant_input(i)) return c->dtype();
  if (const ir::TypeInfo* t = info.input_type(i); t && t->kind == ir::TypeInfo::Kind::Tensor)
    return t->elem;
  return DType::Undefined;
}

// The rank of input i when known at creation (constant or declared), else -1.
inline int known_rank(const KernelInfo& info, size_t i) {
  if (const Tensor* c = info.constant_input(i)) return c->rank();
  if (const ir::TypeInfo* t = info.input_type(i);
      t && t->kind == ir::TypeInfo::Kind::Tensor && t->has_shape)
    return static_cast<int>(t->dims.size());
  return -1;
}

// The shape of input i when fully known at creation (constant, or declared without unknown
// dimensions); false otherwise.
inline bool known_shape(const KernelInfo& info, size_t i, Shape* out) {
  if (const Tensor* c = info.constant_input(i)) {
    *out = c->shape();
    return true;
  }
  const ir::TypeInfo* t = info.input_type(i);
  if (!t || t->kind != ir::TypeInfo::Kind::Tensor || !t->has_shape) return false;
  for (int64_t d : t->dims)
    if (d < 0) return false;
  *out = t->dims;
  return true;
}

// Softmax's view of a shape around its (normalized) axis: `outer` rows of `n` elements strided
// by `inner`. `flatten` is the opset < 13 rule (every dimension from the axis on is one row).
struct SoftmaxLayout {
  int64_t outer = 1, n = 1, inner = 1;
};
SoftmaxLayout softmax_layout(const Shape& shape, int64_t axis, bool flatten);

}  // namespace polyinfer
