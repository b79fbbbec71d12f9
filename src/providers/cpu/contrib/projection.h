// Y [P, N] = X [P, K] x W [K, N] (+ bias [N]) for the contrib kernels' weight products
// (Attention's fused QKV projection; MatMulNBits' dequantized weights): the project's packed
// GEMM (fast/packed_gemm.h) where the fast tier asks for it and the CPU has AVX2, else a plain
// loop over rows split between the threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/fast/packed_gemm.h"

namespace polyinfer::contrib {

class Projection {
 public:
  Projection() = default;
  // `w`: K x N floats (N x K under `trans`) at any alignment (a constant still in the model
  // file: read in place); `bias`: N floats or null. With `packed`, the packed GEMM takes them,
  // or the node is refused (info.unsupported) where it cannot: no AVX2, or N not a multiple of 8
  // on the AVX2 tile.
  Projection(const KernelInfo& info, const void* w, int64_t K, int64_t N, const float* bias,
             bool packed, const char* who, bool trans = false)
      : K_(K), N_(N) {
    if (packed) {
      fast::require_avx2_kernel(info, who);
      if (N % 8 != 0 && !fast::PackedGemm::wide(info.options().cpu))
        info.unsupported(std::string(who) + ": N a multiple of 8 only on the AVX2 tile");
      gemm_.emplace(info.options().cpu, w, K, N, trans, 1.0f, bias, 1.0f);
      return;
    }
    w_.resize(static_cast<size_t>(K * N));
    const auto* src = static_cast<const unsigned char*>(w);
    if (!trans) {
      if (K * N > 0) std::memcpy(w_.data(), w, w_.size() * sizeof(float));
    } else {
      // [N, K] -> [K, N] in tiles, so that neither side strides through memory a float at a time.
      constexpr int64_t kTile = 32;
      for (int64_t n0 = 0; n0 < N; n0 += kTile)
        for (int64_t k0 = 0; k0 < K; k0 += kTile)
          for (int64_t n = n0; n < std::min(N, n0 + kTile); ++n)
            for (int64_t k = k0; k < std::min(K, k0 + kTile); ++k)
              std::memcpy(&w_[k * N + n], src + (n * K + k) * sizeof(float), sizeof(float));
    }
    if (bias) bias_.assign(bias, bias + N);
  }
  bool packed() const { return gemm_.has_value(); }
  const char* isa() const { return gemm_ ? gemm_->isa() : "reference"; }
  int64_t K() const { return K_; }
  int64_t N() const { return N_; }

  // y[P, N] = x[P, K] W (+ bias).
  void run(const float* x, float* y, int64_t P, int threads) const {
    if (gemm_) {
      gemm_->run(x, nullptr, y, P, FusedActivation{}, threads);
      return;
    }
    plain(x, w_.data(), bias_.empty() ? nullptr : bias_.data(), y, P, K_, N_, threads);
  }

  // y[P, N] = x[P, K] w^T for w [N, K]: dot products of rows, for weights known only at run time.
  static void plain_nk(const float* x, const float* w, float* y, int64_t P, int64_t K, int64_t N,
                       int threads) {
    const int64_t grain = std::max<int64_t>(1, fast::kGrain / std::max<int64_t>(1, K * N / 64));
    fast::parallel_for(P, threads, grain, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t n = 0; n < N; ++n) {
          const float* xr = x + p * K;
          const float* wr = w + n * K;
          float acc = 0;
#pragma omp simd reduction(+ : acc)
          for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
          y[p * N + n] = acc;
        }
    });
  }

  // The plain product, for weights known only at run time.
  static void plain(const float* x, const float* w, const float* bias, float* y, int64_t P,
                    int64_t K, int64_t N, int threads) {
    const int64_t grain = std::max<int64_t>(1, fast::kGrain / std::max<int64_t>(1, K * N / 64));
    fast::parallel_for(P, threads, grain, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        float* yr = y + p * N;
        for (int64_t n = 0; n < N; ++n) yr[n] = bias ? bias[n] : 0.0f;
        const float* xr = x + p * K;
        for (int64_t k = 0; k < K; ++k) {
          const float a = xr[k];
          const float* wr = w + k * N;
#pragma omp simd
          for (int64_t n = 0; n < N; ++n) yr[n] += a * wr[n];
        }
      }
    });
  }

 private:
  int64_t K_ = 0, N_ = 0;
  std::optional<fast::PackedGemm> gemm_;
  std::vector<float> w_, bias_;
};

}  // namespace polyinfer::contrib
