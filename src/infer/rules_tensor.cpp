// Inference of the operators that move, reshape and index tensors, and of the integer values
// they compute from shapes (Shape -> Gather -> Unsqueeze -> Concat -> Reshape).
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

// ---- values and types ----

void shape_op(Context& ctx) {
  const auto s = ctx.shape(0);
  if (!s) return ctx.set_rank(0, DType::Int64, 1);
  const int64_t r = static_cast<int64_t>(s->size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
  const int64_t start = ctx.opset() >= 15 ? clamp(ctx.attr_int("start", 0)) : 0;
  const int64_t end = ctx.opset() >= 15 ? clamp(ctx.attr_int("end", r)) : r;
  const Dims dims(s->begin() + start, s->begin() + std::max(start, end));
  ctx.set(0, DType::Int64, {Dim::of(static_cast<int64_t>(dims.size()))});
  ctx.set_ints(0, dims);
}

void size_op(Context& ctx) {
  ctx.set(0, DType::Int64, {});
  if (const auto s = ctx.shape(0))
    if (const auto n = known_product(*s)) ctx.set_ints(0, {Dim::of(*n)});
}

// The tensor a Constant holds, from whichever attribute gives it.
void constant_op(Context& ctx) {
  const ir::Attribute* a = nullptr;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings", "sparse_value"})
    if ((a = ctx.attr(name))) break;
  if (!a) return;
  using T = ir::Attribute::Type;
  switch (a->type) {
    case T::Tensor:
      if (!a->t.defined()) return;
      ctx.set_type(0, type_of_tensor(a->t));
      if ((a->t.dtype() == DType::Int64 || a->t.dtype() == DType::Int32) && a->t.rank() <= 1 &&
          a->t.numel() <= 64) {
        Dims v;
        for (int64_t i = 0; i < a->t.numel(); ++i)
          v.push_back(Dim::of(a->t.dtype() == DType::Int64 ? a->t.data<int64_t>()[i]
                                                           : int64_t{a->t.data<int32_t>()[i]}));
        ctx.set_ints(0, v);
      }
      return;
    case T::Float: return ctx.set(0, DType::Float32, {});
    case T::Floats: return ctx.set(0, DType::Float32, {Dim::of(int64_t(a->floats.size()))});
    case T::Int: ctx.set(0, DType::Int64, {}); return ctx.set_ints(0, {Dim::of(a->i)});
    case T::Ints: {
      ctx.set(0, DType::Int64, {Dim::of(static_cast<int64_t>(a->ints.size()))});
      Dims v;
      for (int64_t x : a->ints) v.push_back(Dim::of(x));
      return ctx.set_ints(0, v);
    }
    case T::String: return ctx.set(0, DType::String, {});
    case T::Strings: return ctx.set(0, DType::String, {Dim::of(int64_t(a->strings.size()))});
    default: return;
  }
}

// A dtype attribute (ONNX's TensorProto element types, which DType's values follow).
std::optional<DType> dtype_attr(const Context& ctx, const char* name) {
  const int64_t v = ctx.attr_int(name, 0);
  if (!is_tensor_dtype_code(v)) return std::nullopt;  // no complex types
  return static_cast<DType>(v);
}

void cast_op(Context& ctx) {
  const auto to = dtype_attr(ctx, "to");
  if (!to) return;
  if (const auto s = ctx.shape(0)) ctx.set(0, *to, *s);
  else
    ctx.set_elem(0, *to);
  if (*to == DType::Int64 || *to == DType::Int32)
    if (const auto v = ctx.ints(0)) ctx.set_ints(0, *v);
}

void cast_like(Context& ctx) {
  const DType to = ctx.elem(1);
  if (const auto s = ctx.shape(0)) ctx.set(0, to, *s);
  else
    ctx.set_elem(0, to);
}

void constant_of_shape(Context& ctx) {
  DType elem = DType::Float32;
  if (const ir::Attribute* v = ctx.attr("value");
      v && v->type == ir::Attribute::Type::Tensor && v->t.defined())
    elem = v->t.dtype();
  const auto shape = ctx.ints(0);
  if (!shape) {
    const auto s = ctx.shape(0);
    return s && s->size() == 1 && (*s)[0].known() ? ctx.set_rank(0, elem, int((*s)[0].value))
                                                  : ctx.set_elem(0, elem);
  }
  Dims dims = *shape;
  for (Dim& d : dims)
    if (d.known() && d.value < 0) return ctx.set_elem(0, elem);
  ctx.set(0, elem, dims);
}

// ---- reshaping ----

// What a Reshape's -1 stands for: the input's elements over the other target dimensions'.
// Symbols that appear on both sides cancel; a single symbol left over with no numeric remainder
// is the answer (a [N, 3, 4] input reshaped to [N, -1] gives [N, 12]).
Dim remainder(const Dims& in, const Dims& target, int skip) {
  std::multiset<std::string> symbols;
  int64_t num = 1, den = 1;
  for (const Dim& d : in) {
    if (d.known()) num *= d.value;
    else if (!d.symbol.empty())
      symbols.insert(d.symbol);
    else
      return Dim::unknown();
    if (num > (int64_t{1} << 40)) return Dim::unknown();
  }
  for (int i = 0; i < static_cast<int>(target.size()); ++i) {
    if (i == skip) continue;
    const Dim& d = target[i];
    if (d.known()) {
      den *= d.value;
    } else if (auto it = d.symbol.empty() ? symbols.end() : symbols.find(d.symbol);
               it != symbols.end()) {
      symbols.erase(it);
    } else {
      return Dim::unknown();
    }
    if (den <= 0 || den > (int64_t{1} << 40)) return Dim::unknown();
  }
  if (num % den != 0) return Dim::unknown();
  if (symbols.empty()) return Dim::of(num / den);
  if (symbols.size() == 1 && num == den) return Dim::named(*symbols.begin());
  return Dim::unknown();
}

void reshape(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto target = ctx.ints(1);
  if (!target) {
    const auto s = ctx.shape(1);
    return s && s->size() == 1 && (*s)[0].known() ? ctx.set_rank(0, elem, int((*s)[0].value))
                                                  : ctx.set_elem(0, elem);
  }
  const auto in = ctx.shape(0);
  const bool allowzero = ctx.opset() >= 14 && ctx.attr_int("allowzero", 0) != 0;
  Dims out = *target;
  int minus_one = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].known()) continue;
    if (out[i].value == 0 && !allowzero) {
      out[i] = in && i < in->size() ? (*in)[i] : Dim::unknown();
    } else if (out[i].value == -1) {
      if (minus_one >= 0) return ctx.set_rank(0, elem, static_cast<int>(out.size()));
      minus_one = static_cast<int>(i);
      out[i] = Dim::unknown();
    } else if (out[i].value < -1) {
      return ctx.set_rank(0, elem, static_cast<int>(out.size()));
    }
  }
  if (minus_one >= 0 && in) out[minus_one] = remainder(*in, out, minus_one);
  ctx.set(0, elem, out);
  if (const auto v = ctx.ints(0); v && out.size() <= 1) ctx.set_ints(0, *v);
}

