// The packed-weight GEMM of the fast MatMul (matmul_packed.cpp) and of the 1x1 convolutions
// (conv_pointwise_gemm.cpp): Y [P, N] = act(A [P, K] x B + bias + Z) for a constant B packed
// once, float32. N is a multiple of 8 on the AVX2 tile (whole-vector stores); the AVX-512 tile
// and the one-row path store under masks, so there any N is fine.
//
// The computation: B is packed once as [N/16][K][16] (zero-filled past N), or as [N/32][K][32]
// on the zmm tiles (avx512_gemm.h). Each task takes a block of rows and a group of panels and
// runs the register tile (avx2_util.h's up to 6 rows x 16, or up to 8 rows x 32; full panels two
// at a time as 6 rows x 64 on GemmTile::Avx512Pairs) over its panels and rows, bias, Z and
// activation applied in registers. Rules, each measured (docs/kernels.md has the figures):
//   - K is cut into blocks only past 4096 (sums continued in Y): reloading partial sums cost
//     more than the panel's weights streaming from L2.
//   - Rows come in blocks of up to 192, so a 128-token sequence reads the weights once.
//   - With enough row blocks, thread t takes the t-th contiguous share of them, as oneDNN's
//     convolutions split their rows: a 1x1 convolution's input then sits in the cache of the
//     core that wrote it. With fewer row blocks than two per thread, a MatMul's panels are cut
//     into 4 groups per thread, each taken by the next thread free (weights streaming from
//     memory: each thread reads part of them); a convolution asks for contiguous row shares
//     then too (Split::Rows).
//   - One row (a classifier's last layer) runs against 64 columns at once.
//   - A pair's row tiles fetch the next pair's weights into L2, each a share spread over its K
//     steps, so that the first tile over a pair does not wait on memory for all of them.
#pragma once

#include <cstdint>
#include <memory>

#include "ops/activation.h"
#include "polyinfer/provider_options.h"
#include "polyinfer/tensor.h"
#include "runtime/kernel.h"

namespace polyinfer::fast {

class PackedGemm {
 public:
  PackedGemm() = default;

  // Whether the panels will be 32 wide (the zmm tiles, which take any N): what the constructor
  // picks from the CPU and options.gemm_tile.
  static bool wide(const CpuProviderOptions& options);

  // Packs B, K x N floats at any alignment (N x K under `trans_b`, transposed while packing),
  // times `alpha`; `bias` is N floats (times `beta`) or null for zeros. The panels are 32 wide
  // where wide(options), else 16. Only where the CPU has AVX2 and FMA (the kernels check
  // first); N a multiple of 8 unless wide().
  PackedGemm(const CpuProviderOptions& options, const void* b, int64_t K, int64_t N, bool trans_b,
             float alpha, const float* bias, float beta);
  // The same where B is constant input `input` of `info`'s node, read at `b`: packed once for
  // every kernel of the session that packs that weight alike (KernelInfo::shared_prepack).
  // The bias stays the kernel's own: nodes that share a weight may add different ones.
  PackedGemm(const KernelInfo& info, size_t input, const void* b, int64_t K, int64_t N,
             bool trans_b, float alpha, const float* bias, float beta);

  // How threads share a run of fewer row blocks than two per thread: by groups of panels, each
  // taken by the next thread free (a MatMul whose weights stream from memory: each thread
  // reads part of them), or by rows, one contiguous share per thread (a 1x1 convolution, whose
  // neighbours split the pixels so).
  enum class Split { Panels, Rows };

  // y[p][n] = act(sum over k of a[p][k] * B[k][n] + bias[n] + z[p][n]) for P rows; a, z and y
  // dense ([P, K], [P, N], [P, N]); z null for none, or y itself (each output reads its own
  // element of z just before writing it).
  void run(const float* a, const float* z, float* y, int64_t P, const FusedActivation& act,
           int threads, Split few_blocks = Split::Panels) const;

  // "avx512" or "avx2": the tile's instruction set, for kernels' implementation names.
  const char* isa() const;
  int64_t K() const { return K_; }
  int64_t N() const { return N_; }
  // Whether other kernels hold the same packed B (asked once every kernel exists).
  bool shared() const { return w_.use_count() > 1; }

 private:
  // K, N, the tile and the bias; B is packed by pack().
  PackedGemm(const CpuProviderOptions& options, int64_t K, int64_t N, const float* bias,
             float beta);
  Tensor pack(const void* b, bool trans_b, float alpha) const;

  int64_t K_ = 0, N_ = 0;
  int64_t width_ = 16;               // columns per packed panel
  bool pairs_ = false;               // two panels per tile (avx512::gemm_rows_pair)
  std::shared_ptr<const Tensor> w_;  // B's panels, possibly shared with other kernels
  Tensor bias_;
};

}  // namespace polyinfer::fast
