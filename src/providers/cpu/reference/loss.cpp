// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Both take (N, C, d1, ..., dk) scores with (N, d1, ..., dk) integer class labels and an
// optional per-class weight (C). A label equal to ignore_index contributes neither loss nor
// weight, so "mean" is sum(loss) / sum(weight of the counted samples) — the function bodies
// the ONNX spec gives for both ops divide exactly so (NaN when nothing is counted).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

enum class Reduction { None, Sum, Mean };

struct LossAttrs {
  Reduction reduction = Reduction::Mean;
  std::optional<int64_t> ignore_index;

  explicit LossAttrs(const KernelInfo& info) {
    const std::string r = info.attr_string("reduction", "mean");
    if (r == "none") reduction = Reduction::None;
    else if (r == "sum")
      reduction = Reduction::Sum;
    else if (r == "mean")
      reduction = Reduction::Mean;
    else
      info.unsupported("reduction='" + r + "'");
    if (info.has_attr("ignore_index")) ignore_index = info.attr_int("ignore_index");
  }
};

// The (N, C, D) view of scores, D = d1 * ... * dk, after checking labels and weights against it.
struct LossShape {
  int64_t n = 0, c = 0, d = 1;
  Shape per_sample;  // (N, d1, ..., dk): the shape of labels and of an unreduced loss
};

LossShape check_loss_inputs(const std::string& who, const Tensor& scores, const Tensor& labels,
                            const Tensor* weight) {
  PI_CHECK(scores.rank() >= 2, ShapeMismatch, who, ": input must be (N, C, d1, ..., dk), got ",
           scores.describe());
  LossShape ls;
  const Shape& s = scores.shape();
  ls.n = s[0];
  ls.c = s[1];
  ls.per_sample.push_back(s[0]);
  for (size_t i = 2; i < s.size(); ++i) {
    ls.d *= s[i];
    ls.per_sample.push_back(s[i]);
  }
  PI_CHECK(labels.shape() == ls.per_sample, ShapeMismatch, who, ": target ", labels.describe(),
           " must have shape ", shape_str(ls.per_sample), " to match input ", scores.describe());
  PI_CHECK(labels.dtype() == DType::Int32 || labels.dtype() == DType::Int64, InvalidArgument, who,
           ": target must be int32 or int64, got ", labels.describe());
  if (weight) {
    PI_CHECK(weight->dtype() == scores.dtype(), InvalidArgument, who, ": weight ",
             weight->describe(), " must have the input's dtype ", dtype_name(scores.dtype()));
    PI_CHECK(weight->shape() == Shape{ls.c}, ShapeMismatch, who, ": weight ", weight->describe(),
             " must have shape [", ls.c, "]");
  }
  return ls;
}

std::vector<int64_t> read_labels(const Tensor& labels) {
  std::vector<int64_t> out(static_cast<size_t>(labels.numel()));
  if (labels.dtype() == DType::Int64) {
    const int64_t* p = labels.data<int64_t>();
    out.assign(p, p + labels.numel());
  } else {
    const int32_t* p = labels.data<int32_t>();
    out.assign(p, p + labels.numel());
  }
  return out;
}

