// Inference of the operators of opsets 24-28 without an older family rule to widen (Swish,
// SwiGLU, CumProd, BitCast, TensorScatter) and of the ai.onnx.preview.training optimizers.
#include <cstdint>
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

// SwiGLU: A and B have one shape (no broadcasting); whichever is known better gives Y's.
void swiglu(Context& ctx) {
  const DType elem = ctx.elem(0) != DType::Undefined ? ctx.elem(0) : ctx.elem(1);
  auto a = ctx.shape(0);
  const auto b = ctx.shape(1);
  if (!a) a = b;
  if (a && b && a->size() == b->size()) {
    for (size_t i = 0; i < a->size(); ++i)
      if (!(*a)[i].known() && (*b)[i].known()) (*a)[i] = (*b)[i];
  }
  if (a) return ctx.set(0, elem, *a);
  ctx.set_elem(0, elem);
}

// BitCast: the type named by `to`, the input's shape.
void bit_cast(Context& ctx) {
  const int64_t to = ctx.attr_int("to", 0);
  if (to <= 0) return;
  const DType elem = static_cast<DType>(to);
  // Types the kernel refuses whatever the input (string, numbers polyinfer does not know).
  if (elem == DType::String || std::string(dtype_name(elem)) == "unknown") return;
  if (const auto s = ctx.shape(0)) return ctx.set(0, elem, *s);
  ctx.set_elem(0, elem);
}

// The training optimizers: inputs R, T, then n tensors X followed by n tensors of each of
// `states` states; outputs the n new X followed by the n new values of each state but the
// gradient (the first), each typed as its input.
void optimizer(Context& ctx, size_t states) {
  if (ctx.num_inputs() < 2) return;
  const size_t per = states + 1;
  const size_t tensors = ctx.num_inputs() - 2;
  if (tensors == 0 || tensors % per != 0) return;
  const size_t n = tensors / per;
  for (size_t g = 0; g < n; ++g) {
    ctx.set_like(g, 2 + g);  // X_new
    for (size_t k = 2; k <= states; ++k) ctx.set_like((k - 1) * n + g, 2 + k * n + g);
  }
}
void adagrad(Context& ctx) { optimizer(ctx, 2); }
void adam(Context& ctx) { optimizer(ctx, 3); }
void momentum(Context& ctx) { optimizer(ctx, 2); }

}  // namespace

PI_INFER_RULE("", Swish, same_as_input);
PI_INFER_RULE("", SwiGLU, swiglu);
PI_INFER_RULE("", CumProd, same_as_input);
PI_INFER_RULE("", BitCast, bit_cast);
PI_INFER_RULE("", TensorScatter, same_as_input);
PI_INFER_RULE("ai.onnx.preview.training", Adagrad, adagrad);
PI_INFER_RULE("ai.onnx.preview.training", Adam, adam);
PI_INFER_RULE("ai.onnx.preview.training", Momentum, momentum);

}  // namespace polyinfer::infer
