// Inference of control flow (If, Loop, Scan: their outputs from their subgraphs' outputs, which
// the engine has inferred before the node's rule runs), sequences and optionals. A sequence's or
// an optional's type is kept with its element type in `inner` (and that element's dtype in
// `elem`, as the importer writes them).
#include <memory>
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

using Kind = ir::TypeInfo::Kind;

// Whether `t` tells anything: a kind, and for a tensor its dtype or its rank.
bool informative(const ir::TypeInfo& t) {
  if (t.kind == Kind::Unknown || t.kind == Kind::Map) return false;
  if (t.kind == Kind::Tensor) return t.elem != DType::Undefined || t.has_shape;
  return t.inner != nullptr;
}

// Output o as `t`, where `t` tells anything.
void publish(Context& ctx, size_t o, const ir::TypeInfo& t) {
  if (informative(t)) ctx.set_type(o, t);
}

ir::TypeInfo unknown_type() {
  ir::TypeInfo t;
  t.kind = Kind::Unknown;
  return t;
}

ir::TypeInfo tensor_of(DType elem) {
  ir::TypeInfo t;
  t.elem = elem;
  return t;
}

// A sequence or an optional of `inner`.
ir::TypeInfo wrapped(Kind kind, const ir::TypeInfo& inner) {
  ir::TypeInfo t;
  t.kind = kind;
  t.inner = std::make_shared<ir::TypeInfo>(inner);
  t.elem = inner.elem;
  return t;
}

// The type of a value that is either an `a` or a `b`: what both say. Tensors keep the dtype
// they share and, at equal ranks, the dimensions they share; sequences and optionals unite their
// elements.
ir::TypeInfo unite(const ir::TypeInfo& a, const ir::TypeInfo& b) {
  if (a.kind != b.kind) return unknown_type();
  switch (a.kind) {
    case Kind::Tensor: {
      const DType elem = a.elem == b.elem ? a.elem : DType::Undefined;
      const auto da = dims_of(a), db = dims_of(b);
      if (!da || !db || da->size() != db->size()) return tensor_of(elem);
      Dims d(da->size());
      for (size_t i = 0; i < d.size(); ++i) d[i] = (*da)[i] == (*db)[i] ? (*da)[i] : Dim::unknown();
      return tensor_type(elem, d);
    }
    case Kind::Sequence:
    case Kind::Optional:
      if (!a.inner || !b.inner) return unknown_type();
      return wrapped(a.kind, unite(*a.inner, *b.inner));
    default: return unknown_type();
  }
}

// The subgraph attribute `name`, or nullptr.
const ir::Graph* subgraph(const Context& ctx, const char* name) {
  const ir::Attribute* a = ctx.attr(name);
  return a && a->type == ir::Attribute::Type::Graph && a->g ? a->g.get() : nullptr;
}

// The type of output i of graph `g`: its ValueInfo's (the engine has merged what inference found
// into it), or the type of the graph input or initializer it names.
ir::TypeInfo graph_output(const ir::Graph& g, size_t i) {
  if (i >= g.outputs.size()) return unknown_type();
  const ir::ValueInfo& v = g.outputs[i];
  if (informative(v.type)) return v.type;
  for (const auto& in : g.inputs)
    if (in.name == v.name) return in.type;
  if (auto it = g.initializers.find(v.name); it != g.initializers.end() && it->second.defined())
    return type_of_tensor(it->second);
  return unknown_type();
}

// Input i's type, or the unknown type.
ir::TypeInfo input_type(const Context& ctx, size_t i) {
  const ir::TypeInfo* t = ctx.type(i);
  return t ? *t : unknown_type();
}

// A loop-carried value's final type: its initial value's (no iteration) or the body's output
// (the last iteration's). Its dtype cannot change, so either side gives that.
ir::TypeInfo carried(const ir::TypeInfo& initial, const ir::TypeInfo& body) {
  if (informative(initial) && informative(body)) {
    ir::TypeInfo t = unite(initial, body);
    if (t.kind == Kind::Tensor && t.elem == DType::Undefined)
      t.elem = initial.elem == DType::Undefined ? body.elem
               : body.elem == DType::Undefined  ? initial.elem
                                                : DType::Undefined;
    return t;
  }
  const ir::TypeInfo& known = informative(initial) ? initial : body;
  if (known.kind == Kind::Tensor) return tensor_of(known.elem);
  return unknown_type();
}

