// LpNormalization and GroupNormalization.
//
// LpNormalization (opsets 1 and 22; 22 only adds bfloat16) divides every vector along `axis` by
// its L1 or L2 norm; a vector whose norm is 0 becomes 0. GroupNormalization normalizes each group
// of channels of each instance to zero mean and unit variance, then scales and shifts: opset 18
// takes scale and bias per group, opset 21 per channel and adds `stash_type`, the precision of the
// normalization stage.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class LpNormKernel final : public Kernel {
 public:
  explicit LpNormKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", -1)), p_(info.attr_int("p", 2)), who_(info.node().label()) {
    // The operator is only defined for p = 1 and p = 2.
    if (p_ != 1 && p_ != 2) info.unsupported("p=" + std::to_string(p_));
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_, x.rank(), who_.c_str());
    const Shape& s = x.shape();
    const int64_t outer = product(s, 0, static_cast<size_t>(axis));
    const int64_t n = s[axis];
    const int64_t inner = product(s, static_cast<size_t>(axis) + 1, s.size());
    Tensor& y = ctx.output(0, x.dtype(), s);
    dispatch(FloatTypes{}, x.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.template data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * n * inner + i;
          // Accumulate in double: the norm of a long float vector loses digits otherwise.
          double acc = 0;
          for (int64_t k = 0; k < n; ++k) {
            const double v = static_cast<double>(compute_t<T>(in[base + k * inner]));
            acc += p_ == 1 ? std::fabs(v) : v * v;
          }
          const double norm = p_ == 1 ? acc : std::sqrt(acc);
          // The spec defines an all-zero vector's output as 0 rather than 0/0.
          for (int64_t k = 0; k < n; ++k) {
            const int64_t at = base + k * inner;
            const double v = static_cast<double>(compute_t<T>(in[at]));
            out[at] = static_cast<T>(static_cast<compute_t<T>>(norm == 0 ? 0.0 : v / norm));
          }
        }
      }
    });
  }

 private:
  int64_t axis_, p_;
  std::string who_;
};

class GroupNormKernel final : public Kernel {
 public:
  explicit GroupNormKernel(const KernelInfo& info)
      : groups_(info.attr_int("num_groups")),
        eps_(info.attr_float("epsilon", 1e-5f)),
        per_channel_(info.opset() >= 21),
        who_(info.node().label()) {
    if (per_channel_) {
      const int64_t stash = info.attr_int("stash_type", 1);
      if (stash == static_cast<int64_t>(DType::Float64)) {
        stash_double_ = true;
      } else if (stash != static_cast<int64_t>(DType::Float32)) {
        info.unsupported("stash_type=" + std::to_string(stash));
      }
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor& bias = ctx.input(2);
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who_, ": X must be [N, C, ...], got ", x.describe());
    const int64_t N = x.dim(0), C = x.dim(1), G = groups_;
    PI_CHECK(G > 0 && C % G == 0, InvalidArgument, who_, ": num_groups=", G,
             " must be positive and divide the channel count ", C);
    const int64_t params = per_channel_ ? C : G;
    for (const Tensor* t : {&scale, &bias})
      PI_CHECK(t->dtype() == x.dtype() && t->shape() == Shape{params}, ShapeMismatch, who_,
               ": scale and bias must be ", dtype_name(x.dtype()), "[", params, "] (one per ",
               per_channel_ ? "channel" : "group", "), got ", t->describe());
    const int64_t spatial = product(x.shape(), 2, x.shape().size());
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(FloatTypes{}, x.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (!per_channel_) {
        // Opset 18 has no stash_type: stage one runs in T (float for the 16-bit floats).
        compute<T, compute_t<T>>(x, scale, bias, y, N, C, G, spatial);
      } else if (stash_double_) {
        compute<T, double>(x, scale, bias, y, N, C, G, spatial);
      } else {
        compute<T, float>(x, scale, bias, y, N, C, G, spatial);
      }
    });
  }

 private:
  // Stage one in S: each (instance, group) block of X becomes (x - mean) / sqrt(var + eps), which
  // is rounded to T as the operator's definition says. Stage two in T's compute type:
  // y = normalized * scale + bias, with scale and bias per channel or per group.
  template <class T, class S>
  void compute(const Tensor& x, const Tensor& scale, const Tensor& bias, Tensor& y, int64_t N,
               int64_t C, int64_t G, int64_t spatial) const {
    using A = compute_t<T>;
    const T* in = x.data<T>();
    const T* sp = scale.data<T>();
    const T* bp = bias.data<T>();
    T* out = y.template data<T>();
    const int64_t cpg = C / G;  // channels per group
    const int64_t block = cpg * spatial;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t g = 0; g < G; ++g) {
        const int64_t base = (n * G + g) * block;
        if (block == 0) continue;
        const auto load = [&](int64_t i) { return static_cast<S>(A(in[i])); };
        S mean = 0;
        for (int64_t i = 0; i < block; ++i) mean += load(base + i);
        mean /= static_cast<S>(block);
        S var = 0;
        for (int64_t i = 0; i < block; ++i) {
          const S d = load(base + i) - mean;
          var += d * d;
        }
        var /= static_cast<S>(block);
        const S inv_std = S(1) / std::sqrt(var + static_cast<S>(eps_));
        for (int64_t k = 0; k < cpg; ++k) {
          const int64_t c = g * cpg + k;
          const int64_t p = per_channel_ ? c : g;
          const A sc = A(sp[p]), bi = A(bp[p]);
          for (int64_t i = 0; i < spatial; ++i) {
            const int64_t at = base + k * spatial + i;
            const T normalized = static_cast<T>(static_cast<A>((load(at) - mean) * inv_std));
            out[at] = static_cast<T>(A(normalized) * sc + bi);
          }
        }
      }
    }
  }

  int64_t groups_;
  float eps_;
  bool per_channel_;
  bool stash_double_ = false;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(LpNormalization, 1, 28, LpNormKernel);
PI_CPU_KERNEL(GroupNormalization, 18, 28, GroupNormKernel);

}  // namespace polyinfer
