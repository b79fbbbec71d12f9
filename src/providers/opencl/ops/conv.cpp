// Float32 and float16 Conv and ai.polyinfer FusedConv (act(Conv(X, W, B) + Z)) on OpenCL, 1-D
// and 2-D, with groups (depthwise included), strides, dilations, explicit pads and auto_pad —
// the window arithmetic is the CPU kernels' (WindowAttrs, conv_geometry), so both agree on
// output sizes and pads. An implicit-GEMM kernel (kernels/conv.cl, a port of the Vulkan
// conv.comp) and, for groups of at most kDirectMaxCout output channels (depthwise), a direct one
// (conv_direct: the tiled kernel would leave most rows of its 64-row tiles empty). Refused at
// creation: other dtypes, 3-D and higher convolutions (input rank above 4), and devices whose
// work-groups cannot hold the kernel's 8x8 work-items.
#include "core/shape_util.h"
#include "ops/activation.h"
#include "ops/window.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

constexpr int64_t kTile = 64;  // conv.cl's CONV_TILE
constexpr size_t kLocal = 8;   // work-items per dimension of a work-group (conv.cl)
// Groups with this many output channels or fewer take conv_direct. MobileNetV2 on PoCL (its 17
// depthwise layers): 425 ms a run with the tiled kernel alone.
constexpr int64_t kDirectMaxCout = 8;

struct ConvParams {
  uint32_t groups, cin_g, cout_g;
  uint32_t H, W, OH, OW, KH, KW;
  uint32_t sh, sw, dh, dw;
  int32_t ph, pw;
  uint32_t off_x, off_w, off_b, off_z, off_y;
  uint32_t has_b, has_z;
  uint32_t act;
  float act_alpha, act_beta;
  uint32_t nbatch;
};
static_assert(sizeof(ConvParams) == 104, "matches conv.cl's ConvParams");

