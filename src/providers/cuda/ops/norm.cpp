// Normalizations on CUDA (nn.cu):
//   LayerNormalization (ONNX 17+ and the optimizer's ai.polyinfer LayerNormalization): one
//     256-thread block per row, mean then variance in float32, the CPU's axis rule (normalize
//     over every dimension from `axis` on). Refused at creation: stash_type other than float32,
//     the Mean and InvStdDev outputs; at run time, scale/bias that broadcast other than one
//     value per element of the normalized block or a single value. Float32 only (a
//     reduced-precision session keeps it in float32, with Casts around it).
//   BatchNormalization in inference mode (opset 7+; the optimizer folds most into the preceding
//     Conv): one thread per element; float32, float16 and bfloat16. Refused: training_mode, the
//     running statistics outputs, spatial=0.
#include <algorithm>

#include "core/shape_util.h"
#include "providers/cuda/ops/nn_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

// Whether a scale/bias of shape `p` is one value per element of the block `inner` (its shape
// with leading 1s) or a single value: the two forms the kernel reads.
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
      : ctx_(Context::get()),
        axis_(info.attr_int("axis", -1)),
        eps_(info.attr_float("epsilon", 1e-5f)) {
    require_float32(info);
    if (info.attr_int("stash_type", 1) != 1)
      info.unsupported("stash_type=" + std::to_string(info.attr_int("stash_type", 1)) +
                       " (the CUDA kernel computes its statistics in float32)");
    if (info.has_output(1) || info.has_output(2))
      info.unsupported("the Mean and InvStdDev outputs");
  }
  std::string impl() const override { return "cuda:layer_norm"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_float32(kc, x);
    const int64_t axis = normalize_axis(axis_, x.rank(), who.c_str());
    const Shape inner(x.shape().begin() + axis, x.shape().end());
    const int64_t n = shape_numel(inner);
    const Tensor& scale = kc.input(1);
    const Tensor* bias = kc.has_input(2) ? &kc.input(2) : nullptr;
    for (const Tensor* t : {&scale, bias}) {
      if (!t) continue;
      check_float32(kc, *t);
      PI_CHECK(broadcast_shapes(t->shape(), inner, who.c_str()) == inner, ShapeMismatch, who,
               ": scale/bias ", t->describe(), " must broadcast to the normalized shape ",
               shape_str(inner));
      PI_CHECK(supported_param(t->shape(), inner), UnsupportedOp, who, ": scale/bias ",
               t->describe(), " broadcast over ", shape_str(inner),
               " (the CUDA kernel takes one per element or a single value)");
    }
    Tensor& y = kc.output(0, DType::Float32, x.shape());
    if (y.numel() == 0) return;
    launch_layer_norm(
        static_cast<const float*>(x.raw_data()), static_cast<const float*>(scale.raw_data()),
        bias ? static_cast<const float*>(bias->raw_data()) : nullptr,
        static_cast<float*>(y.raw_data()), x.numel() / n, n, scale.numel() == 1 ? 0 : 1,
        bias && bias->numel() != 1 ? 1 : 0, eps_, ctx_.max_grid_x(), ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  int64_t axis_;
  float eps_;
};

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(const KernelInfo& info)
      : ctx_(Context::get()), eps_(info.attr_float("epsilon", 1e-5f)) {
    dtype_ = require_float(info);
    if (info.opset() >= 14 && info.attr_int("training_mode", 0) != 0)
      info.unsupported("training_mode=1");
    if (info.attr_int("spatial", 1) != 1) info.unsupported("spatial=0");
    for (size_t i = 1; i < info.num_outputs(); ++i)
      if (info.has_output(i)) info.unsupported("the running statistics outputs");
  }
  std::string impl() const override { return "cuda:batch_norm"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    PI_CHECK(x.rank() >= 2, ShapeMismatch, who, ": input must be [N, C, ...], got ", x.describe());
    const int64_t C = x.dim(1);
    const void* p[4];
    for (size_t i = 0; i < 4; ++i) {
      const Tensor& t = kc.input(i + 1);
      check_dtype(kc, t, dtype_);
      PI_CHECK(t.shape() == Shape{C}, ShapeMismatch, who, ": input ", i + 1, " ", t.describe(),
               " must be [", C, "]");
      p[i] = t.raw_data();
    }
    Tensor& y = kc.output(0, dtype_, x.shape());
    if (y.numel() == 0) return;
    launch_batch_norm(elem_of(dtype_), x.raw_data(), p[0], p[1], p[2], p[3], y.raw_data(), x.dim(0),
                      C, x.numel() / (x.dim(0) * C), eps_, ctx_.max_grid_x(), ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_;
  float eps_;
};

PI_CUDA_KERNEL(LayerNormalization, 17, 28, LayerNormKernel);
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", LayerNormalization, 1, 1, LayerNormKernel);
PI_CUDA_KERNEL(BatchNormalization, 7, 28, BatchNormKernel);

}  // namespace
}  // namespace polyinfer::cuda
