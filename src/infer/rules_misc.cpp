// Inference of the operators of no larger family: random generators, detection (NMS, RoiAlign),
// sampling grids, image rearrangement (Col2Im, CenterCropPad, MaxUnpool), Det, Einsum, signal
// processing (DFT, STFT, windows, MelWeightMatrix), text (TfIdfVectorizer, StringNormalizer) and
// the losses.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

// A dtype attribute (ONNX's TensorProto element types, which DType's values follow): `def` where
// absent; nullopt where not a type inference knows.
std::optional<DType> dtype_attr(const Context& ctx, const char* name, DType def) {
  if (!ctx.has_attr(name)) return def == DType::Undefined ? std::nullopt : std::optional(def);
  const int64_t v = ctx.attr_int(name, 0);
  if (v < 1 || v > 16 || v == 14 || v == 15) return std::nullopt;  // no complex types
  return static_cast<DType>(v);
}

// Output o of `elem` and input i's shape (of its rank, or nothing, as far as known).
void shaped_like(Context& ctx, size_t o, DType elem, size_t i) {
  if (const auto s = ctx.shape(i)) return ctx.set(o, elem, *s);
  ctx.set_elem(o, elem);
}

// The value of a scalar (or one-element) integer input as a dimension: a number >= 0, a symbol
// carried from a shape, or unknown.
Dim scalar_dim(const Context& ctx, size_t i) {
  const auto v = ctx.ints(i);
  if (!v || v->size() != 1) return Dim::unknown();
  const Dim& d = (*v)[0];
  return d.known() && d.value < 0 ? Dim::unknown() : d;
}

// An integer input's values as dimensions (negative numbers unknown), or nullopt.
std::optional<Dims> dims_input(const Context& ctx, size_t i) {
  auto v = ctx.ints(i);
  if (!v) return std::nullopt;
  for (Dim& d : *v)
    if (d.known() && d.value < 0) d = Dim::unknown();
  return v;
}

// The length of a 1-D input, where known.
std::optional<int64_t> length_of(const Context& ctx, size_t i) {
  if (const auto v = ctx.ints(i)) return static_cast<int64_t>(v->size());
  const auto s = ctx.shape(i);
  if (s && s->size() == 1 && (*s)[0].known()) return (*s)[0].value;
  return std::nullopt;
}

// ---- random generators ----

// RandomNormal / RandomUniform: the `shape` attribute, `dtype` (float32 by default).
void random_op(Context& ctx) {
  const auto elem = dtype_attr(ctx, "dtype", DType::Float32);
  const auto shape = ctx.attr_ints("shape");
  if (!elem) return;
  if (!shape) return ctx.set_elem(0, *elem);
  Dims d;
  for (int64_t v : *shape) d.push_back(v >= 0 ? Dim::of(v) : Dim::unknown());
  ctx.set(0, *elem, d);
}

// RandomNormalLike / RandomUniformLike / Bernoulli: the input's shape, `dtype` or the input's.
void random_like(Context& ctx) {
  const auto elem = dtype_attr(ctx, "dtype", ctx.elem(0));
  shaped_like(ctx, 0, elem.value_or(DType::Undefined), 0);
}

// Multinomial: [batch, sample_size] from input [batch, class_size]; int32 by default.
void multinomial(Context& ctx) {
  const auto elem = dtype_attr(ctx, "dtype", DType::Int32);
  const DType e = elem.value_or(DType::Undefined);
  const auto s = ctx.shape(0);
  const int64_t samples = ctx.attr_int("sample_size", 1);
  const Dim batch = s && s->size() == 2 ? (*s)[0] : Dim::unknown();
  ctx.set(0, e, {batch, samples >= 0 ? Dim::of(samples) : Dim::unknown()});
}

// ---- detection and sampling ----

// NonMaxSuppression: [selected, 3] int64, as many rows as boxes survive.
void non_max_suppression(Context& ctx) { ctx.set(0, DType::Int64, {Dim::unknown(), Dim::of(3)}); }

// RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]): [R, C, output_height, output_width].
void roi_align(Context& ctx) {
  const auto x = ctx.shape(0), rois = ctx.shape(1), idx = ctx.shape(2);
  Dim r = Dim::unknown();
  if (rois && rois->size() == 2) r = (*rois)[0];
  if (!r.known() && idx && idx->size() == 1 && (*idx)[0].known()) r = (*idx)[0];
  const Dim c = x && x->size() == 4 ? (*x)[1] : Dim::unknown();
  const int64_t h = ctx.attr_int("output_height", 1), w = ctx.attr_int("output_width", 1);
  ctx.set(0, ctx.elem(0),
          {r, c, h > 0 ? Dim::of(h) : Dim::unknown(), w > 0 ? Dim::of(w) : Dim::unknown()});
}

// GridSample(X [N, C, D1...Dr], grid [N, O1...Or, r]): [N, C, O1...Or] (r = 2 before opset 20).
void grid_sample(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0), grid = ctx.shape(1);
  if (!grid || grid->size() < 3 || (x && x->size() != grid->size())) {
    if (x && x->size() >= 3) return ctx.set_rank(0, elem, int(x->size()));
    return ctx.set_elem(0, elem);
  }
  Dims out{x && (*x)[0].known() ? (*x)[0] : (*grid)[0], x ? (*x)[1] : Dim::unknown()};
  out.insert(out.end(), grid->begin() + 1, grid->end() - 1);
  ctx.set(0, elem, out);
}

// AffineGrid(theta [N, 2, 3] or [N, 3, 4], size (N, C, H, W) or (N, C, D, H, W)): [N, H, W, 2]
// or [N, D, H, W, 3].
void affine_grid(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto theta = ctx.shape(0);
  const auto size = dims_input(ctx, 1);
  int64_t n = size ? static_cast<int64_t>(size->size()) : length_of(ctx, 1).value_or(-1);
  if (!size && n != 4 && n != 5 && theta && theta->size() == 3 && (*theta)[1].known() &&
      ((*theta)[1].value == 2 || (*theta)[1].value == 3))
    n = (*theta)[1].value + 2;
  if (n != 4 && n != 5) return ctx.set_elem(0, elem);
  Dims out;
  if (size) {
    out.push_back((*size)[0]);
    out.insert(out.end(), size->begin() + 2, size->end());
  } else {
    out.assign(static_cast<size_t>(n) - 1, Dim::unknown());
  }
  if (!out[0].known() && theta && theta->size() == 3) out[0] = (*theta)[0];
  out.push_back(Dim::of(n - 2));
  ctx.set(0, elem, out);
}

// ---- image rearrangement ----

// Col2Im(input [N, C*prod(block_shape), L], image_shape, block_shape): [N, C, image_shape...].
void col2im(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0);
  const auto image = dims_input(ctx, 1);
  const auto block = ctx.known_ints(2);
  Dims out{x && x->size() == 3 ? (*x)[0] : Dim::unknown(), Dim::unknown()};
  if (x && x->size() == 3 && block && !block->empty()) {
    int64_t k = 1;
    for (int64_t b : *block)
      if (k > 0) k = b > 0 && k <= (int64_t{1} << 40) / b ? k * b : -1;
    const Dim& ck = (*x)[1];
    if (k > 0 && ck.known() && ck.value % k == 0) out[1] = Dim::of(ck.value / k);
  }
  if (image) {
    out.insert(out.end(), image->begin(), image->end());
  } else if (const auto n = length_of(ctx, 1)) {
    out.insert(out.end(), static_cast<size_t>(std::clamp<int64_t>(*n, 0, 64)), Dim::unknown());
  } else {
    return ctx.set_elem(0, elem);
  }
  ctx.set(0, elem, out);
}

