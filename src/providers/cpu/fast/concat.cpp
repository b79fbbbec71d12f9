// Fast Concat for every fixed-size dtype: a concatenation only moves bytes, so each input
// contributes one memcpy per outer index (the product of the dims before `axis`), and those
// copies are split over threads when the output is large; inputs of a few bytes per outer index
// are scattered by fixed-size moves instead. Mismatched inputs (and strings) go to
// the reference kernel, which reports them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

constexpr size_t kSmall = 16;         // bytes per input and row below which rows are scattered
constexpr int64_t kSmallRows = 1024;  // rows per block of scattered copies

// dst[o * row, + n) = src[o * n, + n) for o in [0, rows): n-byte moves the compiler inlines.
template <size_t n> void scatter_fixed(const char* src, char* dst, int64_t rows, size_t row) {
  for (int64_t o = 0; o < rows; ++o) std::memcpy(dst + o * row, src + o * n, n);
}

void scatter_rows(const char* src, char* dst, int64_t rows, size_t n, size_t row) {
  switch (n) {
    case 0: return;
    case 1: return scatter_fixed<1>(src, dst, rows, row);
    case 2: return scatter_fixed<2>(src, dst, rows, row);
    case 4: return scatter_fixed<4>(src, dst, rows, row);
    case 8: return scatter_fixed<8>(src, dst, rows, row);
    case 16: return scatter_fixed<16>(src, dst, rows, row);
    default:
      for (int64_t o = 0; o < rows; ++o) std::memcpy(dst + o * row, src + o * n, n);
  }
}

class FastConcatKernel final : public Kernel {
 public:
  explicit FastConcatKernel(const KernelInfo& info)
      : ref_(info), axis_(info.opset() < 4 ? info.attr_int("axis", 1) : info.attr_int("axis")) {}
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    if (ctx.num_inputs() == 0 || !ctx.has_input(0)) return ref_.run(ctx);
    const Tensor& first = ctx.input(0);
    const int r = first.rank();
    if (r == 0 || first.dtype() == DType::String || axis_ < -r || axis_ >= r) return ref_.run(ctx);
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    Shape out = first.shape();
    out[axis] = 0;
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i) || !ctx.value(i).is_tensor()) return ref_.run(ctx);
      const Tensor& t = ctx.input(i);
      if (t.dtype() != first.dtype() || t.rank() != r) return ref_.run(ctx);
      for (int d = 0; d < r; ++d)
        if (d != axis && t.shape()[d] != first.shape()[d]) return ref_.run(ctx);
      out[axis] += t.shape()[axis];
      ins.push_back(&t);
    }
    Tensor& y = ctx.output(0, first.dtype(), out);
    if (y.numel() == 0) return;
    const size_t es = dtype_size(y.dtype());
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= out[d];
    for (int d = static_cast<int>(axis) + 1; d < r; ++d) inner *= out[d];
    // Byte offset of each input's block inside one output row, and its length.
    std::vector<size_t> off(ins.size()), len(ins.size());
    size_t row = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      off[i] = row;
      len[i] = static_cast<size_t>(ins[i]->shape()[axis] * inner) * es;
      row += len[i];
    }
    char* dst = static_cast<char*>(y.raw_data());
    if (*std::max_element(len.begin(), len.end()) <= kSmall) {
      // A few bytes per input and row (stacking along a last axis of size 1: 8 x [N, T, F, 1]
      // -> [N, T, F, 8], basic_pitch's harmonic stacking): a memcpy call per element cost more
      // than the element (2.3 ms for 360k of them). Rows go in blocks, each input copied into
      // the block's rows by a loop of fixed-size moves.
      parallel_for(outer, ctx.threads(), kSmallRows, [&](int64_t b, int64_t e) {
        for (int64_t o0 = b; o0 < e; o0 += kSmallRows) {
          const int64_t n = std::min(e, o0 + kSmallRows) - o0;
          for (size_t i = 0; i < ins.size(); ++i) {
            const char* src = static_cast<const char*>(ins[i]->raw_data()) + o0 * len[i];
            scatter_rows(src, dst + o0 * row + off[i], n, len[i], row);
          }
        }
      });
      return;
    }
    const int64_t work = outer * static_cast<int64_t>(ins.size());
    const int64_t grain =
        std::max<int64_t>(1, kGrain * 4 / static_cast<int64_t>(row / ins.size() + 1));
    parallel_for(work, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / static_cast<int64_t>(ins.size());
        const size_t i = static_cast<size_t>(w % static_cast<int64_t>(ins.size()));
        if (len[i] == 0) continue;
        const char* src = static_cast<const char*>(ins[i]->raw_data()) + o * len[i];
        std::memcpy(dst + o * row + off[i], src, len[i]);
      }
    });
  }

 private:
  RefFallback ref_;
  int64_t axis_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Concat, 1, 28, FastConcatKernel);

}  // namespace polyinfer::fast
