// Expand (numpy broadcast to a shape) and Tile (repeat along each axis).
#include <algorithm>
#include <string>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The output shape is expand_shape's (op_util.h, shared with the Vulkan kernel).
class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const KernelInfo& info) : label_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape out = expand_shape(x.shape(), read_int_list(ctx.input(1), label_.c_str()), label_);
    Tensor& y = ctx.output(0, x.dtype(), out);
    const std::vector<int64_t> strides[1] = {broadcast_strides(x.shape(), out)};
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for_each_broadcast(out, strides, [&](int64_t i, int64_t o) { dst[i] = src[o]; });
    });
  }

 private:
  std::string label_;
};

class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const KernelInfo& info) : label_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> reps = read_int_list(ctx.input(1), label_.c_str());
    const int r = x.rank();
    PI_CHECK(static_cast<int>(reps.size()) == r, InvalidArgument, label_, ": repeats ",
             int_list_str(reps), " must have one entry per dimension of ", x.describe());
    Shape out(r);
    for (int d = 0; d < r; ++d) {
      PI_CHECK(reps[d] >= 0, InvalidArgument, label_, ": repeats ", int_list_str(reps),
               " has a negative entry");
      out[d] = shape_numel({x.shape()[d], reps[d]});
    }
    Tensor& y = ctx.output(0, x.dtype(), out);
    const int64_t total = y.numel();
    if (total == 0) return;
    const std::vector<int64_t> xs = strides_of(x.shape());
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      // pos: output coordinate; in: the matching input coordinate (pos modulo the input dims).
      std::vector<int64_t> pos(r, 0), in(r, 0);
      int64_t off = 0;
      for (int64_t i = 0; i < total; ++i) {
        dst[i] = src[off];
        for (int d = r - 1; d >= 0; --d) {
          if (++pos[d] == out[d]) {
            off -= in[d] * xs[d];
            pos[d] = 0;
            in[d] = 0;
            continue;
          }
          if (++in[d] == x.shape()[d]) {
            off -= (in[d] - 1) * xs[d];
            in[d] = 0;
          } else {
            off += xs[d];
          }
          break;
        }
      }
    });
  }

 private:
  std::string label_;
};

}  // namespace

PI_CPU_KERNEL(Expand, 8, 28, ExpandKernel);
PI_CPU_KERNEL(Tile, 6, 28, TileKernel);

}  // namespace polyinfer
