// Signal processing: DFT, STFT, the Hann/Hamming/Blackman windows and MelWeightMatrix.
//
// Complex tensors are real tensors whose last dimension is 2 (real, imaginary); a real signal
// has last dimension 1. The transforms are direct O(n^2) sums over an exact twiddle table in
// double: plain and accurate, the oracle for faster providers.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using cd = std::complex<double>;

// e^{-2*pi*i*k/n} for k in [0, n); computing each angle from k (not by repeated multiplication)
// keeps every entry accurate to the last bit.
std::vector<cd> twiddles(int64_t n, bool inverse) {
  std::vector<cd> t(static_cast<size_t>(n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    const double a = 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    t[static_cast<size_t>(k)] = {std::cos(a), sign * std::sin(a)};
  }
  return t;
}

// out[k] = sum_j in[j] * tw[(j*k) mod n] for k < out.size(); `in` is already padded/truncated to n.
void dft_line(const std::vector<cd>& in, const std::vector<cd>& tw, std::vector<cd>& out) {
  const int64_t n = static_cast<int64_t>(in.size());
  for (size_t k = 0; k < out.size(); ++k) {
    cd acc = 0;
    int64_t idx = 0;
    for (int64_t j = 0; j < n; ++j) {
      acc += in[static_cast<size_t>(j)] * tw[static_cast<size_t>(idx)];
      idx += static_cast<int64_t>(k);
      if (idx >= n) idx %= n;
    }
    out[k] = acc;
  }
}

void write_doubles(Tensor& y, const std::vector<double>& v, const char* who) {
  dispatch(NumericTypes{}, y.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = y.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(static_cast<compute_t<T>>(v[i]));
  });
}

int64_t read_int_scalar(const Tensor& t, const char* who, const char* what) {
  const std::vector<int64_t> v = read_int_list(t, who);
  PI_CHECK(v.size() == 1, InvalidArgument, who, ": '", what, "' must be a single integer, got ",
           t.describe());
  return v[0];
}

