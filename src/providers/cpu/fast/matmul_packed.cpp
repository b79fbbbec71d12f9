// MatMul and ai.polyinfer FusedMatMul with constant 2-D weights on AVX2+FMA: Y [..., N] =
// act(A [..., K] x B [K, N] + bias), every leading dimension of A flattened into rows (a 1-D A
// is one row, and Y is then [N]), N a multiple of 8, float32.
//
// Why: these are BERT-base's 72 projection and feed-forward layers, 94% of its run; oneDNN
// 2.6's gemm:jit (AVX2) ran them at ~80 GFLOP/s of the 101 peak.
//
// The computation: B is packed once as [N/16][K][16] (zero-filled past N). Each task takes a
// block of rows and a group of 16-column panels and runs the register tile of avx2_util.h
// (up to 6 rows x 16) over its panels and rows, bias and activation applied in registers. K
// is cut into blocks only past 4096 (sums continued in Y): BERT-base's layers ran 5% faster with
// their whole K (768 or 3072) in one pass than in blocks of 256 sized for L1, the reloads of
// partial sums costing more than the panel's weights streaming from L2. Rows come in blocks of
// up to 192, so a 128-token sequence reads the weights from memory once; with fewer row blocks
// than threads the panels are cut into kGroupsPerThread groups per thread, each taken by the
// next thread free: with one of two cores busy with another process, BERT-base at 2 threads
// ran 397-411 ms against 453-478 with one fixed half per thread (equal when both are free).
#include <algorithm>
#include <cstring>

#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/fast/nhwc_conv_args.h"
#include "providers/cpu/ops/fused_activation.h"

namespace polyinfer::fast {
namespace {

using cpu::FusedActivation;

constexpr int64_t kBlock = 16;    // output columns per panel
constexpr int kRows = 6;          // rows per register tile
constexpr int64_t kMaxRows = 192;  // rows per block
constexpr int64_t kKc = 4096;      // K per block
constexpr int64_t kGroupsPerThread = 4;  // panel groups per thread (above)

struct Plan {
  const float* a;
  float* y;
  const float* w;     // [N/16][K][16]
  const float* bias;  // [N/16 * 16]
  FusedActivation act;
  int64_t P, K, N;    // rows, depth, columns
  int64_t pb, panels, groups;
};

#ifdef PI_X86_AVX2

PI_AVX2 void run_task(const Plan& q, int64_t blk, int64_t group) {
  const int64_t per_group = (q.panels + q.groups - 1) / q.groups;
  const int64_t m0 = group * per_group, m1 = std::min(q.panels, m0 + per_group);
  const int64_t p0 = blk * q.pb, np = std::min(q.pb, q.P - p0);
  if (m0 >= m1 || np <= 0) return;
  // Even tiles: BERT-base's 128 rows had a tile of 2, 2.9% of the run for 1.6% of the rows.
  const int64_t tiles = avx2::row_tiles(np);
  for (int64_t k0 = 0; k0 < q.K; k0 += kKc) {
    const int64_t kn = std::min(kKc, q.K - k0);
    const bool first = k0 == 0, last = k0 + kn == q.K;
    for (int64_t mb = m0; mb < m1; ++mb) {
      const int cols = static_cast<int>(std::min<int64_t>(kBlock, q.N - mb * kBlock));
      const float* w = q.w + (mb * q.K + k0) * kBlock;
      for (int64_t t = 0, p = 0, rows = 0; t < tiles; ++t, p += rows) {
        rows = avx2::tile_rows(np, tiles, t);
        float* y = q.y + (p0 + p) * q.N + mb * kBlock;
        avx2::kGemmRows[rows](q.a + (p0 + p) * q.K + k0, q.K, w, kn, y, q.N, 8,
                              first ? q.bias + mb * kBlock : nullptr, first ? nullptr : y,
                              last ? &q.act : nullptr, cols);
      }
    }
  }
}

#endif  // PI_X86_AVX2

class PackedMatMul final : public Kernel {
 public:
  explicit PackedMatMul(const KernelInfo& info) : label_(info.node().label()) {
    require_avx2_kernel(info, "packed MatMul", "POLYINFER_PACKED_MATMUL");
    require_float_input(info);
    const Tensor* b = info.constant_input(1);
    if (!b || b->dtype() != DType::Float32 || b->rank() != 2)
      info.unsupported("packed MatMul: constant float32 2-D weights only");
    K_ = b->shape()[0];
    N_ = b->shape()[1];
    if (N_ % 8 != 0 || K_ == 0) info.unsupported("packed MatMul: N a multiple of 8 only");
    if (info.node().domain == "ai.polyinfer") act_ = FusedActivation::from(info);
    if (!avx2::covers(act_.kind)) info.unsupported("packed MatMul: this activation");
    const Tensor* bias = nullptr;
    if (info.has_input(2)) {
      bias = info.constant_input(2);
      if (!bias || bias->dtype() != DType::Float32 || bias->numel() != N_)
        info.unsupported("packed MatMul: a bias that is not a constant vector of N values");
    }
    // Read in place: a weight still in the model file is never copied whole first.
    pack(static_cast<const char*>(b->peek_bytes()), bias ? bias->data<float>() : nullptr);
  }

