// Ops that make a tensor from attributes or from a shape: Constant, ConstantOfShape, Range,
// EyeLike, OneHot.
#include <cmath>
#include <string>
#include <type_traits>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The value is built once; every run hands out the same tensor (kernels never write into their
// inputs, so sharing it is safe). The importer densifies sparse_value into a plain tensor.
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const KernelInfo& info) {
    int found = 0;
    auto take = [&](const char* name, auto make) {
      if (!info.has_attr(name)) return;
      ++found;
      value_ = make();
    };
    take("value", [&] { return *info.attr_tensor("value"); });
    take("sparse_value", [&] { return *info.attr_tensor("sparse_value"); });
    take("value_float", [&] { return Tensor::scalar<float>(info.attr_float("value_float")); });
    take("value_floats", [&] {
      const auto v = info.attr_floats("value_floats");
      return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
    });
    take("value_int", [&] { return Tensor::scalar<int64_t>(info.attr_int("value_int")); });
    take("value_ints", [&] {
      const auto v = info.attr_ints("value_ints");
      return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
    });
    take("value_string",
         [&] { return Tensor::scalar<std::string>(info.attr_string("value_string")); });
    take("value_strings", [&] {
      const auto v = info.attr_strings("value_strings");
      return Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v);
    });
    PI_CHECK(found == 1, InvalidModel, info.node().label(),
             ": needs exactly one value attribute, has ", found);
  }

  void run(KernelContext& ctx) override { ctx.set_output(0, value_); }

 private:
  Tensor value_;
};

class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const KernelInfo& info) : label_(info.node().label()) {
    if (const Tensor* v = info.attr_tensor("value")) {
      PI_CHECK(v->numel() == 1, InvalidModel, label_, ": value must hold one element, got ",
               v->describe());
      value_ = *v;
    } else {
      value_ = Tensor::scalar<float>(0.0f);
    }
  }

  void run(KernelContext& ctx) override {
    const std::vector<int64_t> shape = read_int_list(ctx.input(0), label_.c_str());
    for (int64_t d : shape)
      PI_CHECK(d >= 0, InvalidArgument, label_, ": shape ", int_list_str(shape),
               " has a negative dimension");
    Tensor& y = ctx.output(0, value_.dtype(), shape);
    dispatch(AllTypes{}, value_.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(y.data<T>(), y.numel(), value_.data<T>()[0]);
    });
  }

 private:
  std::string label_;
  Tensor value_;
};

// Range: n = max(ceil((limit - start) / delta), 0) elements start + i*delta. float16 and
// bfloat16 compute in the stash type (Range-27's `stash_type`: float by default, or double) and
// round each element to T (from double through float: Float16 converts from float only).
class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(const KernelInfo& info) : label_(info.node().label()) {
    const int64_t stash = info.attr_int("stash_type", 1);
    if (stash == static_cast<int64_t>(DType::Float64)) {
      stash_double_ = true;
    } else if (stash != static_cast<int64_t>(DType::Float32)) {
      info.unsupported("stash_type=" + std::to_string(stash));
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& s = ctx.input(0);
    const Tensor& l = ctx.input(1);
    const Tensor& d = ctx.input(2);
    PI_CHECK(s.dtype() == l.dtype() && s.dtype() == d.dtype(), InvalidArgument, label_,
             ": start, limit and delta must have one dtype, got ", s.describe(), ", ", l.describe(),
             ", ", d.describe());
    PI_CHECK(s.numel() == 1 && l.numel() == 1 && d.numel() == 1, InvalidArgument, label_,
             ": start, limit and delta must be scalars");
    using RangeTypes = TypeList<float, double, Float16, BFloat16, int16_t, int32_t, int64_t>;
    dispatch(RangeTypes{}, s.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T start = s.data<T>()[0], limit = l.data<T>()[0], delta = d.data<T>()[0];
      if constexpr (std::is_integral_v<T>) {
        PI_CHECK(delta != T(0), InvalidArgument, label_, ": delta is 0");
        // In wide integers, so that limit - start cannot overflow.
        const __int128 span = static_cast<__int128>(limit) - start;
        const __int128 q = span / delta + ((span % delta != 0) && ((span > 0) == (delta > 0)));
        const int64_t n = q > 0 ? static_cast<int64_t>(q) : 0;
        Tensor& y = ctx.output(0, s.dtype(), {n});
        T* out = y.data<T>();
        // Every element lies between start and limit, so this cannot overflow int64.
        for (int64_t i = 0; i < n; ++i)
          out[i] = static_cast<T>(static_cast<int64_t>(start) + i * static_cast<int64_t>(delta));
      } else if constexpr (std::is_floating_point_v<T>) {
        fill<T, T>(ctx, start, limit, delta);
      } else if (stash_double_) {
        fill<T, double>(ctx, start, limit, delta);
      } else {
        fill<T, float>(ctx, start, limit, delta);
      }
    });
  }

 private:
  // A floating-point range of T computed in S.
  template <class T, class S> void fill(KernelContext& ctx, T start, T limit, T delta) const {
    const S s0 = static_cast<S>(static_cast<compute_t<T>>(start));
    const S d = static_cast<S>(static_cast<compute_t<T>>(delta));
    const S l = static_cast<S>(static_cast<compute_t<T>>(limit));
    PI_CHECK(d != S(0), InvalidArgument, label_, ": delta is 0");
    const double c =
        std::ceil((static_cast<double>(l) - static_cast<double>(s0)) / static_cast<double>(d));
    PI_CHECK(!std::isnan(c) && c < 1e12, InvalidArgument, label_,
             ": the range has too many elements");
    const int64_t n = c > 0 ? static_cast<int64_t>(c) : 0;
    Tensor& y = ctx.output(0, dtype_of<T>(), {n});
    T* out = y.data<T>();
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<T>(static_cast<compute_t<T>>(s0 + static_cast<S>(i) * d));
  }

  std::string label_;
  bool stash_double_ = false;
};