// CenterCropPad(input, shape): the input with the dimensions of `axes` (all by default) set to
// the values of `shape`.
void center_crop_pad(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0);
  if (!x) return ctx.set_elem(0, elem);
  const int64_t r = static_cast<int64_t>(x->size());
  std::vector<int64_t> axes;
  if (const auto a = ctx.attr_ints("axes")) {
    const auto idx = axes_index(*a, r);
    if (!idx) return ctx.set_rank(0, elem, int(r));
    for (int64_t v : *a) axes.push_back(v < 0 ? v + r : v);
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const auto shape = dims_input(ctx, 1);
  Dims out = *x;
  if (!shape || shape->size() != axes.size()) {
    for (int64_t a : axes) out[a] = Dim::unknown();
  } else {
    for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = (*shape)[i];
  }
  ctx.set(0, elem, out);
}

// MaxUnpool(X [N, C, D...], I, [output_shape]): output_shape, or each spatial dimension
// (d - 1) * stride + kernel - pad_begin - pad_end.
void max_unpool(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0);
  if (ctx.has_input(2)) {
    if (const auto shape = dims_input(ctx, 2)) return ctx.set(0, elem, *shape);
    if (const auto n = length_of(ctx, 2); n && *n >= 0 && *n <= 64)
      return ctx.set_rank(0, elem, int(*n));
    if (x) return ctx.set_rank(0, elem, int(x->size()));
    return ctx.set_elem(0, elem);
  }
  if (!x || x->size() < 3) return ctx.set_elem(0, elem);
  const size_t r = x->size() - 2;
  const auto kernel = ctx.attr_ints("kernel_shape");
  const auto strides = ctx.attr_ints("strides").value_or(std::vector<int64_t>(r, 1));
  const auto pads = ctx.attr_ints("pads").value_or(std::vector<int64_t>(2 * r, 0));
  if (!kernel || kernel->size() != r || strides.size() != r || pads.size() != 2 * r)
    return ctx.set_rank(0, elem, int(x->size()));
  Dims out{(*x)[0], (*x)[1]};
  for (size_t i = 0; i < r; ++i) {
    const Dim& d = (*x)[i + 2];
    auto small = [](int64_t a) { return a > -(int64_t{1} << 40) && a < (int64_t{1} << 40); };
    int64_t v = -1;
    if (d.known() && small(d.value) && small(strides[i]) && small((*kernel)[i]) && small(pads[i]) &&
        small(pads[i + r]))
      v = (d.value - 1) * strides[i] + (*kernel)[i] - pads[i] - pads[i + r];
    out.push_back(v >= 0 ? Dim::of(v) : Dim::unknown());
  }
  ctx.set(0, elem, out);
}

// Det([*, M, M]): [*].
void det(Context& ctx) {
  const auto x = ctx.shape(0);
  if (!x || x->size() < 2) return ctx.set_elem(0, ctx.elem(0));
  ctx.set(0, ctx.elem(0), Dims(x->begin(), x->end() - 2));
}

// ---- Einsum ----

// One term of an equation: its letters in order, -1 where the ellipsis stands.
struct Term {
  std::vector<int> labels;
  bool ellipsis = false;
  size_t letters() const { return labels.size() - (ellipsis ? 1 : 0); }
};

std::optional<Term> parse_term(const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (t.ellipsis || s.compare(i, 3, "...") != 0) return std::nullopt;
      t.ellipsis = true;
      t.labels.push_back(-1);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      t.labels.push_back(static_cast<unsigned char>(c));
    } else {
      return std::nullopt;
    }
  }
  return t;
}

// The dimension a label has, from those its operands give it (a 1 broadcasts, as in numpy's
// einsum): the number other than 1 they give, else 1 where all are known, else the symbol all
// give.
Dim label_dim(const Dims& seen) {
  std::optional<int64_t> number;
  bool ones = false, others = false;
  for (const Dim& d : seen) {
    if (!d.known()) {
      others = true;
    } else if (d.value == 1) {
      ones = true;
    } else {
      if (number && *number != d.value) return Dim::unknown();
      number = d.value;
    }
  }
  if (number) return Dim::of(*number);
  if (ones) return others ? Dim::unknown() : Dim::of(1);
  if (seen.empty() || seen[0].symbol.empty()) return Dim::unknown();
  for (const Dim& d : seen)
    if (d.symbol != seen[0].symbol) return Dim::unknown();
  return seen[0];
}

