// Inference rules of the opset-20 text operators (StringSplit, StringConcat, RegexFullMatch) and
// of ImageDecoder. StringNormalizer and TfIdfVectorizer are in rules_misc.cpp.
#include <string>

#include "infer/rule_util.h"

namespace polyinfer::infer {
namespace {

// StringConcat(X, Y): strings, the numpy broadcast of the two shapes.
void string_concat(Context& ctx) { broadcast_inputs(ctx, {0, 1}, DType::String); }

// RegexFullMatch(X): bool, X's shape.
void regex_full_match(Context& ctx) {
  if (const auto x = ctx.shape(0)) return ctx.set(0, DType::Bool, *x);
  ctx.set_elem(0, DType::Bool);
}

// StringSplit(X): Y strings of X's shape plus one dimension (the most pieces of any element:
// known only from the data); Z int64 of X's shape.
void string_split(Context& ctx) {
  const auto x = ctx.shape(0);
  if (!x) {
    ctx.set_elem(0, DType::String);
    return ctx.set_elem(1, DType::Int64);
  }
  Dims y = *x;
  y.push_back(Dim::unknown());
  ctx.set(0, DType::String, y);
  ctx.set(1, DType::Int64, *x);
}

// ImageDecoder(encoded bytes): uint8 [height, width, C], C 3 for RGB and BGR, 1 for Grayscale;
// the height and width are in the data.
void image_decoder(Context& ctx) {
  const std::string format = ctx.attr_string("pixel_format", "RGB");
  if (format == "RGB" || format == "BGR") {
    ctx.set(0, DType::UInt8, {Dim::unknown(), Dim::unknown(), Dim::of(3)});
  } else if (format == "Grayscale") {
    ctx.set(0, DType::UInt8, {Dim::unknown(), Dim::unknown(), Dim::of(1)});
  } else {
    ctx.set_rank(0, DType::UInt8, 3);
  }
}

}  // namespace

PI_INFER_RULE("", StringConcat, string_concat);
PI_INFER_RULE("", RegexFullMatch, regex_full_match);
PI_INFER_RULE("", StringSplit, string_split);
PI_INFER_RULE("", ImageDecoder, image_decoder);

}  // namespace polyinfer::infer
