// Random generators: RandomUniform, RandomNormal, their *Like forms, Bernoulli and Multinomial.
//
// Each kernel owns a 64-bit Mersenne Twister. With a `seed` attribute it is seeded from the
// seed's bits, so a session with the same model yields the same sequence of outputs; without
// one it is seeded from std::random_device. The state advances across runs (a second run gives
// new numbers), and a mutex keeps concurrent runs of one session safe. Uniform and normal
// variates are derived from the raw engine output by hand, not through <random>'s
// distributions, whose algorithms differ between standard libraries.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class Rng {
 public:
  explicit Rng(const KernelInfo& info) {
    if (info.has_attr("seed")) {
      const float seed = info.attr_float("seed");
      uint32_t bits;
      std::memcpy(&bits, &seed, sizeof bits);
      engine_.seed(bits);
    } else {
      std::random_device rd;
      engine_.seed((static_cast<uint64_t>(rd()) << 32) ^ rd());
    }
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Standard normal by the Box-Muller transform (the cosine branch only, for simplicity).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }
  std::mutex& mutex() { return mu_; }

 private:
  std::mt19937_64 engine_;
  std::mutex mu_;
};

using RandomOutTypes = FloatTypes;

DType dtype_attr(const KernelInfo& info, DType def) {
  if (!info.has_attr("dtype")) return def;
  return static_cast<DType>(info.attr_int("dtype"));
}

// RandomUniform / RandomNormal (shape from the attribute) and their *Like forms (shape, and by
// default dtype, from the input).
template <bool Normal, bool Like> class RandomKernel final : public Kernel {
 public:
  explicit RandomKernel(const KernelInfo& info)
      : rng_(info),
        dtype_(dtype_attr(info, Like ? DType::Undefined : DType::Float32)),
        a_(Normal ? info.attr_float("mean", 0.0f) : info.attr_float("low", 0.0f)),
        b_(Normal ? info.attr_float("scale", 1.0f) : info.attr_float("high", 1.0f)) {
    if (dtype_ != DType::Undefined && !is_float(dtype_))
      info.unsupported("dtype=" + std::string(dtype_name(dtype_)));
    if constexpr (!Like) {
      if (!info.has_attr("shape")) info.unsupported("missing 'shape' attribute");
      shape_ = info.attr_ints("shape");
    }
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    Shape shape = shape_;
    DType dt = dtype_;
    if constexpr (Like) {
      const Tensor& x = ctx.input(0);
      shape = x.shape();
      if (dt == DType::Undefined) dt = x.dtype();
    }
    Tensor& y = ctx.output(0, dt, shape);
    std::lock_guard<std::mutex> lock(rng_.mutex());
    dispatch(RandomOutTypes{}, dt, label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = y.data<T>();
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double v = Normal ? a_ + b_ * rng_.normal() : a_ + (b_ - a_) * rng_.uniform();
        p[i] = static_cast<T>(static_cast<compute_t<T>>(v));
      }
    });
  }

 private:
  Rng rng_;
  DType dtype_;
  double a_, b_;
  Shape shape_;
};

using RandomUniformKernel = RandomKernel<false, false>;
using RandomNormalKernel = RandomKernel<true, false>;
using RandomUniformLikeKernel = RandomKernel<false, true>;
using RandomNormalLikeKernel = RandomKernel<true, true>;

