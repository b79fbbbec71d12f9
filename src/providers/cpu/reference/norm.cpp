// Normalizations: BatchNormalization, InstanceNormalization, LayerNormalization, LRN and
// MeanVarianceNormalization.
#include <algorithm>
#include <cmath>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The elements of a float tensor of any float dtype, as A.
template <class A> std::vector<A> float_values(const Tensor& t, const char* who) {
  return dispatch(FloatTypes{}, t.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    std::vector<A> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = A(compute_t<T>(p[i]));
    return v;
  });
}

// Maps every element of `shape` to the flat index of its group, where a group collects the
// elements that differ only along the axes with reduce[d] true. Returns the group count.
int64_t group_elements(const Shape& shape, const std::vector<bool>& reduce,
                       std::vector<int64_t>& group) {
  const int64_t n = shape_numel(shape);
  group.assign(static_cast<size_t>(n), 0);
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t groups = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduce[d]) groups *= shape[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t g = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduce[d]) g = g * shape[d] + idx[d];
    group[i] = g;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return groups;
}

// Per-group mean and population variance of x (as A).
template <class A, class T>
void group_moments(const T* x, const std::vector<int64_t>& group, int64_t groups,
                   std::vector<A>& mean, std::vector<A>& var) {
  mean.assign(static_cast<size_t>(groups), A(0));
  var.assign(static_cast<size_t>(groups), A(0));
  std::vector<int64_t> count(static_cast<size_t>(groups), 0);
  for (size_t i = 0; i < group.size(); ++i) {
    mean[group[i]] += A(x[i]);
    ++count[group[i]];
  }
  for (int64_t g = 0; g < groups; ++g) mean[g] /= A(std::max<int64_t>(count[g], 1));
  for (size_t i = 0; i < group.size(); ++i) {
    const A d = A(x[i]) - mean[group[i]];
    var[group[i]] += d * d;
  }
  for (int64_t g = 0; g < groups; ++g) var[g] /= A(std::max<int64_t>(count[g], 1));
}

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(const KernelInfo& info)
      : eps_(info.attr_float("epsilon", 1e-5f)),
        momentum_(info.attr_float("momentum", 0.9f)),
        training_(info.opset() >= 14 && info.attr_int("training_mode", 0) != 0),
        who_(info.node().label()) {
    if (info.attr_int("spatial", 1) != 1) info.unsupported("spatial=0");
    if (info.opset() < 7 && info.attr_int("is_test", 0) == 0) info.unsupported("is_test=0");
    if (info.opset() < 14 && info.has_output(1))
      info.unsupported("training outputs before opset 14");
    if (info.opset() >= 14 && !training_ && info.has_output(1))
      info.unsupported("running statistics outputs without training_mode");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who_, ": input must be [N, C, ...], got ", x.describe());
    const int64_t C = x.dim(1);
    for (size_t i = 1; i <= 4; ++i)
      PI_CHECK(ctx.input(i).shape() == Shape{C}, ShapeMismatch, who_, ": input ", i,
               " must have shape [", C, "], got ", ctx.input(i).describe());
    std::vector<bool> reduce(x.shape().size(), true);
    reduce[1] = false;
    std::vector<int64_t> group;
    group_elements(x.shape(), reduce, group);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(FloatTypes{}, x.dtype(), "BatchNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const auto scale = float_values<A>(ctx.input(1), who_.c_str());
      const auto bias = float_values<A>(ctx.input(2), who_.c_str());
      auto mean = float_values<A>(ctx.input(3), who_.c_str());
      auto var = float_values<A>(ctx.input(4), who_.c_str());
      const T* xp = x.data<T>();
      if (training_) {
        std::vector<A> bmean, bvar;
        group_moments<A>(xp, group, C, bmean, bvar);
        const A m = A(momentum_);
        for (int i = 1; i <= 2; ++i) {
          if (!ctx.wants_output(i)) continue;
          const Tensor& src = ctx.input(2 + i);
          Tensor& out = ctx.output(i, src.dtype(), src.shape());
          const auto& run_stat = i == 1 ? mean : var;
          const auto& batch_stat = i == 1 ? bmean : bvar;
          dispatch(FloatTypes{}, src.dtype(), "BatchNormalization", [&](auto otag) {
            using O = typename decltype(otag)::type;
            for (int64_t c = 0; c < C; ++c)
              out.data<O>()[c] = O(run_stat[c] * m + batch_stat[c] * (A(1) - m));
          });
        }
        mean = bmean;
        var = bvar;
      }
      T* yp = y.data<T>();
      for (size_t i = 0; i < group.size(); ++i) {
        const int64_t c = group[i];
        yp[i] = T((A(xp[i]) - mean[c]) / std::sqrt(var[c] + A(eps_)) * scale[c] + bias[c]);
      }
    });
  }

 private:
  float eps_, momentum_;
  bool training_;
  std::string who_;
};

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(const KernelInfo& info)
      : eps_(info.attr_float("epsilon", 1e-5f)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who_, ": input must be [N, C, ...], got ", x.describe());
    const int64_t C = x.dim(1);
    for (size_t i = 1; i <= 2; ++i)
      PI_CHECK(ctx.input(i).shape() == Shape{C} && ctx.input(i).dtype() == x.dtype(), ShapeMismatch,
               who_, ": input ", i, " must be ", dtype_name(x.dtype()), "[", C, "], got ",
               ctx.input(i).describe());
    std::vector<bool> reduce(x.shape().size(), true);
    reduce[0] = reduce[1] = false;
    std::vector<int64_t> group;
    const int64_t groups = group_elements(x.shape(), reduce, group);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(FloatTypes{}, x.dtype(), "InstanceNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      const T* sp = ctx.input(1).data<T>();
      const T* bp = ctx.input(2).data<T>();
      std::vector<A> mean, var;
      group_moments<A>(xp, group, groups, mean, var);
      T* yp = y.data<T>();
      for (size_t i = 0; i < group.size(); ++i) {
        const int64_t g = group[i], c = g % C;
        yp[i] = T((A(xp[i]) - mean[g]) / std::sqrt(var[g] + A(eps_)) * A(sp[c]) + A(bp[c]));
      }
    });
  }

 private:
  float eps_;
  std::string who_;
};

