// Where on OpenCL (kernels/where.cl): out = condition ? X : Y with numpy broadcasting of all
// three up to rank 6; the bool condition is read a byte at a time, X and Y are moved as bits (any
// dtype of 1, 2, 4 or 8 bytes: the masks' float and integer selects alike). Constant inputs come
// on the device from the executor, copied there once. Refused at creation: a condition not known
// to be bool, X and Y not of one known movable dtype, ranks above 6.
#include "core/shape_util.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct WhereParams {
  uint32_t rank, n, off_c, off_x, off_y, off_o;
  uint32_t dims[kMaxRank], sc[kMaxRank], sx[kMaxRank], sy[kMaxRank];
};

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const KernelInfo& info) {
    const DType dc = known_dtype(info, 0);
    if (dc != DType::Bool)
      info.unsupported(std::string("condition of dtype ") + dtype_name(dc) +
                       " (the OpenCL Where takes a bool condition known at load time)");
    dtype_ = known_dtype(info, 1);
    for (size_t i = 1; i < 3; ++i) {
      const DType d = known_dtype(info, i);
      if (d != dtype_ || !movable(d))
        info.unsupported(std::string("X ") + dtype_name(dtype_) + ", Y " +
                         dtype_name(known_dtype(info, 2)) +
                         " (the OpenCL Where takes X and Y of one dtype of 1, 2, 4 or 8 bytes, "
                         "known at load time)");
    }
    for (size_t i = 0; i < 3; ++i)
      if (known_rank(info, i) > kMaxRank)
        info.unsupported("rank " + std::to_string(known_rank(info, i)) +
                         " (this OpenCL kernel takes rank <= 6)");
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("where", "where", move_options(dtype_));
  }
  std::string impl() const override { return "opencl:where"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& c = kc.input(0);
    const Tensor& x = kc.input(1);
    const Tensor& y = kc.input(2);
    check_input(kc, c, kMaxRank, DType::Bool);
    check_input(kc, x, kMaxRank, dtype_);
    check_input(kc, y, kMaxRank, dtype_);
    const Shape out = broadcast_shapes({c.shape(), x.shape(), y.shape()}, who.c_str());
    PI_CHECK(out.size() <= kMaxRank, UnsupportedOp, who, ": rank ", out.size(),
             " (this OpenCL kernel takes rank <= 6)");
    Tensor& o = kc.output(0, dtype_, out);
    check_input(kc, o, kMaxRank, dtype_);
    if (o.numel() == 0) return;
    WhereParams p{};
    p.rank = u32(static_cast<int64_t>(out.size()));
    p.n = u32(o.numel());
    const std::vector<int64_t> sc = broadcast_strides(c.shape(), out),
                               sx = broadcast_strides(x.shape(), out),
                               sy = broadcast_strides(y.shape(), out);
    for (size_t k = 0; k < out.size(); ++k) {
      p.dims[k] = u32(out[k]);
      p.sc[k] = u32(sc[k]);
      p.sx[k] = u32(sx[k]);
      p.sy[k] = u32(sy[k]);
    }
    const BufferRef rc = ctx_->find(c.raw_data()), rx = ctx_->find(x.raw_data()),
                    ry = ctx_->find(y.raw_data()), ro = ctx_->find(o.raw_data());
    p.off_c = element_offset(rc, DType::Bool);
    p.off_x = element_offset(rx, dtype_);
    p.off_y = element_offset(ry, dtype_);
    p.off_o = element_offset(ro, dtype_);
    ctx_->dispatch(kernel_, {rc.buffer, rx.buffer, ry.buffer, ro.buffer}, &p, sizeof p,
                   groups_for(p.n, *ctx_));
  }

 private:
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Where, 9, 28, WhereKernel);

}  // namespace
}  // namespace polyinfer::opencl