// Bernoulli: 1 with probability x[i], else 0, in the output dtype (default: the input's).
class BernoulliKernel final : public Kernel {
 public:
  explicit BernoulliKernel(const KernelInfo& info)
      : rng_(info), dtype_(dtype_attr(info, DType::Undefined)) {}

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const Tensor& x = ctx.input(0);
    std::vector<double> prob(static_cast<size_t>(x.numel()));
    dispatch(FloatTypes{}, x.dtype(), label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x.data<T>();
      for (size_t i = 0; i < prob.size(); ++i)
        prob[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
    });
    const DType dt = dtype_ == DType::Undefined ? x.dtype() : dtype_;
    Tensor& y = ctx.output(0, dt, x.shape());
    std::lock_guard<std::mutex> lock(rng_.mutex());
    dispatch(NumericTypes{} + TypeList<bool>{}, dt, label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = y.data<T>();
      for (size_t i = 0; i < prob.size(); ++i) {
        const bool one = rng_.uniform() < prob[i];
        if constexpr (std::is_same_v<T, bool>) p[i] = one;
        else
          p[i] = static_cast<T>(static_cast<compute_t<T>>(one ? 1 : 0));
      }
    });
  }

 private:
  Rng rng_;
  DType dtype_;
};

// Multinomial: sample_size class indices per batch row, drawn from softmax(x[row]).
class MultinomialKernel final : public Kernel {
 public:
  explicit MultinomialKernel(const KernelInfo& info)
      : rng_(info),
        dtype_(dtype_attr(info, DType::Int32)),
        samples_(info.attr_int("sample_size", 1)) {
    if (dtype_ != DType::Int32 && dtype_ != DType::Int64)
      info.unsupported("dtype=" + std::string(dtype_name(dtype_)));
    if (samples_ < 0) info.unsupported("negative sample_size");
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() == 2, ShapeMismatch, label, ": input must be [batch, classes], got ",
             x.describe());
    const int64_t B = x.dim(0), K = x.dim(1);
    std::vector<double> logits(static_cast<size_t>(x.numel()));
    dispatch(FloatTypes{}, x.dtype(), label.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x.data<T>();
      for (size_t i = 0; i < logits.size(); ++i)
        logits[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
    });
    Tensor& y = ctx.output(0, dtype_, {B, samples_});
    if (y.numel() == 0) return;
    PI_CHECK(K > 0, InvalidArgument, label, ": cannot sample from zero classes");
    std::vector<int64_t> out(static_cast<size_t>(B * samples_));
    std::vector<double> cdf(static_cast<size_t>(K));
    std::lock_guard<std::mutex> lock(rng_.mutex());
    for (int64_t b = 0; b < B; ++b) {
      const double* row = &logits[static_cast<size_t>(b * K)];
      const double mx = *std::max_element(row, row + K);
      PI_CHECK(std::isfinite(mx), InvalidArgument, label, ": row ", b,
               " has no finite log-probability");
      double total = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        total += std::exp(row[k] - mx);  // NaN logits make total NaN, caught below
        cdf[static_cast<size_t>(k)] = total;
      }
      PI_CHECK(std::isfinite(total) && total > 0, InvalidArgument, label, ": row ", b,
               " is not a valid distribution");
      for (int64_t s = 0; s < samples_; ++s) {
        const double u = rng_.uniform() * total;
        const int64_t k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
        out[static_cast<size_t>(b * samples_ + s)] = std::min(k, K - 1);
      }
    }
    if (dtype_ == DType::Int64) {
      std::copy(out.begin(), out.end(), y.data<int64_t>());
    } else {
      int32_t* p = y.data<int32_t>();
      for (size_t i = 0; i < out.size(); ++i) p[i] = static_cast<int32_t>(out[i]);
    }
  }

 private:
  Rng rng_;
  DType dtype_;
  int64_t samples_;
};

}  // namespace

PI_CPU_KERNEL(RandomUniform, 1, 28, RandomUniformKernel);
PI_CPU_KERNEL(RandomNormal, 1, 28, RandomNormalKernel);
PI_CPU_KERNEL(RandomUniformLike, 1, 28, RandomUniformLikeKernel);
PI_CPU_KERNEL(RandomNormalLike, 1, 28, RandomNormalLikeKernel);
PI_CPU_KERNEL(Bernoulli, 15, 28, BernoulliKernel);
PI_CPU_KERNEL(Multinomial, 7, 28, MultinomialKernel);

}  // namespace polyinfer
