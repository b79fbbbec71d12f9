// Where: out = condition ? X : Y element-wise, with numpy broadcasting of all three inputs.
// Opset 16 only added bfloat16 to the types, so one class covers opsets 9 to 23.
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const KernelInfo&) {}

  void run(KernelContext& ctx) override {
    const Tensor& cond = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    const std::string who = ctx.node().label();
    PI_CHECK(cond.dtype() == DType::Bool, InvalidArgument, who, ": condition must be bool, got ",
             cond.describe());
    PI_CHECK(x.dtype() == y.dtype(), InvalidArgument, who, ": X is ", x.describe(), " but Y is ",
             y.describe(), "; both must have the same dtype");
    const Shape shape = broadcast_shapes({cond.shape(), x.shape(), y.shape()}, who.c_str());
    dispatch(AllTypes{}, x.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.output(0, x.dtype(), shape);
      const bool* pc = cond.data<bool>();
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* po = out.data<T>();
      const std::vector<int64_t> strides[3] = {broadcast_strides(cond.shape(), shape),
                                               broadcast_strides(x.shape(), shape),
                                               broadcast_strides(y.shape(), shape)};
      for_each_broadcast(shape, strides, [&](int64_t i, int64_t ic, int64_t ix, int64_t iy) {
        po[i] = pc[ic] ? px[ix] : py[iy];
      });
    });
  }
};

}  // namespace

PI_CPU_KERNEL(Where, 9, 28, WhereKernel);

}  // namespace polyinfer