class ConvKernel : public Kernel {
 public:
  ConvKernel(const KernelInfo& info, bool fused) : attrs_(WindowAttrs::parse(info)) {
    for (size_t i = 0; i < 2; ++i) {
      const int r = known_rank(info, i);
      if (r >= 0 && r != 3 && r != 4)
        info.unsupported("Conv input of rank " + std::to_string(r) +
                         " (the OpenCL kernel does 1-D and 2-D convolutions)");
    }
    dtype_ = require_float(info, 4);
    if (fused) act_ = FusedActivation::from(info);
    ctx_ = Context::get();
    if (ctx_->max_work_group() < kLocal * kLocal)
      info.unsupported("a device whose work-groups hold " + std::to_string(ctx_->max_work_group()) +
                       " work-items (the OpenCL conv kernel needs 64)");
    kernel_ = ctx_->kernel("conv", "conv", float_options(dtype_));
    direct_ = ctx_->kernel("conv", "conv_direct", float_options(dtype_));
  }
  std::string impl() const override { return "opencl:conv"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    const Tensor& w = kc.input(1);
    check_input(kc, x, 4, dtype_);
    check_input(kc, w, 4, dtype_);
    PI_CHECK(x.rank() >= 3, UnsupportedOp, who, ": input ", x.describe(),
             " (the OpenCL kernel does 1-D and 2-D convolutions)");
    const WindowGeometry g = conv_geometry(attrs_, x.shape(), w.shape(), who);
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    const Tensor* b = kc.has_input(2) ? &kc.input(2) : nullptr;
    if (b) {
      check_input(kc, *b, kMaxRank, dtype_);
      PI_CHECK(b->shape() == Shape{M}, ShapeMismatch, who, ": bias must be ", dtype_name(dtype_),
               "[", M, "], got ", b->describe());
    }
    Shape ys{N, M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    const Tensor* z = kc.has_input(3) ? &kc.input(3) : nullptr;
    if (z) {
      check_input(kc, *z, kMaxRank, dtype_);
      PI_CHECK(z->shape() == ys, ShapeMismatch, who, ": Z ", z->describe(),
               " must have the output's shape ", shape_str(ys));
    }
    Tensor& y = kc.output(0, dtype_, ys);
    check_input(kc, y, kMaxRank, dtype_);
    if (y.numel() == 0) return;
    // 1-D as 2-D with one row.
    const bool one_d = g.rank == 1;
    const auto at = [&](const auto& v, int d, int64_t def) { return one_d ? def : v[d]; };
    const auto last = [&](const auto& v) { return v[one_d ? 0 : 1]; };
    ConvParams p{};
    p.groups = u32(attrs_.group);
    p.cin_g = u32(C / attrs_.group);
    p.cout_g = u32(M / attrs_.group);
    p.H = u32(at(g.in, 0, 1));
    p.W = u32(last(g.in));
    p.OH = u32(at(g.out, 0, 1));
    p.OW = u32(last(g.out));
    p.KH = u32(at(g.kernel, 0, 1));
    p.KW = u32(last(g.kernel));
    p.sh = u32(at(g.strides, 0, 1));
    p.sw = u32(last(g.strides));
    p.dh = u32(at(g.dilations, 0, 1));
    p.dw = u32(last(g.dilations));
    p.ph = static_cast<int32_t>(at(g.pad_begin, 0, 0));
    p.pw = static_cast<int32_t>(last(g.pad_begin));
    p.act = static_cast<uint32_t>(act_.kind);
    p.act_alpha = act_.alpha;
    p.act_beta = act_.beta;
    p.nbatch = u32(N * attrs_.group);
    const BufferRef ry = ctx_->find(y.raw_data());
    // With no input channels X and W are empty and have no device memory; nothing reads them.
    const BufferRef rx = x.numel() ? ctx_->find(x.raw_data()) : ry;
    const BufferRef rw = w.numel() ? ctx_->find(w.raw_data()) : ry;
    // Absent inputs pass X's buffer; the kernel never reads them (has_b / has_z).
    const BufferRef rb = b ? ctx_->find(b->raw_data()) : rx;
    const BufferRef rz = z ? ctx_->find(z->raw_data()) : rx;
    p.off_x = element_offset(rx, dtype_);
    p.off_w = element_offset(rw, dtype_);
    p.off_b = element_offset(rb, dtype_);
    p.off_z = element_offset(rz, dtype_);
    p.off_y = element_offset(ry, dtype_);
    p.has_b = b ? 1 : 0;
    p.has_z = z ? 1 : 0;
    const std::vector<cl_mem> buffers = {rx.buffer, rw.buffer, rb.buffer, rz.buffer, ry.buffer};
    if (p.cout_g <= kDirectMaxCout) {
      ctx_->dispatch(direct_, buffers, &p, sizeof p, groups_for(y.numel(), *ctx_));
      return;
    }
    const int64_t tiles_m = (p.cout_g + kTile - 1) / kTile;
    const int64_t tiles_n = (int64_t{p.OH} * p.OW + kTile - 1) / kTile;
    const auto max_groups = static_cast<int64_t>(ctx_->max_groups());
    PI_CHECK(tiles_m <= max_groups && tiles_n <= max_groups, UnsupportedOp, who, ": output ",
             shape_str(ys), " needs more than ", ctx_->max_groups(),
             " tiles of 64 in one dimension");
    const size_t groups[3] = {static_cast<size_t>(tiles_n), static_cast<size_t>(tiles_m), p.nbatch};
    const size_t local[3] = {kLocal, kLocal, 1};
    ctx_->dispatch(kernel_, buffers, &p, sizeof p, groups, local);
  }

 private:
  WindowAttrs attrs_;
  FusedActivation act_;
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
  cl_kernel direct_ = nullptr;
};

struct PlainConvKernel final : ConvKernel {
  explicit PlainConvKernel(const KernelInfo& info) : ConvKernel(info, false) {}
};
struct FusedConvKernel final : ConvKernel {
  explicit FusedConvKernel(const KernelInfo& info) : ConvKernel(info, true) {}
};

PI_REGISTER_KERNEL("opencl", "", Conv, 1, 28, PlainConvKernel);
PI_REGISTER_KERNEL("opencl", "ai.polyinfer", FusedConv, 1, 1, FusedConvKernel);

}  // namespace
}  // namespace polyinfer::opencl
