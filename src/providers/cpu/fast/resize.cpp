// Fast float32 Resize over two adjacent axes: the last two (NCHW image up- and downsampling:
// YOLO's and the segmentation models' Upsample/Resize), or the two before a last axis it leaves
// as it is (NHWC: the channels-last layout's Resize, docs/optimizer.md), nearest, linear and
// cubic, every coordinate transformation but tf_crop_and_resize. The taps and weights are the
// reference kernel's (src/ops/resize.h: plan_resize, plan_axis), worked out once per run; each
// output is then sum over rows of w_h * (sum over columns of w_w * x), the reference's order
// (innermost axis first), in float32 instead of double, and output rows are split over threads.
// In NHWC a column is a pixel's C channels, which the loops take as one vector. The reference
// converts the whole tensor to double and makes one pass per axis. Everything else — other
// dtypes, antialias, tf_crop_and_resize, other resized axes — goes to the reference kernel.
#include <limits>

#include "core/shape_util.h"
#include "ops/resize.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

using namespace resize;  // NOLINT: the shared parameter code

constexpr int kMaxTaps = 4;  // cubic's; nearest has 1, linear 2

// One axis's taps as flat arrays, tap-major so loops read each tap contiguously: output index j
// reads in[idx[k*len + j]] with weight w[k*len + j] for k < taps. Indices with fewer taps are
// padded with weight 0, which the loops skip (so an infinite input read at weight 0 does not make
// NaN, as the reference never reads it).
struct FlatAxis {
  int taps = 1;
  int64_t len = 0;
  std::vector<int32_t> idx;  // gathers vectorize with 32-bit indices
  std::vector<float> w;
};

bool flatten(const AxisPlan& plan, FlatAxis* out) {
  const size_t len = plan.taps.size();
  size_t most = 1;
  for (size_t j = 0; j < len; ++j) {
    if (plan.extrapolate[j] || plan.taps[j].empty()) return false;
    most = std::max(most, plan.taps[j].size());
  }
  if (most > kMaxTaps) return false;
  out->taps = static_cast<int>(most);
  out->len = static_cast<int64_t>(len);
  out->idx.assign(len * most, 0);
  out->w.assign(len * most, 0.f);
  for (size_t j = 0; j < len; ++j)
    for (size_t k = 0; k < most; ++k) {
      const Tap& t = plan.taps[j][std::min(k, plan.taps[j].size() - 1)];
      out->idx[k * len + j] = static_cast<int32_t>(t.index);
      out->w[k * len + j] = k < plan.taps[j].size() ? static_cast<float>(t.weight) : 0.f;
    }
  return true;
}

PI_FAST_MATH_BEGIN

// h[ow] = 0 + sum over taps of w * line[idx] (zero weights skipped): one source line
// interpolated along the columns, in the reference's tap order. With ch > 1 a column is ch
// contiguous channels, each interpolated alike. (A tap list's first weight is never 0: the
// reference drops zero taps and flatten pads only the later ones.)
PI_FAST_CLONES void columns(const float* line, const FlatAxis& c, int64_t n, int64_t ch, float* h) {
  const int32_t* idx = c.idx.data();
  const float* w = c.w.data();
  if (ch > 1) {
    for (int64_t j = 0; j < n; ++j) {
      float* __restrict hj = h + j * ch;
      const float* __restrict x0 = line + static_cast<int64_t>(idx[j]) * ch;
      const float w0 = w[j];
#pragma omp simd
      for (int64_t k = 0; k < ch; ++k) hj[k] = 0.f + w0 * x0[k];
      for (int t = 1; t < c.taps; ++t) {
        const float wt = w[t * n + j];
        if (wt == 0.f) continue;
        const float* __restrict xt = line + static_cast<int64_t>(idx[t * n + j]) * ch;
#pragma omp simd
        for (int64_t k = 0; k < ch; ++k) hj[k] += wt * xt[k];
      }
    }
  } else if (c.taps == 1) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) h[j] = 0.f + w[j] * line[idx[j]];
  } else if (c.taps == 2) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      // Both loads unconditional (every index is valid), so the loop vectorizes to gathers.
      const float x0 = line[idx[j]], x1 = line[idx[n + j]], w1 = w[n + j];
      const float b = w1 != 0.f ? w1 * x1 : 0.f;
      h[j] = (0.f + w[j] * x0) + b;
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.f;
      for (int k = 0; k < c.taps; ++k)
        if (w[k * n + j] != 0.f) s += w[k * n + j] * line[idx[k * n + j]];
      h[j] = s;
    }
  }
}