class DftKernel final : public Kernel {
 public:
  explicit DftKernel(const KernelInfo& info)
      : opset_(info.opset()),
        axis_attr_(info.attr_int("axis", 1)),
        inverse_(info.attr_int("inverse", 0) != 0),
        onesided_(info.attr_int("onesided", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const Tensor& x = ctx.input(0);
    const int rank = x.rank();
    PI_CHECK(rank >= 2 && (x.dim(-1) == 1 || x.dim(-1) == 2), ShapeMismatch, who,
             ": input must be [..., 1] (real) or [..., 2] (complex), got ", x.describe());
    int64_t axis = axis_attr_;
    if (opset_ >= 20) axis = ctx.has_input(2) ? read_int_scalar(ctx.input(2), who, "axis") : -2;
    axis = normalize_axis(axis, rank, who);
    PI_CHECK(axis != rank - 1, InvalidArgument, who,
             ": axis may not be the last (real/imaginary) dimension");
    const int64_t len = x.dim(static_cast<int>(axis));
    // inverse + onesided is the inverse real FFT: a onesided spectrum in, a real signal out.
    const bool irfft = inverse_ && onesided_;
    int64_t n = irfft ? 2 * (len - 1) : len;
    if (ctx.has_input(1) && ctx.input(1).numel() > 0)
      n = read_int_scalar(ctx.input(1), who, "dft_length");
    PI_CHECK(n > 0, InvalidArgument, who, ": dft_length must be positive, got ", n);
    const int64_t nout = irfft ? n : onesided_ ? n / 2 + 1 : n;
    const int64_t out_comps = irfft ? 1 : 2;
    Shape out_shape = x.shape();
    out_shape[axis] = nout;
    out_shape.back() = out_comps;
    const bool complex_in = x.dim(-1) == 2;
    const std::vector<double> in = read_doubles(x, who);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = static_cast<int>(axis) + 1; d < rank - 1; ++d) inner *= x.dim(d);
    const int64_t comps = x.dim(-1);
    Tensor& y = ctx.output(0, x.dtype(), out_shape);
    std::vector<double> out(static_cast<size_t>(shape_numel(out_shape)));
    const std::vector<cd> tw = twiddles(n, inverse_);
    std::vector<cd> line(static_cast<size_t>(n)), res(static_cast<size_t>(nout));
    const double norm = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t j) -> cd {
          if (j >= len) return 0.0;  // zero-padded up to dft_length
          const size_t src = static_cast<size_t>(((o * len + j) * inner + i) * comps);
          return {in[src], complex_in ? in[src + 1] : 0.0};
        };
        for (int64_t j = 0; j < n; ++j) {
          // The upper half of a onesided spectrum is the conjugate mirror of the lower half.
          line[static_cast<size_t>(j)] = !irfft || j <= n / 2 ? at(j) : std::conj(at(n - j));
        }
        dft_line(line, tw, res);
        for (int64_t k = 0; k < nout; ++k) {
          const size_t dst = static_cast<size_t>(((o * nout + k) * inner + i) * out_comps);
          out[dst] = res[static_cast<size_t>(k)].real() * norm;
          if (!irfft) out[dst + 1] = res[static_cast<size_t>(k)].imag() * norm;
        }
      }
    }
    write_doubles(y, out, who);
  }

 private:
  int opset_;
  int64_t axis_attr_;
  bool inverse_, onesided_;
};

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(const KernelInfo& info) : onesided_(info.attr_int("onesided", 1) != 0) {}

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const Tensor& sig = ctx.input(0);
    PI_CHECK(sig.rank() == 3 && (sig.dim(2) == 1 || sig.dim(2) == 2), ShapeMismatch, who,
             ": signal must be [batch, length, 1 or 2], got ", sig.describe());
    const int64_t step = read_int_scalar(ctx.input(1), who, "frame_step");
    PI_CHECK(step > 0, InvalidArgument, who, ": frame_step must be positive, got ", step);
    std::vector<double> window;
    if (ctx.has_input(2)) {
      const Tensor& w = ctx.input(2);
      PI_CHECK(w.rank() == 1, ShapeMismatch, who, ": window must be 1-D, got ", w.describe());
      window = read_doubles(w, who);
    }
    int64_t flen = static_cast<int64_t>(window.size());
    if (ctx.has_input(3)) {
      flen = read_int_scalar(ctx.input(3), who, "frame_length");
      PI_CHECK(window.empty() || static_cast<int64_t>(window.size()) == flen, ShapeMismatch, who,
               ": window length ", window.size(), " differs from frame_length ", flen);
    }
    PI_CHECK(flen > 0, InvalidArgument, who, ": needs a window or a positive frame_length");
    const int64_t B = sig.dim(0), L = sig.dim(1), comps = sig.dim(2);
    PI_CHECK(flen <= L, InvalidArgument, who, ": frame_length ", flen, " exceeds signal length ",
             L);
    PI_CHECK(!(onesided_ && comps == 2), InvalidArgument, who,
             ": onesided output needs a real signal");
    const int64_t frames = 1 + (L - flen) / step;
    const int64_t bins = onesided_ ? flen / 2 + 1 : flen;
    Tensor& y = ctx.output(0, sig.dtype(), {B, frames, bins, 2});
    const std::vector<double> in = read_doubles(sig, who);
    std::vector<double> out(static_cast<size_t>(y.numel()));
    const std::vector<cd> tw = twiddles(flen, false);
    std::vector<cd> line(static_cast<size_t>(flen)), res(static_cast<size_t>(bins));
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t j = 0; j < flen; ++j) {
          const size_t src = static_cast<size_t>((b * L + f * step + j) * comps);
          const double w = window.empty() ? 1.0 : window[static_cast<size_t>(j)];
          line[static_cast<size_t>(j)] = cd(in[src], comps == 2 ? in[src + 1] : 0.0) * w;
        }
        dft_line(line, tw, res);
        for (int64_t k = 0; k < bins; ++k) {
          const size_t dst = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
          out[dst] = res[static_cast<size_t>(k)].real();
          out[dst + 1] = res[static_cast<size_t>(k)].imag();
        }
      }
    }
    write_doubles(y, out, who);
  }

 private:
  bool onesided_;
};

DType output_datatype(const KernelInfo& info) {
  const int64_t t = info.attr_int("output_datatype", 1);
  const DType d = static_cast<DType>(t);
  if (!(is_float(d) || is_integer(d))) info.unsupported("output_datatype=" + std::to_string(t));
  return d;
}

enum class WindowKind { Hann, Hamming, Blackman };

