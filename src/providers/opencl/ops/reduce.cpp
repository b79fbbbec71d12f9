// Float32 Reduce* on OpenCL (kernels/reduce.cl), as the Vulkan provider reduces
// (vulkan/ops/reduce.cpp): Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare, every
// version: axes from the attribute (ReduceSum before 13, the others before 18) or from a
// constant second input, keepdims, negative axes, and an absent/empty axes list reducing
// everything. Refused at creation: axes computed at run time (the kernel's walk is laid out on
// the host, and reading them back from the device would wait for all enqueued work),
// noop_with_empty_axes, other dtypes. The reduced elements are summed (multiplied) in float32,
// where the CPU uses double.
#include "core/reduce_axes.h"
#include "core/shape_util.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct ReduceParams {
  uint32_t n_out, n_red, rank_k, rank_r, off_x, off_y, op;
  uint32_t kdims[kMaxRank], kstr[kMaxRank], rdims[kMaxRank], rstr[kMaxRank];
};

// reduce.cl's op codes.
enum ReduceOp : uint32_t {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kSumSquare
};

template <uint32_t Op> class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const KernelInfo& info) : keepdims_(info.attr_int("keepdims", 1) != 0) {
    require_float32(info, kMaxRank, 1);
    if (info.attr_int("noop_with_empty_axes", 0) != 0) info.unsupported("noop_with_empty_axes=1");
    // ReduceSum took axes as an input one release before the others (13 vs 18).
    const bool from_input = info.opset() >= (Op == kSum ? 13 : 18);
    if (!from_input) {
      axes_ = info.attr_ints("axes");
    } else if (info.has_input(1)) {
      const Tensor* c = info.constant_input(1);
      if (!c) info.unsupported("axes computed at run time (the OpenCL kernel takes constants)");
      axes_ = read_int_list(*c, info.node().label().c_str());
      axes_input_ = true;
    }
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("reduce", "reduce");
  }
  std::string impl() const override { return "opencl:reduce"; }
  // The axes were read at creation.
  bool prepacked(size_t i) const override { return i == 1 && axes_input_; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x);
    const int rank = x.rank();
    // noop_with_empty_axes was refused at creation.
    const std::vector<bool> reduced = reduced_axes(axes_, rank, false, who.c_str());
    // Row-major strides of x; the kept and reduced dimensions each keep their order.
    std::vector<int64_t> st(static_cast<size_t>(rank), 1);
    for (int d = rank - 2; d >= 0; --d) st[d] = st[d + 1] * x.shape()[d + 1];
    ReduceParams p{};
    Shape out;
    int64_t n_red = 1;
    for (int d = 0; d < rank; ++d) {
      const int64_t n = x.shape()[d];
      if (reduced[d]) {
        n_red *= n;
        if (keepdims_) out.push_back(1);
        p.rdims[p.rank_r] = u32(n);
        p.rstr[p.rank_r++] = u32(st[d]);
      } else {
        out.push_back(n);
        p.kdims[p.rank_k] = u32(n);
        p.kstr[p.rank_k++] = u32(st[d]);
      }
    }
    Tensor& y = kc.output(0, DType::Float32, out);
    if (y.numel() == 0) return;
    const BufferRef ry = ctx_->find(y.raw_data());
    // An empty input has no device memory; the kernel reads none of it (n_red is 0).
    const BufferRef rx = x.numel() ? ctx_->find(x.raw_data()) : ry;
    p.n_out = u32(y.numel());
    p.n_red = u32(n_red);
    p.off_x = element_offset(rx);
    p.off_y = element_offset(ry);
    p.op = Op;
    ctx_->dispatch(kernel_, {rx.buffer, ry.buffer}, &p, sizeof p, groups_for(y.numel(), *ctx_));
  }

 private:
  bool keepdims_;
  std::vector<int64_t> axes_;
  bool axes_input_ = false;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", ReduceSum, 1, 28, ReduceKernel<kSum>);
PI_REGISTER_KERNEL("opencl", "", ReduceMean, 1, 28, ReduceKernel<kMean>);
PI_REGISTER_KERNEL("opencl", "", ReduceMax, 1, 28, ReduceKernel<kMax>);
PI_REGISTER_KERNEL("opencl", "", ReduceMin, 1, 28, ReduceKernel<kMin>);
PI_REGISTER_KERNEL("opencl", "", ReduceProd, 1, 28, ReduceKernel<kProd>);
PI_REGISTER_KERNEL("opencl", "", ReduceL1, 1, 28, ReduceKernel<kL1>);
PI_REGISTER_KERNEL("opencl", "", ReduceL2, 1, 28, ReduceKernel<kL2>);
PI_REGISTER_KERNEL("opencl", "", ReduceLogSum, 1, 28, ReduceKernel<kLogSum>);
PI_REGISTER_KERNEL("opencl", "", ReduceLogSumExp, 1, 28, ReduceKernel<kLogSumExp>);
PI_REGISTER_KERNEL("opencl", "", ReduceSumSquare, 1, 28, ReduceKernel<kSumSquare>);

}  // namespace
}  // namespace polyinfer::opencl
