#include "runtime/kernel_checks.h"

#include <algorithm>

namespace polyinfer {

void require_input_dtype(const KernelInfo& info, DType want, const std::string& provider,
                         int max_rank, size_t count) {
  const std::string only = " (the " + provider + " kernels are " +
                           (want == DType::Float32 ? "float32" : dtype_name(want)) + " only)";
  for (size_t i = 0; i < info.num_inputs() && i < count; ++i) {
    if (!info.has_input(i)) continue;
    DType dtype = DType::Undefined;
    int rank = -1;
    if (const Tensor* c = info.constant_input(i)) {
      dtype = c->dtype();
      rank = c->rank();
    } else if (const ir::TypeInfo* t = info.input_type(i);
               t && t->kind == ir::TypeInfo::Kind::Tensor) {
      dtype = t->elem;
      if (t->has_shape) rank = static_cast<int>(t->dims.size());
    }
    if (dtype == DType::Undefined)
      info.unsupported("input " + std::to_string(i) + " of unknown dtype" + only);
    if (dtype != want) info.unsupported(std::string("dtype ") + dtype_name(dtype) + only);
    if (max_rank >= 0 && rank > max_rank)
      info.unsupported("rank " + std::to_string(rank) + " (this " + provider +
                       " kernel takes rank <= " + std::to_string(max_rank) + ")");
  }
}

DType require_one_input_dtype(const KernelInfo& info, const std::vector<DType>& allowed,
                              const std::string& provider, int max_rank, size_t count) {
  std::string takes;
  for (size_t k = 0; k < allowed.size(); ++k)
    takes += std::string(k == 0                    ? ""
                         : k + 1 == allowed.size() ? " or "
                                                   : ", ") +
             dtype_name(allowed[k]);
  const std::string why = " (the " + provider + " kernel takes " + takes + ")";
  size_t first = 0;
  while (first < info.num_inputs() && first < count && !info.has_input(first)) ++first;
  const DType dtype = known_dtype(info, first);
  if (dtype == DType::Undefined)
    info.unsupported("input " + std::to_string(first) + " of unknown dtype" + why);
  if (std::find(allowed.begin(), allowed.end(), dtype) == allowed.end())
    info.unsupported(std::string("dtype ") + dtype_name(dtype) + why);
  require_input_dtype(info, dtype, provider, max_rank, count);
  return dtype;
}

SoftmaxLayout softmax_layout(const Shape& s, int64_t axis, bool flatten) {
  SoftmaxLayout l;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis) l.outer *= s[size_t(d)];
    else if (d == axis || flatten)
      l.n *= s[size_t(d)];
    else
      l.inner *= s[size_t(d)];
  }
  return l;
}

}  // namespace polyinfer
