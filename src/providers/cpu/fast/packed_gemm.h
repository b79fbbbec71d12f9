// The packed-weight GEMM of the fast MatMul (matmul_packed.cpp) and of the 1x1 convolutions
// (conv_pointwise_gemm.cpp): Y [P, N] = act(A [P, K] x B + bias + Z) for a constant B packed
// once, float32. N is a multiple of 8 on the AVX2 tile (whole-vector stores); the AVX-512 tile
// and the one-row path store under masks, so there any N is fine.
//
// The computation: B is packed once as [N/16][K][16] (zero-filled past N), or as [N/32][K][32]
// where the CPU has AVX-512 (avx512_gemm.h: BERT-base 4-10% faster on a Zen 4 core). Each task
// takes a block of rows and a group of panels and runs the register tile (avx2_util.h's up to 6
// rows x 16, or up to 8 rows x 32) over its panels and rows, bias, Z and activation applied in
// registers. K is cut into blocks only past 4096 (sums continued in Y): BERT-base's layers ran
// 5% faster with their whole K (768 or 3072) in one pass than in blocks of 256 sized for L1, the
// reloads of partial sums costing more than the panel's weights streaming from L2. Rows come in
// blocks of up to 192, so a 128-token sequence reads the weights from memory once; with fewer
// row blocks than threads the panels are cut into 4 groups per thread, each taken by the next
// thread free: with one of two cores busy with another process, BERT-base at 2 threads ran
// 397-411 ms against 453-478 with one fixed half per thread (equal when both are free). With
// enough row blocks, thread t takes the t-th contiguous share of them, as oneDNN's convolutions
// split their rows: a 1x1 convolution's input then sits in the cache of the core that wrote it.
// Taken by the next thread free, ResNet-50's 1x1 layers at 2 threads ran 16.8 -> 18.9 ms against
// brgconv_1x1 (up to 35% slower per layer); in contiguous shares 15.6 -> 15.4. The convolutions
// ask for contiguous shares with few row blocks too (Split::Rows: one share per thread, as even
// as can be): on 14x14 and 7x7 maps the panel groups left each depthwise layer after a 1x1 one
// half of its input in the other core's cache. At 2 threads, two alternated A/B runs, median
// latency, ms: MobileNetV2 4.93 -> 4.33 and 4.96 -> 4.42, MNASNet 5.21 -> 4.71 and 5.56 -> 4.99,
// EfficientNet-B0 8.79 -> 8.33 and 9.18 -> 8.72, MobileNetV3 4.60 -> 4.17 and level, RegNet-Y
// 7.25 -> 6.92, ResNet-50 level and 34.7 -> 34.1. One row (a classifier's last layer) runs
// against 64 columns at once instead. On the AVX-512 tile, full panels go two at a time
// through avx512::gemm_rows_pair (6 rows x 64 columns, B fetched 16 steps ahead;
// POLYINFER_GEMM_PAIRS=0 keeps one panel of 8 x 32): on an Intel Xeon core with two zmm FMA
// pipes, alternated at 1 thread, BERT-base 172 / 171 -> 159 / 157 ms before the prefetch,
// 151 / 149 with it; ResNet-50 58.5 / 59.3 -> 53.6 / 56.6 ms (its 1x1 layers). A pair's row
// tiles also fetch the next pair's weights into L2, each a share spread over its K steps, so
// that the first tile over a pair no longer waits on memory for all of them (BERT-base's
// MatMuls ~2% faster at 1 and 2 threads, alternated; gemm_rows_pair has the probe's figures).
#pragma once

#include <cstdint>

#include "polyinfer/tensor.h"
#include "providers/cpu/ops/fused_activation.h"

namespace polyinfer::fast {

class PackedGemm {
 public:
  PackedGemm() = default;

  // Whether the panels will be 32 wide (the AVX-512 tile, which takes any N): what the
  // constructor picks from the CPU and POLYINFER_AVX512_GEMM.
  static bool wide();

  // Packs B, K x N floats at any alignment (N x K under `trans_b`, transposed while packing),
  // times `alpha`; `bias` is N floats (times `beta`) or null for zeros. The panels are 32 wide
  // where the CPU has AVX-512 (POLYINFER_AVX512_GEMM=0 keeps 16, for tests and A/B runs), else
  // 16. Only where the CPU has AVX2 and FMA (the kernels check first); N a multiple of 8
  // unless wide().
  PackedGemm(const void* b, int64_t K, int64_t N, bool trans_b, float alpha, const float* bias,
             float beta);

  // How threads share a run of fewer row blocks than two per thread: by groups of panels, each
  // taken by the next thread free (a MatMul whose weights stream from memory: each thread
  // reads part of them), or by rows, one contiguous share per thread (a 1x1 convolution, whose
  // neighbours split the pixels so).
  enum class Split { Panels, Rows };

  // y[p][n] = act(sum over k of a[p][k] * B[k][n] + bias[n] + z[p][n]) for P rows; a, z and y
  // dense ([P, K], [P, N], [P, N]); z null for none, or y itself (each output reads its own
  // element of z just before writing it).
  void run(const float* a, const float* z, float* y, int64_t P, const cpu::FusedActivation& act,
           int threads, Split few_blocks = Split::Panels) const;

  // "avx512" or "avx2": the tile's instruction set, for kernels' implementation names.
  const char* isa() const;
  int64_t K() const { return K_; }
  int64_t N() const { return N_; }

 private:
  int64_t K_ = 0, N_ = 0;
  int64_t width_ = 16;  // columns per packed panel
  bool pairs_ = false;  // two panels per tile (avx512::gemm_rows_pair)
  Tensor w_, bias_;
};

}  // namespace polyinfer::fast
