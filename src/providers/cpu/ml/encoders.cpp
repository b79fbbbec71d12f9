// Encoders of ai.onnx.ml: OneHotEncoder, LabelEncoder (opsets 1, 2 and 4) and CategoryMapper.
//
// LabelEncoder and CategoryMapper are one mechanism: a lookup from the input's elements (strings,
// integers or floats) to an index, and the index picks the output's value from a list (the
// default where the key is absent). Float keys match by value (0 and -0 alike) and a NaN key
// matches every NaN (opset 4's rule; opset 2 asked for bitwise equality, which only differs for
// the zeros and NaN payloads). A repeated key: the last one counts from opset 4 on, as the
// specification says; the first before (as ONNX Runtime builds its maps).
#include <cmath>
#include <unordered_map>

#include "providers/cpu/ml/ml_common.h"

namespace polyinfer::ml {
namespace {

// A key -> index lookup for one key type.
class Lookup {
 public:
  DType key_dtype = DType::Undefined;  // the input type it takes
  bool last_wins = false;
  int64_t size = 0;  // keys added (the indices are 0 to size - 1)

  void add(const std::string& k, int64_t i) { put(s_, k, i); }
  void add_int(int64_t k, int64_t i) { put(i_, k, i); }
  void add_float(double k, int64_t i) {
    if (std::isnan(k)) {
      size = std::max(size, i + 1);
      if (nan_ < 0 || last_wins) nan_ = i;
    } else {
      put(f_, k, i);
    }
  }
  // Keys from a tensor attribute of any key type.
  void add_tensor(const Tensor& t) {
    key_dtype = t.dtype();
    if (t.dtype() == DType::String) {
      for (int64_t i = 0; i < t.numel(); ++i) add(t.data<std::string>()[i], i);
    } else if (is_float(t.dtype())) {
      const std::vector<double> v = tensor_values(t);
      for (size_t i = 0; i < v.size(); ++i) add_float(v[i], static_cast<int64_t>(i));
    } else {
      std::vector<int64_t> v(static_cast<size_t>(t.numel()));
      read_as<int64_t>(t, 0, t.numel(), v.data());
      for (size_t i = 0; i < v.size(); ++i) add_int(v[i], static_cast<int64_t>(i));
    }
  }

  // idx[i] = the index of x's element i, or -1.
  void find(const Tensor& x, int64_t* idx) const {
    const int64_t n = x.numel();
    if (x.dtype() == DType::String) {
      const std::string* p = x.data<std::string>();
      for (int64_t i = 0; i < n; ++i) idx[i] = get(s_, p[i]);
      return;
    }
    if (is_float(x.dtype())) {
      std::vector<double> v(static_cast<size_t>(n));
      read_as<double>(x, 0, n, v.data());
      for (int64_t i = 0; i < n; ++i)
        idx[i] = std::isnan(v[static_cast<size_t>(i)]) ? nan_ : get(f_, v[static_cast<size_t>(i)]);
      return;
    }
    std::vector<int64_t> v(static_cast<size_t>(n));
    read_as<int64_t>(x, 0, n, v.data());
    for (int64_t i = 0; i < n; ++i) idx[i] = get(i_, v[static_cast<size_t>(i)]);
  }

 private:
  template <class M, class K> void put(M& m, const K& k, int64_t i) {
    size = std::max(size, i + 1);
    if (last_wins) m[k] = i;
    else
      m.emplace(k, i);
  }
  template <class M, class K> static int64_t get(const M& m, const K& k) {
    auto it = m.find(k);
    return it == m.end() ? -1 : it->second;
  }
  std::unordered_map<std::string, int64_t> s_;
  std::unordered_map<int64_t, int64_t> i_;
  std::unordered_map<double, int64_t> f_;
  int64_t nan_ = -1;
};

// A lookup and the values (and default) its indices select.
struct Mapping {
  Lookup keys;
  Tensor values;    // 1-D
  Tensor fallback;  // one element of values' type