// Where `t` is a tensor of known rank, `t` with `dim` inserted at `axis` (of the result's rank;
// negative counts from the back); otherwise its dtype alone.
ir::TypeInfo with_dim(const ir::TypeInfo& t, int64_t axis, const Dim& dim) {
  if (t.kind != Kind::Tensor) return unknown_type();
  const auto d = dims_of(t);
  if (!d) return tensor_of(t.elem);
  const auto a = axis_index(axis, static_cast<int64_t>(d->size()) + 1);
  if (!a) return tensor_of(t.elem);
  Dims out = *d;
  out.insert(out.begin() + *a, dim);
  return tensor_type(t.elem, out);
}

// ---- control flow ----

// If: the branch's outputs where the condition is a constant, else what both branches give.
void if_op(Context& ctx) {
  const ir::Graph* then_g = subgraph(ctx, "then_branch");
  const ir::Graph* else_g = subgraph(ctx, "else_branch");
  if (!then_g || !else_g || then_g->outputs.size() != ctx.num_outputs() ||
      else_g->outputs.size() != ctx.num_outputs())
    return;
  std::optional<bool> cond;
  if (const Tensor* c = ctx.constant(0);
      c && c->defined() && c->dtype() == DType::Bool && c->numel() == 1)
    cond = c->data<bool>()[0];
  for (size_t o = 0; o < ctx.num_outputs(); ++o) {
    const ir::TypeInfo a = graph_output(*then_g, o), b = graph_output(*else_g, o);
    publish(ctx, o, !cond ? unite(a, b) : *cond ? a : b);
  }
}

// Loop(M, cond, v_initial...) with body (iteration_num, cond_in, v_in...) -> (cond_out, v_out...,
// scan_out...): the final loop-carried values, then the scan outputs, stacked on a new leading
// axis of as many elements as iterations ran.
void loop(Context& ctx) {
  if (ctx.num_inputs() < 2) return;
  const size_t n = ctx.num_inputs() - 2;
  const ir::Graph* body = subgraph(ctx, "body");
  const bool fits = body && ctx.num_outputs() >= n && body->outputs.size() == 1 + ctx.num_outputs();
  for (size_t i = 0; i < n && i < ctx.num_outputs(); ++i)
    publish(ctx, i,
            carried(input_type(ctx, 2 + i), fits ? graph_output(*body, 1 + i) : unknown_type()));
  if (!fits) return;
  for (size_t o = n; o < ctx.num_outputs(); ++o)
    publish(ctx, o, with_dim(graph_output(*body, 1 + o), 0, Dim::unknown()));
}

// The dimension all of `dims` share: a number one of them gives (a run would fail were they to
// differ), or a symbol they all have.
Dim common(const Dims& dims) {
  for (const Dim& d : dims)
    if (d.known()) return d;
  if (dims.empty() || dims[0].symbol.empty()) return Dim::unknown();
  for (const Dim& d : dims)
    if (d.symbol != dims[0].symbol) return Dim::unknown();
  return dims[0];
}

// Scan. Opset 9 on: inputs (states..., scan_inputs...), each scan input iterated along its
// scan_input_axes entry; outputs (final states..., scan outputs...), each scan output stacking
// the body's per-iteration outputs along its scan_output_axes entry. Opset 8: an optional
// sequence_lens first, and every input and output with a batch axis 0 before the scan axis 1
// (scan outputs are as long as the longest sequence, zero-padded).
void scan(Context& ctx) {
  const bool batched = ctx.opset() < 9;
  const size_t first = batched ? 1 : 0;
  const int64_t m = ctx.attr_int("num_scan_inputs", -1);
  if (m < 1 || first + static_cast<size_t>(m) > ctx.num_inputs()) return;
  const size_t scan_in = static_cast<size_t>(m);
  const size_t states = ctx.num_inputs() - first - scan_in;
  if (states > ctx.num_outputs()) return;
  const size_t scan_out = ctx.num_outputs() - states;
  const ir::Graph* body = subgraph(ctx, "body");
  const bool fits =
      body && body->outputs.size() == ctx.num_outputs() && body->inputs.size() == states + scan_in;

  std::vector<int64_t> in_axes(scan_in, batched ? 1 : 0), out_axes(scan_out, 0);
  if (!batched) {
    if (const auto a = ctx.attr_ints("scan_input_axes"); a && !a->empty()) in_axes = *a;
    if (const auto a = ctx.attr_ints("scan_output_axes"); a && !a->empty()) out_axes = *a;
  }
  // The sequence length, and for opset 8 the batch size, from the scan inputs.
  Dims lens, batches;
  for (size_t j = 0; j < scan_in && j < in_axes.size(); ++j) {
    const auto s = ctx.shape(first + states + j);
    if (!s) continue;
    const auto a = axis_index(in_axes[j], static_cast<int64_t>(s->size()));
    if (!a || (batched && s->size() < 2)) continue;
    lens.push_back((*s)[*a]);
    if (batched) batches.push_back((*s)[0]);
  }
  if (batched)
    for (size_t i = 0; i < states; ++i)
      if (const auto s = ctx.shape(first + i); s && !s->empty()) batches.push_back((*s)[0]);
  const Dim len = in_axes.size() == scan_in ? common(lens) : Dim::unknown();
  const Dim batch = common(batches);

  for (size_t i = 0; i < states; ++i) {
    ir::TypeInfo out = fits ? graph_output(*body, i) : unknown_type();
    if (batched) out = with_dim(out, 0, batch);
    publish(ctx, i, carried(input_type(ctx, first + i), out));
  }
  if (!fits || out_axes.size() != scan_out) return;
  for (size_t k = 0; k < scan_out; ++k) {
    const ir::TypeInfo part = graph_output(*body, states + k);
    if (batched) publish(ctx, states + k, with_dim(with_dim(part, 0, len), 0, batch));
    else
      publish(ctx, states + k, with_dim(part, out_axes[k], len));
  }
}

