// Pad on OpenCL (kernels/pad.cl), any dtype of 1, 2, 4 or 8 bytes, rank <= 6: constant, reflect,
// edge and wrap (19+), negative pads cropping; pads from the attribute (before 11) or inputs with
// the optional axes (18+), the constant value from the attribute or input 2. The pads, output
// shape, modes and their errors are the CPU's (ops/pad.h: plan_pad, pad_mode, and pad_source,
// which the kernel mirrors). Constant inputs stay on the host; ones computed at run time are read
// back, which waits for the enqueued work. The constant goes to the kernel as the bits of one
// element of the data's dtype, in two 32-bit halves (the parameters hold only 32-bit fields).
// Refused at creation: other dtypes (strings, packed types), rank > 6, modes the CPU refuses.
#include <cstring>

#include "ops/pad.h"
#include "providers/opencl/ops/copy.h"

namespace polyinfer::opencl {
namespace {

struct PadParams {
  uint32_t rank, n, off_x, off_y, mode;
  uint32_t value_lo, value_hi;
  uint32_t odims[kMaxRank];
  int32_t before[kMaxRank];
  uint32_t idims[kMaxRank], xs[kMaxRank];
};
static_assert(sizeof(PadParams) == 124, "matches PadParams in pad.cl");

// The constant as the bits of one element of `dtype` (little-endian, zero-extended to 64 bits).
// The attribute (before opset 11, float data only) is a float rounded to the dtype as the CPU
// does; the input must be one element of the data's dtype (the CPU's rule and error).
uint64_t pad_value_bits(const PadAttrs& a, KernelContext& ctx, DType dtype) {
  uint64_t bits = 0;
  if (a.from_attr || !ctx.has_input(2)) {
    const float v = a.value;
    switch (dtype) {
      case DType::Float32: std::memcpy(&bits, &v, 4); break;
      case DType::Float16: bits = Float16(v).bits; break;
      case DType::BFloat16: bits = BFloat16(v).bits; break;
      case DType::Float64: {
        const double d = v;
        std::memcpy(&bits, &d, 8);
        break;
      }
      default:
        // Pad before 11 takes float data only; from 11 the absent constant is 0 in every dtype.
        PI_CHECK(v == 0.0f, UnsupportedOp, a.label, ": a value attribute with ", dtype_name(dtype),
                 " data");
    }
    return bits;
  }
  const Tensor v = ctx.input(2).to(Device::cpu());
  PI_CHECK(v.dtype() == dtype && v.numel() == 1, InvalidArgument, a.label, ": constant_value ",
           v.describe(), " must be one ", dtype_name(dtype));
  std::memcpy(&bits, v.raw_data(), dtype_size(dtype));
  return bits;
}

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info) : attrs_(info) {
    dtype_ = require_movable(info, kMaxRank, 1);
    mode_ = pad_mode(info, attrs_.mode);
    constants_.keep(info, 1);
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("pad", "pad", move_options(dtype_));
  }
  std::string impl() const override { return "opencl:pad"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    HostConstantsContext hc(kc, constants_);
    const PadPlan plan = plan_pad(attrs_, hc);
    const uint64_t value = pad_value_bits(attrs_, hc, dtype_);
    Tensor& y = kc.output(0, dtype_, plan.out);
    check_input(kc, y, kMaxRank, dtype_);
    if (y.numel() == 0) return;
    PadParams p{};
    p.rank = u32(x.rank());
    p.n = u32(y.numel());
    p.mode = static_cast<uint32_t>(mode_);
    p.value_lo = static_cast<uint32_t>(value);
    p.value_hi = static_cast<uint32_t>(value >> 32);
    const std::vector<int64_t> xs = contiguous_strides(x.shape());
    for (int d = 0; d < x.rank(); ++d) {
      // Pads beyond what 32 bits index would make an output past the element limit anyway,
      // except crops: a crop larger than the dimension leaves an empty output (returned above).
      PI_CHECK(plan.before[d] >= std::numeric_limits<int32_t>::min() &&
                   plan.before[d] <= std::numeric_limits<int32_t>::max(),
               UnsupportedOp, who, ": pad ", plan.before[d], " (the OpenCL kernel takes 32 bits)");
      p.odims[d] = u32(plan.out[d]);
      p.before[d] = static_cast<int32_t>(plan.before[d]);
      p.idims[d] = u32(x.shape()[d]);
      p.xs[d] = u32(xs[d]);
    }
    const BufferRef ry = ctx_->find(y.raw_data());
    // An empty input (constant mode) has no device memory; the kernel reads none of it.
    const BufferRef rx = x.numel() ? ctx_->find(x.raw_data()) : ry;
    p.off_x = element_offset(rx, dtype_);
    p.off_y = element_offset(ry, dtype_);
    ctx_->dispatch(kernel_, {rx.buffer, ry.buffer}, &p, sizeof p, groups_for(p.n, *ctx_));
  }

 private:
  PadAttrs attrs_;
  PadMode mode_ = PadMode::Constant;
  HostConstants constants_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Pad, 1, 28, PadKernel);

}  // namespace
}  // namespace polyinfer::opencl