// out = (first ? 0 : out) + wa * h.
PI_FAST_CLONES void accumulate(float* out, const float* h, float wa, bool first, int64_t n) {
  if (first) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) out[j] = 0.f + wa * h[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) out[j] += wa * h[j];
  }
}

PI_FAST_MATH_END

class FastResizeKernel final : public Kernel {
 public:
  explicit FastResizeKernel(const KernelInfo& info) : attrs_(info), ref_(info) {
    if (attrs_.p.antialias) info.unsupported("the fast kernel for antialias");
    if (attrs_.p.ctm == Ctm::TfCropAndResize)
      info.unsupported("the fast kernel for tf_crop_and_resize");
    require_float_input(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32 || x.rank() < 2) return ref_.run(ctx);
    const ResizePlan rp = plan_resize(attrs_, ctx);
    const int r = x.rank();
    const auto axis = [&](int d) {
      return plan_axis(attrs_.p, x.shape()[d], rp.out_shape[d], rp.scales[d], rp.out_len_f[d],
                       rp.roi[d], rp.roi[d + r]);
    };
    const auto kept = [&](int from, int to) {
      for (int d = from; d < to; ++d)
        if (rp.out_shape[d] != x.shape()[d] || rp.scales[d] != 1.0) return false;
      return true;
    };
    // The resized pair: the last two axes, else the two before a last axis the plan maps to
    // itself (the channels of NHWC).
    int first = r - 2;
    int64_t ch = 1;
    if (!kept(0, r - 2)) {
      if (r < 3 || !kept(0, r - 3) || !kept(r - 1, r) ||
          !is_identity(axis(r - 1), x.shape()[r - 1]))
        return ref_.run(ctx);
      first = r - 3;
      ch = x.shape()[r - 1];
    }
    const int64_t H = x.shape()[first], W = x.shape()[first + 1];
    const int64_t OH = rp.out_shape[first], OW = rp.out_shape[first + 1];
    FlatAxis rows, cols;
    if (W > std::numeric_limits<int32_t>::max()) return ref_.run(ctx);
    if (!flatten(axis(first), &rows) || !flatten(axis(first + 1), &cols)) return ref_.run(ctx);
    // An identity axis the reference skips is one tap of weight 1 here: the same values.
    Tensor& y = ctx.output(0, DType::Float32, rp.out_shape);
    if (y.numel() == 0) return;
    const int64_t planes = y.numel() / (OH * OW * ch);
    resize_rows(x.data<float>(), y.data<float>(), planes * OH, H, W, OH, OW, ch, rows, cols,
                ctx.threads());
  }

 private:
  // Output rows of OW columns of `ch` floats each.
  static void resize_rows(const float* src, float* dst, int64_t n_rows, int64_t H, int64_t W,
                          int64_t OH, int64_t OW, int64_t ch, const FlatAxis& rows,
                          const FlatAxis& cols, int threads) {
    const int64_t row_len = OW * ch;
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, row_len));
    parallel_for(n_rows, threads, grain, [&](int64_t b, int64_t e) {
      // Source lines interpolated along the columns, kept for the next output rows: consecutive
      // rows read mostly the same lines (2x upsampling: each line serves four rows' taps).
      constexpr int kSlots = kMaxTaps + 1;
      std::vector<float> lines(static_cast<size_t>(kSlots * row_len));
      int64_t held[kSlots], used[kSlots] = {};
      std::fill(held, held + kSlots, int64_t{-1});
      int64_t clock = 0;
      const auto line = [&](int64_t key, const float* src_line) -> const float* {
        int victim = 0;
        for (int i = 0; i < kSlots; ++i) {
          if (held[i] == key) {
            used[i] = ++clock;
            return &lines[static_cast<size_t>(i * row_len)];
          }
          if (used[i] < used[victim]) victim = i;
        }
        float* h = &lines[static_cast<size_t>(victim * row_len)];
        columns(src_line, cols, OW, ch, h);
        held[victim] = key;
        used[victim] = ++clock;
        return h;
      };
      for (int64_t row = b; row < e; ++row) {
        const int64_t plane = row / OH, oh = row % OH;
        float* out = dst + row * row_len;
        bool first = true;
        for (int a = 0; a < rows.taps; ++a) {
          const float wa = rows.w[a * OH + oh];
          if (wa == 0.f) continue;
          const int64_t ih = rows.idx[a * OH + oh];
          accumulate(out, line(plane * H + ih, src + (plane * H + ih) * W * ch), wa, first,
                     row_len);
          first = false;
        }
      }
    });
  }

  ResizeAttrs attrs_;
  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Resize, 10, 19, FastResizeKernel);

}  // namespace polyinfer::fast
