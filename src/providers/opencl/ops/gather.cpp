// Gather on OpenCL (kernels/gather.cl), any rank and axis, int32 or int64 indices, data of any
// dtype of 1, 2, 4 or 8 bytes (moved as bits: embeddings and the integer Gathers of shapes).
// The indices are checked on the host with the CPU's rule and error (read_indices in
// ops/gather.h: negative ones count from the end, anything outside [-dim, dim) is an
// InvalidArgument naming the node); the kernel reads them from the device. Constant indices are
// uploaded once and their host copy kept for the check; indices computed at run time are copied
// to the host for it, which waits for the enqueued work. Refused at creation: other data dtypes
// (strings, packed types), indices of unknown dtype.
#include "ops/gather.h"
#include "ops/shape_rules.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct GatherParams {
  uint32_t n_out, inner, n_idx, dim, off_x, off_i, off_y, wide;
};
static_assert(sizeof(GatherParams) == 32, "matches GatherParams in gather.cl");

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const KernelInfo& info) : axis_(info.attr_int("axis", 0)) {
    dtype_ = require_movable(info, -1, 1);
    const Tensor* c = info.constant_input(1);
    if (c) {
      if (c->dtype() != DType::Int64 && c->dtype() != DType::Int32)
        info.unsupported(std::string("indices of dtype ") + dtype_name(c->dtype()));
    } else {
      const ir::TypeInfo* t = info.input_type(1);
      if (!t || t->kind != ir::TypeInfo::Kind::Tensor ||
          (t->elem != DType::Int64 && t->elem != DType::Int32))
        info.unsupported(std::string("indices of dtype ") +
                         dtype_name(t ? t->elem : DType::Undefined) +
                         " (the OpenCL Gather takes int32 or int64 known at load time)");
    }
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("gather", "gather", move_options(dtype_));
    if (c) {
      host_ = c->to(Device::cpu()).clone();
      if (host_.numel() > 0) device_ = host_.to(ctx_->device());
      if (device_.defined() && device_.raw_data() == host_.raw_data()) device_ = host_.clone();
    }
  }
  std::string impl() const override { return "opencl:gather"; }
  bool prepacked(size_t i) const override { return i == 1 && host_.defined(); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, std::numeric_limits<int>::max(), dtype_);
    const int64_t axis = gather_axis(x, axis_, who);
    const int64_t dim = x.shape()[axis];
    // The indices on the host (checked) and on the device (read by the kernel).
    Tensor fetched;
    const Tensor* host = &host_;
    const Tensor* dev = &device_;
    if (!host_.defined()) {
      dev = &kc.input(1);
      fetched = dev->to(Device::cpu());
      host = &fetched;
      // Indices the executor left on the host go to the device (kept until the next run).
      if (dev->device().kind != DeviceKind::OpenCL && dev->numel() > 0) {
        uploaded_ = dev->to(ctx_->device());
        dev = &uploaded_;
      }
    }
    read_indices(*host, dim, who);
    const Shape out = gather_shape(x.shape(), host->shape(), axis);
    Tensor& y = kc.output(0, dtype_, out);
    check_input(kc, y, std::numeric_limits<int>::max(), dtype_);
    if (y.numel() == 0) return;
    GatherParams p{};
    p.n_out = u32(y.numel());
    p.inner = u32(product(x.shape(), axis + 1, x.shape().size()));
    p.n_idx = u32(host->numel());
    p.dim = u32(dim);
    p.wide = host->dtype() == DType::Int64 ? 1 : 0;
    const BufferRef rx = ctx_->find(x.raw_data()), ri = ctx_->find(dev->raw_data()),
                    ry = ctx_->find(y.raw_data());
    PI_CHECK(ri.offset % 4 == 0 && ri.offset / 4 <= std::numeric_limits<uint32_t>::max(), Internal,
             "OpenCL: indices at byte offset ", ri.offset);
    p.off_x = element_offset(rx, dtype_);
    p.off_i = u32(static_cast<int64_t>(ri.offset / 4));
    p.off_y = element_offset(ry, dtype_);
    ctx_->dispatch(kernel_, {rx.buffer, ri.buffer, ry.buffer}, &p, sizeof p,
                   groups_for(p.n_out, *ctx_));
  }

 private:
  int64_t axis_;
  DType dtype_ = DType::Float32;
  Tensor host_;      // constant indices: the host copy, for the range check
  Tensor device_;    // and on the device, for the kernel (undefined when empty)
  Tensor uploaded_;  // run-time indices that came on the host
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Gather, 1, 28, GatherKernel);

}  // namespace
}  // namespace polyinfer::opencl