// Einsum: the output term's labels (explicit, after "->"; implicit: the ellipsis, then the
// letters used once, in ASCII order), each of the size its operands give it; the ellipsis's
// dimensions broadcast across the operands, aligned on the right.
void einsum(Context& ctx) {
  const DType elem = ctx.elem(0);
  std::string eq;
  for (char c : ctx.attr_string("equation", ""))
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    const auto t =
        parse_term(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (!t) return ctx.set_elem(0, elem);
    terms.push_back(*t);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::optional<Term> out_term;
  if (arrow != std::string::npos) {
    out_term = parse_term(eq.substr(arrow + 2));
    if (!out_term) return ctx.set_elem(0, elem);
  }
  if (terms.size() != ctx.num_inputs()) return ctx.set_elem(0, elem);

  std::map<int, Dims> seen;          // letter -> the dimensions operands give it
  std::optional<Dims> ell = Dims{};  // the ellipsis's dimensions, nullopt where not known
  bool ell_rank_known = true;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const auto s = ctx.shape(i);
    if (!s) {
      if (t.ellipsis) ell_rank_known = false;
      for (int l : t.labels)
        if (l >= 0) seen[l].push_back(Dim::unknown());
      continue;
    }
    if (s->size() < t.letters() || (!t.ellipsis && s->size() != t.letters()))
      return ctx.set_elem(0, elem);
    const size_t e = s->size() - t.letters();
    size_t d = 0;
    for (int l : t.labels) {
      if (l < 0) {
        const Dims part(s->begin() + d, s->begin() + d + e);
        if (ell) ell = broadcast(*ell, part);
        d += e;
      } else {
        seen[l].push_back((*s)[d++]);
      }
    }
  }
  // The ellipsis's rank: the longest part's, where every operand with one has a known rank.
  size_t ell_rank = 0;
  if (ell_rank_known) {
    for (size_t i = 0; i < terms.size(); ++i)
      if (const auto s = ctx.shape(i); s && terms[i].ellipsis)
        ell_rank = std::max(ell_rank, s->size() - terms[i].letters());
  }
  const Dims ell_dims = ell && ell->size() == ell_rank ? *ell : Dims(ell_rank);

  Dims out;
  auto add_ellipsis = [&]() { out.insert(out.end(), ell_dims.begin(), ell_dims.end()); };
  if (out_term) {
    for (int l : out_term->labels) {
      if (l < 0) {
        if (!ell_rank_known) return ctx.set_elem(0, elem);
        add_ellipsis();
      } else {
        const auto it = seen.find(l);
        if (it == seen.end()) return ctx.set_elem(0, elem);
        out.push_back(label_dim(it->second));
      }
    }
  } else {
    bool any_ellipsis = false;
    for (const Term& t : terms) any_ellipsis = any_ellipsis || t.ellipsis;
    if (any_ellipsis && !ell_rank_known) return ctx.set_elem(0, elem);
    add_ellipsis();
    std::map<int, int> count;
    for (const Term& t : terms)
      for (int l : t.labels)
        if (l >= 0) ++count[l];
    for (const auto& [l, n] : count)  // ASCII order: upper case first
      if (n == 1) out.push_back(label_dim(seen[l]));
  }
  ctx.set(0, elem, out);
}

// ---- signal processing ----