// Ones on the k-th diagonal of a 2-D tensor shaped like the input; dtype defaults to the input's.
class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(const KernelInfo& info)
      : label_(info.node().label()), k_(info.attr_int("k", 0)) {
    if (info.has_attr("dtype")) {
      dtype_ = static_cast<DType>(info.attr_int("dtype"));
      if (!is_float(dtype_) && !is_integer(dtype_) && dtype_ != DType::Bool)
        info.unsupported("dtype=" + std::to_string(info.attr_int("dtype")));
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() == 2, InvalidArgument, label_, ": expected a 2-D input, got ", x.describe());
    const DType dt = dtype_ == DType::Undefined ? x.dtype() : dtype_;
    Tensor& y = ctx.output(0, dt, x.shape());
    const int64_t rows = x.dim(0), cols = x.dim(1);
    dispatch(NumericTypes{} + TypeList<bool>{}, dt, label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y.data<T>();
      std::fill_n(out, y.numel(), static_cast<T>(0));
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + k_;
        if (j >= 0 && j < cols) out[i * cols + j] = static_cast<T>(1);
      }
    });
  }

 private:
  std::string label_;
  int64_t k_;
  DType dtype_ = DType::Undefined;
};

// OneHot: indices of any numeric type, depth a numeric scalar, values = [off, on]. An index
// outside [-depth, depth) gives a row of off values, as the spec says.
class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const KernelInfo& info)
      : label_(info.node().label()), axis_(info.attr_int("axis", -1)) {}

  void run(KernelContext& ctx) override {
    const Tensor& ind = ctx.input(0);
    const Tensor& values = ctx.input(2);
    const double dd = read_scalar(ctx.input(1), label_.c_str());
    PI_CHECK(dd >= 1 && dd < 1e12, InvalidArgument, label_, ": depth ", dd,
             " must be a positive number");
    const int64_t depth = static_cast<int64_t>(dd);
    PI_CHECK(values.numel() == 2, InvalidArgument, label_,
             ": values must hold [off_value, on_value], got ", values.describe());
    const int64_t r = ind.rank();
    const int64_t axis = normalize_axis(axis_, r + 1, label_.c_str());
    Shape out(ind.shape().begin(), ind.shape().begin() + axis);
    out.push_back(depth);
    out.insert(out.end(), ind.shape().begin() + axis, ind.shape().end());

    std::vector<int64_t> idx(static_cast<size_t>(ind.numel()));
    dispatch(NumericTypes{}, ind.dtype(), label_.c_str(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      const I* p = ind.data<I>();
      for (size_t i = 0; i < idx.size(); ++i) {
        const double v = static_cast<double>(static_cast<compute_t<I>>(p[i]));
        // Out of range (including NaN) → -1: no on value in that row.
        int64_t k = -1;
        if (std::isfinite(v) && std::fabs(v) < 1e15) {
          const int64_t iv = static_cast<int64_t>(v);
          if (iv >= -depth && iv < depth) k = iv < 0 ? iv + depth : iv;
        }
        idx[i] = k;
      }
    });

    Tensor& y = ctx.output(0, values.dtype(), out);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= ind.shape()[d];
    for (int64_t d = axis; d < r; ++d) inner *= ind.shape()[d];
    dispatch(AllTypes{}, values.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T off = values.data<T>()[0], on = values.data<T>()[1];
      T* dst = y.data<T>();
      std::fill_n(dst, y.numel(), off);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t k = idx[o * inner + i];
          if (k >= 0) dst[(o * depth + k) * inner + i] = on;
        }
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

}  // namespace

PI_CPU_KERNEL(Constant, 1, 28, ConstantKernel);
PI_CPU_KERNEL(ConstantOfShape, 9, 28, ConstantOfShapeKernel);
PI_CPU_KERNEL(Range, 11, 28, RangeKernel);
PI_CPU_KERNEL(EyeLike, 9, 28, EyeLikeKernel);
PI_CPU_KERNEL(OneHot, 9, 28, OneHotKernel);

}  // namespace polyinfer
