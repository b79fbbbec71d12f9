// Inference of the ai.onnx.ml operators (the CPU kernels in src/providers/cpu/ml/): the output
// types and shapes those kernels produce. Most read rows: [C] is one row, [N, ...] is N rows.
#include <algorithm>
#include <memory>
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

// The number of rows of input i: 1 for [C], the first dimension otherwise; unknown without a
// rank.
Dim rows(const Context& ctx, size_t i) {
  const auto s = ctx.shape(i);
  if (!s || s->empty()) return Dim::unknown();
  return s->size() == 1 ? Dim::of(1) : (*s)[0];
}

size_t list_size(const Context& ctx, const char* name) {
  const ir::Attribute* a = ctx.attr(name);
  if (!a) return 0;
  using T = ir::Attribute::Type;
  switch (a->type) {
    case T::Ints: return a->ints.size();
    case T::Floats: return a->floats.size();
    case T::Strings: return a->strings.size();
    case T::Tensor: return a->t.defined() ? static_cast<size_t>(a->t.numel()) : 0;
    default: return 0;
  }
}

// A classifier's label type and count: strings when `strings` lists them, else int64.
DType label_type(const Context& ctx, const char* strings) {
  return list_size(ctx, strings) > 0 ? DType::String : DType::Int64;
}
int64_t label_count(const Context& ctx, const char* ints, const char* strings) {
  return static_cast<int64_t>(std::max(list_size(ctx, ints), list_size(ctx, strings)));
}

// n_targets, or one more than the largest of `ids` (1 without any).
int64_t targets(const Context& ctx, const char* ids) {
  if (ctx.has_attr("n_targets")) return ctx.attr_int("n_targets", 1);
  int64_t m = 0;
  if (const auto v = ctx.attr_ints(ids))
    for (int64_t t : *v) m = std::max(m, t + 1);
  return std::max<int64_t>(m, 1);
}

void tree_classifier(Context& ctx) {
  const int64_t k = label_count(ctx, "classlabels_int64s", "classlabels_strings");
  ctx.set(0, label_type(ctx, "classlabels_strings"), {rows(ctx, 0)});
  if (k >= 2) ctx.set(1, DType::Float32, {rows(ctx, 0), Dim::of(k)});
}

void tree_regressor(Context& ctx) {
  ctx.set(0, DType::Float32, {rows(ctx, 0), Dim::of(targets(ctx, "target_ids"))});
}

void tree_ensemble(Context& ctx) {
  DType elem = ctx.elem(0);
  if (elem == DType::Undefined)
    if (const ir::Attribute* a = ctx.attr("leaf_weights"); a && a->t.defined()) elem = a->t.dtype();
  ctx.set(0, elem, {rows(ctx, 0), Dim::of(targets(ctx, "leaf_targetids"))});
}

void linear_classifier(Context& ctx) {
  const int64_t labels = label_count(ctx, "classlabels_ints", "classlabels_strings");
  const int64_t k = static_cast<int64_t>(list_size(ctx, "intercepts"));
  ctx.set(0, label_type(ctx, "classlabels_strings"), {rows(ctx, 0)});
  const Dim cols = k == 1 && labels == 2 ? Dim::of(2) : k >= 1 ? Dim::of(k) : Dim::unknown();
  ctx.set(1, DType::Float32, {rows(ctx, 0), cols});
}

void linear_regressor(Context& ctx) {
  ctx.set(0, DType::Float32, {rows(ctx, 0), Dim::of(ctx.attr_int("targets", 1))});
}

void svm_classifier(Context& ctx) {
  const int64_t k = label_count(ctx, "classlabels_ints", "classlabels_strings");
  int64_t vectors = 0;
  if (const auto v = ctx.attr_ints("vectors_per_class"))
    for (int64_t c : *v) vectors += c;
  const bool proba = list_size(ctx, "prob_a") > 0;
  const int64_t cols = vectors == 0 || proba ? k : (k == 2 ? 2 : k * (k - 1) / 2);
  ctx.set(0, label_type(ctx, "classlabels_strings"), {rows(ctx, 0)});
  ctx.set(1, DType::Float32, {rows(ctx, 0), Dim::of(cols)});
}

void svm_regressor(Context& ctx) { ctx.set(0, DType::Float32, {rows(ctx, 0), Dim::of(1)}); }

// Float32 output of input 0's shape.
void float_like(Context& ctx) {
  if (const auto s = ctx.shape(0)) return ctx.set(0, DType::Float32, *s);
  ctx.set_elem(0, DType::Float32);
}

void one_hot_encoder(Context& ctx) {
  const int64_t k =
      static_cast<int64_t>(std::max(list_size(ctx, "cats_int64s"), list_size(ctx, "cats_strings")));
  auto s = ctx.shape(0);
  if (!s) return ctx.set_elem(0, DType::Float32);
  s->push_back(Dim::of(k));
  ctx.set(0, DType::Float32, *s);
}

// Output 0 of `elem` and input 0's shape.
void mapped_like(Context& ctx, DType elem) {
  if (elem == DType::Undefined) return;
  if (const auto s = ctx.shape(0)) return ctx.set(0, elem, *s);
  ctx.set_elem(0, elem);
}

