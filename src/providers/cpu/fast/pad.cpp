// Fast Pad for float32: each output row (the last padded axis with the unpadded ones after it)
// is, in constant mode, either all fill value or fill / one memcpy of an input row / fill; in
// reflect, edge and wrap modes, the row's input row (each leading axis mapped as the mode maps
// it) copied in runs of consecutive source columns: the middle in one memcpy, the borders a few
// (silero's STFT pads its signal by reflection). Rows are split over threads. The reference
// kernel maps every element through per-dimension tables. Shapes, pads, the modes' source
// coordinates and the errors come from src/ops/pad.h, shared with the reference kernel; other
// dtypes, and a constant_value input that is not one float, go to it.
#include <cstring>
#include <vector>

#include "core/shape_util.h"
#include "ops/pad.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

class FastPadKernel final : public Kernel {
 public:
  explicit FastPadKernel(const KernelInfo& info)
      : attrs_(info), mode_(pad_mode(info, attrs_.mode)), ref_(info) {
    require_float_input(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32 || x.rank() == 0) return ref_.run(ctx);
    float fill = attrs_.value;
    if (!attrs_.from_attr && ctx.has_input(2)) {
      const Tensor& v = ctx.input(2);
      if (v.dtype() != DType::Float32 || v.numel() != 1) return ref_.run(ctx);  // its error
      fill = v.data<float>()[0];
    }
    const PadPlan p = plan_pad(attrs_, ctx);
    Tensor& y = ctx.output(0, x.dtype(), p.out);
    if (y.numel() == 0) return;
    const int r = x.rank();
    // A row spans the last padded axis and the unpadded ones after it ([N, T, F, 1] padded along
    // F: rows of F values, not of one), so each row is one copy however thin the last axis.
    int k = r - 1;
    while (k > 0 && p.before[k] == 0 && p.out[k] == x.shape()[k]) --k;
    int64_t inner = 1;
    for (int d = k + 1; d < r; ++d) inner *= x.shape()[d];
    const int64_t in_w = x.shape()[k] * inner, out_w = p.out[k] * inner;
    const int64_t lead = p.before[k] * inner;
    // Output columns [c0, c1) come from input columns [c0 - lead, c1 - lead); the rest is fill.
    const int64_t c0 = std::clamp<int64_t>(lead, 0, out_w);
    const int64_t c1 = std::clamp<int64_t>(lead + in_w, 0, out_w);
    const int64_t rows = y.numel() / out_w;
    const std::vector<int64_t> xs = strides_of(x.shape());
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_w));
    if (mode_ != PadMode::Constant) return copy_mapped(x, p, k, inner, rows, grain, ctx, dst);
    parallel_for(rows, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        float* o = dst + row * out_w;
        // The input row this output row reads: its index digit by digit, shifted by the pads.
        int64_t rest = row, off = 0;
        bool inside = c1 > c0;
        for (int d = k - 1; d >= 0 && inside; --d) {
          const int64_t i = rest % p.out[d] - p.before[d];
          rest /= p.out[d];
          inside = i >= 0 && i < x.shape()[d];
          off += i * xs[d];
        }
        if (!inside) {
          std::fill(o, o + out_w, fill);
          continue;
        }
        std::fill(o, o + c0, fill);
        std::memcpy(o + c0, src + off + (c0 - lead), static_cast<size_t>(c1 - c0) * sizeof(float));
        std::fill(o + c1, o + out_w, fill);
      }
    });
  }

 private:
  // Reflect, edge and wrap: every output element reads an input element (no fill), found per
  // axis by pad_source; along the row axis k the columns' sources are worked out once.
  void copy_mapped(const Tensor& x, const PadPlan& p, int k, int64_t inner, int64_t rows,
                   int64_t grain, KernelContext& ctx, float* dst) const {
    const int64_t out_k = p.out[k];
    std::vector<int64_t> cols(static_cast<size_t>(out_k));
    for (int64_t c = 0; c < out_k; ++c)
      cols[static_cast<size_t>(c)] = pad_source(mode_, c - p.before[k], x.shape()[k]);
    const std::vector<int64_t> xs = strides_of(x.shape());
    const float* src = x.data<float>();
    const int64_t out_w = out_k * inner;
    parallel_for(rows, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        int64_t rest = row, off = 0;
        for (int d = k - 1; d >= 0; --d) {
          off += pad_source(mode_, rest % p.out[d] - p.before[d], x.shape()[d]) * xs[d];
          rest /= p.out[d];
        }
        float* o = dst + row * out_w;
        for (int64_t c = 0; c < out_k;) {  // runs of consecutive source columns
          int64_t end = c + 1;
          while (end < out_k &&
                 cols[static_cast<size_t>(end)] == cols[static_cast<size_t>(end - 1)] + 1)
            ++end;
          std::memcpy(o + c * inner, src + off + cols[static_cast<size_t>(c)] * inner,
                      static_cast<size_t>((end - c) * inner) * sizeof(float));
          c = end;
        }
      }
    });
  }

  PadAttrs attrs_;
  PadMode mode_;
  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Pad, 1, 28, FastPadKernel);

}  // namespace polyinfer::fast
