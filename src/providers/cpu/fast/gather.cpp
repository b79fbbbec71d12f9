// Fast Gather for every fixed-size dtype with int64 or int32 indices: each index selects one
// contiguous block of the data (a row of an embedding table for axis 0), copied with memcpy; the
// copies are split over threads when the output is large. Negative indices count from the end;
// an index out of range (and strings) goes to the reference kernel, which reports it.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

class FastGatherKernel final : public Kernel {
 public:
  explicit FastGatherKernel(const KernelInfo& info) : ref_(info), axis_(info.attr_int("axis", 0)) {}
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const int r = x.rank();
    if (r == 0 || x.dtype() == DType::String || axis_ < -r || axis_ >= r ||
        (ind.dtype() != DType::Int64 && ind.dtype() != DType::Int32))
      return ref_.run(ctx);
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    const int64_t dim = x.shape()[axis];
    const int64_t n = ind.numel();
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      int64_t v = ind.dtype() == DType::Int64 ? ind.data<int64_t>()[j] : ind.data<int32_t>()[j];
      if (v < 0) v += dim;
      if (v < 0 || v >= dim) return ref_.run(ctx);  // its error names the node and the index
      idx[j] = v;
    }
    Shape out(x.shape().begin(), x.shape().begin() + axis);
    out.insert(out.end(), ind.shape().begin(), ind.shape().end());
    out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
    Tensor& y = ctx.output(0, x.dtype(), out);
    if (y.numel() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (int d = static_cast<int>(axis) + 1; d < r; ++d) inner *= x.shape()[d];
    const size_t block = static_cast<size_t>(inner) * dtype_size(x.dtype());
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(y.raw_data());
    const int64_t grain = std::max<int64_t>(1, kGrain * 4 / static_cast<int64_t>(block + 1));
    parallel_for(outer * n, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / n, j = w % n;
        std::memcpy(dst + w * block, src + (o * dim + idx[j]) * block, block);
      }
    });
  }

 private:
  RefFallback ref_;
  int64_t axis_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Gather, 1, 28, FastGatherKernel);

}  // namespace polyinfer::fast
