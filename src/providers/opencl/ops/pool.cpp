// Float32 and float16 pooling on OpenCL (kernels/pool.cl), as the Vulkan provider pools
// (vulkan/ops/pool.cpp): MaxPool and AveragePool over 1-D and 2-D windows (strides, dilations,
// pads, auto_pad, ceil_mode, count_include_pad), and GlobalAveragePool / GlobalMaxPool over any
// number of spatial dimensions (one window over them all). The window arithmetic is the CPU
// kernels' (window_geometry). Refused at creation: other dtypes, MaxPool's Indices output,
// windows over 3 or more dimensions.
#include "core/shape_util.h"
#include "ops/window.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct PoolParams {
  uint32_t H, W, OH, OW, KH, KW;
  uint32_t sh, sw, dh, dw;
  int32_t ph, pw, eh, ew;
  uint32_t n, off_x, off_y, mode;
};

enum class PoolKind { Max, Average, GlobalMax, GlobalAverage };

template <PoolKind Kind> class PoolKernel final : public Kernel {
  static constexpr bool kGlobal = Kind == PoolKind::GlobalMax || Kind == PoolKind::GlobalAverage;

 public:
  explicit PoolKernel(const KernelInfo& info) {
    dtype_ = require_float(info);
    if constexpr (!kGlobal) {
      attrs_ = WindowAttrs::parse(info);
      if (attrs_.kernel_shape.size() > 2)
        info.unsupported(std::to_string(attrs_.kernel_shape.size()) +
                         "-D pooling (the OpenCL kernel pools over 1-D and 2-D windows)");
      if (Kind == PoolKind::Max && info.has_output(1)) info.unsupported("MaxPool's Indices output");
      if (Kind == PoolKind::Average) include_pad_ = info.attr_int("count_include_pad", 0) != 0;
    }
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("pool", "pool", float_options(dtype_));
  }
  std::string impl() const override { return "opencl:pool"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    PI_CHECK(x.rank() >= 3, ShapeMismatch, who, ": input must be [N, C, D...], got ", x.describe());
    PoolParams p{};
    Shape ys{x.dim(0), x.dim(1)};
    if constexpr (kGlobal) {
      const int64_t sz = shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
      ys.resize(x.shape().size(), 1);
      p.H = p.OH = p.OW = p.KH = 1;
      p.W = p.KW = u32(sz);
      p.sh = p.sw = p.dh = p.dw = 1;
      p.mode = Kind == PoolKind::GlobalMax ? 0 : 1;
    } else {
      PI_CHECK(x.rank() <= 4, UnsupportedOp, who, ": input ", x.describe(),
               " (the OpenCL kernel pools over 1-D and 2-D windows)");
      PI_CHECK(attrs_.kernel_shape.size() == x.shape().size() - 2, InvalidModel, who,
               ": kernel_shape must have ", x.shape().size() - 2, " values");
      const WindowGeometry g = window_geometry(
          attrs_, Shape(x.shape().begin() + 2, x.shape().end()), attrs_.kernel_shape, who, true);
      ys.insert(ys.end(), g.out.begin(), g.out.end());
      // 1-D as 2-D with one row.
      const bool one_d = g.rank == 1;
      const auto at = [&](const auto& v, int64_t def) { return one_d ? def : v[0]; };
      const auto last = [&](const auto& v) { return v[one_d ? 0 : 1]; };
      p.H = u32(at(g.in, 1));
      p.W = u32(last(g.in));
      p.OH = u32(at(g.out, 1));
      p.OW = u32(last(g.out));
      p.KH = u32(at(g.kernel, 1));
      p.KW = u32(last(g.kernel));
      p.sh = u32(at(g.strides, 1));
      p.sw = u32(last(g.strides));
      p.dh = u32(at(g.dilations, 1));
      p.dw = u32(last(g.dilations));
      p.ph = static_cast<int32_t>(at(g.pad_begin, 0));
      p.pw = static_cast<int32_t>(last(g.pad_begin));
      p.eh = static_cast<int32_t>(at(g.pad_end, 0));
      p.ew = static_cast<int32_t>(last(g.pad_end));
      p.mode = Kind == PoolKind::Max ? 0 : (include_pad_ ? 2 : 1);
    }
    Tensor& y = kc.output(0, dtype_, ys);
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), ry = ctx_->find(y.raw_data());
    p.n = u32(y.numel());
    p.off_x = element_offset(rx, dtype_);
    p.off_y = element_offset(ry, dtype_);
    ctx_->dispatch(kernel_, {rx.buffer, ry.buffer}, &p, sizeof p, groups_for(y.numel(), *ctx_));
  }

 private:
  WindowAttrs attrs_;
  bool include_pad_ = false;
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

// MaxPool 1 (no storage_order, no dilations) to 22; AveragePool from 7 (count_include_pad) to
// 22, as the CPU kernels.
PI_REGISTER_KERNEL("opencl", "", MaxPool, 1, 28, PoolKernel<PoolKind::Max>);
PI_REGISTER_KERNEL("opencl", "", AveragePool, 7, 28, PoolKernel<PoolKind::Average>);
PI_REGISTER_KERNEL("opencl", "", GlobalMaxPool, 1, 28, PoolKernel<PoolKind::GlobalMax>);
PI_REGISTER_KERNEL("opencl", "", GlobalAveragePool, 1, 28, PoolKernel<PoolKind::GlobalAverage>);

}  // namespace
}  // namespace polyinfer::opencl
