// Normalizations on OpenCL, as the Vulkan provider runs them (vulkan/ops/norm.cpp):
//   LayerNormalization (kernels/layer_norm.cl), float32: ONNX opset 17+ and the optimizer's
//     ai.polyinfer LayerNormalization (the same operator for older models). Refused at creation:
//     stash_type other than float32, the Mean and InvStdDev outputs, and scale/bias known to
//     broadcast other than per element of the normalized block or as a single value.
//   InstanceNormalization (layer_norm.cl, one row per (n, c) plane, scale/bias per channel),
//     float32, opset 6+, any rank >= 2.
//   BatchNormalization (kernels/batch_norm.cl), float32 and float16, in inference mode, opset 7+
//     (the optimizer folds it into a preceding Conv; this runs the rest). Refused: training_mode,
//     the running statistics outputs, spatial=0.
// Other dtypes are refused as everywhere.
#include "core/shape_util.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct LayerNormParams {
  uint32_t n, rows, off_x, off_s, off_b, off_y, s_stride, b_stride, has_b;
  float eps;
  uint32_t channels = 1, s_row = 0, b_row = 0;
};

// layer_norm.cl's work-group: one row's 256 work-items reduce in local memory.
constexpr size_t kGroup = 256;

cl_kernel layer_norm_kernel(const KernelInfo& info, Context& ctx) {
  if (ctx.max_work_group() < kGroup)
    info.unsupported("a device whose work-groups hold " + std::to_string(ctx.max_work_group()) +
                     " work-items (256 needed)");
  return ctx.kernel("layer_norm", "layer_norm");
}

// Whether a scale/bias of shape `p` is one value per element of the block `inner` (its shape
// with leading 1s) or a single value: the two forms layer_norm.cl reads.
bool supported_param(const Shape& p, const Shape& inner) {
  if (shape_numel(p) == 1) return true;
  if (p.size() > inner.size()) return false;
  const size_t lead = inner.size() - p.size();
  for (size_t d = 0; d < lead; ++d)
    if (inner[d] != 1) return false;
  return std::equal(p.begin(), p.end(), inner.begin() + static_cast<std::ptrdiff_t>(lead));
}

class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", -1)), eps_(info.attr_float("epsilon", 1e-5f)) {
    require_float32(info);
    if (info.attr_int("stash_type", 1) != 1)
      info.unsupported("stash_type=" + std::to_string(info.attr_int("stash_type", 1)) +
                       " (the OpenCL kernel computes its statistics in float32)");
    if (info.has_output(1) || info.has_output(2))
      info.unsupported("the Mean and InvStdDev outputs");
    Shape x, param;
    if (known_shape(info, 0, &x) && !x.empty()) {
      try {
        const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(x.size()), "");
        const Shape inner(x.begin() + axis, x.end());
        for (size_t i = 1; i < 3; ++i)
          if (info.has_input(i) && known_shape(info, i, &param) && !supported_param(param, inner))
            info.unsupported("scale/bias " + shape_str(param) + " broadcast over " +
                             shape_str(inner) +
                             " (the OpenCL kernel takes one per element or a single value)");
      } catch (const Error& e) {
        if (e.code() == ErrorCode::UnsupportedOp) throw;
        // A bad axis: the run reports it.
      }
    }
    ctx_ = Context::get();
    kernel_ = layer_norm_kernel(info, *ctx_);
  }
  std::string impl() const override { return "opencl:layer_norm"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x);
    const int64_t axis = normalize_axis(axis_, x.rank(), who.c_str());
    const Shape inner(x.shape().begin() + axis, x.shape().end());
    const int64_t n = shape_numel(inner);
    const Tensor& scale = kc.input(1);
    const Tensor* bias = kc.has_input(2) ? &kc.input(2) : nullptr;
    for (const Tensor* t : {&scale, bias}) {
      if (!t) continue;
      check_input(kc, *t);
      PI_CHECK(broadcast_shapes(t->shape(), inner, who.c_str()) == inner, ShapeMismatch, who,
               ": scale/bias ", t->describe(), " must broadcast to the normalized shape ",
               shape_str(inner));
      PI_CHECK(supported_param(t->shape(), inner), UnsupportedOp, who, ": scale/bias ",
               t->describe(), " broadcast over ", shape_str(inner),
               " (the OpenCL kernel takes one per element or a single value)");
    }
    Tensor& y = kc.output(0, DType::Float32, x.shape());
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), rs = ctx_->find(scale.raw_data()),
                    ry = ctx_->find(y.raw_data());
    const BufferRef rb = bias ? ctx_->find(bias->raw_data()) : rs;
    LayerNormParams p{};
    p.n = u32(n);
    p.rows = u32(x.numel() / n);
    p.off_x = element_offset(rx);
    p.off_s = element_offset(rs);
    p.off_b = element_offset(rb);
    p.off_y = element_offset(ry);
    p.s_stride = scale.numel() == 1 ? 0 : 1;
    p.b_stride = bias && bias->numel() != 1 ? 1 : 0;
    p.has_b = bias ? 1 : 0;
    p.eps = eps_;
    ctx_->dispatch(kernel_, {rx.buffer, rs.buffer, rb.buffer, ry.buffer}, &p, sizeof p,
                   static_cast<size_t>(std::min<int64_t>(p.rows, ctx_->max_groups())), kGroup);
  }

 private:
  int64_t axis_;
  float eps_;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