// ---- sequences ----

// A sequence's element type, or the unknown type.
ir::TypeInfo element_of(const Context& ctx, size_t i) {
  const ir::TypeInfo* t = ctx.type(i);
  return t && t->kind == Kind::Sequence && t->inner ? *t->inner : unknown_type();
}

// The dtype attribute `name` (TensorProto's element types, which DType's values follow).
std::optional<DType> dtype_attr(const Context& ctx, const char* name, int64_t def) {
  const int64_t v = ctx.attr_int(name, def);
  if (v < 1 || v > 16 || v == 14 || v == 15) return std::nullopt;  // no complex types
  return static_cast<DType>(v);
}

void sequence_empty(Context& ctx) {
  if (const auto elem = dtype_attr(ctx, "dtype", 1))
    ctx.set_type(0, wrapped(Kind::Sequence, tensor_of(*elem)));
}

void sequence_construct(Context& ctx) {
  if (ctx.num_inputs() == 0) return;
  ir::TypeInfo elem = input_type(ctx, 0);
  for (size_t i = 1; i < ctx.num_inputs(); ++i) elem = unite(elem, input_type(ctx, i));
  if (elem.kind == Kind::Tensor) publish(ctx, 0, wrapped(Kind::Sequence, elem));
}

// SequenceInsert(sequence, tensor, [position]): elements of both kinds.
void sequence_insert(Context& ctx) {
  const ir::TypeInfo* s = ctx.type(0);
  const ir::TypeInfo t = input_type(ctx, 1);
  const bool seq = s && s->kind == Kind::Sequence;
  if (seq && s->inner && informative(*s->inner) && informative(t)) {
    const ir::TypeInfo elem = unite(*s->inner, t);
    if (elem.kind == Kind::Tensor) return publish(ctx, 0, wrapped(Kind::Sequence, elem));
  }
  DType elem = t.kind == Kind::Tensor ? t.elem : DType::Undefined;
  if (elem == DType::Undefined && seq) elem = s->elem;
  if (elem != DType::Undefined) ctx.set_type(0, wrapped(Kind::Sequence, tensor_of(elem)));
}

void sequence_erase(Context& ctx) {
  if (const ir::TypeInfo* s = ctx.type(0); s && s->kind == Kind::Sequence) ctx.set_type(0, *s);
}

void sequence_at(Context& ctx) {
  const ir::TypeInfo* s = ctx.type(0);
  if (!s || s->kind != Kind::Sequence) return;
  if (s->inner && s->inner->kind == Kind::Tensor) return publish(ctx, 0, *s->inner);
  ctx.set_elem(0, s->elem);
}

void sequence_length(Context& ctx) { ctx.set(0, DType::Int64, {}); }

// SplitToSequence(input, [split]): pieces of the input along `axis`, each one long (and the
// axis dropped without keepdims) where split is not given.
void split_to_sequence(Context& ctx) {
  const DType elem = ctx.elem(0);
  if (elem == DType::Undefined) return;
  const auto s = ctx.shape(0);
  const auto axis =
      s ? axis_index(ctx.attr_int("axis", 0), static_cast<int64_t>(s->size())) : std::nullopt;
  if (!s || !axis) return ctx.set_type(0, wrapped(Kind::Sequence, tensor_of(elem)));
  Dims piece = *s;
  const Dim whole = (*s)[*axis];
  Dim part = Dim::unknown();
  if (!ctx.has_input(1)) {
    part = Dim::of(1);
  } else if (const auto split = ctx.known_ints(1); split && !split->empty()) {
    // A scalar: chunks of that length, the last shorter where it does not divide the axis;
    // a list: the lengths given.
    const int r = ctx.rank(1);
    bool same = true;
    for (int64_t v : *split) same = same && v == split->front();
    if (r == 0 && split->size() == 1 && whole.known() && split->front() > 0 &&
        whole.value % split->front() == 0)
      part = Dim::of(split->front());
    else if (r == 1 && same && split->front() >= 0)
      part = Dim::of(split->front());
  }
  piece[*axis] = part;
  if (!ctx.has_input(1) && ctx.attr_int("keepdims", 1) == 0) piece.erase(piece.begin() + *axis);
  ctx.set_type(0, wrapped(Kind::Sequence, tensor_type(elem, piece)));
}

