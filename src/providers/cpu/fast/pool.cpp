// Fast pooling loops: ai.polyinfer NhwcMaxPool / NhwcAveragePool (2-D windows over channels-last
// X [N, H, W, C]: each output pixel a vector loop over the contiguous channels of its window's
// taps) and the ONNX MaxPool / AveragePool on NCHW X (1-D and 2-D: each plane pooled alone, one
// value per output pixel).
//
// Why not oneDNN's: on AVX2 its jit pooling ran ResNet's stem max pool 3-5x slower than these
// loops, and on NCHW it has only its slow simple_nchw (docs/kernels.md).
//
// Results equal the reference kernel's bit for bit: the taps are visited in its order (window
// rows, then columns), the maximum keeps the first valid tap unless a later one is greater (so
// a NaN first stays and a NaN later is skipped, as there), and the average divides the float
// sum by the same count. float32 for both; int8/uint8 for max pooling (a QDQ model's MaxPool).
// MaxPool's Indices output, 3-D windows and other dtypes are left to the reference kernel.
#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include <omp.h>
#include <type_traits>

#include "ops/window.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

PI_FAST_CLONES void add_into(float* __restrict y, const float* __restrict x, int64_t c) {
#pragma omp simd
  for (int64_t i = 0; i < c; ++i) y[i] += x[i];
}

PI_FAST_CLONES void divide(float* __restrict y, float d, int64_t c) {
#pragma omp simd
  for (int64_t i = 0; i < c; ++i) y[i] = y[i] / d;
}

// One output pixel of a channels-last pool: out[0, c) = the maximum (kMax) or the sum divided
// by `div` of x[origin + rel[t]][0, c) for t in [0, n), the window's valid taps in the
// reference kernel's order (the maximum keeps the earlier value unless a later one is greater;
// the sum starts from +0). The channels go in chunks of 128 bytes, then of 32, then one at a
// time, each chunk's results held in registers over all the taps (a loop per tap that read and
// wrote `out` ran well behind ORT's).
template <class T, bool kMax>
PI_FAST_CLONES void pool_taps(T* __restrict out, const T* __restrict x, int64_t origin,
                              const int64_t* __restrict rel, int64_t n, int64_t c, float div) {
  int64_t c0 = 0;
  auto chunks = [&](auto width) {
    constexpr int64_t kLen = decltype(width)::value;
    for (; c0 + kLen <= c; c0 += kLen) {
      T acc[kLen];
#pragma omp simd
      for (int64_t i = 0; i < kLen; ++i) acc[i] = kMax ? x[origin + rel[0] + c0 + i] : T(0);
      for (int64_t t = kMax ? 1 : 0; t < n; ++t) {
        const T* in = x + (origin + rel[t] + c0);
#pragma omp simd
        for (int64_t i = 0; i < kLen; ++i) {
          if constexpr (kMax) acc[i] = in[i] > acc[i] ? in[i] : acc[i];
          else
            acc[i] += in[i];
        }
      }
#pragma omp simd
      for (int64_t i = 0; i < kLen; ++i) out[c0 + i] = kMax ? acc[i] : T(acc[i] / div);
    }
  };
  chunks(std::integral_constant<int64_t, 128 / sizeof(T)>());
  chunks(std::integral_constant<int64_t, 32 / sizeof(T)>());
  chunks(std::integral_constant<int64_t, 1>());
}

PI_FAST_MATH_END

// One spatial axis of the window: for output index o, the valid taps k in [k0, k1) read input
// position o*stride - pad_begin + k*dilation; `padded` counts the taps inside the padded input
// (count_include_pad's divisor, which excludes ceil_mode's extra end taps).
struct Axis {
  int64_t in = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, kernel = 1;
  void taps(int64_t o, int64_t* k0, int64_t* k1, int64_t* padded) const {
    const int64_t start = o * stride - pad_begin;
    int64_t a = 0, b = kernel, p = 0;
    while (a < kernel && start + a * dilation < 0) ++a;
    while (b > a && start + (b - 1) * dilation >= in) --b;
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t pos = start + k * dilation;
      p += pos >= -pad_begin && pos < in + pad_end;
    }
    *k0 = a;
    *k1 = b;
    *padded = p;
  }
};