// InstanceNormalization on layer_norm.cl: the rows are the N*C planes of the spatial elements,
// scale and bias one value per channel. The shape rules are the CPU kernel's.
class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(const KernelInfo& info) : eps_(info.attr_float("epsilon", 1e-5f)) {
    require_float32(info, std::numeric_limits<int>::max());
    ctx_ = Context::get();
    kernel_ = layer_norm_kernel(info, *ctx_);
  }
  std::string impl() const override { return "opencl:layer_norm"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, std::numeric_limits<int>::max());
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who, ": input must be [N, C, ...], got ", x.describe());
    const int64_t C = x.dim(1);
    const Tensor& scale = kc.input(1);
    const Tensor& bias = kc.input(2);
    for (const Tensor* t : {&scale, &bias})
      PI_CHECK(t->shape() == Shape{C} && t->dtype() == DType::Float32, ShapeMismatch, who,
               ": input ", t == &scale ? 1 : 2, " must be float32[", C, "], got ", t->describe());
    Tensor& y = kc.output(0, DType::Float32, x.shape());
    if (y.numel() == 0) return;
    const int64_t rows = x.dim(0) * C;
    const BufferRef rx = ctx_->find(x.raw_data()), rs = ctx_->find(scale.raw_data()),
                    rb = ctx_->find(bias.raw_data()), ry = ctx_->find(y.raw_data());
    LayerNormParams p{};
    p.n = u32(x.numel() / rows);
    p.rows = u32(rows);
    p.off_x = element_offset(rx);
    p.off_s = element_offset(rs);
    p.off_b = element_offset(rb);
    p.off_y = element_offset(ry);
    p.s_stride = p.b_stride = 0;
    p.has_b = 1;
    p.eps = eps_;
    p.channels = u32(C);
    p.s_row = p.b_row = 1;
    ctx_->dispatch(kernel_, {rx.buffer, rs.buffer, rb.buffer, ry.buffer}, &p, sizeof p,
                   static_cast<size_t>(std::min<int64_t>(p.rows, ctx_->max_groups())), kGroup);
  }

 private:
  float eps_;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

struct BatchNormParams {
  uint32_t n, C, inner, off_x, off_s, off_b, off_m, off_v, off_y;
  float eps;
};

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(const KernelInfo& info) : eps_(info.attr_float("epsilon", 1e-5f)) {
    dtype_ = require_float(info);
    if (info.opset() >= 14 && info.attr_int("training_mode", 0) != 0)
      info.unsupported("training_mode=1");
    if (info.attr_int("spatial", 1) != 1) info.unsupported("spatial=0");
    for (size_t i = 1; i < info.num_outputs(); ++i)
      if (info.has_output(i)) info.unsupported("the running statistics outputs");
    ctx_ = Context::get();
    kernel_ = ctx_->kernel("batch_norm", "batch_norm", float_options(dtype_));
  }
  std::string impl() const override { return "opencl:batch_norm"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who, ": input must be [N, C, ...], got ", x.describe());
    const int64_t C = x.dim(1);
    const Tensor* t[4];
    for (size_t i = 1; i <= 4; ++i) {
      t[i - 1] = &kc.input(i);
      check_input(kc, *t[i - 1], kMaxRank, dtype_);
      PI_CHECK(t[i - 1]->shape() == Shape{C}, ShapeMismatch, who, ": input ", i,
               " must have shape [", C, "], got ", t[i - 1]->describe());
    }
    Tensor& y = kc.output(0, dtype_, x.shape());
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), rs = ctx_->find(t[0]->raw_data()),
                    rb = ctx_->find(t[1]->raw_data()), rm = ctx_->find(t[2]->raw_data()),
                    rv = ctx_->find(t[3]->raw_data()), ry = ctx_->find(y.raw_data());
    BatchNormParams p{};
    p.n = u32(y.numel());
    p.C = u32(C);
    p.inner = u32(y.numel() / (x.dim(0) * C));
    p.off_x = element_offset(rx, dtype_);
    p.off_s = element_offset(rs, dtype_);
    p.off_b = element_offset(rb, dtype_);
    p.off_m = element_offset(rm, dtype_);
    p.off_v = element_offset(rv, dtype_);
    p.off_y = element_offset(ry, dtype_);
    p.eps = eps_;
    ctx_->dispatch(kernel_, {rx.buffer, rs.buffer, rb.buffer, rm.buffer, rv.buffer, ry.buffer}, &p,
                   sizeof p, groups_for(y.numel(), *ctx_));
  }

 private:
  float eps_;
  DType dtype_ = DType::Float32;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", LayerNormalization, 17, 28, LayerNormKernel);
PI_REGISTER_KERNEL("opencl", "", BatchNormalization, 7, 28, BatchNormKernel);
PI_REGISTER_KERNEL("opencl", "", InstanceNormalization, 6, 28, InstanceNormKernel);
PI_REGISTER_KERNEL("opencl", "ai.polyinfer", LayerNormalization, 1, 1, LayerNormKernel);

}  // namespace
}  // namespace polyinfer::opencl