void flatten(Context& ctx) {
  const auto s = ctx.shape(0);
  if (!s) return ctx.set_rank(0, ctx.elem(0), 2);
  const int64_t r = static_cast<int64_t>(s->size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -r || axis > r) return ctx.set_rank(0, ctx.elem(0), 2);
  if (axis < 0) axis += r;
  const Dims a(s->begin(), s->begin() + axis), b(s->begin() + axis, s->end());
  const auto pa = known_product(a), pb = known_product(b);
  ctx.set(0, ctx.elem(0), {pa ? Dim::of(*pa) : Dim::unknown(), pb ? Dim::of(*pb) : Dim::unknown()});
}

void squeeze(Context& ctx) {
  const auto s = ctx.shape(0);
  const auto axes = axes_attr_or_input(ctx, "axes", 1, 13);
  if (!s || !axes) return ctx.set_elem(0, ctx.elem(0));
  Dims out;
  if (axes->empty()) {
    for (const Dim& d : *s) {
      if (!d.known()) return ctx.set_elem(0, ctx.elem(0));
      if (d.value != 1) out.push_back(d);
    }
  } else {
    const auto idx = axes_index(*axes, static_cast<int64_t>(s->size()));
    if (!idx) return ctx.set_elem(0, ctx.elem(0));
    for (size_t i = 0; i < s->size(); ++i)
      if (!std::binary_search(idx->begin(), idx->end(), static_cast<int64_t>(i)))
        out.push_back((*s)[i]);
  }
  ctx.set(0, ctx.elem(0), out);
  if (const auto v = ctx.ints(0); v && out.empty() && v->size() == 1) ctx.set_ints(0, *v);
}

