// Per-feature preprocessing of ai.onnx.ml (opset 1): Scaler, Normalizer, Imputer, Binarizer.
// The feature of an element is its index along the last dimension.
#include <cmath>

#include "providers/cpu/ml/ml_common.h"

namespace polyinfer::ml {
namespace {

// Elements per thread below which a loop runs on one thread.
constexpr int64_t kGrain = 1 << 15;

// Checks that a per-feature list has 1 value (for every feature) or one per feature.
void check_per_feature(const KernelContext& ctx, size_t size, int64_t features, const char* what) {
  PI_CHECK(size == 1 || static_cast<int64_t>(size) == features, ShapeMismatch, ctx.node().label(),
           ": ", what, " has ", size, " values; it needs 1 or one per feature (", features, ")");
}

int64_t last_dim(const Tensor& x) { return x.rank() == 0 ? 1 : x.dim(-1); }

// Scaler: y = (x - offset) * scale, float.
class ScalerKernel final : public Kernel {
 public:
  explicit ScalerKernel(const KernelInfo& info) {
    const std::vector<float> o = info.attr_floats("offset"), s = info.attr_floats("scale");
    offset_.assign(o.begin(), o.end());
    scale_.assign(s.begin(), s.end());
    if (offset_.empty()) offset_ = {0.0};
    if (scale_.empty()) scale_ = {1.0};
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const int64_t c = last_dim(x);
    check_per_feature(ctx, offset_.size(), c, "offset");
    check_per_feature(ctx, scale_.size(), c, "scale");
    float* y = ctx.output(0, DType::Float32, x.shape()).data<float>();
    const bool one_o = offset_.size() == 1, one_s = scale_.size() == 1;
    fast::parallel_for(x.numel(), ctx.threads(), kGrain, [&](int64_t b, int64_t e) {
      std::vector<double> v(static_cast<size_t>(e - b));
      read_as<double>(x, b, e - b, v.data());
      for (int64_t i = b; i < e; ++i) {
        const size_t j = c > 0 ? static_cast<size_t>(i % c) : 0;
        y[i] = static_cast<float>((v[static_cast<size_t>(i - b)] - offset_[one_o ? 0 : j]) *
                                  scale_[one_s ? 0 : j]);
      }
    });
  }

 private:
  std::vector<double> offset_, scale_;
};

// Normalizer: each row (along axis 1, or the whole of a 1-D input) divided by its largest
// absolute value (MAX), the sum of its absolute values (L1) or its Euclidean norm (L2); a row
// whose divisor is 0 is copied. MAX takes the absolute values as scikit-learn and the ONNX
// reference do (ONNX Runtime divides by the signed maximum).
class NormalizerKernel final : public Kernel {
 public:
  explicit NormalizerKernel(const KernelInfo& info) {
    const std::string norm = info.attr_string("norm", "MAX");
    if (norm == "MAX") norm_ = 0;
    else if (norm == "L1")
      norm_ = 1;
    else if (norm == "L2")
      norm_ = 2;
    else
      fail(ErrorCode::InvalidModel, info.node().label(), ": norm '", norm,
           "' is not one of MAX, L1, L2");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    // [outer, len, inner]: rows of `len` values `inner` apart.
    int64_t outer = 1, len = x.rank() == 0 ? 1 : x.dim(0), inner = 1;
    if (x.rank() >= 2) {
      outer = x.dim(0);
      len = x.dim(1);
      for (int i = 2; i < x.rank(); ++i) inner *= x.dim(i);
    }
    float* y = ctx.output(0, DType::Float32, x.shape()).data<float>();
    const int64_t rows = outer * inner;
    fast::parallel_for(rows, ctx.threads(),
                       std::max<int64_t>(1, kGrain / std::max<int64_t>(1, len)),
                       [&](int64_t b, int64_t e) {
                         std::vector<double> v(static_cast<size_t>(len));
                         for (int64_t r = b; r < e; ++r) {
                           const int64_t base = (r / inner) * len * inner + r % inner;
                           if (inner == 1) {
                             read_as<double>(x, base, len, v.data());
                           } else {
                             for (int64_t k = 0; k < len; ++k)
                               read_as<double>(x, base + k * inner, 1, &v[static_cast<size_t>(k)]);
                           }
                           double d = 0;
                           for (double a : v) {
                             if (norm_ == 0) d = std::max(d, std::fabs(a));
                             else if (norm_ == 1)
                               d += std::fabs(a);
                             else
                               d += a * a;
                           }
                           if (norm_ == 2) d = std::sqrt(d);
                           for (int64_t k = 0; k < len; ++k) {
                             const double a = v[static_cast<size_t>(k)];
                             y[base + k * inner] = static_cast<float>(d != 0 ? a / d : a);
                           }
                         }
                       });
  }

 private:
  int norm_ = 0;
};

// Imputer: elements equal to the replaced value (NaN: every NaN) become the imputed value of
// their feature. Floating-point inputs take the *_float(s) attributes, integer ones *_int64(s).
class ImputerKernel final : public Kernel {
 public:
  explicit ImputerKernel(const KernelInfo& info) {
    const std::vector<float> f = info.attr_floats("imputed_value_floats");
    floats_.assign(f.begin(), f.end());
    ints_ = info.attr_ints("imputed_value_int64s");
    replaced_float_ = info.attr_float("replaced_value_float", 0.f);
    replaced_int_ = info.attr_int("replaced_value_int64", 0);
    PI_CHECK(!floats_.empty() || !ints_.empty(), InvalidModel, info.node().label(),
             ": one of imputed_value_floats and imputed_value_int64s must be given");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const int64_t c = last_dim(x);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const std::string who = ctx.node().label();
    dispatch(MlNumeric{}, x.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr bool is_float = std::is_floating_point_v<T>;
      const size_t size = is_float ? floats_.size() : ints_.size();
      PI_CHECK(size > 0, InvalidArgument, who, ": a ", dtype_name(x.dtype()),
               " input needs imputed_value_", is_float ? "floats" : "int64s");
      check_per_feature(ctx, size, c, is_float ? "imputed_value_floats" : "imputed_value_int64s");
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const bool nan = is_float && std::isnan(replaced_float_);
      for (int64_t i = 0, n = x.numel(); i < n; ++i) {
        const size_t j = size == 1 || c == 0 ? 0 : static_cast<size_t>(i % c);
        bool hit;
        if constexpr (is_float)
          hit = nan ? std::isnan(in[i]) : in[i] == static_cast<T>(replaced_float_);
        else
          hit = static_cast<int64_t>(in[i]) == replaced_int_;
        if constexpr (is_float) out[i] = hit ? static_cast<T>(floats_[j]) : in[i];
        else
          out[i] = hit ? static_cast<T>(ints_[j]) : in[i];
      }
    });
  }

 private:
  std::vector<double> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_ = 0;
  int64_t replaced_int_ = 0;
};

// Binarizer: 1 where x > threshold, else 0 (NaN too), in the input's type.
class BinarizerKernel final : public Kernel {
 public:
  explicit BinarizerKernel(const KernelInfo& info)
      : threshold_(info.attr_float("threshold", 0.f)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const std::string who = ctx.node().label();
    dispatch(MlNumeric{}, x.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i)
        out[i] = static_cast<double>(in[i]) > threshold_ ? T(1) : T(0);
    });
  }

 private:
  double threshold_;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", Scaler, 1, 5, ScalerKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", Normalizer, 1, 5, NormalizerKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", Imputer, 1, 5, ImputerKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", Binarizer, 1, 5, BinarizerKernel);

}  // namespace polyinfer::ml