// DFT(input [..., 1 or 2], [dft_length], [axis (opset 20; an attribute before)]): the axis
// becomes dft_length long (onesided: dft_length / 2 + 1; the inverse of a onesided spectrum:
// a real signal of dft_length, 2 * (n - 1) by default), the last dimension 2 (complex), or 1
// for that inverse.
void dft(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0);
  if (!x || x->size() < 2) return ctx.set_elem(0, elem);
  const int64_t r = static_cast<int64_t>(x->size());
  const bool inverse = ctx.attr_int("inverse", 0) != 0, onesided = ctx.attr_int("onesided", 0) != 0;
  const bool irfft = inverse && onesided;
  Dims out = *x;
  out.back() = Dim::of(irfft ? 1 : 2);
  std::optional<int64_t> axis = ctx.attr_int("axis", 1);
  if (ctx.opset() >= 20) {
    axis = -2;
    if (ctx.has_input(2)) {
      const auto a = ctx.known_ints(2);
      axis = a && a->size() == 1 ? std::optional((*a)[0]) : std::nullopt;
    }
  }
  const auto a = axis ? axis_index(*axis, r) : std::nullopt;
  if (!a || *a == r - 1) {
    for (int64_t i = 0; i + 1 < r; ++i) out[i] = Dim::unknown();
    return ctx.set(0, elem, out);
  }
  const Dim len = (*x)[*a];
  // dft_length: the input's value (an empty one stands for the default), else the axis's.
  std::optional<int64_t> n;
  bool given = false;
  if (ctx.has_input(1)) {
    const auto v = ctx.known_ints(1);
    given = !v || !v->empty();
    if (v && v->size() == 1) n = (*v)[0];
  }
  if (!given && len.known() && len.value < (int64_t{1} << 40))
    n = irfft ? 2 * (len.value - 1) : len.value;
  out[*a] = n && *n > 0 ? Dim::of(irfft ? *n : onesided ? *n / 2 + 1 : *n) : Dim::unknown();
  ctx.set(0, elem, out);
}

// STFT(signal [batch, length, 1 or 2], frame_step, [window [W]], [frame_length]):
// [batch, frames, bins, 2], frames = 1 + (length - frame_length) / frame_step, bins =
// frame_length (onesided: frame_length / 2 + 1).
void stft(Context& ctx) {
  const DType elem = ctx.elem(0);
  const auto x = ctx.shape(0);
  const Dim batch = x && x->size() == 3 ? (*x)[0] : Dim::unknown();
  const Dim len = x && x->size() == 3 ? (*x)[1] : Dim::unknown();
  // frame_length: the input's value, else the window's length (a run checks they agree).
  std::optional<int64_t> flen;
  if (const auto v = ctx.known_ints(3); v && v->size() == 1) flen = (*v)[0];
  if (const auto w = ctx.shape(2); !flen && w && w->size() == 1 && (*w)[0].known())
    flen = (*w)[0].value;
  const auto step = ctx.known_ints(1);
  Dim frames = Dim::unknown(), bins = Dim::unknown();
  if (flen && *flen > 0) {
    bins = Dim::of(ctx.attr_int("onesided", 1) != 0 ? *flen / 2 + 1 : *flen);
    if (step && step->size() == 1 && (*step)[0] > 0 && len.known() && len.value >= *flen)
      frames = Dim::of(1 + (len.value - *flen) / (*step)[0]);
  }
  ctx.set(0, elem, {batch, frames, bins, Dim::of(2)});
}

// HannWindow / HammingWindow / BlackmanWindow(size): [size] of output_datatype (float32).
void window(Context& ctx) {
  const auto elem = dtype_attr(ctx, "output_datatype", DType::Float32);
  ctx.set(0, elem.value_or(DType::Undefined), {scalar_dim(ctx, 0)});
}

// MelWeightMatrix(num_mel_bins, dft_length, ...): [dft_length / 2 + 1, num_mel_bins].
void mel_weight_matrix(Context& ctx) {
  const auto elem = dtype_attr(ctx, "output_datatype", DType::Float32);
  const Dim bins = scalar_dim(ctx, 0), n = scalar_dim(ctx, 1);
  ctx.set(0, elem.value_or(DType::Undefined),
          {n.known() ? Dim::of(n.value / 2 + 1) : Dim::unknown(), bins});
}

// ---- text ----