class FastPool final : public Kernel {
 public:
  explicit FastPool(const KernelInfo& info)
      : ref_(info),
        attrs_(WindowAttrs::parse(info)),
        channels_last_(info.node().domain == "ai.polyinfer"),
        max_(info.node().op_type.find("MaxPool") != std::string::npos),
        include_pad_(info.attr_int("count_include_pad", 0) != 0),
        label_(info.node().label()) {
    const ir::TypeInfo* xt = info.input_type(0);
    if (xt && xt->kind == ir::TypeInfo::Kind::Tensor && xt->elem != DType::Undefined &&
        xt->elem != DType::Float32 &&
        !(max_ && (xt->elem == DType::Int8 || xt->elem == DType::UInt8)))
      info.unsupported("the fast kernel for this dtype (float32; 8-bit for max pooling)");
    const size_t axes = attrs_.kernel_shape.size();
    if (axes != 2 && (channels_last_ || axes != 1))
      info.unsupported("the fast kernel for pooling over other than 1 or 2 axes");
    if (info.has_output(1)) info.unsupported("the fast kernel for MaxPool's Indices output");
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType dt = x.dtype();
    const bool typed = dt == DType::Float32 || (max_ && (dt == DType::Int8 || dt == DType::UInt8));
    const int axes = static_cast<int>(attrs_.kernel_shape.size());
    if (!typed || x.rank() != axes + 2) return ref_.run(ctx);  // its error
    const Shape spatial = channels_last_ ? Shape(x.shape().begin() + 1, x.shape().end() - 1)
                                         : Shape(x.shape().begin() + 2, x.shape().end());
    const WindowGeometry g =
        window_geometry(attrs_, spatial, attrs_.kernel_shape, label_, /*pool=*/true);
    // A 1-D window is a 2-D one of height 1; an NCHW tensor is N·C planes of one channel.
    const int last = axes - 1;
    Axis h;
    if (axes == 2)
      h = {g.in[0], g.strides[0], g.dilations[0], g.pad_begin[0], g.pad_end[0], g.kernel[0]};
    const Axis w{g.in[last],        g.strides[last], g.dilations[last],
                 g.pad_begin[last], g.pad_end[last], g.kernel[last]};
    const int64_t planes = channels_last_ ? x.dim(0) : x.dim(0) * x.dim(1);
    const int64_t c = channels_last_ ? x.dim(3) : 1;
    const int64_t oh = axes == 2 ? g.out[0] : 1, ow = g.out[last];
    Shape ys = channels_last_ ? Shape{x.dim(0)} : Shape{x.dim(0), x.dim(1)};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    if (channels_last_) ys.push_back(c);
    Tensor& y = ctx.output(0, dt, ys);
    if (y.numel() == 0) return;
    const int64_t rows = planes * oh;
    const int64_t grain =
        std::max<int64_t>(1, kGrain / std::max<int64_t>(1, ow * c * w.kernel * h.kernel));
    // Each output column's valid taps (w0, w1) and padded tap count, for every row.
    std::vector<std::array<int64_t, 3>> cols(static_cast<size_t>(ow));
    for (int64_t j = 0; j < ow; ++j) w.taps(j, &cols[j][0], &cols[j][1], &cols[j][2]);
    auto each_row = [&](auto* yp, const auto* xp) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(xp)>>;
      parallel_for(rows, ctx.threads(), grain, [&](int64_t lo, int64_t hi) {
        // The taps' offsets from the window's origin, made again only when the window's valid
        // part changes (at the borders): `key` is the one they are for.
        std::vector<int64_t> rel(static_cast<size_t>(h.kernel * w.kernel));
        int64_t n = 0, key[4] = {-1, -1, -1, -1};
        for (int64_t r = lo; r < hi; ++r) {
          const int64_t b = r / oh, i = r % oh;
          int64_t h0, h1, hp;
          h.taps(i, &h0, &h1, &hp);
          for (int64_t j = 0; j < ow; ++j) {
            const auto [w0, w1, wp] = cols[j];
            T* out = yp + (r * ow + j) * c;
            const bool empty = h0 == h1 || w0 == w1;
            const int64_t div = include_pad_ ? hp * wp : (h1 - h0) * (w1 - w0);
            const T* base = xp + b * h.in * w.in * c;
            if (c == 1) {  // NCHW: one value per pixel, in registers
              if (max_) {
                T best = empty ? empty_max<T>()
                               : base[(i * h.stride - h.pad_begin + h0 * h.dilation) * w.in +
                                      j * w.stride - w.pad_begin + w0 * w.dilation];
                for (int64_t kh = h0; kh < h1; ++kh) {
                  const T* row = base + (i * h.stride - h.pad_begin + kh * h.dilation) * w.in;
                  for (int64_t kw = w0; kw < w1; ++kw) {
                    const T v = row[j * w.stride - w.pad_begin + kw * w.dilation];
                    best = v > best ? v : best;
                  }
                }
                *out = best;
              } else if constexpr (std::is_same_v<T, float>) {
                float sum = 0;
                for (int64_t kh = h0; kh < h1; ++kh) {
                  const T* row = base + (i * h.stride - h.pad_begin + kh * h.dilation) * w.in;
                  for (int64_t kw = w0; kw < w1; ++kw)
                    sum += row[j * w.stride - w.pad_begin + kw * w.dilation];
                }
                *out = div > 0 ? sum / static_cast<float>(div)
                               : std::numeric_limits<float>::quiet_NaN();
              }
              continue;
            }
            // Tap (kh, kw) is pixel (i * sh - ph + kh * dh, j * sw - pw + kw * dw) of the image:
            // the origin may lie outside it, the taps never do.
            const int64_t origin =
                ((i * h.stride - h.pad_begin) * w.in + j * w.stride - w.pad_begin) * c;
            if (key[0] != h0 || key[1] != h1 || key[2] != w0 || key[3] != w1) {
              n = 0;
              for (int64_t kh = h0; kh < h1; ++kh)
                for (int64_t kw = w0; kw < w1; ++kw)
                  rel[n++] = (kh * h.dilation * w.in + kw * w.dilation) * c;
              key[0] = h0, key[1] = h1, key[2] = w0, key[3] = w1;
            }
            if (max_) {
              if (empty) std::fill(out, out + c, empty_max<T>());
              else
                pool_taps<T, true>(out, base, origin, rel.data(), n, c, 1.f);
            } else if constexpr (std::is_same_v<T, float>) {
              if (div <= 0) std::fill(out, out + c, std::numeric_limits<float>::quiet_NaN());
              else
                pool_taps<float, false>(out, base, origin, rel.data(), n, c,
                                        static_cast<float>(div));
            }
          }
        }
      });
    };
    switch (dt) {
      case DType::Float32: each_row(y.data<float>(), x.data<float>()); break;
      case DType::Int8: each_row(y.data<int8_t>(), x.data<int8_t>()); break;
      default: each_row(y.data<uint8_t>(), x.data<uint8_t>()); break;
    }
  }

 private:
  // The reference kernel's value for a window without a valid tap.
  template <class T> static T empty_max() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::lowest();
  }

  RefFallback ref_;
  WindowAttrs attrs_;
  bool channels_last_, max_, include_pad_;
  std::string label_;
};

