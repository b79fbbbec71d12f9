// Fast ai.polyinfer NhwcMaxPool and NhwcAveragePool: 2-D windows over channels-last X [N, H, W, C],
// each output pixel a vector loop over the contiguous channels of its window's taps.
//
// Why not oneDNN's: on this AVX2 machine its jit pooling took 0.79 ms for ResNet/DenseNet's stem
// max pool (64 channels, 112x112, 3x3 stride 2) where these loops need a fraction of that,
// and it is DenseNet-121's largest non-convolution cost after Concat.
//
// Results equal the reference kernel's bit for bit: the taps are visited in its order (window
// rows, then columns), the maximum keeps the first valid tap unless a later one is greater (so
// a NaN first stays and a NaN later is skipped, as there), and the average divides the float
// sum by the same count. float32 for both; int8/uint8 for max pooling (a QDQ model's MaxPool).
#include <limits>
#include <type_traits>

#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/ops/conv_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

template <class T>
PI_FAST_CLONES void max_into(T* __restrict y, const T* __restrict x, int64_t c) {
#pragma omp simd
  for (int64_t i = 0; i < c; ++i) y[i] = x[i] > y[i] ? x[i] : y[i];
}

PI_FAST_CLONES void add_into(float* __restrict y, const float* __restrict x, int64_t c) {
#pragma omp simd
  for (int64_t i = 0; i < c; ++i) y[i] += x[i];
}

PI_FAST_CLONES void divide(float* __restrict y, float d, int64_t c) {
#pragma omp simd
  for (int64_t i = 0; i < c; ++i) y[i] = y[i] / d;
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

class FastNhwcPool final : public Kernel {
 public:
  explicit FastNhwcPool(const KernelInfo& info)
      : ref_(info),
        attrs_(cpu::WindowAttrs::parse(info)),
        max_(info.node().op_type == "NhwcMaxPool"),
        include_pad_(info.attr_int("count_include_pad", 0) != 0),
        label_(info.node().label()) {
    const ir::TypeInfo* xt = info.input_type(0);
    if (xt && xt->kind == ir::TypeInfo::Kind::Tensor && xt->elem != DType::Undefined &&
        xt->elem != DType::Float32 &&
        !(max_ && (xt->elem == DType::Int8 || xt->elem == DType::UInt8)))
      info.unsupported("the fast kernel for this dtype (float32; 8-bit for max pooling)");
    if (attrs_.kernel_shape.size() != 2)
      info.unsupported("the fast kernel for a kernel_shape of other than 2 values");
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType dt = x.dtype();
    const bool typed = dt == DType::Float32 || (max_ && (dt == DType::Int8 || dt == DType::UInt8));
    if (!typed || x.rank() != 4) return ref_.run(ctx);  // its error
    const Shape spatial(x.shape().begin() + 1, x.shape().end() - 1);
    const cpu::WindowGeometry g =
        cpu::window_geometry(attrs_, spatial, attrs_.kernel_shape, label_, /*pool=*/true);
    const Axis h{g.in[0], g.strides[0], g.dilations[0], g.pad_begin[0], g.pad_end[0], g.kernel[0]};
    const Axis w{g.in[1], g.strides[1], g.dilations[1], g.pad_begin[1], g.pad_end[1], g.kernel[1]};
    const int64_t n = x.dim(0), c = x.dim(3), oh = g.out[0], ow = g.out[1];
    Tensor& y = ctx.output(0, dt, {n, oh, ow, c});
    if (y.numel() == 0) return;
    const int64_t rows = n * oh;
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, ow * c * w.kernel * h.kernel));
    auto each_row = [&](auto* yp, const auto* xp) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(xp)>>;
      parallel_for(rows, ctx.threads(), grain, [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
          const int64_t b = r / oh, i = r % oh;
          int64_t h0, h1, hp;
          h.taps(i, &h0, &h1, &hp);
          for (int64_t j = 0; j < ow; ++j) {
            int64_t w0, w1, wp;
            w.taps(j, &w0, &w1, &wp);
            T* out = yp + (r * ow + j) * c;
            // The average starts from 0 as the reference's sum does (0 + -0 is +0).
            bool first = max_;
            if (!max_) std::fill(out, out + c, T(0));
            for (int64_t kh = h0; kh < h1; ++kh) {
              const int64_t ih = i * h.stride - h.pad_begin + kh * h.dilation;
              for (int64_t kw = w0; kw < w1; ++kw) {
                const int64_t iw = j * w.stride - w.pad_begin + kw * w.dilation;
                const T* in = xp + ((b * h.in + ih) * w.in + iw) * c;
                if (first) std::copy(in, in + c, out);
                else if constexpr (std::is_same_v<T, float>) {
                  if (max_) max_into(out, in, c);
                  else add_into(out, in, c);
                } else {
                  max_into(out, in, c);
                }
                first = false;
              }
            }
            if (max_) {
              if (h0 == h1 || w0 == w1) std::fill(out, out + c, empty_max<T>());
            } else if constexpr (std::is_same_v<T, float>) {
              const int64_t valid = (h1 - h0) * (w1 - w0);
              const int64_t div = include_pad_ ? hp * wp : valid;
              if (div <= 0) std::fill(out, out + c, std::numeric_limits<float>::quiet_NaN());
              else divide(out, static_cast<float>(div), c);
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
  template <class T>
  static T empty_max() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }

  RefFallback ref_;
  cpu::WindowAttrs attrs_;
  bool max_, include_pad_;
  std::string label_;
};

}  // namespace

PI_CPU_FAST_KERNEL("ai.polyinfer", NhwcMaxPool, 1, 1, FastNhwcPool);
PI_CPU_FAST_KERNEL("ai.polyinfer", NhwcAveragePool, 1, 1, FastNhwcPool);

}  // namespace polyinfer::fast