// TfIdfVectorizer([C] or [N, C]): float32 [max(ngram_indexes) + 1] or [N, that].
void tfidf_vectorizer(Context& ctx) {
  Dim width = Dim::unknown();
  if (const auto idx = ctx.attr_ints("ngram_indexes"); idx && !idx->empty()) {
    const int64_t m = *std::max_element(idx->begin(), idx->end());
    if (*std::min_element(idx->begin(), idx->end()) >= 0 && m < (int64_t{1} << 31))
      width = Dim::of(m + 1);
  }
  const auto x = ctx.shape(0);
  if (!x || (x->size() != 1 && x->size() != 2)) return ctx.set_elem(0, DType::Float32);
  if (x->size() == 1) return ctx.set(0, DType::Float32, {width});
  ctx.set(0, DType::Float32, {(*x)[0], width});
}

// StringNormalizer([C] or [1, C]): strings, [n] or [1, n]; n = C where no stop word can drop
// one (an input left with no word gives one empty string).
void string_normalizer(Context& ctx) {
  const auto x = ctx.shape(0);
  if (!x || (x->size() != 1 && x->size() != 2)) return ctx.set_elem(0, DType::String);
  const ir::Attribute* stop = ctx.attr("stopwords");
  const bool keeps_all = !stop || stop->strings.empty();
  const Dim& c = x->back();
  const Dim n = keeps_all && c.known() && c.value > 0 ? c : Dim::unknown();
  if (x->size() == 1) return ctx.set(0, DType::String, {n});
  ctx.set(0, DType::String, {(*x)[0], n});
}

// ---- losses ----

// The loss per sample, [N, d1...]: the labels' shape, else the scores' without C.
std::optional<Dims> per_sample(const Context& ctx) {
  if (const auto l = ctx.shape(1)) return l;
  const auto s = ctx.shape(0);
  if (!s || s->size() < 2) return std::nullopt;
  Dims d{(*s)[0]};
  d.insert(d.end(), s->begin() + 2, s->end());
  return d;
}

// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss(scores [N, C, d1...], labels [N, d1...],
// [weights]): the loss, per sample (reduction none) or a scalar; SoftmaxCrossEntropyLoss's
// log_prob as the scores.
void loss(Context& ctx) {
  const DType elem = ctx.elem(0);
  if (ctx.attr_string("reduction", "mean") != "none") {
    ctx.set(0, elem, {});
  } else if (const auto d = per_sample(ctx)) {
    ctx.set(0, elem, *d);
  } else {
    ctx.set_elem(0, elem);
  }
  if (ctx.node().op_type == "SoftmaxCrossEntropyLoss") ctx.set_like(1, 0);
}

}  // namespace

PI_INFER_RULE("", RandomNormal, random_op);
PI_INFER_RULE("", RandomUniform, random_op);
PI_INFER_RULE("", RandomNormalLike, random_like);
PI_INFER_RULE("", RandomUniformLike, random_like);
PI_INFER_RULE("", Bernoulli, random_like);
PI_INFER_RULE("", Multinomial, multinomial);
PI_INFER_RULE("", NonMaxSuppression, non_max_suppression);
PI_INFER_RULE("", RoiAlign, roi_align);
PI_INFER_RULE("", GridSample, grid_sample);
PI_INFER_RULE("", AffineGrid, affine_grid);
PI_INFER_RULE("", Col2Im, col2im);
PI_INFER_RULE("", CenterCropPad, center_crop_pad);
PI_INFER_RULE("", MaxUnpool, max_unpool);
PI_INFER_RULE("", Det, det);
PI_INFER_RULE("", Einsum, einsum);
PI_INFER_RULE("", DFT, dft);
PI_INFER_RULE("", STFT, stft);
PI_INFER_RULE("", HannWindow, window);
PI_INFER_RULE("", HammingWindow, window);
PI_INFER_RULE("", BlackmanWindow, window);
PI_INFER_RULE("", MelWeightMatrix, mel_weight_matrix);
PI_INFER_RULE("", TfIdfVectorizer, tfidf_vectorizer);
PI_INFER_RULE("", StringNormalizer, string_normalizer);
PI_INFER_RULE("", NegativeLogLikelihoodLoss, loss);
PI_INFER_RULE("", SoftmaxCrossEntropyLoss, loss);

}  // namespace polyinfer::infer