// acc[c] += x[r * c_n + c] over rows [0, rows): one call per run of pixels, not per pixel.
// Channels go in chunks of 16 whose sums stay in registers over a block of rows (which stays in
// L1 for the next chunk): adding each row into acc made a store-to-load chain per row, several
// times slower than ORT's.
PI_FAST_CLONES void sum_rows(float* __restrict acc, const float* __restrict x, int64_t rows,
                             int64_t c_n) {
  constexpr int64_t kChunk = 16, kRows = 64;
  for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
    const int64_t r1 = std::min(rows, r0 + kRows);
    int64_t c0 = 0;
    for (; c0 + kChunk <= c_n; c0 += kChunk) {
      float s[kChunk] = {};
      for (int64_t r = r0; r < r1; ++r) {
#pragma omp simd
        for (int64_t c = 0; c < kChunk; ++c) s[c] += x[r * c_n + c0 + c];
      }
#pragma omp simd
      for (int64_t c = 0; c < kChunk; ++c) acc[c0 + c] += s[c];
    }
    for (int64_t r = r0; r < r1 && c0 < c_n; ++r) {
#pragma omp simd
      for (int64_t c = c0; c < c_n; ++c) acc[c] += x[r * c_n + c];
    }
  }
}

// ai.polyinfer NhwcGlobalAveragePool on float32 X [N, H, W, C] -> Y [N, 1, 1, C]: each thread
// sums a contiguous run of pixels (as the layer before wrote them, so mostly from its own
// cache) into its own partial sums, which are then added and divided by H * W; below kSerial
// elements one thread does it all. Why not oneDNN's: on AVX2 its jit global pooling got slower
// at 2 threads than at 1 (docs/kernels.md).
class FastGlobalAveragePoolNhwc final : public Kernel {
 public:
  explicit FastGlobalAveragePoolNhwc(const KernelInfo& info) : ref_(info) {
    require_float_input(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Float32 || x.rank() != 4) return ref_.run(ctx);
    const int64_t N = x.shape()[0], H = x.shape()[1], W = x.shape()[2], C = x.shape()[3];
    Tensor& y = ctx.output(0, DType::Float32, {N, 1, 1, C});
    if (y.numel() == 0) return;
    const int64_t pixels = H * W;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int threads = x.numel() < kSerial ? 1 : std::max(1, ctx.threads());
    thread_local std::vector<float> partial;
    partial.assign(static_cast<size_t>(threads * N * C), 0.f);
    float* part = partial.data();
    parallel_for(N * pixels, threads, 1, [&](int64_t b, int64_t e) {
      float* acc = part + omp_get_thread_num() * N * C;
      while (b < e) {  // runs of pixels within one image
        const int64_t n = b / pixels, end = std::min(e, (n + 1) * pixels);
        sum_rows(acc + n * C, xp + b * C, end - b, C);
        b = end;
      }
    });
    std::copy(part, part + N * C, yp);
    for (int t = 1; t < threads; ++t) add_into(yp, part + t * N * C, N * C);
    divide(yp, static_cast<float>(pixels), N * C);
  }

 private:
  static constexpr int64_t kSerial = 1 << 16;  // elements below which one thread does it all
  RefFallback ref_;
};

}  // namespace

PI_CPU_CANDIDATE("ai.polyinfer", NhwcGlobalAveragePool, 1, 1, "global_average_pool",
                 FastGlobalAveragePoolNhwc);
PI_CPU_FAST_KERNEL("", MaxPool, 1, 28, FastPool);
PI_CPU_FAST_KERNEL("", AveragePool, 1, 28, FastPool);
PI_CPU_FAST_KERNEL("ai.polyinfer", NhwcMaxPool, 1, 1, FastPool);
PI_CPU_FAST_KERNEL("ai.polyinfer", NhwcAveragePool, 1, 1, FastPool);

}  // namespace polyinfer::fast