// The generalized cosine windows: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), with
// N = size for a periodic window and size - 1 for a symmetric one.
template <WindowKind K> class WindowKernel final : public Kernel {
 public:
  explicit WindowKernel(const KernelInfo& info)
      : dtype_(output_datatype(info)), periodic_(info.attr_int("periodic", 1) != 0) {}

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const int64_t size = read_int_scalar(ctx.input(0), who, "size");
    PI_CHECK(size >= 0, InvalidArgument, who, ": size must be >= 0, got ", size);
    double a0 = 0.5, a1 = 0.5, a2 = 0.0;
    if constexpr (K == WindowKind::Hamming) {
      a0 = 25.0 / 46.0;
      a1 = 1 - a0;
    } else if constexpr (K == WindowKind::Blackman) {
      a0 = 0.42;
      a1 = 0.5;
      a2 = 0.08;
    }
    Tensor& y = ctx.output(0, dtype_, {size});
    const double N = static_cast<double>(periodic_ ? size : size - 1);
    std::vector<double> w(static_cast<size_t>(size));
    for (int64_t n = 0; n < size; ++n) {
      // A one-point symmetric window has N = 0; its single value is the peak, 1.
      const double t = N > 0 ? 2 * std::numbers::pi * static_cast<double>(n) / N : 0.0;
      w[static_cast<size_t>(n)] = N > 0 ? a0 - a1 * std::cos(t) + a2 * std::cos(2 * t) : 1.0;
    }
    write_doubles(y, w, who);
  }

 private:
  DType dtype_;
  bool periodic_;
};

// Triangular filters evenly spaced on the mel scale, mapping the dft_length/2+1 bins of a
// onesided spectrum to num_mel_bins mel bins. Follows the ONNX reference formula, including
// its spacing of the band edges by (upper - lower) / (num_mel_bins + 2).
class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const KernelInfo& info) : dtype_(output_datatype(info)) {}

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const char* who = label.c_str();
    const int64_t nmel = read_int_scalar(ctx.input(0), who, "num_mel_bins");
    const int64_t dft_len = read_int_scalar(ctx.input(1), who, "dft_length");
    const int64_t rate = read_int_scalar(ctx.input(2), who, "sample_rate");
    const double lower = read_scalar(ctx.input(3), who);
    const double upper = read_scalar(ctx.input(4), who);
    PI_CHECK(nmel > 0 && dft_len > 0 && rate > 0, InvalidArgument, who,
             ": num_mel_bins, dft_length and sample_rate must be positive");
    PI_CHECK(lower >= 0 && upper >= lower, InvalidArgument, who,
             ": need 0 <= lower_edge_hertz <= upper_edge_hertz");
    const int64_t nspec = dft_len / 2 + 1;
    Tensor& y = ctx.output(0, dtype_, {nspec, nmel});
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower), high_mel = to_mel(upper);
    const double step = (high_mel - low_mel) / static_cast<double>(nmel + 2);
    std::vector<int64_t> bins(static_cast<size_t>(nmel + 2));
    for (int64_t i = 0; i < nmel + 2; ++i) {
      const double hz =
          700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1);
      const double b =
          std::floor(static_cast<double>(dft_len + 1) * hz / static_cast<double>(rate));
      PI_CHECK(b >= 0 && b < static_cast<double>(nspec), InvalidArgument, who,
               ": upper_edge_hertz ", upper, " lies above the Nyquist frequency of sample_rate ",
               rate);
      bins[static_cast<size_t>(i)] = static_cast<int64_t>(b);
    }
    std::vector<double> w(static_cast<size_t>(nspec * nmel), 0.0);
    auto at = [&](int64_t j, int64_t i) -> double& { return w[static_cast<size_t>(j * nmel + i)]; };
    for (int64_t i = 0; i < nmel; ++i) {
      const int64_t lo = bins[i], center = bins[i + 1], hi = bins[i + 2];
      if (center == lo) {
        at(center, i) = 1.0;
      } else {
        for (int64_t j = lo; j <= center; ++j)
          at(j, i) = static_cast<double>(j - lo) / static_cast<double>(center - lo);
      }
      if (hi > center) {
        for (int64_t j = center; j < hi; ++j)
          at(j, i) = static_cast<double>(hi - j) / static_cast<double>(hi - center);
      }
    }
    write_doubles(y, w, who);
  }

 private:
  DType dtype_;
};

}  // namespace

PI_CPU_KERNEL(DFT, 17, 19, DftKernel);
PI_CPU_KERNEL(DFT, 20, 28, DftKernel);
PI_CPU_KERNEL(STFT, 17, 28, StftKernel);
PI_CPU_KERNEL(HannWindow, 17, 28, WindowKernel<WindowKind::Hann>);
PI_CPU_KERNEL(HammingWindow, 17, 28, WindowKernel<WindowKind::Hamming>);
PI_CPU_KERNEL(BlackmanWindow, 17, 28, WindowKernel<WindowKind::Blackman>);
PI_CPU_KERNEL(MelWeightMatrix, 17, 28, MelWeightMatrixKernel);

}  // namespace polyinfer
