#include "core/shape_util.h"

#include <algorithm>

#include "core/dispatch.h"

namespace polyinfer {

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* who, bool inclusive) {
  const int64_t hi = inclusive ? rank + 1 : rank;
  PI_CHECK(axis >= -hi && axis < hi, InvalidArgument, who, ": axis ", axis,
           " is out of range for rank ", rank);
  return axis < 0 ? axis + hi : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* who) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    PI_CHECK(da == db || da == 1 || db == 1, ShapeMismatch, who, ": shapes ", shape_str(a), " and ",
             shape_str(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes, const char* who) {
  Shape out;
  for (const auto& s : shapes) out = broadcast_shapes(out, s, who);
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0);
  const auto own = strides_of(in);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[lead + i] = in[i] == 1 ? 0 : own[i];
  return s;
}

std::vector<int64_t> read_int_list(const Tensor& t, const char* who) {
  PI_CHECK(t.rank() <= 1, InvalidArgument, who, ": expected a 1-D integer tensor, got ",
           t.describe());
  Tensor h = t.to(Device::cpu());
  std::vector<int64_t> out(static_cast<size_t>(h.numel()));
  if (h.dtype() == DType::Int64) {
    std::copy_n(h.data<int64_t>(), out.size(), out.begin());
  } else if (h.dtype() == DType::Int32) {
    std::copy_n(h.data<int32_t>(), out.size(), out.begin());
  } else {
    fail(ErrorCode::InvalidArgument, who, ": expected int32 or int64 values, got ", t.describe());
  }
  return out;
}

double read_scalar(const Tensor& t, const char* who) {
  PI_CHECK(t.numel() == 1, InvalidArgument, who, ": expected a single value, got ", t.describe());
  Tensor h = t.to(Device::cpu());
  return dispatch(NumericTypes{} + TypeList<bool>{}, h.dtype(), who, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(static_cast<compute_t<T>>(h.data<T>()[0]));
  });
}

}  // namespace polyinfer
