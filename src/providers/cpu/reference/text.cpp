// The opset-20 text operators: StringSplit, StringConcat and RegexFullMatch (RE2, the syntax the
// specification names). StringNormalizer and TfIdfVectorizer are in string.cpp.
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The length of the whitespace character at s[i] (a UTF-8 sequence), or 0 where s[i] starts none.
// Whitespace is what Python's str.isspace() calls so (the ONNX reference splits with str.split):
// ASCII \t..\r, \x1c..\x1f and space, and U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028,
// U+2029, U+202F, U+205F, U+3000. Bytes that are not valid UTF-8 are never whitespace.
size_t whitespace_at(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) return 1;
  const size_t left = s.size() - i;
  if (c == 0xc2 && left >= 2) return b(i + 1) == 0x85 || b(i + 1) == 0xa0 ? 2 : 0;
  if (left < 3) return 0;
  const unsigned c1 = b(i + 1), c2 = b(i + 2);
  if (c == 0xe1) return c1 == 0x9a && c2 == 0x80 ? 3 : 0;  // U+1680
  if (c == 0xe2 && c1 == 0x80)
    return (c2 >= 0x80 && c2 <= 0x8a) || c2 == 0xa8 || c2 == 0xa9 || c2 == 0xaf ? 3 : 0;
  if (c == 0xe2 && c1 == 0x81) return c2 == 0x9f ? 3 : 0;  // U+205F
  if (c == 0xe3) return c1 == 0x80 && c2 == 0x80 ? 3 : 0;  // U+3000
  return 0;
}

// Python's str.split(None, maxsplit): runs of whitespace separate, leading and trailing runs give
// no empty pieces; after `maxsplit` splits the rest, leading whitespace skipped, is the last piece.
std::vector<std::string> split_whitespace(std::string_view s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < s.size()) {
      const size_t w = whitespace_at(s, i);
      if (w == 0) break;
      i += w;
    }
  };
  for (int64_t splits = 0; maxsplit < 0 || splits < maxsplit; ++splits) {
    skip_space();
    if (i == s.size()) return out;
    const size_t start = i;
    while (i < s.size() && whitespace_at(s, i) == 0) ++i;
    out.emplace_back(s.substr(start, i - start));
  }
  skip_space();
  if (i < s.size()) out.emplace_back(s.substr(i));
  return out;
}

// Python's str.split(sep, maxsplit) for a non-empty sep: every occurrence separates, so
// neighbouring separators give empty pieces, and "" gives one empty piece.
std::vector<std::string> split_on(std::string_view s, std::string_view sep, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t start = 0;
  for (int64_t splits = 0; maxsplit < 0 || splits < maxsplit; ++splits) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) break;
    out.emplace_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.emplace_back(s.substr(start));
  return out;
}

class StringSplitKernel final : public Kernel {
 public:
  explicit StringSplitKernel(const KernelInfo& info)
      : delimiter_(info.attr_string("delimiter", "")), maxsplit_(info.attr_int("maxsplit", -1)) {}

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::String, InvalidArgument, label, ": X must be strings, got ",
             x.describe());
    const std::string* in = x.data<std::string>();
    const int64_t n = x.numel();
    std::vector<std::vector<std::string>> pieces(static_cast<size_t>(n));
    int64_t width = 0;
    for (int64_t i = 0; i < n; ++i) {
      auto& p = pieces[static_cast<size_t>(i)];
      p = delimiter_.empty() ? split_whitespace(in[i], maxsplit_)
                             : split_on(in[i], delimiter_, maxsplit_);
      width = std::max(width, static_cast<int64_t>(p.size()));
    }
    Shape y_shape = x.shape();
    y_shape.push_back(width);
    // Y's rows are padded with empty strings to the longest row.
    Tensor& y = ctx.output(0, DType::String, y_shape);
    std::string* out = y.data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      auto& p = pieces[static_cast<size_t>(i)];
      for (size_t k = 0; k < p.size(); ++k)
        out[i * width + static_cast<int64_t>(k)] = std::move(p[k]);
    }
    if (ctx.wants_output(1)) {
      Tensor& z = ctx.output(1, DType::Int64, x.shape());
      int64_t* counts = z.data<int64_t>();
      for (int64_t i = 0; i < n; ++i)
        counts[i] = static_cast<int64_t>(pieces[static_cast<size_t>(i)].size());
    }
  }

 private:
  std::string delimiter_;  // "" (or absent): split on whitespace runs
  int64_t maxsplit_;       // negative (or absent): no limit
};

class StringConcatKernel final : public Kernel {
 public:
  explicit StringConcatKernel(const KernelInfo&) {}

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    PI_CHECK(x.dtype() == DType::String && y.dtype() == DType::String, InvalidArgument, label,
             ": X and Y must be strings, got ", x.describe(), " and ", y.describe());
    const Shape shape = broadcast_shapes(x.shape(), y.shape(), label.c_str());
    Tensor& z = ctx.output(0, DType::String, shape);
    const std::string* px = x.data<std::string>();
    const std::string* py = y.data<std::string>();
    std::string* pz = z.data<std::string>();
    const std::vector<int64_t> strides[2] = {broadcast_strides(x.shape(), shape),
                                             broadcast_strides(y.shape(), shape)};
    for_each_broadcast(shape, strides, [&](int64_t i, int64_t ix, int64_t iy) {
      pz[i].reserve(px[ix].size() + py[iy].size());
      pz[i].assign(px[ix]).append(py[iy]);
    });
  }
};

class RegexFullMatchKernel final : public Kernel {
 public:
  explicit RegexFullMatchKernel(const KernelInfo& info) {
    const std::string pattern = info.attr_string("pattern");
    RE2::Options options;  // UTF-8 text and pattern
    options.set_log_errors(false);
    re_ = std::make_unique<RE2>(pattern, options);
    PI_CHECK(re_->ok(), InvalidModel, info.node().label(), ": pattern '", pattern,
             "' is not a valid RE2 regular expression (", re_->error(),
             "); see https://github.com/google/re2/wiki/Syntax");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::String, InvalidArgument, ctx.node().label(),
             ": X must be strings, got ", x.describe());
    Tensor& y = ctx.output(0, DType::Bool, x.shape());
    const std::string* in = x.data<std::string>();
    bool* out = y.data<bool>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = RE2::FullMatch(in[i], *re_);
  }

 private:
  std::unique_ptr<RE2> re_;
};

}  // namespace

PI_CPU_KERNEL(StringSplit, 20, 28, StringSplitKernel);
PI_CPU_KERNEL(StringConcat, 20, 28, StringConcatKernel);
PI_CPU_KERNEL(RegexFullMatch, 20, 28, RegexFullMatchKernel);

}  // namespace polyinfer
