#include "core/compare.h"

#include <cmath>

#include "core/dispatch.h"

namespace polyinfer {

namespace {

std::string index_str(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] > 0) {
      idx[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  return shape_str(idx);
}

std::string compare_tensors(const Tensor& g, const Tensor& e, const Tolerance& tol) {
  if (g.dtype() != e.dtype())
    return std::string("dtype ") + dtype_name(g.dtype()) + ", expected " + dtype_name(e.dtype());
  if (g.shape() != e.shape())
    return "shape " + shape_str(g.shape()) + ", expected " + shape_str(e.shape());
  const Tensor gh = g.to(Device::cpu()), eh = e.to(Device::cpu());
  const int64_t n = gh.numel();
  return dispatch(AllTypes{}, gh.dtype(), "compare", [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    const T* a = gh.data<T>();
    const T* b = eh.data<T>();
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      int64_t bad = 0, worst = -1;
      double worst_excess = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(static_cast<compute_t<T>>(a[i]));
        const double y = static_cast<double>(static_cast<compute_t<T>>(b[i]));
        if (std::isnan(x) && std::isnan(y)) continue;
        if (std::isinf(y) || std::isinf(x)) {
          if (x == y) continue;
        } else if (std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y)) {
          continue;
        }
        ++bad;
        const double excess = std::isnan(x - y) ? INFINITY : std::fabs(x - y);
        if (worst < 0 || excess > worst_excess) {
          worst = i;
          worst_excess = excess;
        }
      }
      if (!bad) return "";
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "%lld of %lld values differ; worst at %s: got %.9g, expected %.9g",
                    static_cast<long long>(bad), static_cast<long long>(n),
                    index_str(worst, gh.shape()).c_str(),
                    static_cast<double>(static_cast<compute_t<T>>(a[worst])),
                    static_cast<double>(static_cast<compute_t<T>>(b[worst])));
      return buf;
    } else {
      int64_t bad = 0, first = -1;
      for (int64_t i = 0; i < n; ++i)
        if (!(a[i] == b[i])) {
          if (first < 0) first = i;
          ++bad;
        }
      if (!bad) return "";
      std::string got, exp;
      if constexpr (std::is_same_v<T, std::string>) {
        got = "'" + a[first] + "'";
        exp = "'" + b[first] + "'";
      } else {
        got = std::to_string(a[first]);
        exp = std::to_string(b[first]);
      }
      return std::to_string(bad) + " of " + std::to_string(n) + " values differ; first at " +
             index_str(first, gh.shape()) + ": got " + got + ", expected " + exp;
    }
  });
}

}  // namespace

std::string compare_values(const Value& got, const Value& expected, const Tolerance& tol) {
  if (got.kind() != expected.kind())
    return "got " + got.describe() + ", expected " + expected.describe();
  switch (expected.kind()) {
    case Value::Kind::None: return "";
    case Value::Kind::Tensor: return compare_tensors(got.tensor(), expected.tensor(), tol);
    case Value::Kind::Sequence: {
      const auto& a = got.items();
      const auto& b = expected.items();
      if (a.size() != b.size())
        return "sequence of " + std::to_string(a.size()) + " items, expected " +
               std::to_string(b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        std::string d = compare_tensors(a[i], b[i], tol);
        if (!d.empty()) return "item " + std::to_string(i) + ": " + d;
      }
      return "";
    }
  }
  return "";
}

}  // namespace polyinfer
