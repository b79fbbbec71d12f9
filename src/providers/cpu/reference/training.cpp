// The optimizer steps of the ai.onnx.preview.training domain (opset 1): Adagrad, Adam and
// Momentum (standard and Nesterov). Each takes a learning rate R and an update count T (scalars),
// then n optimized tensors X followed by n tensors of each of their states (gradient G, then the
// accumulated values), and returns the n new X followed by the n new values of each state.
// Gradient, which needs the graph differentiated, is not implemented.
//
// The spec's pseudo code is evaluated per element in double and rounded to the tensors' type
// once. Every state tensor must have its X's shape: the spec allows numpy broadcasting in
// principle, but the outputs are declared with the inputs' shapes, so a broadcast could only
// change X_new's shape against its declaration.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "polyinfer/tensor.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

// What every optimizer step shares: the input groups, R and T, reading and writing tensors.
class OptimizerKernel : public Kernel {
 public:
  // `states`: the tensors per X beside X itself (G and the accumulators); `out_states`: the
  // outputs per X beside X_new.
  OptimizerKernel(const KernelInfo& info, int states, int out_states)
      : who_(info.node().label()), groups_(static_cast<int64_t>(info.num_inputs()) - 2) {
    const int64_t per = states + 1;
    PI_CHECK(groups_ > 0 && groups_ % per == 0, InvalidModel, who_,
             ": expects R, T, then n tensors X followed by n tensors of each of ", states,
             " states (", per, "n inputs after R and T), got ", info.num_inputs(), " inputs");
    groups_ /= per;
    PI_CHECK(static_cast<int64_t>(info.num_outputs()) == groups_ * (out_states + 1), InvalidModel,
             who_, ": optimizing ", groups_, " tensors gives ", groups_ * (out_states + 1),
             " outputs, the node declares ", info.num_outputs());
  }

 protected:
  struct Step {
    double r;   // learning rate
    int64_t t;  // update count
  };

  Step scalars(KernelContext& ctx) const {
    const Tensor& r = ctx.input(0);
    const Tensor& t = ctx.input(1);
    PI_CHECK(r.numel() == 1 && (r.dtype() == DType::Float32 || r.dtype() == DType::Float64),
             InvalidArgument, who_, ": R must be a float or double scalar, got ", r.describe());
    PI_CHECK(t.numel() == 1 && t.dtype() == DType::Int64, InvalidArgument, who_,
             ": T must be an int64 scalar, got ", t.describe());
    return {read_doubles(r, who_.c_str())[0], t.data<int64_t>()[0]};
  }

  // Input `k` of group `g` (k = 0 for X, 1 for G, ...) as doubles, checked against X.
  std::vector<double> load(KernelContext& ctx, int64_t g, int64_t k) const {
    const Tensor& x = ctx.input(static_cast<size_t>(2 + g));
    const Tensor& v = ctx.input(static_cast<size_t>(2 + k * groups_ + g));
    PI_CHECK(v.dtype() == DType::Float32 || v.dtype() == DType::Float64, UnsupportedOp, who_,
             ": tensors must be float or double, got ", v.describe());
    PI_CHECK(v.dtype() == x.dtype() && v.shape() == x.shape(), ShapeMismatch, who_, ": input ",
             2 + k * groups_ + g, " is ", v.describe(), " but the tensor it belongs to is ",
             x.describe(), "; they must have one dtype and shape");
    return read_doubles(v, who_.c_str());
  }

  // Output `k` of group `g` (k = 0 for X_new, 1 for the first state, ...), X's dtype and shape.
  void store(KernelContext& ctx, int64_t g, int64_t k, const std::vector<double>& v) const {
    const size_t o = static_cast<size_t>(k * groups_ + g);
    if (!ctx.wants_output(o)) return;
    const Tensor& x = ctx.input(static_cast<size_t>(2 + g));
    dispatch(TypeList<float, double>{}, x.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = ctx.output(o, x.dtype(), x.shape()).template data<T>();
      for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
    });
  }

  std::string who_;
  int64_t groups_;  // n, the number of optimized tensors
};

// Inputs R, T, X..., G..., H...; outputs X_new..., H_new...
class AdagradKernel final : public OptimizerKernel {
 public:
  explicit AdagradKernel(const KernelInfo& info)
      : OptimizerKernel(info, 2, 1),
        epsilon_(info.attr_float("epsilon", 1e-6f)),
        decay_(info.attr_float("decay_factor", 0.0f)),
        norm_(info.attr_float("norm_coefficient", 0.0f)) {}