void unsqueeze(Context& ctx) {
  const auto s = ctx.shape(0);
  const auto axes = axes_attr_or_input(ctx, "axes", 1, 13);
  if (!s || !axes) return ctx.set_elem(0, ctx.elem(0));
  const int64_t r = static_cast<int64_t>(s->size() + axes->size());
  const auto idx = axes_index(*axes, r);
  if (!idx) return ctx.set_elem(0, ctx.elem(0));
  Dims out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) {
    if (std::binary_search(idx->begin(), idx->end(), i)) out.push_back(Dim::of(1));
    else
      out.push_back((*s)[k++]);
  }
  ctx.set(0, ctx.elem(0), out);
  if (const auto v = ctx.ints(0); v && s->empty()) ctx.set_ints(0, *v);
}

void transpose(Context& ctx) {
  const auto s = ctx.shape(0);
  if (!s) return ctx.set_elem(0, ctx.elem(0));
  const int64_t r = static_cast<int64_t>(s->size());
  std::vector<int64_t> perm;
  if (const auto p = ctx.attr_ints("perm"); p && !p->empty()) {
    perm = *p;
  } else {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  const auto idx = axes_index(perm, r);
  if (!idx || static_cast<int64_t>(perm.size()) != r) return ctx.set_rank(0, ctx.elem(0), int(r));
  Dims out;
  for (int64_t p : perm) out.push_back((*s)[p < 0 ? p + r : p]);
  ctx.set(0, ctx.elem(0), out);
}

void concat(Context& ctx) {
  std::optional<Dims> out;
  DType elem = DType::Undefined;
  Dims values;
  bool carried = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (elem == DType::Undefined) elem = ctx.elem(i);
    const auto s = ctx.shape(i);
    const auto v = ctx.ints(i);
    if (v && carried) values.insert(values.end(), v->begin(), v->end());
    else
      carried = false;
    if (!s) return ctx.set_elem(0, elem);
    const int64_t r = static_cast<int64_t>(s->size());
    const auto axis = axis_index(ctx.attr_int("axis", 0), r);
    if (!axis) return ctx.set_elem(0, elem);
    if (!out) {
      out = *s;
      continue;
    }
    if (out->size() != s->size()) return ctx.set_elem(0, elem);
    for (int64_t d = 0; d < r; ++d) {
      Dim& o = (*out)[d];
      const Dim& x = (*s)[d];
      if (d == *axis) o = o.known() && x.known() ? Dim::of(o.value + x.value) : Dim::unknown();
      else if (!o.known() && x.known())
        o = x;
    }
  }
  if (!out) return;
  ctx.set(0, elem, *out);
  if (carried && out->size() == 1) ctx.set_ints(0, values);
}

