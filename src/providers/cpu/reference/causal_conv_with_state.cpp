// CausalConvWithState (opset 27): a causal depthwise 1-D convolution that carries its last
// k - 1 input positions from one call to the next (Mamba, Gated DeltaNet).
//
//   padded  = concat(past_state or zeros [B, C, k-1], input [B, C, L])     along the time axis
//   conv[t] = bias[c] + sum_m weight[c, 0, m] * padded[t + m]              t in [0, L)
//   output  = conv, or conv * sigmoid(conv) for activation "silu"/"swish"
//   present_state = padded's last k - 1 positions
//
// The convolution sums in double and is rounded to T once, as the spec's Conv is; the activation
// then reads that rounded value, as the spec's function body casts Conv's output to float
// before its Sigmoid.
#include <cmath>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using ConvFloats = TypeList<float, Float16, BFloat16>;  // the spec's T

class CausalConvWithStateKernel final : public Kernel {
 public:
  explicit CausalConvWithStateKernel(const KernelInfo& info) : who_(info.node().label()) {
    const std::string act = info.attr_string("activation", "none");
    PI_CHECK(act == "none" || act == "silu" || act == "swish", InvalidModel, who_,
             ": activation must be 'none', 'silu' or 'swish', got '", act, "'");
    silu_ = act != "none";
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    PI_CHECK(x.rank() == 3, ShapeMismatch, who_, ": input must be [batch, channels, length], got ",
             x.describe());
    const int64_t B = x.dim(0), C = x.dim(1), L = x.dim(2);
    PI_CHECK(w.rank() == 3 && w.dim(0) == C && w.dim(1) == 1 && w.dim(2) >= 1, ShapeMismatch, who_,
             ": weight must be [", C, ", 1, k] with k >= 1 for input ", x.describe(), ", got ",
             w.describe());
    const int64_t k = w.dim(2), carry = k - 1;
    PI_CHECK(w.dtype() == x.dtype(), InvalidArgument, who_,
             ": weight must have input's dtype, got ", w.describe());
    const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (bias)
      PI_CHECK(bias->dtype() == x.dtype() && bias->rank() == 1 && bias->dim(0) == C, ShapeMismatch,
               who_, ": bias must be [", C, "] of the input's dtype, got ", bias->describe());
    const Tensor* past = ctx.has_input(3) ? &ctx.input(3) : nullptr;
    if (past)
      PI_CHECK(past->dtype() == x.dtype() && past->rank() == 3 && past->dim(0) == B &&
                   past->dim(1) == C && past->dim(2) == carry,
               ShapeMismatch, who_, ": past_state must be [", B, ", ", C, ", ", carry,
               "] of the input's dtype, got ", past->describe());

    dispatch(ConvFloats{}, x.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto val = [](T v) { return static_cast<double>(static_cast<float>(v)); };
      const T* xp = x.data<T>();
      const T* wp = w.data<T>();
      const T* bp = bias ? bias->data<T>() : nullptr;
      const T* pp = past ? past->data<T>() : nullptr;
      T* yp = ctx.output(0, x.dtype(), x.shape()).template data<T>();
      T* sp = ctx.wants_output(1) ? ctx.output(1, x.dtype(), {B, C, carry}).template data<T>()
                                  : nullptr;
      std::vector<double> padded(static_cast<size_t>(carry + L));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) {
          const int64_t bc = b * C + c;
          for (int64_t t = 0; t < carry; ++t)
            padded[size_t(t)] = pp ? val(pp[bc * carry + t]) : 0.0;
          for (int64_t t = 0; t < L; ++t) padded[size_t(carry + t)] = val(xp[bc * L + t]);
          const T* wc = wp + c * k;
          for (int64_t t = 0; t < L; ++t) {
            double acc = bp ? val(bp[c]) : 0.0;
            for (int64_t m = 0; m < k; ++m) acc += val(wc[m]) * padded[size_t(t + m)];
            const T conv = static_cast<T>(static_cast<float>(acc));
            if (silu_) {
              const double v = val(conv);
              yp[bc * L + t] = static_cast<T>(static_cast<float>(v / (1.0 + std::exp(-v))));
            } else {
              yp[bc * L + t] = conv;
            }
          }
          for (int64_t t = 0; sp && t < carry; ++t)
            sp[bc * carry + t] = static_cast<T>(static_cast<float>(padded[size_t(L + t)]));
        }
    });
  }

 private:
  bool silu_ = false;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(CausalConvWithState, 27, 28, CausalConvWithStateKernel);

}  // namespace polyinfer