  void run(KernelContext& ctx) override {
    const Step s = scalars(ctx);
    const double r = s.r / (1 + static_cast<double>(s.t) * decay_);
    for (int64_t g = 0; g < groups_; ++g) {
      std::vector<double> x = load(ctx, g, 0);
      const std::vector<double> grad = load(ctx, g, 1);
      std::vector<double> h = load(ctx, g, 2);
      for (size_t i = 0; i < x.size(); ++i) {
        const double gr = norm_ * x[i] + grad[i];
        h[i] += gr * gr;
        x[i] -= r * gr / (std::sqrt(h[i]) + epsilon_);
      }
      store(ctx, g, 0, x);
      store(ctx, g, 1, h);
    }
  }

 private:
  double epsilon_, decay_, norm_;
};

// Inputs R, T, X..., G..., V..., H...; outputs X_new..., V_new..., H_new...
class AdamKernel final : public OptimizerKernel {
 public:
  explicit AdamKernel(const KernelInfo& info)
      : OptimizerKernel(info, 3, 2),
        alpha_(info.attr_float("alpha", 0.9f)),
        beta_(info.attr_float("beta", 0.999f)),
        norm_(info.attr_float("norm_coefficient", 0.0f)),
        norm_post_(info.attr_float("norm_coefficient_post", 0.0f)),
        epsilon_(info.attr_float("epsilon", 1e-6f)) {}

  void run(KernelContext& ctx) override {
    const Step s = scalars(ctx);
    // Bias correction of both averages, from the second update on.
    const double t = static_cast<double>(s.t);
    const double r =
        s.t > 0 ? s.r * std::sqrt(1 - std::pow(beta_, t)) / (1 - std::pow(alpha_, t)) : s.r;
    for (int64_t g = 0; g < groups_; ++g) {
      std::vector<double> x = load(ctx, g, 0);
      const std::vector<double> grad = load(ctx, g, 1);
      std::vector<double> v = load(ctx, g, 2);
      std::vector<double> h = load(ctx, g, 3);
      for (size_t i = 0; i < x.size(); ++i) {
        const double gr = norm_ * x[i] + grad[i];
        v[i] = alpha_ * v[i] + (1 - alpha_) * gr;
        h[i] = beta_ * h[i] + (1 - beta_) * gr * gr;
        x[i] = (1 - norm_post_) * (x[i] - r * (v[i] / (std::sqrt(h[i]) + epsilon_)));
      }
      store(ctx, g, 0, x);
      store(ctx, g, 1, v);
      store(ctx, g, 2, h);
    }
  }

 private:
  double alpha_, beta_, norm_, norm_post_, epsilon_;
};

// Inputs R, T, X..., G..., V...; outputs X_new..., V_new... alpha, beta, norm_coefficient and
// mode have no defaults.
class MomentumKernel final : public OptimizerKernel {
 public:
  explicit MomentumKernel(const KernelInfo& info)
      : OptimizerKernel(info, 2, 1),
        alpha_(info.attr_float("alpha")),
        beta_(info.attr_float("beta")),
        norm_(info.attr_float("norm_coefficient")) {
    const std::string mode = info.attr_string("mode");
    if (mode == "nesterov") {
      nesterov_ = true;
    } else if (mode != "standard") {
      fail(ErrorCode::InvalidModel, who_, ": mode must be 'standard' or 'nesterov', got '", mode,
           "'");
    }
  }

  void run(KernelContext& ctx) override {
    const Step s = scalars(ctx);
    // The gradient's coefficient is 1 at the first update.
    const double beta = s.t > 0 ? beta_ : 1.0;
    for (int64_t g = 0; g < groups_; ++g) {
      std::vector<double> x = load(ctx, g, 0);
      const std::vector<double> grad = load(ctx, g, 1);
      std::vector<double> v = load(ctx, g, 2);
      for (size_t i = 0; i < x.size(); ++i) {
        const double gr = norm_ * x[i] + grad[i];
        v[i] = alpha_ * v[i] + beta * gr;
        x[i] -= s.r * (nesterov_ ? gr + alpha_ * v[i] : v[i]);
      }
      store(ctx, g, 0, x);
      store(ctx, g, 1, v);
    }
  }

 private:
  double alpha_, beta_, norm_;
  bool nesterov_ = false;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", kTrainingDomain, Adagrad, 1, 1, AdagradKernel);
PI_REGISTER_KERNEL("cpu", kTrainingDomain, Adam, 1, 1, AdamKernel);
PI_REGISTER_KERNEL("cpu", kTrainingDomain, Momentum, 1, 1, MomentumKernel);

}  // namespace polyinfer
