// Float32 and float16 Add, Sub, Mul, Div, Pow on OpenCL with numpy broadcasting up to rank 6
// (kernels/binary.cl). Another dtype or rank is refused at creation, so the partitioner places
// the node on the next provider and reports why.
#include "core/shape_util.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct BinaryParams {
  uint32_t op, rank, n, off_a, off_b, off_c;
  uint32_t dims[kMaxRank], sa[kMaxRank], sb[kMaxRank];
};

template <uint32_t Op> class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(const KernelInfo& info) {
    dtype_ = require_float(info);
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("binary", "binary", float_options(dtype_));
  }
  std::string impl() const override { return "opencl:binary"; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(1);
    check_input(kc, a, kMaxRank, dtype_);
    check_input(kc, b, kMaxRank, dtype_);
    const Shape out_shape = broadcast_shapes(a.shape(), b.shape(), kc.node().op_type.c_str());
    PI_CHECK(out_shape.size() <= kMaxRank, UnsupportedOp, kc.node().label(), ": rank ",
             out_shape.size(), " (the OpenCL kernels take rank <= 6)");
    Tensor& c = kc.output(0, dtype_, out_shape);
    check_input(kc, c, kMaxRank, dtype_);
    if (c.numel() == 0) return;
    BinaryParams p{};
    p.op = Op;
    p.n = u32(c.numel());
    if (a.shape() == b.shape()) {
      p.rank = 1;  // same shape: one flat dimension
      p.dims[0] = p.n;
      p.sa[0] = p.sb[0] = 1;
    } else {
      const std::vector<int64_t> sa = broadcast_strides(a.shape(), out_shape);
      const std::vector<int64_t> sb = broadcast_strides(b.shape(), out_shape);
      p.rank = u32(static_cast<int64_t>(out_shape.size()));
      for (size_t k = 0; k < out_shape.size(); ++k) {
        p.dims[k] = u32(out_shape[k]);
        p.sa[k] = u32(sa[k]);
        p.sb[k] = u32(sb[k]);
      }
    }
    const BufferRef ra = ctx_->find(a.raw_data()), rb = ctx_->find(b.raw_data()),
                    rc = ctx_->find(c.raw_data());
    p.off_a = element_offset(ra, dtype_);
    p.off_b = element_offset(rb, dtype_);
    p.off_c = element_offset(rc, dtype_);
    ctx_->dispatch(kernel_, {ra.buffer, rb.buffer, rc.buffer}, &p, sizeof p,
                   groups_for(p.n, *ctx_));
  }

 private:
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Add, 7, 28, BinaryKernel<0>);
PI_REGISTER_KERNEL("opencl", "", Sub, 7, 28, BinaryKernel<1>);
PI_REGISTER_KERNEL("opencl", "", Mul, 7, 28, BinaryKernel<2>);
PI_REGISTER_KERNEL("opencl", "", Div, 7, 28, BinaryKernel<3>);
PI_REGISTER_KERNEL("opencl", "", Pow, 7, 28, BinaryKernel<4>);

}  // namespace
}  // namespace polyinfer::opencl
