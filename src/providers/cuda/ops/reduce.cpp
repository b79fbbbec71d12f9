// Float32 ReduceSum, ReduceMean, ReduceMax and ReduceMin on CUDA: the kept axes are moved to the
// front (one strided copy, layout.cu; none when the reduced axes are already the trailing ones),
// then one block per output reduces its row (nn.cu; max and min keep NaN, as the CPU's do). The
// axes rules are the CPU kernel's: the attribute before ReduceSum-13 / the others' 18, the
// optional input from then on (constant ones kept on the host), an empty list reduces everything
// unless noop_with_empty_axes, keepdims. An empty reduction writes the CPU's identity (0 for the
// sum, NaN for the mean, -inf for the max, +inf for the min). Refused at run time: ranks above
// 8.
#include <cmath>
#include <numeric>

#include "core/reduce_axes.h"
#include "core/shape_util.h"
#include "providers/cuda/ops/layout_kernels.h"
#include "providers/cuda/ops/nn_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

template <RowOp Op> class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const KernelInfo& info)
      : ctx_(Context::get()),
        axes_from_input_(info.opset() >= (Op == RowOp::Sum ? 13 : 18)),
        axes_attr_(info.attr_ints("axes")),
        keepdims_(info.attr_int("keepdims", 1) != 0),
        noop_with_empty_axes_(info.attr_int("noop_with_empty_axes", 0) != 0) {
    require_float32(info, 1, kLayoutMaxRank);
    constants_.keep(info, 1);
  }
  std::string impl() const override {
    return Op == RowOp::Sum    ? "cuda:reduce_sum"
           : Op == RowOp::Mean ? "cuda:reduce_mean"
           : Op == RowOp::Max  ? "cuda:reduce_max"
                               : "cuda:reduce_min";
  }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_float32(kc, x);
    PI_CHECK(x.rank() <= kLayoutMaxRank, UnsupportedOp, who, ": rank ", x.rank(),
             " (the CUDA reductions take up to ", kLayoutMaxRank, ")");
    HostConstantsContext hc(kc, constants_);
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_) {
      axes.clear();
      if (hc.has_input(1)) axes = read_int_list(hc.input(1), who.c_str());
    }
    const int rank = x.rank();
    const std::vector<bool> reduced = reduced_axes(axes, rank, noop_with_empty_axes_, who.c_str());
    Shape out_shape, order_dims;
    std::vector<int> order;  // kept axes first, then reduced ones
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      if (reduced[d]) {
        count *= x.shape()[d];
        if (keepdims_) out_shape.push_back(1);
      } else {
        out_shape.push_back(x.shape()[d]);
        order.push_back(d);
      }
    }
    for (int d = 0; d < rank; ++d)
      if (reduced[d]) order.push_back(d);
    Tensor& y = kc.output(0, DType::Float32, out_shape);
    if (y.numel() == 0) return;
    if (count == 0) {
      // The CPU's values for an empty set: its identity.
      const float id = Op == RowOp::Sum    ? 0.0f
                       : Op == RowOp::Mean ? NAN
                       : Op == RowOp::Max  ? -INFINITY
                                           : INFINITY;
      const std::vector<float> fill(static_cast<size_t>(y.numel()), id);
      ctx_.to_device(fill.data(), y.raw_data(), y.nbytes());
      return;
    }
    const void* src = x.raw_data();
    bool in_order = true;
    for (int d = 0; d < rank; ++d) in_order &= order[d] == d;
    std::unique_ptr<Scratch> moved;
    if (!in_order) {
      moved = std::make_unique<Scratch>(ctx_, static_cast<size_t>(x.numel()) * 4);
      std::vector<int64_t> st(static_cast<size_t>(rank), 1);
      for (int d = rank - 2; d >= 0; --d) st[d] = st[d + 1] * x.shape()[d + 1];
      StridedView v;
      v.rank = rank;
      for (int d = 0; d < rank; ++d) {
        v.dims[d] = x.shape()[order[d]];
        v.stride[d] = st[order[d]];
      }
      launch_strided_copy(4, src, moved->get(), x.numel(), v, ctx_.max_grid_x(), ctx_.stream());
      src = moved->get();
    }
    launch_row_reduce(Elem::F32, src, y.raw_data(), y.numel(), count, Op, ctx_.max_grid_x(),
                      ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  bool axes_from_input_;
  std::vector<int64_t> axes_attr_;
  bool keepdims_, noop_with_empty_axes_;
  HostConstants constants_;
};

PI_CUDA_KERNEL(ReduceSum, 1, 28, ReduceKernel<RowOp::Sum>);
PI_CUDA_KERNEL(ReduceMean, 1, 28, ReduceKernel<RowOp::Mean>);
PI_CUDA_KERNEL(ReduceMax, 1, 28, ReduceKernel<RowOp::Max>);
PI_CUDA_KERNEL(ReduceMin, 1, 28, ReduceKernel<RowOp::Min>);

}  // namespace
}  // namespace polyinfer::cuda
