// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim elements of every head
// vector by per-position angles given as cos/sin caches; the remaining elements pass through.
//
// Input is [B, H, S, head] (4-D) or [B, S, H * head] (3-D, num_heads given); in both layouts one
// head vector is contiguous, so the kernel walks (b, s, h) and rotates head vectors in place of
// a transpose. The rotation pairs element k with k + rdim/2 (halves) or 2k with 2k + 1
// (interleaved).
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class RotaryEmbeddingKernel final : public Kernel {
 public:
  explicit RotaryEmbeddingKernel(const KernelInfo& info)
      : interleaved_(info.attr_int("interleaved", 0) != 0),
        rotary_dim_(info.attr_int("rotary_embedding_dim", 0)),
        num_heads_(info.attr_int("num_heads", 0)),
        who_(info.node().label()) {
    PI_CHECK(rotary_dim_ >= 0 && num_heads_ >= 0, InvalidModel, who_,
             ": rotary_embedding_dim and num_heads must not be negative");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& cos = ctx.input(1);
    const Tensor& sin = ctx.input(2);
    const bool four_d = x.rank() == 4;
    PI_CHECK(x.rank() == 3 || four_d, ShapeMismatch, who_, ": input must be 3-D or 4-D, got ",
             x.describe());
    const int64_t B = x.dim(0);
    int64_t H, S, head;
    if (four_d) {
      H = x.dim(1);
      S = x.dim(2);
      head = x.dim(3);
      PI_CHECK(num_heads_ == 0 || num_heads_ == H, ShapeMismatch, who_, ": num_heads=", num_heads_,
               " but the input is ", x.describe());
    } else {
      PI_CHECK(num_heads_ > 0, InvalidArgument, who_, ": a 3-D input needs num_heads");
      H = num_heads_;
      S = x.dim(1);
      PI_CHECK(x.dim(2) % H == 0, ShapeMismatch, who_, ": hidden size ", x.dim(2),
               " is not a multiple of num_heads ", H);
      head = x.dim(2) / H;
    }
    const int64_t rdim = rotary_dim_ == 0 ? head : rotary_dim_;
    PI_CHECK(rdim % 2 == 0 && rdim <= head, InvalidArgument, who_, ": rotary_embedding_dim ", rdim,
             " must be even and at most the head size ", head);
    const int64_t half = rdim / 2;
    PI_CHECK(cos.dtype() == x.dtype() && sin.dtype() == x.dtype() && cos.shape() == sin.shape(),
             InvalidArgument, who_, ": cos_cache ", cos.describe(), " and sin_cache ",
             sin.describe(), " must have the same shape and the input's dtype");

    // Row of the caches for each (b, s): a position id into [max_pos, half], or (b, s) itself
    // in a [B, S, half] cache.
    std::vector<int64_t> cache_row(static_cast<size_t>(B * S));
    if (ctx.has_input(3)) {
      const Tensor& pos = ctx.input(3);
      PI_CHECK(pos.dtype() == DType::Int64 && pos.shape() == Shape({B, S}), InvalidArgument, who_,
               ": position_ids must be int64[", B, ",", S, "], got ", pos.describe());
      PI_CHECK(cos.rank() == 2 && cos.dim(1) == half, ShapeMismatch, who_, ": cos_cache ",
               cos.describe(), " must be [max_position_id_plus_1, ", half, "]");
      const int64_t* p = pos.data<int64_t>();
      for (int64_t i = 0; i < B * S; ++i) {
        PI_CHECK(p[i] >= 0 && p[i] < cos.dim(0), InvalidArgument, who_, ": position id ", p[i],
                 " is outside the caches' ", cos.dim(0), " rows");
        cache_row[i] = p[i];
      }
    } else {
      PI_CHECK(cos.shape() == Shape({B, S, half}), ShapeMismatch, who_, ": cos_cache ",
               cos.describe(), " must be [", B, ",", S, ",", half, "] without position_ids");
      for (int64_t i = 0; i < B * S; ++i) cache_row[i] = i;
    }

    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(FloatTypes{}, x.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* xp = x.data<T>();
      const T* cp = cos.data<T>();
      const T* sp = sin.data<T>();
      T* yp = y.data<T>();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s) {
          const int64_t row = cache_row[b * S + s] * half;
          for (int64_t h = 0; h < H; ++h) {
            const int64_t off =
                four_d ? ((b * H + h) * S + s) * head : ((b * S + s) * H + h) * head;
            const T* in = xp + off;
            T* out = yp + off;
            for (int64_t k = 0; k < half; ++k) {
              const int64_t i1 = interleaved_ ? 2 * k : k;
              const int64_t i2 = interleaved_ ? 2 * k + 1 : k + half;
              const C c = C(cp[row + k]), sn = C(sp[row + k]);
              const C x1 = C(in[i1]), x2 = C(in[i2]);
              out[i1] = T(c * x1 - sn * x2);
              out[i2] = T(sn * x1 + c * x2);
            }
            for (int64_t k = rdim; k < head; ++k) out[k] = in[k];
          }
        }
    });
  }

 private:
  bool interleaved_;
  int64_t rotary_dim_, num_heads_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(RotaryEmbedding, 23, 28, RotaryEmbeddingKernel);

}  // namespace polyinfer