void split(Context& ctx) {
  const auto s = ctx.shape(0);
  const DType elem = ctx.elem(0);
  const size_t n = ctx.num_outputs();
  if (!s) {
    for (size_t o = 0; o < n; ++o) ctx.set_elem(o, elem);
    return;
  }
  const int64_t r = static_cast<int64_t>(s->size());
  const auto axis = axis_index(ctx.attr_int("axis", 0), r);
  if (!axis) return;
  std::optional<std::vector<int64_t>> sizes;
  if (ctx.opset() < 13) {
    if (const auto a = ctx.attr_ints("split"); a && !a->empty()) sizes = *a;
  } else if (ctx.has_input(1)) {
    sizes = ctx.known_ints(1);
    if (!sizes) {
      for (size_t o = 0; o < n; ++o) ctx.set_rank(o, elem, int(r));
      return;
    }
  }
  const Dim whole = (*s)[*axis];
  if (!sizes) {
    sizes.emplace();
    if (!whole.known() || n == 0) {
      for (size_t o = 0; o < n; ++o) {
        Dims d = *s;
        d[*axis] = Dim::unknown();
        ctx.set(o, elem, d);
      }
      return;
    }
    // Even parts; from opset 18 (num_outputs) the last may be smaller.
    const int64_t part = (whole.value + int64_t(n) - 1) / int64_t(n);
    for (size_t o = 0; o < n; ++o)
      sizes->push_back(std::max<int64_t>(0, std::min(part, whole.value - part * int64_t(o))));
    if (ctx.opset() < 18 && whole.value % int64_t(n) != 0) sizes.reset();
  }
  for (size_t o = 0; o < n; ++o) {
    Dims d = *s;
    d[*axis] =
        sizes && o < sizes->size() && (*sizes)[o] >= 0 ? Dim::of((*sizes)[o]) : Dim::unknown();
    ctx.set(o, elem, d);
  }
}

