// com.microsoft RotaryEmbedding: rotary position embedding of query or key heads.
//
//   input: [B, S, N*H] (3-D; N from num_heads, or H = 2 * cos_cache's columns) or [B, N, S, H]
//   position_ids (int64): [1] (positions p0 + s for every batch entry) or [B, S]
//   cos_cache, sin_cache: [max_position, rot / 2]; rot = rotary_embedding_dim, or H when 0
// Each head vector's first rot elements are rotated by the angles of its token's position
// (rotary.h: interleaved pairs (2i, 2i+1), else (i, i + rot/2)); the rest pass through. The
// scale attribute is read by ONNX Runtime's schema but changes nothing in its CPU kernel, nor
// here. Packed (ragged) batching is not implemented.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/contrib/contrib_util.h"
#include "providers/cpu/contrib/rotary.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::contrib {
namespace {

class RotaryEmbeddingKernel final : public Kernel {
 public:
  explicit RotaryEmbeddingKernel(const KernelInfo& info)
      : interleaved_(info.attr_int("interleaved", 0) != 0),
        num_heads_(info.attr_int("num_heads", 0)),
        rot_dim_(info.attr_int("rotary_embedding_dim", 0)),
        who_(info.node().label()) {
    if (info.attr_int("is_packed_batching", 0) != 0) info.unsupported("is_packed_batching=1");
    if (num_heads_ < 0 || rot_dim_ < 0 || rot_dim_ % 2 != 0)
      info.unsupported("num_heads/rotary_embedding_dim of these values");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& cos_t = ctx.input(2);
    const Tensor& sin_t = ctx.input(3);
    PI_CHECK(x.rank() == 3 || x.rank() == 4, ShapeMismatch, who_,
             ": input must be [batch, sequence, hidden] or [batch, heads, sequence, head_size], "
             "got ",
             shape_str(x.shape()));
    PI_CHECK(cos_t.rank() == 2 && sin_t.shape() == cos_t.shape(), ShapeMismatch, who_,
             ": cos_cache ", shape_str(cos_t.shape()), " and sin_cache ", shape_str(sin_t.shape()),
             " must be 2-D and of one shape");
    const int64_t half = cos_t.shape()[1], max_pos = cos_t.shape()[0];
    const bool bnsh = x.rank() == 4;
    const int64_t B = x.shape()[0], S = x.shape()[bnsh ? 2 : 1];
    int64_t H = 0, N = 0;
    if (bnsh) {
      N = x.shape()[1];
      H = x.shape()[3];
    } else if (num_heads_ > 0) {
      N = num_heads_;
      PI_CHECK(x.shape()[2] % N == 0, ShapeMismatch, who_, ": hidden size ", x.shape()[2],
               " is not a multiple of num_heads ", N);
      H = x.shape()[2] / N;
    } else {
      H = rot_dim_ > 0 ? rot_dim_ : 2 * half;
      PI_CHECK(H > 0 && x.shape()[2] % H == 0, ShapeMismatch, who_, ": hidden size ", x.shape()[2],
               " is not a multiple of the head size ", H, " (set num_heads for partial rotation)");
      N = x.shape()[2] / H;
    }
    const int64_t rot = rot_dim_ > 0 ? rot_dim_ : H;
    PI_CHECK(rot <= H && rot == 2 * half, ShapeMismatch, who_, ": the caches' ", half,
             " columns do not fit a rotary dimension of ", rot, " in heads of ", H);

    const Tensor& pt = ctx.input(1);
    const std::vector<int64_t> pids = read_index_values(pt, who_, "position_ids");
    const bool scalar_pos = pt.numel() == 1 && !(pt.rank() == 2 && B * S == 1);
    PI_CHECK(scalar_pos || (pt.rank() == 2 && pt.shape()[0] == B && pt.shape()[1] == S),
             ShapeMismatch, who_, ": position_ids ", shape_str(pt.shape()), " must be [1] or [", B,
             ", ", S, "]");
    std::vector<int64_t> positions(static_cast<size_t>(B * S));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t p = scalar_pos ? pids[0] + s : pids[b * S + s];
        PI_CHECK(p >= 0 && p < max_pos, InvalidArgument, who_, ": position ", p,
                 " is outside the caches' ", max_pos, " rows");
        positions[b * S + s] = p;
      }

    const FloatIn xs(x, who_, "input"), cs(cos_t, who_, "cos_cache"), ss(sin_t, who_, "sin_cache");
    FloatOut y(ctx, 0, x.dtype(), x.shape());
    const float* xp = xs.data();
    float* yp = y.data();
    std::copy(xp, xp + x.numel(), yp);
    const bool il = interleaved_;
    // One task per (batch, token): its N head vectors.
    fast::parallel_for(B * S, ctx.threads(), std::max<int64_t>(1, fast::kGrain / 4 / (N * H + 1)),
                       [&](int64_t t0, int64_t t1) {
                         for (int64_t t = t0; t < t1; ++t) {
                           const int64_t b = t / S, s = t % S, p = positions[t];
                           for (int64_t n = 0; n < N; ++n) {
                             const int64_t off = bnsh ? ((b * N + n) * S + s) * H : (t * N + n) * H;
                             rotate_head(yp + off, rot, cs.data() + p * half, ss.data() + p * half,
                                         il);
                           }
                         }
                       });
    y.done();
  }

 private:
  bool interleaved_;
  int64_t num_heads_, rot_dim_;
  std::string who_;
};

}  // namespace

PI_MS_KERNEL(RotaryEmbedding, RotaryEmbeddingKernel);

}  // namespace polyinfer::contrib