class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", -1)),
        eps_(info.attr_float("epsilon", 1e-5f)),
        stash_(static_cast<DType>(info.attr_int("stash_type", 1))),
        who_(info.node().label()) {
    if (stash_ != DType::Float32 && stash_ != DType::Float64)
      info.unsupported("stash_type=" + std::to_string(static_cast<int>(stash_)));
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_, x.rank(), who_.c_str());
    const Shape inner_shape(x.shape().begin() + axis, x.shape().end());
    const int64_t inner = shape_numel(inner_shape);
    const int64_t outer = shape_numel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const auto check_param = [&](const Tensor& p) {
      PI_CHECK(p.dtype() == x.dtype() &&
                   broadcast_shapes(p.shape(), inner_shape, who_.c_str()) == inner_shape,
               ShapeMismatch, who_, ": scale/bias ", p.describe(),
               " must broadcast to the normalized shape ", shape_str(inner_shape));
      return broadcast_strides(p.shape(), inner_shape);
    };
    const Tensor& scale = ctx.input(1);
    const auto sstr = check_param(scale);
    const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    std::vector<int64_t> bstr;
    if (bias) bstr = check_param(*bias);
    // Offsets of scale and bias for each position of the normalized block.
    std::vector<int64_t> soff(static_cast<size_t>(inner)), boff(static_cast<size_t>(inner), 0);
    std::vector<int64_t> idx(inner_shape.size());
    for (int64_t i = 0; i < inner; ++i) {
      unflatten_into(i, inner_shape, idx);
      soff[i] = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        soff[i] += idx[d] * sstr[d];
        if (bias) boff[i] += idx[d] * bstr[d];
      }
    }
    Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
    stat_shape.resize(x.shape().size(), 1);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    Tensor* mean_out = ctx.wants_output(1) ? &ctx.output(1, stash_, stat_shape) : nullptr;
    Tensor* inv_out = ctx.wants_output(2) ? &ctx.output(2, stash_, stat_shape) : nullptr;
    dispatch(FloatTypes{}, x.dtype(), "LayerNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto compute = [&](auto stag) {
        using A = typename decltype(stag)::type;
        const T* xp = x.data<T>();
        const T* sp = scale.data<T>();
        const T* bp = bias ? bias->data<T>() : nullptr;
        T* yp = y.data<T>();
        for (int64_t o = 0; o < outer; ++o) {
          const T* xr = xp + o * inner;
          A mean = 0, var = 0;
          for (int64_t i = 0; i < inner; ++i) mean += A(compute_t<T>(xr[i]));
          mean /= A(inner);
          for (int64_t i = 0; i < inner; ++i) {
            const A d = A(compute_t<T>(xr[i])) - mean;
            var += d * d;
          }
          var /= A(inner);
          const A inv = A(1) / std::sqrt(var + A(eps_));
          for (int64_t i = 0; i < inner; ++i) {
            A v = (A(compute_t<T>(xr[i])) - mean) * inv * A(compute_t<T>(sp[soff[i]]));
            if (bp) v += A(compute_t<T>(bp[boff[i]]));
            yp[o * inner + i] = T(compute_t<T>(v));
          }
          if (mean_out) mean_out->data<A>()[o] = mean;
          if (inv_out) inv_out->data<A>()[o] = inv;
        }
      };
      if (stash_ == DType::Float64) {
        compute(Tag<double>{});
      } else {
        compute(Tag<float>{});
      }
    });
  }

 private:
  static void unflatten_into(int64_t flat, const Shape& dims, std::vector<int64_t>& idx) {
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      idx[d] = flat % dims[d];
      flat /= dims[d];
    }
  }

  int64_t axis_;
  float eps_;
  DType stash_;
  std::string who_;
};

