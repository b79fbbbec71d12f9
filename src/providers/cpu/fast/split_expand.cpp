// Fast Split and Expand for plain fixed-size elements (1, 2, 4 or 8 bytes): both only move them.
//
// Split along any axis: each output is `outer` (the product of the dims before the axis) equal
// contiguous blocks of the input, one memcpy each; the (block, output) pairs are split over
// threads when there are many bytes. The part sizes and their errors are src/ops/split.h's,
// shared with the reference kernel.
// Expand: the broadcast of the input to the output shape (ops/shape_rules.h's expand_shape),
// collapsed by fast/broadcast.h: each run of the output is a memcpy of the input where the input
// is contiguous along it, a fill with one value where it is broadcast.
// Strings and the packed sub-byte types go to the reference kernel.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "ops/shape_rules.h"
#include "ops/split.h"
#include "providers/cpu/fast/broadcast.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

// Refuses the node where input 0's static type is not a plain fixed-size one.
void require_plain_input(const KernelInfo& info) {
  const ir::TypeInfo* t = info.input_type(0);
  if (t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem != DType::Undefined &&
      plain_element_size(t->elem) == 0)
    info.unsupported(std::string("the fast kernel for ") + dtype_name(t->elem));
}

class FastSplitKernel final : public Kernel {
 public:
  explicit FastSplitKernel(const KernelInfo& info) : attrs_(info), ref_(info) {
    require_plain_input(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const size_t es = plain_element_size(x.dtype());
    if (es == 0 || x.rank() == 0) return ref_.run(ctx);
    const SplitPlan plan = plan_split(attrs_, ctx);
    const int64_t axis = plan.axis;
    const Shape& xs = x.shape();
    const int64_t dim = xs[axis];
    const int64_t outer = product(xs, 0, axis);
    const int64_t inner = product(xs, axis + 1, xs.size());
    // Per output: where its block starts in an input row, its length (bytes), its data.
    std::vector<size_t> start, len;
    std::vector<char*> dst;
    int64_t at = 0;
    for (size_t k = 0; k < plan.sizes.size(); ++k) {
      const int64_t part = plan.sizes[k];
      if (ctx.wants_output(k)) {
        Shape s = xs;
        s[axis] = part;
        Tensor& y = ctx.output(k, x.dtype(), s);
        if (y.numel() > 0) {
          start.push_back(static_cast<size_t>(at * inner) * es);
          len.push_back(static_cast<size_t>(part * inner) * es);
          dst.push_back(static_cast<char*>(y.raw_data()));
        }
      }
      at += part;
    }
    if (dst.empty() || outer == 0) return;
    const size_t row = static_cast<size_t>(dim * inner) * es;
    const char* src = static_cast<const char*>(x.raw_data());
    const int64_t nk = static_cast<int64_t>(dst.size());
    const int64_t grain = std::max<int64_t>(1, kGrain * 4 / static_cast<int64_t>(row / nk + 1));
    parallel_for(outer * nk, ctx.threads(), grain, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / nk;
        const size_t k = static_cast<size_t>(w % nk);
        std::memcpy(dst[k] + o * len[k], src + o * row + start[k], len[k]);
      }
    });
  }

 private:
  SplitAttrs attrs_;
  RefFallback ref_;
};

template <class T> void expand(const Tensor& x, Tensor& y, int threads) {
  const BroadcastPlan<1> p = plan_broadcast<1>({&x.shape()}, y.shape());
  const bool vec = p.vec(0);
  const int64_t rs = p.row_stride(0);
  const T* src = static_cast<const T*>(x.raw_data());
  T* dst = static_cast<T*>(y.raw_data());
  for_each_run(p, y.numel(), threads, kGrain * 4,
               [&](const std::array<int64_t, 1>& o, int64_t i, int64_t rows, int64_t len) {
                 for (int64_t r = 0; r < rows; ++r) {
                   const T* s = src + o[0] + r * rs;
                   T* d = dst + i + r * len;
                   if (vec) {
                     std::memcpy(d, s, static_cast<size_t>(len) * sizeof(T));
                   } else {
                     std::fill(d, d + len, *s);
                   }
                 }
               });
}

class FastExpandKernel final : public Kernel {
 public:
  explicit FastExpandKernel(const KernelInfo& info) : label_(info.node().label()), ref_(info) {
    require_plain_input(info);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const size_t es = plain_element_size(x.dtype());
    if (es == 0) return ref_.run(ctx);
    const Shape out = expand_shape(x.shape(), read_int_list(ctx.input(1), label_.c_str()), label_);
    Tensor& y = ctx.output(0, x.dtype(), out);
    if (y.numel() == 0) return;
    if (es == 1) return expand<uint8_t>(x, y, ctx.threads());
    if (es == 2) return expand<uint16_t>(x, y, ctx.threads());
    if (es == 4) return expand<uint32_t>(x, y, ctx.threads());
    expand<uint64_t>(x, y, ctx.threads());
  }

 private:
  std::string label_;
  RefFallback ref_;
};

}  // namespace

PI_CPU_FAST_KERNEL("", Split, 1, 28, FastSplitKernel);
PI_CPU_FAST_KERNEL("", Expand, 8, 28, FastExpandKernel);

}  // namespace polyinfer::fast