// The elements [start, end) by step of a dimension of `len` elements (ONNX Slice's clamping).
int64_t slice_length(int64_t start, int64_t end, int64_t step, int64_t len) {
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (step > 0) {
    start = clamp(start, 0, len);
    end = clamp(end, 0, len);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = clamp(start, -1, len - 1);
  end = clamp(end, -1, len - 1);
  return start > end ? (start - end - step - 1) / -step : 0;
}

void slice(Context& ctx) {
  const auto s = ctx.shape(0);
  const DType elem = ctx.elem(0);
  if (!s) return ctx.set_elem(0, elem);
  const int64_t r = static_cast<int64_t>(s->size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes");
  } else {
    starts = ctx.known_ints(1);
    ends = ctx.known_ints(2);
    if (ctx.has_input(3)) axes = ctx.known_ints(3);
    if (ctx.has_input(4)) steps = ctx.known_ints(4);
    if ((ctx.has_input(3) && !axes) || (ctx.has_input(4) && !steps)) starts.reset();
  }
  if (!starts || !ends || starts->size() != ends->size()) return ctx.set_rank(0, elem, int(r));
  std::vector<int64_t> ax = axes && !axes->empty() ? *axes : std::vector<int64_t>{};
  if (ax.empty())
    for (size_t i = 0; i < starts->size(); ++i) ax.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> st = steps && !steps->empty() ? *steps : std::vector<int64_t>(ax.size(), 1);
  if (ax.size() != starts->size() || st.size() != ax.size()) return ctx.set_rank(0, elem, int(r));
  Dims out = *s;
  for (size_t i = 0; i < ax.size(); ++i) {
    const auto a = axis_index(ax[i], r);
    if (!a || st[i] == 0) return ctx.set_rank(0, elem, int(r));
    const Dim& d = (*s)[*a];
    out[*a] = d.known() ? Dim::of(slice_length((*starts)[i], (*ends)[i], st[i], d.value))
                        : Dim::unknown();
  }
  ctx.set(0, elem, out);
  // A slice of a carried 1-D value.
  if (const auto v = ctx.ints(0); v && r == 1 && ax.size() == 1 && out[0].known()) {
    int64_t start = (*starts)[0], n = static_cast<int64_t>(v->size());
    if (start < 0) start += n;
    start = st[0] > 0 ? std::clamp<int64_t>(start, 0, n) : std::clamp<int64_t>(start, -1, n - 1);
    Dims taken;
    for (int64_t k = 0, i = start; k < out[0].value; ++k, i += st[0])
      if (i >= 0 && i < n) taken.push_back((*v)[i]);
    if (static_cast<int64_t>(taken.size()) == out[0].value) ctx.set_ints(0, taken);
  }
}

void gather(Context& ctx) {
  const auto data = ctx.shape(0), idx = ctx.shape(1);
  const DType elem = ctx.elem(0);
  if (!data || !idx) return ctx.set_elem(0, elem);
  const int64_t r = static_cast<int64_t>(data->size());
  const auto axis = axis_index(ctx.attr_int("axis", 0), r);
  if (!axis) return ctx.set_elem(0, elem);
  Dims out(data->begin(), data->begin() + *axis);
  out.insert(out.end(), idx->begin(), idx->end());
  out.insert(out.end(), data->begin() + *axis + 1, data->end());
  ctx.set(0, elem, out);
  // Gathering from a carried 1-D value (a shape) with constant indices.
  const auto v = ctx.ints(0);
  const auto k = ctx.known_ints(1);
  if (v && k && r == 1 && idx->size() <= 1) {
    Dims taken;
    for (int64_t i : *k) {
      if (i < 0) i += static_cast<int64_t>(v->size());
      if (i < 0 || i >= static_cast<int64_t>(v->size())) return;
      taken.push_back((*v)[i]);
    }
    ctx.set_ints(0, taken);
  }
}

void gather_elements(Context& ctx) {
  if (const auto s = ctx.shape(1)) return ctx.set(0, ctx.elem(0), *s);
  ctx.set_elem(0, ctx.elem(0));
}

void gather_nd(Context& ctx) {
  const auto data = ctx.shape(0), idx = ctx.shape(1);
  const DType elem = ctx.elem(0);
  if (!data || !idx || idx->empty() || !idx->back().known()) return ctx.set_elem(0, elem);
  const int64_t b = ctx.attr_int("batch_dims", 0), k = idx->back().value;
  const int64_t r = static_cast<int64_t>(data->size());
  if (b < 0 || b + k > r || b > static_cast<int64_t>(idx->size()) - 1) return ctx.set_elem(0, elem);
  Dims out(idx->begin(), idx->end() - 1);
  out.insert(out.end(), data->begin() + b + k, data->end());
  ctx.set(0, elem, out);
}

void expand(Context& ctx) {
  const auto s = ctx.shape(0);
  const auto target = ctx.ints(1);
  if (!s || !target) {
    const auto ts = ctx.shape(1);
    if (s && ts && ts->size() == 1 && (*ts)[0].known())
      return ctx.set_rank(0, ctx.elem(0),
                          int(std::max<int64_t>((*ts)[0].value, int64_t(s->size()))));
    return ctx.set_elem(0, ctx.elem(0));
  }
  const auto out = broadcast(*s, *target);
  if (!out) return ctx.set_elem(0, ctx.elem(0));
  ctx.set(0, ctx.elem(0), *out);
}

void tile(Context& ctx) {
  const auto s = ctx.shape(0);
  const auto reps = ctx.known_ints(1);
  if (!s) return ctx.set_elem(0, ctx.elem(0));
  if (!reps || reps->size() != s->size()) return ctx.set_rank(0, ctx.elem(0), int(s->size()));
  Dims out = *s;
  for (size_t i = 0; i < out.size(); ++i)
    out[i] =
        out[i].known() && (*reps)[i] >= 0 ? Dim::of(out[i].value * (*reps)[i]) : Dim::unknown();
  ctx.set(0, ctx.elem(0), out);
}

void pad(Context& ctx) {
  const auto s = ctx.shape(0);
  const DType elem = ctx.elem(0);
  if (!s) return ctx.set_elem(0, elem);
  const int64_t r = static_cast<int64_t>(s->size());
  const auto pads =
      ctx.opset() < 11 ? ctx.attr_ints(ctx.opset() < 2 ? "paddings" : "pads") : ctx.known_ints(1);
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    const auto a = ctx.known_ints(3);
    const auto idx = a ? axes_index(*a, r) : std::nullopt;
    if (!idx) return ctx.set_rank(0, elem, int(r));
    axes = *a;
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  if (!pads || pads->size() != 2 * axes.size()) return ctx.set_rank(0, elem, int(r));
  Dims out = *s;
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    Dim& d = out[a];
    const int64_t v = d.known() ? d.value + (*pads)[i] + (*pads)[i + n] : -1;
    d = d.known() && v >= 0 ? Dim::of(v) : Dim::unknown();
  }
  ctx.set(0, elem, out);
}