class LrnKernel final : public Kernel {
 public:
  explicit LrnKernel(const KernelInfo& info)
      : size_(info.attr_int("size")),
        alpha_(info.attr_float("alpha", 1e-4f)),
        beta_(info.attr_float("beta", 0.75f)),
        bias_(info.attr_float("bias", 1.0f)),
        who_(info.node().label()) {
    PI_CHECK(size_ >= 1, InvalidModel, who_, ": size must be positive");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who_, ": input must be [N, C, ...], got ", x.describe());
    const int64_t C = x.dim(1);
    const int64_t inner = shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(FloatTypes{}, x.dtype(), "LRN", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t n = 0; n < x.dim(0); ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t i = 0; i < inner; ++i) {
            A sq = 0;
            for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min(C - 1, c + hi); ++k) {
              const A v = A(xp[(n * C + k) * inner + i]);
              sq += v * v;
            }
            const int64_t at = (n * C + c) * inner + i;
            const A den = std::pow(A(bias_) + A(alpha_) / A(size_) * sq, A(beta_));
            yp[at] = T(A(xp[at]) / den);
          }
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
  std::string who_;
};

class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(const KernelInfo& info)
      : axes_(info.attr_ints("axes", {0, 2, 3})), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<bool> reduce(x.shape().size(), false);
    for (int64_t a : axes_) reduce[normalize_axis(a, x.rank(), who_.c_str())] = true;
    std::vector<int64_t> group;
    const int64_t groups = group_elements(x.shape(), reduce, group);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(FloatTypes{}, x.dtype(), "MeanVarianceNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      std::vector<A> mean, var;
      group_moments<A>(xp, group, groups, mean, var);
      T* yp = y.data<T>();
      // The operator's function body adds epsilon to the standard deviation, not the variance.
      for (size_t i = 0; i < group.size(); ++i)
        yp[i] = T((A(xp[i]) - mean[group[i]]) / (std::sqrt(var[group[i]]) + A(1e-9)));
    });
  }

 private:
  std::vector<int64_t> axes_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(BatchNormalization, 6, 28, BatchNormKernel);
PI_CPU_KERNEL(InstanceNormalization, 6, 28, InstanceNormKernel);
PI_CPU_KERNEL(LayerNormalization, 17, 28, LayerNormKernel);
PI_CPU_KERNEL(LRN, 1, 28, LrnKernel);
PI_CPU_KERNEL(MeanVarianceNormalization, 9, 28, MvnKernel);

}  // namespace polyinfer
