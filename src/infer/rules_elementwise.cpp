// Inference of the elementwise operators: unary (the input's type), binary and variadic (numpy
// broadcast; comparisons and logic give bool), Where, and the forms before opset 7, whose B
// broadcasts onto A.
#include <algorithm>
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {

std::optional<std::vector<int64_t>> axes_index(const std::vector<int64_t>& values, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t v : values) {
    const auto a = axis_index(v, rank);
    if (!a) return std::nullopt;
    out.push_back(*a);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) return std::nullopt;
  return out;
}

std::optional<int64_t> known_product(const Dims& dims) {
  int64_t p = 1;
  for (const Dim& d : dims) {
    if (!d.known() || d.value < 0) return std::nullopt;
    if (d.value != 0 && p > (int64_t{1} << 62) / d.value) return std::nullopt;
    p *= d.value;
  }
  return p;
}

void same_as_input(Context& ctx) { ctx.set_like(0, 0); }

void broadcast_inputs(Context& ctx, const std::vector<size_t>& inputs, DType elem) {
  if (elem == DType::Undefined) elem = ctx.elem(inputs.empty() ? 0 : inputs[0]);
  std::optional<Dims> shape = Dims{};
  for (size_t i : inputs) {
    if (!ctx.has_input(i)) continue;
    const auto s = ctx.shape(i);
    if (!s) return ctx.set_elem(0, elem);
    shape = broadcast(*shape, *s);
    if (!shape) return ctx.set_elem(0, elem);
  }
  ctx.set(0, elem, *shape);
}

std::optional<std::vector<int64_t>> axes_attr_or_input(const Context& ctx, const char* attr,
                                                       size_t input, int input_since) {
  if (ctx.opset() < input_since) {
    const auto a = ctx.attr_ints(attr);
    return a ? *a : std::vector<int64_t>{};
  }
  if (!ctx.has_input(input)) return std::vector<int64_t>{};
  return ctx.known_ints(input);
}

namespace {

// Opset < 7: B broadcasts onto A (broadcast=1) or has A's shape; the output is A's shape.
bool legacy_broadcast(Context& ctx, DType elem) {
  if (ctx.opset() >= 7) return false;
  const ir::TypeInfo* a = ctx.type(0);
  if (!a) return true;
  ir::TypeInfo t = *a;
  if (elem != DType::Undefined) t.elem = elem;
  ctx.set_type(0, t);
  return true;
}

// An element of a carried value combined with another: numbers compute; a symbol survives an
// identity (N * 1, N + 0, N / 1); anything else is unknown.
Dim combine(const std::string& op, const Dim& a, const Dim& b) {
  if (a.known() && b.known()) {
    if (op == "Add") return Dim::of(a.value + b.value);
    if (op == "Sub") return Dim::of(a.value - b.value);
    if (op == "Mul") return Dim::of(a.value * b.value);
    if (op == "Div" && b.value != 0) return Dim::of(a.value / b.value);
    return Dim::unknown();
  }
  const bool b_identity = b.known() && (op == "Mul" || op == "Div" ? b.value == 1 : b.value == 0);
  if (!a.known() && b_identity) return a;
  if (!b.known() && a.known() && (op == "Mul" ? a.value == 1 : op == "Add" && a.value == 0))
    return b;
  return Dim::unknown();
}

void arithmetic(Context& ctx) {
  if (legacy_broadcast(ctx, DType::Undefined)) return;
  broadcast_inputs(ctx, {0, 1}, DType::Undefined);
  // Shape arithmetic (a channel split's Shape -> Gather -> Div), carried to Slice and Reshape.
  const std::string& op = ctx.node().op_type;
  if (op != "Add" && op != "Sub" && op != "Mul" && op != "Div") return;
  if (ctx.elem(0) != DType::Int64 && ctx.elem(0) != DType::Int32) return;
  const auto a = ctx.ints(0), b = ctx.ints(1);
  if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return;
  const size_t n = std::max(a->size(), b->size());
  Dims out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(combine(op, (*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]));
  ctx.set_ints(0, out);
}

void predicate(Context& ctx) {
  if (!legacy_broadcast(ctx, DType::Bool)) broadcast_inputs(ctx, {0, 1}, DType::Bool);
}

void variadic(Context& ctx) {
  std::vector<size_t> all(ctx.num_inputs());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  broadcast_inputs(ctx, all, DType::Undefined);
}

void where(Context& ctx) { broadcast_inputs(ctx, {0, 1, 2}, ctx.elem(1)); }

// X's type: PRelu's slope broadcasts onto X.
void unidirectional(Context& ctx) { ctx.set_like(0, 0); }

void to_bool(Context& ctx) {
  if (const auto s = ctx.shape(0)) return ctx.set(0, DType::Bool, *s);
  ctx.set_elem(0, DType::Bool);
}

// Dropout: Y as X; the mask (output 1) of X's shape, bool (opset 10 on) or X's type.
void dropout(Context& ctx) {
  ctx.set_like(0, 0);
  const DType mask = ctx.opset() >= 10 ? DType::Bool : ctx.elem(0);
  if (const auto s = ctx.shape(0)) ctx.set(1, mask, *s);
  else
    ctx.set_elem(1, mask);
}

}  // namespace

