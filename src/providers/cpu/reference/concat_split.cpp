// Concat and Split: both move contiguous blocks; a tensor of shape [outer, dim, inner] (split at
// the axis) is a list of `outer` rows of dim*inner elements.
#include <algorithm>
#include <string>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/split.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Concat-1 defaults axis to 1; from 4 on it is required.
class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info)
      : label_(info.node().label()),
        axis_(info.opset() < 4 ? info.attr_int("axis", 1) : info.attr_int("axis")) {}

  void run(KernelContext& ctx) override {
    PI_CHECK(ctx.num_inputs() > 0, InvalidModel, label_, ": needs at least one input");
    const Tensor& first = ctx.input(0);
    const int r = first.rank();
    PI_CHECK(r > 0, InvalidArgument, label_, ": cannot concatenate scalars");
    const int64_t axis = normalize_axis(axis_, r, label_.c_str());
    Shape out = first.shape();
    out[axis] = 0;
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      PI_CHECK(t.dtype() == first.dtype(), InvalidArgument, label_, ": input ", i, " is ",
               t.describe(), " but input 0 is ", first.describe());
      PI_CHECK(t.rank() == r, ShapeMismatch, label_, ": input ", i, " ", t.describe(),
               " has another rank than input 0 ", first.describe());
      for (int d = 0; d < r; ++d)
        PI_CHECK(d == axis || t.shape()[d] == first.shape()[d], ShapeMismatch, label_, ": input ",
                 i, " ", t.describe(), " does not match input 0 ", first.describe(),
                 " outside axis ", axis);
      out[axis] += t.shape()[axis];
      ins.push_back(&t);
    }
    Tensor& y = ctx.output(0, first.dtype(), out);
    const int64_t outer = product(out, 0, axis);
    const int64_t inner = product(out, axis + 1, out.size());
    dispatch(AllTypes{}, y.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = y.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (const Tensor* t : ins) {
          const int64_t row = t->shape()[axis] * inner;
          std::copy_n(t->data<T>() + o * row, row, dst);
          dst += row;
        }
      }
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

// Split: the part sizes and their rules are in split_params.h (shared with the Vulkan kernel).
class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const KernelInfo& info) : attrs_(info) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const SplitPlan plan = plan_split(attrs_, ctx);
    const int64_t axis = plan.axis;
    const std::vector<int64_t>& sizes = plan.sizes;
    const int64_t dim = x.shape()[axis];
    const int64_t nout = static_cast<int64_t>(sizes.size());
    const int64_t outer = product(x.shape(), 0, axis);
    const int64_t inner = product(x.shape(), axis + 1, x.shape().size());
    int64_t start = 0;
    for (int64_t k = 0; k < nout; ++k) {
      Shape s = x.shape();
      s[axis] = sizes[k];
      if (ctx.wants_output(k)) {
        Tensor& y = ctx.output(k, x.dtype(), s);
        dispatch(AllTypes{}, x.dtype(), attrs_.label.c_str(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          const int64_t row = sizes[k] * inner;
          for (int64_t o = 0; o < outer; ++o)
            std::copy_n(src + (o * dim + start) * inner, row, dst + o * row);
        });
      }
      start += sizes[k];
    }
  }

 private:
  SplitAttrs attrs_;
};

}  // namespace

PI_CPU_KERNEL(Concat, 1, 28, ConcatKernel);
PI_CPU_KERNEL(Split, 1, 28, SplitKernel);

}  // namespace polyinfer