  bool prepacked(size_t i) const override { return i == 1 || i == 2; }
  std::string impl() const override { return "fast:avx2-packed"; }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    PI_CHECK(a.dtype() == DType::Float32, InvalidArgument, label_, ": A must be float32, got ",
             dtype_name(a.dtype()));
    PI_CHECK(a.rank() >= 1 && a.shape().back() == K_, ShapeMismatch, label_, ": A has shape ",
             shape_str(a.shape()), " but B has ", K_, " rows (A's last dimension must match)");
    Shape ys = a.shape();  // a 1-D A is one row whose dimension the product drops
    ys.back() = N_;
    Tensor& y = ctx.output(0, DType::Float32, ys);
    if (y.numel() == 0) return;
#ifdef PI_X86_AVX2
    const int threads = ctx.threads();
    Plan q{a.data<float>(), y.data<float>(), w_.data<float>(), bias_.data<float>(), act_,
           a.numel() / K_, K_, N_, 0, (N_ + kBlock - 1) / kBlock, 1};
    int64_t blocks = (q.P + kMaxRows - 1) / kMaxRows;
    if (threads > 1 && blocks > 1) blocks = (blocks + threads - 1) / threads * threads;
    q.pb = ((q.P + blocks - 1) / blocks + kRows - 1) / kRows * kRows;
    blocks = (q.P + q.pb - 1) / q.pb;
    if (blocks < 2 * threads) q.groups = std::min<int64_t>(q.panels, kGroupsPerThread * threads);
    parallel_tasks(blocks * q.groups, threads,
                   [&](int64_t t) { run_task(q, t / q.groups, t % q.groups); });
#endif
  }

 private:
  // `b`: K x N floats at any alignment.
  void pack(const char* b, const float* bias) {
    const int64_t panels = (N_ + kBlock - 1) / kBlock;
    // Panel by panel, so the writes run in order (row by row they went to N/16 places at
    // once); N is a multiple of 8, so only the last panel may be half full.
    w_ = Tensor::empty(DType::Float32, {panels * K_ * kBlock});
    bias_ = Tensor::zeros(DType::Float32, {panels * kBlock});
    float* d = w_.data<float>();
    for (int64_t nb = 0; nb < panels; ++nb) {
      const int64_t cols = std::min(kBlock, N_ - nb * kBlock);
      for (int64_t k = 0; k < K_; ++k, d += kBlock) {
        std::memcpy(d, b + (k * N_ + nb * kBlock) * sizeof(float),
                    static_cast<size_t>(cols) * sizeof(float));
        if (cols < kBlock)
          std::memset(d + cols, 0, static_cast<size_t>(kBlock - cols) * sizeof(float));
      }
    }
    if (bias) std::memcpy(bias_.data<float>(), bias, static_cast<size_t>(N_) * sizeof(float));
  }

  std::string label_;
  int64_t K_ = 0, N_ = 0;
  FusedActivation act_;
  Tensor w_, bias_;
};

PI_REGISTER_KERNEL_TIER("cpu", "", MatMul, 1, 23, PackedMatMul, Specialized);
PI_REGISTER_KERNEL_TIER("cpu", "ai.polyinfer", FusedMatMul, 1, 1, PackedMatMul, Specialized);

}  // namespace
}  // namespace polyinfer::fast