  void run(KernelContext& ctx, const Tensor& x) const {
    PI_CHECK(x.dtype() == keys.key_dtype, InvalidArgument, ctx.node().label(), ": the input is ",
             dtype_name(x.dtype()), " but the keys are ", dtype_name(keys.key_dtype));
    std::vector<int64_t> idx(static_cast<size_t>(x.numel()));
    keys.find(x, idx.data());
    Tensor& y = ctx.output(0, values.dtype(), x.shape());
    const std::string who = ctx.node().label();
    dispatch(AllTypes{}, values.dtype(), who.c_str(), [&](auto tag) {
      using V = typename decltype(tag)::type;
      const V* v = values.data<V>();
      const V& def = fallback.data<V>()[0];
      V* out = y.data<V>();
      for (size_t i = 0; i < idx.size(); ++i) out[i] = idx[i] >= 0 ? v[idx[i]] : def;
    });
  }
};

Tensor strings_tensor(const std::vector<std::string>& v) {
  return Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v);
}
Tensor ints_tensor(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// The two directions of a list of strings paired with a list of integers: string -> integer
// (default `def_int`) and integer -> string (default `def_string`).
void string_int_pair(const std::vector<std::string>& strings, const std::vector<int64_t>& ints,
                     int64_t def_int, const std::string& def_string, Mapping& to_int,
                     Mapping& to_string) {
  to_int.keys.key_dtype = DType::String;
  for (size_t i = 0; i < strings.size(); ++i) to_int.keys.add(strings[i], static_cast<int64_t>(i));
  to_int.values = ints_tensor(ints);
  to_int.fallback = Tensor::from_vector<int64_t>({1}, {def_int});
  to_string.keys.key_dtype = DType::Int64;
  for (size_t i = 0; i < ints.size(); ++i) to_string.keys.add_int(ints[i], static_cast<int64_t>(i));
  to_string.values = strings_tensor(strings);
  to_string.fallback = Tensor::from_vector<std::string>({1}, {def_string});
}

class LabelEncoderKernel final : public Kernel {
 public:
  explicit LabelEncoderKernel(const KernelInfo& info) {
    const std::string who = info.node().label();
    if (info.opset() < 2) {
      // classes_strings: a string becomes its index; an index becomes its string.
      const std::vector<std::string> classes = info.attr_strings("classes_strings");
      std::vector<int64_t> index(classes.size());
      for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int64_t>(i);
      string_int_pair(classes, index, info.attr_int("default_int64", -1),
                      info.attr_string("default_string", "_Unused"), to_int_, to_string_);
      two_way_ = true;
      return;
    }
    Mapping& m = to_int_;
    m.keys.last_wins = info.opset() >= 4;
    int keys = 0, values = 0;
    if (const Tensor* t = info.attr_tensor("keys_tensor")) {
      m.keys.add_tensor(*t);
      ++keys;
    }
    if (info.has_attr("keys_strings")) {
      const auto k = info.attr_strings("keys_strings");
      m.keys.key_dtype = DType::String;
      for (size_t i = 0; i < k.size(); ++i) m.keys.add(k[i], static_cast<int64_t>(i));
      ++keys;
    }
    if (info.has_attr("keys_int64s")) {
      const auto k = info.attr_ints("keys_int64s");
      m.keys.key_dtype = DType::Int64;
      for (size_t i = 0; i < k.size(); ++i) m.keys.add_int(k[i], static_cast<int64_t>(i));
      ++keys;
    }
    if (info.has_attr("keys_floats")) {
      const auto k = info.attr_floats("keys_floats");
      m.keys.key_dtype = DType::Float32;
      for (size_t i = 0; i < k.size(); ++i) m.keys.add_float(k[i], static_cast<int64_t>(i));
      ++keys;
    }
    if (const Tensor* t = info.attr_tensor("values_tensor")) {
      m.values = t->reshaped({t->numel()});
      ++values;
    }
    if (info.has_attr("values_strings")) {
      m.values = strings_tensor(info.attr_strings("values_strings"));
      ++values;
    }
    if (info.has_attr("values_int64s")) {
      m.values = ints_tensor(info.attr_ints("values_int64s"));
      ++values;
    }
    if (info.has_attr("values_floats")) {
      const auto v = info.attr_floats("values_floats");
      m.values = Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
      ++values;
    }
    PI_CHECK(keys == 1 && values == 1, InvalidModel, who,
             ": exactly one keys_* and one values_* attribute must be given (", keys, " and ",
             values, " are)");
    PI_CHECK(m.keys.size == m.values.numel(), InvalidModel, who, ": ", m.keys.size, " keys but ",
             m.values.numel(), " values");
    const DType vt = m.values.dtype();
    PI_CHECK(vt == DType::String || vt == DType::Int64 || vt == DType::Int32 ||
                 vt == DType::Int16 || vt == DType::Float32 || vt == DType::Float64,
             InvalidModel, who, ": values of type ", dtype_name(vt), " are not supported");
    const DType kt = m.keys.key_dtype;
    PI_CHECK(kt == DType::String || kt == DType::Int64 || kt == DType::Int32 ||
                 kt == DType::Int16 || kt == DType::Float32 || kt == DType::Float64,
             InvalidModel, who, ": keys of type ", dtype_name(kt), " are not supported");
    if (const Tensor* d = info.attr_tensor("default_tensor")) {
      PI_CHECK(d->dtype() == vt && d->numel() == 1, InvalidModel, who,
               ": default_tensor must be one ", dtype_name(vt), " value, not ", d->describe());
      m.fallback = d->reshaped({1});
    } else if (vt == DType::String) {
      m.fallback =
          Tensor::from_vector<std::string>({1}, {info.attr_string("default_string", "_Unused")});
    } else {
      // The default of the values' kind, in their type: default_float for floats, default_int64
      // for integers.
      const double d = is_float(vt) ? static_cast<double>(info.attr_float("default_float", -0.f))
                                    : static_cast<double>(info.attr_int("default_int64", -1));
      m.fallback = Tensor::empty(vt, {1});
      dispatch(TypeList<float, double, int64_t, int32_t, int16_t>{}, vt, who.c_str(),
               [&](auto tag) {
                 using V = typename decltype(tag)::type;
                 m.fallback.data<V>()[0] = static_cast<V>(d);
               });
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (two_way_) {
      require_dtype(ctx, x, {DType::String, DType::Int64});
      return (x.dtype() == DType::String ? to_int_ : to_string_).run(ctx, x);
    }
    to_int_.run(ctx, x);
  }

 private:
  Mapping to_int_, to_string_;
  bool two_way_ = false;
};

// CategoryMapper: cats_strings[i] <-> cats_int64s[i], strings to integers or back.
class CategoryMapperKernel final : public Kernel {
 public:
  explicit CategoryMapperKernel(const KernelInfo& info) {
    const auto strings = info.attr_strings("cats_strings");
    const auto ints = info.attr_ints("cats_int64s");
    PI_CHECK(strings.size() == ints.size(), InvalidModel, info.node().label(),
             ": cats_strings has ", strings.size(), " entries but cats_int64s ", ints.size());
    string_int_pair(strings, ints, info.attr_int("default_int64", -1),
                    info.attr_string("default_string", "_Unused"), to_int_, to_string_);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::String, DType::Int64});
    (x.dtype() == DType::String ? to_int_ : to_string_).run(ctx, x);
  }

 private:
  Mapping to_int_, to_string_;
};

// OneHotEncoder: each element becomes a row of zeros with a 1 at its category (integers and
// floats, truncated to integers, look up cats_int64s; strings cats_strings). An element of no
// category gives a row of zeros, or an error when `zeros` is 0.
class OneHotEncoderKernel final : public Kernel {
 public:
  explicit OneHotEncoderKernel(const KernelInfo& info) {
    const auto ints = info.attr_ints("cats_int64s");
    const auto strings = info.attr_strings("cats_strings");
    PI_CHECK(ints.empty() != strings.empty(), InvalidModel, info.node().label(),
             ": exactly one of cats_int64s and cats_strings must list the categories");
    lookup_.key_dtype = strings.empty() ? DType::Int64 : DType::String;
    for (size_t i = 0; i < ints.size(); ++i) lookup_.add_int(ints[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < strings.size(); ++i) lookup_.add(strings[i], static_cast<int64_t>(i));
    k_ = static_cast<int64_t>(std::max(ints.size(), strings.size()));
    zeros_ = info.attr_int("zeros", 1) != 0;
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::string who = ctx.node().label();
    if (lookup_.key_dtype == DType::String) {
      require_dtype(ctx, x, {DType::String});
    } else {
      require_dtype(ctx, x, {DType::Int64, DType::Int32, DType::Float32, DType::Float64});
    }
    const int64_t n = x.numel();
    std::vector<int64_t> idx(static_cast<size_t>(n));
    if (x.dtype() == DType::String || x.dtype() == DType::Int64) {
      lookup_.find(x, idx.data());
    } else {
      // Truncated toward zero as a cast would; NaN and values beyond int64 have no category.
      std::vector<double> v(static_cast<size_t>(n));
      read_as<double>(x, 0, n, v.data());
      std::vector<int64_t> iv(static_cast<size_t>(n));
      std::vector<uint8_t> ok(static_cast<size_t>(n));
      for (size_t i = 0; i < v.size(); ++i) {
        ok[i] = std::fabs(v[i]) < 9.2e18;
        iv[i] = ok[i] ? static_cast<int64_t>(v[i]) : 0;
      }
      lookup_.find(Tensor::from_vector<int64_t>({n}, iv), idx.data());
      for (size_t i = 0; i < v.size(); ++i)
        if (!ok[i]) idx[i] = -1;
    }
    Shape shape = x.shape();
    shape.push_back(k_);
    float* y = ctx.output(0, DType::Float32, shape).data<float>();
    std::fill(y, y + n * k_, 0.f);
    for (int64_t i = 0; i < n; ++i) {
      if (idx[static_cast<size_t>(i)] >= 0) y[i * k_ + idx[static_cast<size_t>(i)]] = 1.f;
      else
        PI_CHECK(zeros_, InvalidArgument, who, ": element ", i,
                 " of the input is none of the categories (and zeros=0 forbids that)");
    }
  }

 private:
  Lookup lookup_;
  int64_t k_ = 0;
  bool zeros_ = true;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", LabelEncoder, 1, 5, LabelEncoderKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", CategoryMapper, 1, 5, CategoryMapperKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", OneHotEncoder, 1, 5, OneHotEncoderKernel);

}  // namespace polyinfer::ml