// ConcatFromSequence: the elements joined along `axis` (new_axis: stacked on a new one); how
// many there are is not known here, so neither is that axis's length.
void concat_from_sequence(Context& ctx) {
  const ir::TypeInfo elem = element_of(ctx, 0);
  DType dt = elem.kind == Kind::Tensor ? elem.elem : DType::Undefined;
  if (const ir::TypeInfo* t = ctx.type(0); dt == DType::Undefined && t) dt = t->elem;
  const auto s = elem.kind == Kind::Tensor ? dims_of(elem) : std::nullopt;
  if (!s || !ctx.has_attr("axis")) return ctx.set_elem(0, dt);
  const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
  const int64_t r = static_cast<int64_t>(s->size()) + (new_axis ? 1 : 0);
  const auto axis = axis_index(ctx.attr_int("axis", 0), r);
  if (!axis) return ctx.set_elem(0, dt);
  Dims out = *s;
  if (new_axis) out.insert(out.begin() + *axis, Dim::unknown());
  else
    out[*axis] = Dim::unknown();
  ctx.set(0, dt, out);
}

// SequenceMap: each output a sequence of the body's output.
void sequence_map(Context& ctx) {
  const ir::Graph* body = subgraph(ctx, "body");
  if (!body || body->outputs.size() != ctx.num_outputs()) return;
  for (size_t o = 0; o < ctx.num_outputs(); ++o) {
    const ir::TypeInfo t = graph_output(*body, o);
    if (t.kind == Kind::Tensor && informative(t)) ctx.set_type(o, wrapped(Kind::Sequence, t));
  }
}

// ---- optionals ----

void optional_op(Context& ctx) {
  if (ctx.has_input(0)) {
    const ir::TypeInfo t = input_type(ctx, 0);
    if (informative(t) && (t.kind == Kind::Tensor || t.kind == Kind::Sequence))
      ctx.set_type(0, wrapped(Kind::Optional, t));
    return;
  }
  const ir::Attribute* a = ctx.attr("type");
  if (a && a->type == ir::Attribute::Type::TypeProto && informative(a->tp) &&
      (a->tp.kind == Kind::Tensor || a->tp.kind == Kind::Sequence))
    ctx.set_type(0, wrapped(Kind::Optional, a->tp));
}

void optional_has_element(Context& ctx) { ctx.set(0, DType::Bool, {}); }

// OptionalGetElement: an optional's element; a tensor or sequence as it is (opset 18; the
// runtime, whose optionals are their values, takes them so at every opset).
void optional_get_element(Context& ctx) {
  const ir::TypeInfo* t = ctx.type(0);
  if (!t) return;
  if (t->kind == Kind::Optional) {
    if (t->inner) publish(ctx, 0, *t->inner);
  } else if (t->kind == Kind::Tensor || t->kind == Kind::Sequence) {
    publish(ctx, 0, *t);
  }
}

}  // namespace

PI_INFER_RULE("", If, if_op);
PI_INFER_RULE("", Loop, loop);
PI_INFER_RULE("", Scan, scan);
PI_INFER_RULE("", SequenceEmpty, sequence_empty);
PI_INFER_RULE("", SequenceConstruct, sequence_construct);
PI_INFER_RULE("", SequenceInsert, sequence_insert);
PI_INFER_RULE("", SequenceErase, sequence_erase);
PI_INFER_RULE("", SequenceAt, sequence_at);
PI_INFER_RULE("", SequenceLength, sequence_length);
PI_INFER_RULE("", SplitToSequence, split_to_sequence);
PI_INFER_RULE("", ConcatFromSequence, concat_from_sequence);
PI_INFER_RULE("", SequenceMap, sequence_map);
PI_INFER_RULE("", Optional, optional_op);
PI_INFER_RULE("", OptionalHasElement, optional_has_element);
PI_INFER_RULE("", OptionalGetElement, optional_get_element);

}  // namespace polyinfer::infer
