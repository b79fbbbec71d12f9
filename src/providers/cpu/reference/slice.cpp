// Slice: attributes starts/ends/axes in opset 1..9; inputs starts, ends, axes, steps from 10.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/slice.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info) : attrs_(info) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int r = x.rank();
    const SlicePlan p = plan_slice(attrs_, ctx);
    const std::vector<int64_t>& first = p.first;
    const std::vector<int64_t>& step = p.step;
    const Shape& out = p.out;
    Tensor& y = ctx.output(0, x.dtype(), out);
    const int64_t total = y.numel();
    if (total == 0) return;
    const std::vector<int64_t> in_strides = strides_of(x.shape());
    int64_t base = 0;
    std::vector<int64_t> st(r);
    for (int d = 0; d < r; ++d) {
      base += first[d] * in_strides[d];
      st[d] = step[d] * in_strides[d];
    }
    dispatch(AllTypes{}, x.dtype(), attrs_.label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      std::vector<int64_t> idx(r, 0);
      int64_t off = base;
      for (int64_t i = 0; i < total; ++i) {
        dst[i] = src[off];
        for (int d = r - 1; d >= 0; --d) {
          if (++idx[d] < out[d]) {
            off += st[d];
            break;
          }
          off -= st[d] * (out[d] - 1);
          idx[d] = 0;
        }
      }
    });
  }

 private:
  SliceAttrs attrs_;
};

}  // namespace

PI_CPU_KERNEL(Slice, 1, 28, SliceKernel);

}  // namespace polyinfer