void range(Context& ctx) {
  const DType elem = ctx.elem(0);
  const Tensor* a = ctx.constant(0);
  const Tensor* b = ctx.constant(1);
  const Tensor* c = ctx.constant(2);
  if (!a || !b || !c || a->numel() != 1 || b->numel() != 1 || c->numel() != 1 ||
      a->dtype() != b->dtype() || a->dtype() != c->dtype())
    return ctx.set_rank(0, elem, 1);
  auto value = [](const Tensor& t) -> double {
    switch (t.dtype()) {
      case DType::Float32: return t.data<float>()[0];
      case DType::Float64: return t.data<double>()[0];
      case DType::Int32: return t.data<int32_t>()[0];
      case DType::Int64: return static_cast<double>(t.data<int64_t>()[0]);
      case DType::Int16: return t.data<int16_t>()[0];
      case DType::Float16: return static_cast<float>(t.data<Float16>()[0]);
      case DType::BFloat16: return static_cast<float>(t.data<BFloat16>()[0]);
      default: return 0;
    }
  };
  const double start = value(*a), limit = value(*b), delta = value(*c);
  if (delta == 0) return ctx.set_rank(0, elem, 1);
  const double n = std::ceil((limit - start) / delta);
  if (!(n >= -1e15 && n <= 1e15)) return ctx.set_rank(0, elem, 1);
  ctx.set(0, elem, {Dim::of(std::max<int64_t>(0, static_cast<int64_t>(n)))});
}

void depth_space(Context& ctx, bool to_depth) {
  const auto s = ctx.shape(0);
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (!s || s->size() != 4 || b <= 0) return ctx.set_elem(0, ctx.elem(0));
  Dims out = *s;
  auto scale = [](const Dim& d, int64_t mul, int64_t div) {
    return d.known() && d.value * mul % div == 0 ? Dim::of(d.value * mul / div) : Dim::unknown();
  };
  out[1] = to_depth ? scale((*s)[1], b * b, 1) : scale((*s)[1], 1, b * b);
  out[2] = to_depth ? scale((*s)[2], 1, b) : scale((*s)[2], b, 1);
  out[3] = to_depth ? scale((*s)[3], 1, b) : scale((*s)[3], b, 1);
  ctx.set(0, ctx.elem(0), out);
}
void depth_to_space(Context& ctx) { depth_space(ctx, false); }
void space_to_depth(Context& ctx) { depth_space(ctx, true); }