#define PI_SAME(OP) PI_INFER_RULE("", OP, same_as_input)
PI_SAME(Abs);
PI_SAME(Acos);
PI_SAME(Acosh);
PI_SAME(Asin);
PI_SAME(Asinh);
PI_SAME(Atan);
PI_SAME(Atanh);
PI_SAME(BitwiseNot);
PI_SAME(Ceil);
PI_SAME(Celu);
PI_SAME(Clip);
PI_SAME(Cos);
PI_SAME(Cosh);
PI_SAME(CumSum);
PI_SAME(Elu);
PI_SAME(Erf);
PI_SAME(Exp);
PI_SAME(Floor);
PI_SAME(Gelu);
PI_SAME(HardSigmoid);
PI_SAME(HardSwish);
PI_SAME(Hardmax);
PI_SAME(Identity);
PI_SAME(LeakyRelu);
PI_SAME(Log);
PI_SAME(LogSoftmax);
PI_SAME(LpNormalization);
PI_SAME(Mish);
PI_SAME(Neg);
PI_SAME(Not);
PI_SAME(Reciprocal);
PI_SAME(Relu);
PI_SAME(Round);
PI_SAME(Selu);
PI_SAME(Shrink);
PI_SAME(Sigmoid);
PI_SAME(Sign);
PI_SAME(Sin);
PI_SAME(Sinh);
PI_SAME(Softmax);
PI_SAME(Softplus);
PI_SAME(Softsign);
PI_SAME(Sqrt);
PI_SAME(Tan);
PI_SAME(Tanh);
PI_SAME(ThresholdedRelu);
PI_SAME(Trilu);
PI_SAME(ReverseSequence);
PI_SAME(Scatter);
PI_SAME(ScatterElements);
PI_SAME(ScatterND);
PI_SAME(MeanVarianceNormalization);
PI_SAME(LRN);
PI_SAME(InstanceNormalization);
PI_SAME(GroupNormalization);
PI_SAME(RMSNormalization);
PI_SAME(RotaryEmbedding);
PI_INFER_RULE("ai.polyinfer", Gelu, same_as_input);
PI_INFER_RULE("ai.polyinfer", HardSwish, same_as_input);
PI_INFER_RULE("ai.polyinfer", Mish, same_as_input);
PI_INFER_RULE("ai.polyinfer", RotaryEmbedding, same_as_input);
#undef PI_SAME

PI_INFER_RULE("", Add, arithmetic);
PI_INFER_RULE("", Sub, arithmetic);
PI_INFER_RULE("", Mul, arithmetic);
PI_INFER_RULE("", Div, arithmetic);
PI_INFER_RULE("", Pow, arithmetic);
PI_INFER_RULE("", Mod, arithmetic);
PI_INFER_RULE("", BitShift, arithmetic);
PI_INFER_RULE("", BitwiseAnd, arithmetic);
PI_INFER_RULE("", BitwiseOr, arithmetic);
PI_INFER_RULE("", BitwiseXor, arithmetic);
PI_INFER_RULE("", And, predicate);
PI_INFER_RULE("", Or, predicate);
PI_INFER_RULE("", Xor, predicate);
PI_INFER_RULE("", Equal, predicate);
PI_INFER_RULE("", Greater, predicate);
PI_INFER_RULE("", GreaterOrEqual, predicate);
PI_INFER_RULE("", Less, predicate);
PI_INFER_RULE("", LessOrEqual, predicate);
PI_INFER_RULE("", Max, variadic);
PI_INFER_RULE("", Min, variadic);
PI_INFER_RULE("", Mean, variadic);
PI_INFER_RULE("", Sum, variadic);
PI_INFER_RULE("", Where, where);
PI_INFER_RULE("", PRelu, unidirectional);
PI_INFER_RULE("", IsNaN, to_bool);
PI_INFER_RULE("", IsInf, to_bool);
PI_INFER_RULE("", Dropout, dropout);

}  // namespace polyinfer::infer