// Writes the NLL loss of the log-probabilities `lp(i)` (indexed as the (N, C, D) scores) to
// `out`, an output tensor of dtype T.
template <class T, class LogProb>
void nll_loss(const std::string& who, const LossAttrs& attrs, const LossShape& ls, LogProb lp,
              const std::vector<int64_t>& labels, const Tensor* weight, KernelContext& ctx) {
  using C = compute_t<T>;
  const T* w = weight ? weight->data<T>() : nullptr;
  const bool none = attrs.reduction == Reduction::None;
  T* per_sample = none ? ctx.output(0, dtype_of<T>(), ls.per_sample).template data<T>() : nullptr;
  double loss_sum = 0, weight_sum = 0;
  for (int64_t n = 0; n < ls.n; ++n) {
    for (int64_t d = 0; d < ls.d; ++d) {
      const int64_t t = labels[n * ls.d + d];
      double loss = 0, wt = 0;
      if (!(attrs.ignore_index && t == *attrs.ignore_index)) {
        PI_CHECK(t >= 0 && t < ls.c, InvalidArgument, who, ": target value ", t,
                 " is outside the class range [0, ", ls.c, ")");
        wt = w ? static_cast<double>(static_cast<C>(w[t])) : 1.0;
        loss = -lp((n * ls.c + t) * ls.d + d) * wt;
      }
      if (none) per_sample[n * ls.d + d] = static_cast<T>(static_cast<C>(loss));
      loss_sum += loss;
      weight_sum += wt;
    }
  }
  if (none) return;
  const double r = attrs.reduction == Reduction::Sum ? loss_sum : loss_sum / weight_sum;
  ctx.output(0, dtype_of<T>(), Shape{}).template data<T>()[0] = static_cast<T>(static_cast<C>(r));
}

class NegativeLogLikelihoodLossKernel final : public Kernel {
 public:
  explicit NegativeLogLikelihoodLossKernel(const KernelInfo& info)
      : label_(info.node().label()), attrs_(info) {}

  void run(KernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const LossShape ls = check_loss_inputs(label_, input, target, weight);
    const std::vector<int64_t> labels = read_labels(target);
    dispatch(FloatTypes{}, input.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = input.data<T>();
      auto lp = [in](int64_t i) { return static_cast<double>(static_cast<compute_t<T>>(in[i])); };
      nll_loss<T>(label_, attrs_, ls, lp, labels, weight, ctx);
    });
  }

 private:
  std::string label_;
  LossAttrs attrs_;
};

// SoftmaxCrossEntropyLoss = NegativeLogLikelihoodLoss(LogSoftmax(scores, axis=1)); the
// log-probabilities are also the optional second output.
class SoftmaxCrossEntropyLossKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyLossKernel(const KernelInfo& info)
      : label_(info.node().label()), attrs_(info) {}

  void run(KernelContext& ctx) override {
    const Tensor& scores = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const LossShape ls = check_loss_inputs(label_, scores, target, weight);
    const std::vector<int64_t> labels = read_labels(target);
    dispatch(FloatTypes{}, scores.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* in = scores.data<T>();
      std::vector<double> lp(static_cast<size_t>(scores.numel()));
      for (int64_t n = 0; n < ls.n; ++n) {
        for (int64_t d = 0; d < ls.d; ++d) {
          const int64_t base = n * ls.c * ls.d + d;
          double mx = -std::numeric_limits<double>::infinity();
          for (int64_t c = 0; c < ls.c; ++c) mx = std::max(mx, double(C(in[base + c * ls.d])));
          double sum = 0;
          for (int64_t c = 0; c < ls.c; ++c) sum += std::exp(double(C(in[base + c * ls.d])) - mx);
          const double lse = mx + std::log(sum);
          for (int64_t c = 0; c < ls.c; ++c)
            lp[base + c * ls.d] = double(C(in[base + c * ls.d])) - lse;
        }
      }
      if (ctx.wants_output(1)) {
        T* out = ctx.output(1, scores.dtype(), scores.shape()).template data<T>();
        for (size_t i = 0; i < lp.size(); ++i) out[i] = static_cast<T>(static_cast<C>(lp[i]));
      }
      nll_loss<T>(
          label_, attrs_, ls, [&lp](int64_t i) { return lp[i]; }, labels, weight, ctx);
    });
  }

 private:
  std::string label_;
  LossAttrs attrs_;
};

}  // namespace

// Versions 12, 13 and 22 differ only in the accepted float types.
PI_CPU_KERNEL(NegativeLogLikelihoodLoss, 12, 28, NegativeLogLikelihoodLossKernel);
PI_CPU_KERNEL(SoftmaxCrossEntropyLoss, 12, 28, SoftmaxCrossEntropyLossKernel);

}  // namespace polyinfer