void one_hot(Context& ctx) {
  const auto s = ctx.shape(0);
  const DType elem = ctx.elem(2);
  if (!s) return ctx.set_elem(0, elem);
  const int64_t r = static_cast<int64_t>(s->size()) + 1;
  const auto axis = axis_index(ctx.attr_int("axis", -1), r);
  if (!axis) return ctx.set_elem(0, elem);
  const Tensor* depth = ctx.constant(1);
  Dim d = Dim::unknown();
  if (depth && depth->numel() == 1) {
    const auto k = ctx.known_ints(1);
    if (k) d = Dim::of((*k)[0]);
    else if (depth->dtype() == DType::Float32)
      d = Dim::of(int64_t(depth->data<float>()[0]));
  }
  Dims out = *s;
  out.insert(out.begin() + *axis, d.known() && d.value >= 0 ? d : Dim::unknown());
  ctx.set(0, elem, out);
}

void top_k(Context& ctx) {
  const auto s = ctx.shape(0);
  const DType elem = ctx.elem(0);
  if (!s) {
    ctx.set_elem(0, elem);
    return ctx.set_elem(1, DType::Int64);
  }
  const int64_t r = static_cast<int64_t>(s->size());
  const auto axis = axis_index(ctx.attr_int("axis", -1), r);
  if (!axis) return;
  Dims out = *s;
  std::optional<int64_t> k;
  if (ctx.opset() < 10) {
    if (ctx.has_attr("k")) k = ctx.attr_int("k", 0);
  } else if (const auto v = ctx.known_ints(1); v && v->size() == 1) {
    k = (*v)[0];
  }
  out[*axis] = k && *k >= 0 ? Dim::of(*k) : Dim::unknown();
  ctx.set(0, elem, out);
  ctx.set(1, DType::Int64, out);
}

void non_zero(Context& ctx) {
  const int r = ctx.rank(0);
  if (r < 0) return ctx.set_rank(0, DType::Int64, 2);
  ctx.set(0, DType::Int64, {Dim::of(r), Dim::unknown()});
}

void compress(Context& ctx) {
  const auto s = ctx.shape(0);
  if (!s) return ctx.set_elem(0, ctx.elem(0));
  if (!ctx.has_attr("axis")) return ctx.set(0, ctx.elem(0), {Dim::unknown()});
  const auto axis = axis_index(ctx.attr_int("axis", 0), static_cast<int64_t>(s->size()));
  if (!axis) return ctx.set_elem(0, ctx.elem(0));
  Dims out = *s;
  out[*axis] = Dim::unknown();
  ctx.set(0, ctx.elem(0), out);
}

void unique(Context& ctx) {
  const auto s = ctx.shape(0);
  if (!ctx.has_attr("axis") || !s) {
    ctx.set(0, ctx.elem(0), {Dim::unknown()});
  } else if (const auto a = axis_index(ctx.attr_int("axis", 0), int64_t(s->size()))) {
    Dims out = *s;
    out[*a] = Dim::unknown();
    ctx.set(0, ctx.elem(0), out);
  }
  for (size_t o = 1; o < 4; ++o) ctx.set(o, DType::Int64, {Dim::unknown()});
}

void eye_like(Context& ctx) {
  const auto to = dtype_attr(ctx, "dtype");
  const DType elem = to ? *to : ctx.elem(0);
  if (const auto s = ctx.shape(0)) return ctx.set(0, elem, *s);
  ctx.set_rank(0, elem, 2);
}

// ---- reductions ----

