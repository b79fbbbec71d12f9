// com.microsoft EmbedLayerNormalization: BERT's embedding layer and its LayerNormalization.
//
//   e[b, s] = word_embedding[input_ids[b, s]] + position_embedding[p] (+ segment_embedding[
//             segment_ids[b, s]]),  p = position_ids[b or 0, s] when given, else s
//   output = LayerNormalization(e) * gamma + beta over the hidden dimension
//   mask_index[b] = the number of non-zero entries of mask[b] (0 without a mask), int32
//   embedding_sum = e
//
// An id outside its table is an error naming the input, as in ONNX Runtime. Token rows are split
// over the threads.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "providers/cpu/contrib/contrib_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::contrib {
namespace {

class EmbedLayerNormKernel final : public Kernel {
 public:
  explicit EmbedLayerNormKernel(const KernelInfo& info)
      : eps_(info.attr_float("epsilon", 1e-12f)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& ids_t = ctx.input(0);
    PI_CHECK(ids_t.rank() == 2, ShapeMismatch, who_,
             ": input_ids must be 2-D [batch, sequence], got ", shape_str(ids_t.shape()));
    const int64_t B = ids_t.shape()[0], S = ids_t.shape()[1];
    const Tensor& word = ctx.input(2);
    const Tensor& pos = ctx.input(3);
    PI_CHECK(word.rank() == 2 && pos.rank() == 2 && pos.shape()[1] == word.shape()[1],
             ShapeMismatch, who_, ": word_embedding ", shape_str(word.shape()),
             " and position_embedding ", shape_str(pos.shape()),
             " must be 2-D tables of one hidden size");
    const int64_t H = word.shape()[1];
    const bool has_seg = ctx.has_input(1) && ctx.has_input(4);
    const std::vector<int64_t> ids = read_index_values(ids_t, who_, "input_ids");
    std::vector<int64_t> seg, pos_ids;
    if (has_seg) {
      const Tensor& st = ctx.input(1);
      PI_CHECK(st.shape() == ids_t.shape(), ShapeMismatch, who_, ": segment_ids ",
               shape_str(st.shape()), " must be shaped as input_ids ", shape_str(ids_t.shape()));
      seg = read_index_values(st, who_, "segment_ids");
      PI_CHECK(ctx.input(4).rank() == 2 && ctx.input(4).shape()[1] == H, ShapeMismatch, who_,
               ": segment_embedding ", shape_str(ctx.input(4).shape()), " must be [*, ", H, "]");
    }
    bool pos_per_batch = false;
    if (ctx.has_input(8)) {
      const Tensor& pt = ctx.input(8);
      PI_CHECK(pt.rank() == 2 && pt.shape()[1] == S && (pt.shape()[0] == B || pt.shape()[0] == 1),
               ShapeMismatch, who_, ": position_ids ", shape_str(pt.shape()), " must be [", B, ", ",
               S, "] or [1, ", S, "]");
      pos_ids = read_index_values(pt, who_, "position_ids");
      pos_per_batch = pt.shape()[0] == B && B != 1;
    }
    const FloatIn we(word, who_, "word_embedding"), pe(pos, who_, "position_embedding");
    const FloatIn se = has_seg ? FloatIn(ctx.input(4), who_, "segment_embedding") : FloatIn();
    const FloatIn gamma(ctx.input(5), who_, "gamma"), beta(ctx.input(6), who_, "beta");
    PI_CHECK(ctx.input(5).numel() == H && ctx.input(6).numel() == H, ShapeMismatch, who_,
             ": gamma and beta must hold the hidden size's ", H, " values");
    const int64_t nw = word.shape()[0], np = pos.shape()[0],
                  ns = has_seg ? ctx.input(4).shape()[0] : 0;
    // Check every id before writing anything.
    for (int64_t i = 0; i < B * S; ++i) {
      PI_CHECK(ids[i] >= 0 && ids[i] < nw, InvalidArgument, who_, ": input_ids holds ", ids[i],
               ", outside word_embedding's ", nw, " rows");
      if (has_seg)
        PI_CHECK(seg[i] >= 0 && seg[i] < ns, InvalidArgument, who_, ": segment_ids holds ", seg[i],
                 ", outside segment_embedding's ", ns, " rows");
      const int64_t p = pos_ids.empty() ? i % S : pos_ids[pos_per_batch ? i : i % S];
      PI_CHECK(p >= 0 && p < np, InvalidArgument, who_, ": position ", p,
               " is outside position_embedding's ", np, " rows");
    }

    FloatOut y(ctx, 0, word.dtype(), {B, S, H});
    std::optional<FloatOut> sum;
    if (ctx.wants_output(2)) sum.emplace(ctx, 2, word.dtype(), Shape{B, S, H});
    if (ctx.wants_output(1)) {
      int32_t* mi = ctx.output(1, DType::Int32, {B}).data<int32_t>();
      std::fill(mi, mi + B, 0);
      if (ctx.has_input(7)) {
        const Tensor& mt = ctx.input(7);
        PI_CHECK(mt.shape() == ids_t.shape(), ShapeMismatch, who_, ": mask ", shape_str(mt.shape()),
                 " must be shaped as input_ids ", shape_str(ids_t.shape()));
        const std::vector<int64_t> mask = read_index_values(mt, who_, "mask");
        for (int64_t b = 0; b < B; ++b)
          for (int64_t s = 0; s < S; ++s) mi[b] += mask[b * S + s] != 0 ? 1 : 0;
      }
    }
    float* yp = y.data();
    float* sum_p = sum ? sum->data() : nullptr;
    const float eps = eps_;
    fast::parallel_for(
        B * S, ctx.threads(), std::max<int64_t>(1, fast::kGrain / 8 / std::max<int64_t>(H, 1)),
        [&](int64_t t0, int64_t t1) {
          std::vector<float> e(static_cast<size_t>(H));
          for (int64_t t = t0; t < t1; ++t) {
            const int64_t p = pos_ids.empty() ? t % S : pos_ids[pos_per_batch ? t : t % S];
            const float* w = we.data() + ids[t] * H;
            const float* q = pe.data() + p * H;
            for (int64_t i = 0; i < H; ++i) e[i] = w[i] + q[i];
            if (has_seg) {
              const float* g = se.data() + seg[t] * H;
              for (int64_t i = 0; i < H; ++i) e[i] += g[i];
            }
            double m = 0;
            for (int64_t i = 0; i < H; ++i) m += e[i];
            const float mean = static_cast<float>(m / static_cast<double>(H));
            double v = 0;
            for (int64_t i = 0; i < H; ++i) v += static_cast<double>(e[i] - mean) * (e[i] - mean);
            const float inv = 1.0f / std::sqrt(static_cast<float>(v / H) + eps);
            float* yr = yp + t * H;
            for (int64_t i = 0; i < H; ++i)
              yr[i] = (e[i] - mean) * inv * gamma.data()[i] + beta.data()[i];
            if (sum_p) std::copy(e.begin(), e.end(), sum_p + t * H);
          }
        });
    y.done();
    if (sum) sum->done();
  }

 private:
  float eps_;
  std::string who_;
};

}  // namespace

PI_MS_KERNEL(EmbedLayerNormalization, EmbedLayerNormKernel);

}  // namespace polyinfer::contrib
