// ai.polyinfer ConcatChannelShuffle(X1, ..., XG) → Y1, ..., YS: the channels of the Xi
// (same shape, last axis C') concatenated, shuffled in G groups, and cut into S equal parts:
//   T[..., k * G + g] = Xg[..., k]   (k < C', g < G),   Ys = T[..., s * C/S : (s + 1) * C/S]
// with C = G * C'. ShuffleNet's Concat → Reshape → Transpose → Reshape channel shuffle and the
// Slices that split its result, in channels-last form (docs/optimizer.md). Written from the
// definition: the oracle for the fast kernel.
#include <algorithm>
#include <cstring>

#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

class ConcatChannelShuffleKernel final : public Kernel {
 public:
  explicit ConcatChannelShuffleKernel(const KernelInfo& info) : who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const size_t G = ctx.num_inputs(), S = ctx.num_outputs();
    PI_CHECK(G >= 1 && S >= 1, InvalidModel, who_,
             ": ConcatChannelShuffle needs inputs and outputs");
    const Tensor& x0 = ctx.input(0);
    PI_CHECK(x0.dtype() != DType::String, UnsupportedOp, who_, ": ConcatChannelShuffle of strings");
    PI_CHECK(x0.rank() >= 1, ShapeMismatch, who_, ": X1 ", x0.describe(), " has no channel axis");
    for (size_t g = 0; g < G; ++g) {
      const Tensor& x = ctx.input(g);
      PI_CHECK(x.dtype() == x0.dtype() && x.shape() == x0.shape(), ShapeMismatch, who_, ": X",
               g + 1, " ", x.describe(), " differs from X1 ", x0.describe(),
               " (the groups must match)");
    }
    const int64_t cg = x0.dim(-1), c = cg * static_cast<int64_t>(G);
    PI_CHECK(c % static_cast<int64_t>(S) == 0, ShapeMismatch, who_, ": ", c,
             " shuffled channels do not split into ", S, " equal outputs");
    const int64_t part = c / static_cast<int64_t>(S), rows = x0.numel() / std::max<int64_t>(cg, 1);
    Shape ys = x0.shape();
    ys.back() = part;
    const size_t es = dtype_size(x0.dtype());
    for (size_t s = 0; s < S; ++s) {
      Tensor& y = ctx.output(s, x0.dtype(), ys);
      char* yp = static_cast<char*>(y.raw_data());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < part; ++j) {
          const int64_t t = static_cast<int64_t>(s) * part + j;  // the shuffled channel
          const int64_t g = t % static_cast<int64_t>(G), k = t / static_cast<int64_t>(G);
          const char* src = static_cast<const char*>(ctx.input(static_cast<size_t>(g)).raw_data());
          std::memcpy(yp + (r * part + j) * es, src + (r * cg + k) * es, es);
        }
    }
  }

 private:
  std::string who_;
};

}  // namespace

PI_CPU_INTERNAL_KERNEL(ConcatChannelShuffle, 1, 1, ConcatChannelShuffleKernel);

}  // namespace polyinfer::cpu