void reduce(Context& ctx, int axes_input_since) {
  const auto s = ctx.shape(0);
  const DType elem = ctx.elem(0);
  if (!s) return ctx.set_elem(0, elem);
  const int64_t r = static_cast<int64_t>(s->size());
  const bool keep = ctx.attr_int("keepdims", 1) != 0;
  const auto axes = axes_attr_or_input(ctx, "axes", 1, axes_input_since);
  if (!axes) return keep ? ctx.set_rank(0, elem, int(r)) : ctx.set_elem(0, elem);
  std::vector<int64_t> idx;
  if (axes->empty()) {
    if (ctx.opset() >= axes_input_since && ctx.attr_int("noop_with_empty_axes", 0) != 0)
      return ctx.set_like(0, 0);
    for (int64_t i = 0; i < r; ++i) idx.push_back(i);
  } else {
    const auto a = axes_index(*axes, r);
    if (!a) return ctx.set_elem(0, elem);
    idx = *a;
  }
  Dims out;
  for (int64_t i = 0; i < r; ++i) {
    if (!std::binary_search(idx.begin(), idx.end(), i)) out.push_back((*s)[i]);
    else if (keep)
      out.push_back(Dim::of(1));
  }
  ctx.set(0, elem, out);
}
void reduce_13(Context& ctx) { reduce(ctx, 13); }  // ReduceSum: axes as an input from 13
void reduce_18(Context& ctx) { reduce(ctx, 18); }  // the others: from 18

void arg_reduce(Context& ctx) {
  const auto s = ctx.shape(0);
  if (!s) return ctx.set_elem(0, DType::Int64);
  const int64_t r = static_cast<int64_t>(s->size());
  const auto axis = axis_index(ctx.attr_int("axis", 0), r);
  if (!axis) return ctx.set_elem(0, DType::Int64);
  Dims out = *s;
  if (ctx.attr_int("keepdims", 1) != 0) out[*axis] = Dim::of(1);
  else
    out.erase(out.begin() + *axis);
  ctx.set(0, DType::Int64, out);
}

}  // namespace

PI_INFER_RULE("", Shape, shape_op);
PI_INFER_RULE("", Size, size_op);
PI_INFER_RULE("", Constant, constant_op);
PI_INFER_RULE("", Cast, cast_op);
PI_INFER_RULE("", CastLike, cast_like);
PI_INFER_RULE("", ConstantOfShape, constant_of_shape);
PI_INFER_RULE("", Reshape, reshape);
PI_INFER_RULE("", Flatten, flatten);
PI_INFER_RULE("", Squeeze, squeeze);
PI_INFER_RULE("", Unsqueeze, unsqueeze);
PI_INFER_RULE("", Transpose, transpose);
PI_INFER_RULE("", Concat, concat);
PI_INFER_RULE("", Split, split);
PI_INFER_RULE("", Slice, slice);
PI_INFER_RULE("", Gather, gather);
PI_INFER_RULE("", GatherElements, gather_elements);
PI_INFER_RULE("", GatherND, gather_nd);
PI_INFER_RULE("", Expand, expand);
PI_INFER_RULE("", Tile, tile);
PI_INFER_RULE("", Pad, pad);
PI_INFER_RULE("", Range, range);
PI_INFER_RULE("", DepthToSpace, depth_to_space);
PI_INFER_RULE("", SpaceToDepth, space_to_depth);
PI_INFER_RULE("", OneHot, one_hot);
PI_INFER_RULE("", TopK, top_k);
PI_INFER_RULE("", NonZero, non_zero);
PI_INFER_RULE("", Compress, compress);
PI_INFER_RULE("", Unique, unique);
PI_INFER_RULE("", EyeLike, eye_like);
PI_INFER_RULE("", ReduceSum, reduce_13);
PI_INFER_RULE("", ReduceMean, reduce_18);
PI_INFER_RULE("", ReduceMax, reduce_18);
PI_INFER_RULE("", ReduceMin, reduce_18);
PI_INFER_RULE("", ReduceProd, reduce_18);
PI_INFER_RULE("", ReduceL1, reduce_18);
PI_INFER_RULE("", ReduceL2, reduce_18);
PI_INFER_RULE("", ReduceLogSum, reduce_18);
PI_INFER_RULE("", ReduceLogSumExp, reduce_18);
PI_INFER_RULE("", ReduceSumSquare, reduce_18);
PI_INFER_RULE("", ArgMax, arg_reduce);
PI_INFER_RULE("", ArgMin, arg_reduce);

}  // namespace polyinfer::infer
