#include "core/compare.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/dispatch.h"
#include "core/low_precision.h"

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

// The low-precision types compare by value: floats as the others (their NaN patterns and both
// zeros alike), the 4- and 2-bit integers exactly.
std::string compare_low_precision(const Tensor& g, const Tensor& e, const Tolerance& tol) {
  const DType t = g.dtype();
  const bool exact = is_low_precision_integer(t);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0, n = g.numel(); i < n; ++i) {
    const double x = lowp::get_value(t, g.raw_data(), i);
    const double y = lowp::get_value(t, e.raw_data(), i);
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    if (!exact && !std::isinf(x) && !std::isinf(y) &&
        std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y))
      continue;
    if (first < 0) first = i;
    ++bad;
  }
  if (!bad) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%lld of %lld values differ; first at %s: got %.9g, expected %.9g",
                static_cast<long long>(bad), static_cast<long long>(g.numel()),
                index_str(first, g.shape()).c_str(), lowp::get_value(t, g.raw_data(), first),
                lowp::get_value(t, e.raw_data(), first));
  return buf;
}

std::string compare_tensors(const Tensor& g, const Tensor& e, const Tolerance& tol) {
  if (g.dtype() != e.dtype())
    return std::string("dtype ") + dtype_name(g.dtype()) + ", expected " + dtype_name(e.dtype());
  if (g.shape() != e.shape())
    return "shape " + shape_str(g.shape()) + ", expected " + shape_str(e.shape());
  const Tensor gh = g.to(Device::cpu()), eh = e.to(Device::cpu());
  const int64_t n = gh.numel();
  if (is_low_precision_float(gh.dtype()) || is_low_precision_integer(gh.dtype()))
    return compare_low_precision(gh, eh, tol);
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

// Element i of t as a tensor of its own, [1].
Tensor element(const Tensor& t, int64_t i) {
  Tensor out = Tensor::empty(t.dtype(), {1});
  if (t.dtype() == DType::String) {
    out.data<std::string>()[0] = t.data<std::string>()[i];
  } else {
    const size_t es = dtype_size(t.dtype());
    std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + i * es, es);
  }
  return out;
}

// Key i of a map, as text: for lookups (keys of one dtype never collide) and for messages.
std::string key_text(const Tensor& keys, int64_t i) {
  if (keys.dtype() == DType::String) return keys.data<std::string>()[i];
  return dispatch(IntTypes{}, keys.dtype(), "map key", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return std::to_string(keys.data<T>()[i]);
  });
}

// Maps match when they hold the same keys, in any order, and each key's values match as
// tensor elements do.
std::string compare_maps(const Value& got, const Value& expected, const Tolerance& tol) {
  const Tensor &gk = got.map_keys(), &ek = expected.map_keys();
  const Tensor &gv = got.map_values(), &ev = expected.map_values();
  if (gk.dtype() != ek.dtype() || gv.dtype() != ev.dtype())
    return "got " + got.describe() + ", expected " + expected.describe();
  if (gk.numel() != ek.numel())
    return "map of " + std::to_string(gk.numel()) + " entries, expected " +
           std::to_string(ek.numel());
  std::unordered_map<std::string, int64_t> where;
  for (int64_t i = 0; i < gk.numel(); ++i) where[key_text(gk, i)] = i;
  const auto quoted = [&](const std::string& k) {
    return ek.dtype() == DType::String ? "'" + k + "'" : k;
  };
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < ek.numel(); ++i) {
    const std::string k = key_text(ek, i);
    const auto it = where.find(k);
    if (it == where.end()) return "key " + quoted(k) + " is missing";
    const std::string d = compare_tensors(element(gv, it->second), element(ev, i), tol);
    if (d.empty()) continue;
    if (!bad++) {
      const auto got_at = d.find("got ");
      first = "key " + quoted(k) + ": " + (got_at == std::string::npos ? d : d.substr(got_at));
    }
  }
  if (!bad) return "";
  return std::to_string(bad) + " of " + std::to_string(ek.numel()) + " values differ; first at " +
         first;
}

}  // namespace

std::string compare_values(const Value& got, const Value& expected, const Tolerance& tol) {
  if (got.kind() != expected.kind())
    return "got " + got.describe() + ", expected " + expected.describe();
  switch (expected.kind()) {
    case Value::Kind::None: return "";
    case Value::Kind::Tensor: return compare_tensors(got.tensor(), expected.tensor(), tol);
    case Value::Kind::Map: return compare_maps(got, expected, tol);
    case Value::Kind::Sequence: {
      if (got.holds_maps() != expected.holds_maps())
        return "got " + got.describe() + ", expected " + expected.describe();
      if (expected.holds_maps()) {
        const auto& a = got.maps();
        const auto& b = expected.maps();
        if (a.size() != b.size())
          return "sequence of " + std::to_string(a.size()) + " maps, expected " +
                 std::to_string(b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          std::string d = compare_maps(a[i], b[i], tol);
          if (!d.empty()) return "item " + std::to_string(i) + ": " + d;
        }
        return "";
      }
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
