// ConvTranspose on OpenCL (float32, or float16 storage with float32 sums) over 1-D, 2-D and 3-D
// inputs, with groups, strides, dilations, pads, auto_pad, output_padding and output_shape — the
// output sizes and pads are the CPU kernel's (conv_transpose_geometry), so both agree on every
// shape. One gather kernel (kernels/conv_transpose.cl, a port of the Vulkan
// conv_transpose.comp). Refused at creation: other dtypes, inputs of rank above 5, and devices
// whose work-groups cannot hold 256 work-items.
#include "core/shape_util.h"
#include "ops/window.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct ConvTransposeParams {
  uint32_t n_out, C, M, cg, mg;
  uint32_t in[3], out[3], k[3], s[3], d[3];
  int32_t pb[3];
  uint32_t off_x, off_w, off_b, off_y;
  uint32_t has_b;
};
constexpr size_t kLocal = 256;  // work-items of a work-group

static_assert(sizeof(ConvTransposeParams) == 112, "matches conv_transpose.cl's parameters");

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInfo& info) : attrs_(ConvTransposeAttrs::parse(info)) {
    for (size_t i = 0; i < 2; ++i) {
      const int r = known_rank(info, i);
      if (r > 5)
        info.unsupported("ConvTranspose input of rank " + std::to_string(r) +
                         " (the OpenCL kernel does 1-D, 2-D and 3-D)");
    }
    dtype_ = require_float(info, 5);
    ctx_ = Context::get();
    if (ctx_->max_work_group() < kLocal)
      info.unsupported("a device whose work-groups hold " + std::to_string(ctx_->max_work_group()) +
                       " work-items (the OpenCL conv_transpose kernel needs 256)");
    kernel_ = ctx_->kernel("conv_transpose", "conv_transpose", float_options(dtype_));
  }
  std::string impl() const override { return "opencl:conv_transpose"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    const Tensor& w = kc.input(1);
    check_input(kc, x, 5, dtype_);
    check_input(kc, w, 5, dtype_);
    const ConvTransposeGeometry g = conv_transpose_geometry(attrs_, x.shape(), w.shape(), who);
    const Tensor* b = kc.has_input(2) ? &kc.input(2) : nullptr;
    if (b) {
      check_input(kc, *b, kMaxRank, dtype_);
      PI_CHECK(b->shape() == Shape{g.M}, ShapeMismatch, who, ": bias must be ", dtype_name(dtype_),
               "[", g.M, "], got ", b->describe());
    }
    Shape ys{g.N, g.M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    Tensor& y = kc.output(0, dtype_, ys);
    check_input(kc, y, 5, dtype_);
    if (y.numel() == 0) return;
    ConvTransposeParams p{};
    p.n_out = u32(y.numel());
    p.C = u32(g.C);
    p.M = u32(g.M);
    p.cg = u32(g.C / g.group);
    p.mg = u32(g.M / g.group);
    // The spatial dimensions fill the last of the kernel's three; the others have size 1.
    const size_t lead = 3 - g.in.size();
    for (size_t i = 0; i < 3; ++i) {
      const bool real = i >= lead;
      const size_t j = i - lead;
      p.in[i] = real ? u32(g.in[j]) : 1;
      p.out[i] = real ? u32(g.out[j]) : 1;
      p.k[i] = real ? u32(g.kernel[j]) : 1;
      p.s[i] = real ? u32(g.strides[j]) : 1;
      p.d[i] = real ? u32(g.dilations[j]) : 1;
      p.pb[i] = real ? static_cast<int32_t>(g.pad_begin[j]) : 0;
    }
    const BufferRef ry = ctx_->find(y.raw_data());
    // With no input channels X and W are empty and have no device memory; nothing reads them.
    const BufferRef rx = x.numel() ? ctx_->find(x.raw_data()) : ry;
    const BufferRef rw = w.numel() ? ctx_->find(w.raw_data()) : ry;
    const BufferRef rb = b ? ctx_->find(b->raw_data()) : rx;  // not read without a bias
    p.off_x = element_offset(rx, dtype_);
    p.off_w = element_offset(rw, dtype_);
    p.off_b = element_offset(rb, dtype_);
    p.off_y = element_offset(ry, dtype_);
    p.has_b = b ? 1 : 0;
    ctx_->dispatch(kernel_, {rx.buffer, rw.buffer, rb.buffer, ry.buffer}, &p, sizeof p,
                   groups_for(y.numel(), *ctx_, kLocal), kLocal);
  }

 private:
  ConvTransposeAttrs attrs_;
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", ConvTranspose, 1, 28, ConvTransposeKernel);

}  // namespace
}  // namespace polyinfer::opencl
