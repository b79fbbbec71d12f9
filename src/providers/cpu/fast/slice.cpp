// Fast Slice for every fixed-size dtype: the output is a set of equal contiguous runs of the
// input (the whole inner dimensions, extended by the innermost sliced one when its step is 1),
// so each run is one memcpy and the runs are split over threads when there are many bytes. A
// channel slice of an NCHW tensor (ShuffleNet's split in two) is `N` copies of C/2*H*W floats.
// The parameters and their errors come from src/ops/slice.h, shared with the reference
// kernel; strings and element-by-element slices (a step on the innermost dimension) go to it.
#include <cstring>

#include "core/shape_util.h"
#include "ops/slice.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

class FastSliceKernel final : public Kernel {
 public:
  explicit FastSliceKernel(const KernelInfo& info) : attrs_(info), ref_(info) {
    const ir::TypeInfo* t = info.input_type(0);
    if (t && t->elem == DType::String) info.unsupported("the fast kernel for strings");
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DType::String || x.rank() == 0) return ref_.run(ctx);
    const SlicePlan p = plan_slice(attrs_, ctx);
    const int r = x.rank();
    // Innermost dimensions taken whole form the run; the next one extends it when its step is 1.
    int d = r - 1;
    int64_t run = 1;
    while (d >= 0 && p.step[d] == 1 && p.first[d] == 0 && p.out[d] == x.shape()[d])
      run *= p.out[d--];
    const std::vector<int64_t> xs = strides_of(x.shape());
    int64_t base = 0;
    if (d >= 0 && p.step[d] == 1) {
      run *= p.out[d];
      base = p.first[d] * xs[d];
      --d;
    }
    // One element per run: a strided gather, which the reference kernel does as well.
    if (run == 1 && d >= 0) return ref_.run(ctx);
    Tensor& y = ctx.output(0, x.dtype(), p.out);
    if (y.numel() == 0) return;
    const int outer_dims = d + 1;  // dimensions [0, d] index the runs
    int64_t runs = 1;
    for (int k = 0; k < outer_dims; ++k) {
      runs *= p.out[k];
      base += p.first[k] * xs[k];
    }
    const size_t es = dtype_size(x.dtype());
    const size_t bytes = static_cast<size_t>(run) * es;
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(y.raw_data());
    const int64_t grain = std::max<int64_t>(1, kGrain * 4 / static_cast<int64_t>(bytes));
    parallel_for(runs, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        // Input offset of run i: its index digit by digit, each scaled by step and stride.
        int64_t rest = i, off = base;
        for (int k = outer_dims - 1; k >= 0; --k) {
          const int64_t idx = rest % p.out[k];
          rest /= p.out[k];
          off += idx * p.step[k] * xs[k];
        }
        std::memcpy(dst + static_cast<size_t>(i) * bytes, src + static_cast<size_t>(off) * es,
                    bytes);
      }
    });
  }

 private:
  SliceAttrs attrs_;
  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Slice, 1, 28, FastSliceKernel);

}  // namespace polyinfer::fast