// Strings become integers and integers strings.
DType swapped(DType in) {
  return in == DType::String ? DType::Int64 : in == DType::Int64 ? DType::String : DType::Undefined;
}

void label_encoder(Context& ctx) {
  if (ctx.opset() < 2) return mapped_like(ctx, swapped(ctx.elem(0)));
  DType elem = DType::Undefined;
  if (const ir::Attribute* a = ctx.attr("values_tensor"); a && a->t.defined()) elem = a->t.dtype();
  else if (ctx.has_attr("values_strings"))
    elem = DType::String;
  else if (ctx.has_attr("values_int64s"))
    elem = DType::Int64;
  else if (ctx.has_attr("values_floats"))
    elem = DType::Float32;
  mapped_like(ctx, elem);
}

void category_mapper(Context& ctx) { mapped_like(ctx, swapped(ctx.elem(0))); }

void array_feature_extractor(Context& ctx) {
  const auto s = ctx.shape(0);
  const auto idx = ctx.shape(1);
  Dim k = Dim::unknown();
  if (idx) {
    if (const auto n = known_product(*idx)) k = Dim::of(*n);
  }
  if (!s || s->empty()) return ctx.set_elem(0, ctx.elem(0));
  Dims out = s->size() == 1 ? Dims{Dim::of(1)} : Dims(s->begin(), s->end() - 1);
  out.push_back(k);
  ctx.set(0, ctx.elem(0), out);
}

void feature_vectorizer(Context& ctx) {
  Dim total = Dim::unknown();
  if (const auto d = ctx.attr_ints("inputdimensions"); d && d->size() == ctx.num_inputs()) {
    int64_t t = 0;
    for (int64_t v : *d) t += v;
    total = Dim::of(t);
  } else {
    int64_t t = 0;
    bool known = true;
    for (size_t i = 0; i < ctx.num_inputs() && known; ++i) {
      const auto s = ctx.shape(i);
      if (!s || s->empty()) {
        known = false;
      } else {
        const Dims tail = s->size() == 1 ? *s : Dims(s->begin() + 1, s->end());
        const auto n = known_product(tail);
        known = n.has_value();
        t += n.value_or(0);
      }
    }
    if (known) total = Dim::of(t);
  }
  ctx.set(0, DType::Float32, {ctx.num_inputs() ? rows(ctx, 0) : Dim::of(0), total});
}

// ZipMap: a sequence of maps from the class labels to float scores.
void zip_map(Context& ctx) {
  ir::TypeInfo map;
  map.kind = ir::TypeInfo::Kind::Map;
  map.key = label_type(ctx, "classlabels_strings");
  map.inner = std::make_shared<ir::TypeInfo>(tensor_type(DType::Float32, {}));
  map.elem = DType::Float32;
  ir::TypeInfo seq;
  seq.kind = ir::TypeInfo::Kind::Sequence;
  seq.inner = std::make_shared<ir::TypeInfo>(map);
  seq.elem = DType::Float32;
  ctx.set_type(0, seq);
}

// DictVectorizer: [1, vocabulary size] of the map's value type.
void dict_vectorizer(Context& ctx) {
  const ir::TypeInfo* in = ctx.type(0);
  const DType elem = in && in->kind == ir::TypeInfo::Kind::Map ? in->elem : DType::Undefined;
  const size_t words =
      std::max(list_size(ctx, "string_vocabulary"), list_size(ctx, "int64_vocabulary"));
  ctx.set(0, elem, {Dim::of(1), Dim::of(static_cast<int64_t>(words))});
}

}  // namespace

PI_INFER_RULE(kMl, TreeEnsembleClassifier, tree_classifier);
PI_INFER_RULE(kMl, TreeEnsembleRegressor, tree_regressor);
PI_INFER_RULE(kMl, TreeEnsemble, tree_ensemble);
PI_INFER_RULE(kMl, LinearClassifier, linear_classifier);
PI_INFER_RULE(kMl, LinearRegressor, linear_regressor);
PI_INFER_RULE(kMl, SVMClassifier, svm_classifier);
PI_INFER_RULE(kMl, SVMRegressor, svm_regressor);
PI_INFER_RULE(kMl, Scaler, float_like);
PI_INFER_RULE(kMl, Normalizer, float_like);
PI_INFER_RULE(kMl, Binarizer, same_as_input);
PI_INFER_RULE(kMl, Imputer, same_as_input);
PI_INFER_RULE(kMl, OneHotEncoder, one_hot_encoder);
PI_INFER_RULE(kMl, LabelEncoder, label_encoder);
PI_INFER_RULE(kMl, CategoryMapper, category_mapper);
PI_INFER_RULE(kMl, ArrayFeatureExtractor, array_feature_extractor);
PI_INFER_RULE(kMl, FeatureVectorizer, feature_vectorizer);
PI_INFER_RULE(kMl, ZipMap, zip_map);
PI_INFER_RULE(kMl, DictVectorizer, dict_vectorizer);

}  // namespace polyinfer::infer
