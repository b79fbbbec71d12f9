// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dimensions
// and zeroes the rest.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const KernelInfo& info)
      : label_(info.node().label()), upper_(info.attr_int("upper", 1) != 0) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() >= 2, InvalidArgument, label_, ": expected rank >= 2, got ", x.describe());
    int64_t k = 0;
    if (ctx.has_input(1)) {
      const std::vector<int64_t> kv = read_int_list(ctx.input(1), label_.c_str());
      PI_CHECK(kv.size() == 1, InvalidArgument, label_, ": k must be a scalar");
      k = kv[0];
    }
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    const int64_t rows = x.dim(-2), cols = x.dim(-1);
    const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t o = (m * rows + i) * cols + j;
            const bool keep = upper_ ? j - i >= k : j - i <= k;
            dst[o] = keep ? src[o] : T{};
          }
    });
  }

 private:
  std::string label_;
  bool upper_;
};

}  // namespace

PI_CPU_KERNEL(Trilu, 14, 28, TriluKernel);

}  // namespace polyinfer
