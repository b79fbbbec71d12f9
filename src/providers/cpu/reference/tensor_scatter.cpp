// TensorScatter (opset 24): writes `update` into a copy of `past_cache` along the sequence axis,
// at a write index per batch entry: the functional form of a KV-cache append.
//
//   present[b, ..., write_indices[b] + s, ...] = update[b, ..., s, ...]   for s < update.dim(axis)
//
// mode="linear" requires every write to land inside the cache; mode="circular" wraps the index
// modulo the cache's sequence length (a negative write index wraps too, as Python's % does).
#include <cstdint>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "polyinfer/tensor.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class TensorScatterKernel final : public Kernel {
 public:
  explicit TensorScatterKernel(const KernelInfo& info)
      : axis_(info.attr_int("axis", -2)), who_(info.node().label()) {
    const std::string mode = info.attr_string("mode", "linear");
    if (mode == "circular") {
      circular_ = true;
    } else if (mode != "linear") {
      info.unsupported("mode=" + mode);
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& cache = ctx.input(0);
    const Tensor& update = ctx.input(1);
    PI_CHECK(cache.dtype() == update.dtype(), InvalidArgument, who_, ": past_cache is ",
             cache.describe(), " but update is ", update.describe(),
             "; both must have the same dtype");
    const int64_t rank = cache.rank();
    PI_CHECK(update.rank() == rank && rank >= 2, ShapeMismatch, who_, ": past_cache ",
             cache.describe(), " and update ", update.describe(),
             " must have one rank of at least 2");
    const int64_t axis = normalize_axis(axis_, rank, who_.c_str());
    PI_CHECK(axis != 0, InvalidArgument, who_, ": axis ", axis_,
             " is the batch axis; the sequence axis must be another");
    for (int64_t d = 0; d < rank; ++d) {
      const bool ok = d == axis ? update.dim(d) <= cache.dim(d) : update.dim(d) == cache.dim(d);
      PI_CHECK(ok, ShapeMismatch, who_, ": update ", update.describe(), " must match past_cache ",
               cache.describe(), " in every dimension but axis ", axis,
               ", where it may not be longer");
    }
    const int64_t batch = cache.dim(0);
    std::vector<int64_t> write(static_cast<size_t>(batch), 0);
    if (ctx.has_input(2)) {
      const Tensor& w = ctx.input(2);
      PI_CHECK(w.dtype() == DType::Int64 && w.rank() == 1 && w.dim(0) == batch, ShapeMismatch, who_,
               ": write_indices must be int64[", batch, "] (one per batch entry), got ",
               w.describe());
      write = w.to_vector<int64_t>();
    }

    const int64_t max_len = cache.dim(axis);
    const int64_t len = update.dim(axis);
    const int64_t rows = product(cache.shape(), 1, static_cast<size_t>(axis));  // per batch entry
    const int64_t inner =
        product(cache.shape(), static_cast<size_t>(axis) + 1, cache.shape().size());
    Tensor& y = ctx.output(0, cache.dtype(), cache.shape());
    copy_elems(y, 0, cache, 0, cache.numel());
    if (len == 0 || inner == 0) return;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t w = write[static_cast<size_t>(b)];
      if (!circular_)
        PI_CHECK(w >= 0 && w <= max_len - len, InvalidArgument, who_, ": write index ", w,
                 " of batch entry ", b, " with ", len, " update steps does not fit a cache of ",
                 max_len, " (mode=linear; mode=circular wraps around)");
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t prefix = b * rows + r;
        for (int64_t s = 0; s < len; ++s) {
          int64_t at = circular_ ? (w % max_len + s) % max_len : w + s;
          if (at < 0) at += max_len;
          copy_elems(y, (prefix * max_len + at) * inner, update, (prefix * len + s) * inner, inner);
        }
      }
    }
  }

 private:
  int64_t axis_;
  bool circular_ = false;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(TensorScatter, 24, 28, TensorScatterKernel);

}  // namespace polyinfer
