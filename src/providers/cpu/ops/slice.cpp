// Slice: attributes starts/ends/axes in opset 1..9; inputs starts, ends, axes, steps from 10.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info)
      : label_(info.node().label()), from_attr_(info.opset() < 10) {
    if (from_attr_) {
      starts_ = info.attr_ints("starts");
      ends_ = info.attr_ints("ends");
      axes_ = info.attr_ints("axes");
      has_axes_ = info.has_attr("axes");
    }
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int r = x.rank();
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    bool has_axes = has_axes_;
    if (!from_attr_) {
      starts = read_int_list(ctx.input(1), label_.c_str());
      ends = read_int_list(ctx.input(2), label_.c_str());
      has_axes = ctx.has_input(3);
      if (has_axes) axes = read_int_list(ctx.input(3), label_.c_str());
      if (ctx.has_input(4)) steps = read_int_list(ctx.input(4), label_.c_str());
    }
    const size_t n = starts.size();
    PI_CHECK(ends.size() == n, InvalidArgument, label_, ": starts has ", n,
             " entries but ends has ", ends.size());
    if (!has_axes) {
      axes.resize(n);
      for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
    }
    if (steps.empty()) steps.assign(n, 1);
    PI_CHECK(axes.size() == n && steps.size() == n, InvalidArgument, label_,
             ": starts, ends, axes and steps must have the same length");

    // Per dimension: first input index, step and output length.
    std::vector<int64_t> first(r, 0), step(r, 1);
    Shape out = x.shape();
    std::vector<bool> seen(r, false);
    for (size_t i = 0; i < n; ++i) {
      const int64_t a = normalize_axis(axes[i], r, label_.c_str());
      PI_CHECK(!seen[a], InvalidArgument, label_, ": axis ", axes[i], " is listed twice");
      seen[a] = true;
      const int64_t dim = x.shape()[a];
      const int64_t st = steps[i];
      PI_CHECK(st != 0, InvalidArgument, label_, ": step for axis ", axes[i], " is 0");
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      int64_t len;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        len = e > s ? (e - s - 1) / st + 1 : 0;
      } else {
        s = std::clamp<int64_t>(s, -1, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        // -INT64_MIN overflows; any step that large takes one element anyway.
        const int64_t back = st == INT64_MIN ? INT64_MAX : -st;
        len = s > e ? (s - e - 1) / back + 1 : 0;
      }
      first[a] = s;
      // A dimension with at most one element never steps; a huge step would overflow below.
      step[a] = len > 1 ? st : 1;
      out[a] = len;
    }

    Tensor& y = ctx.output(0, x.dtype(), out);
    const int64_t total = y.numel();
    if (total == 0) return;
    const std::vector<int64_t> in_strides = strides_of(x.shape());
    int64_t base = 0;
    std::vector<int64_t> st(r);
    for (int d = 0; d < r; ++d) {
      base += first[d] * in_strides[d];
      st[d] = step[d] * in_strides[d];
    }
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      std::vector<int64_t> idx(r, 0);
      int64_t off = base;
      for (int64_t i = 0; i < total; ++i) {
        dst[i] = src[off];
        for (int d = r - 1; d >= 0; --d) {
          if (++idx[d] < out[d]) {
            off += st[d];
            break;
          }
          off -= st[d] * (out[d] - 1);
          idx[d] = 0;
        }
      }
    });
  }

 private:
  std::string label_;
  bool from_attr_;
  bool has_axes_ = false;
  std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

PI_CPU_KERNEL(Slice, 1, 23, SliceKernel);

}  // namespace polyinfer
