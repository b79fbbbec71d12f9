// Scatter (the deprecated name of ScatterElements), ScatterElements and ScatterND. The output
// starts as a copy of data; updates are applied in index order, so with reduction=none the last
// duplicate wins, as in the ONNX reference.
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using IndexTypes = TypeList<int32_t, int64_t>;

enum class Reduction { None, Add, Mul, Max, Min };

// reduction: opset 16 added none/add/mul, 18 added max/min.
Reduction parse_reduction(const KernelInfo& info) {
  const std::string r = info.attr_string("reduction", "none");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max" && info.opset() >= 18) return Reduction::Max;
  if (r == "min" && info.opset() >= 18) return Reduction::Min;
  info.unsupported("reduction=" + r);
}

std::vector<int64_t> read_raw_indices(const Tensor& t, const std::string& who) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  dispatch(IndexTypes{}, t.dtype(), who.c_str(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    std::copy_n(t.data<I>(), out.size(), out.begin());
  });
  return out;
}

int64_t fix_index(int64_t v, int64_t dim, const std::string& who) {
  PI_CHECK(v >= -dim && v < dim, InvalidArgument, who, ": index ", v,
           " is out of range for a dimension of size ", dim);
  return v < 0 ? v + dim : v;
}

void copy_elements(const Tensor& from, Tensor& to, const std::string& who) {
  dispatch(AllTypes{}, from.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::copy_n(from.data<T>(), from.numel(), to.data<T>());
  });
}

// Writes updates[u] into y at element offsets dst_off[u] * block .. + block, combining with
// `red`. Reductions need arithmetic, so they are limited to numeric dtypes.
void apply_updates(Tensor& y, const Tensor& upd, const std::vector<int64_t>& dst_off, int64_t block,
                   Reduction red, const std::string& who) {
  if (red == Reduction::None) {
    dispatch(AllTypes{}, y.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* u = upd.data<T>();
      T* out = y.data<T>();
      for (size_t i = 0; i < dst_off.size(); ++i)
        std::copy_n(u + i * block, block, out + dst_off[i]);
    });
    return;
  }
  dispatch(NumericTypes{}, y.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* u = upd.data<T>();
    T* out = y.data<T>();
    for (size_t i = 0; i < dst_off.size(); ++i) {
      for (int64_t j = 0; j < block; ++j) {
        const C a = static_cast<C>(out[dst_off[i] + j]);
        const C b = static_cast<C>(u[i * block + j]);
        C r = a;
        switch (red) {
          case Reduction::Add: r = static_cast<C>(a + b); break;
          case Reduction::Mul: r = static_cast<C>(a * b); break;
          case Reduction::Max: r = std::max(a, b); break;
          case Reduction::Min: r = std::min(a, b); break;
          case Reduction::None: break;
        }
        out[dst_off[i] + j] = static_cast<T>(r);
      }
    }
  });
}

class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const KernelInfo& info)
      : label_(info.node().label()), axis_(info.attr_int("axis", 0)), red_(parse_reduction(info)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const Tensor& upd = ctx.input(2);
    const int r = x.rank();
    PI_CHECK(r > 0 && ind.rank() == r && upd.shape() == ind.shape(), ShapeMismatch, label_,
             ": data ", x.describe(), ", indices ", ind.describe(), " and updates ", upd.describe(),
             " must have one rank, and indices the shape of updates");
    PI_CHECK(upd.dtype() == x.dtype(), InvalidArgument, label_, ": updates ", upd.describe(),
             " must have the dtype of data ", x.describe());
    const int64_t axis = normalize_axis(axis_, r, label_.c_str());
    for (int d = 0; d < r; ++d)
      PI_CHECK(d == axis || ind.shape()[d] <= x.shape()[d], ShapeMismatch, label_, ": indices ",
               ind.describe(), " exceed data ", x.describe(), " in dimension ", d);
    const std::vector<int64_t> raw = read_raw_indices(ind, label_);
    const std::vector<int64_t> xs = strides_of(x.shape());
    std::vector<int64_t> off(raw.size());
    std::vector<int64_t> pos(r, 0);
    for (size_t i = 0; i < raw.size(); ++i) {
      int64_t o = 0;
      for (int d = 0; d < r; ++d)
        o += (d == axis ? fix_index(raw[i], x.shape()[axis], label_) : pos[d]) * xs[d];
      off[i] = o;
      for (int d = r - 1; d >= 0; --d) {
        if (++pos[d] < ind.shape()[d]) break;
        pos[d] = 0;
      }
    }
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    copy_elements(x, y, label_);
    apply_updates(y, upd, off, 1, red_, label_);
  }

 private:
  std::string label_;
  int64_t axis_;
  Reduction red_;
};

// indices[..., k] address data[i0..i(k-1), :]; updates has shape indices.shape[:-1] +
// data.shape[k:].
class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(const KernelInfo& info)
      : label_(info.node().label()), red_(parse_reduction(info)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const Tensor& upd = ctx.input(2);
    const int64_t r = x.rank(), q = ind.rank();
    PI_CHECK(r >= 1 && q >= 1, InvalidArgument, label_, ": data ", x.describe(), " and indices ",
             ind.describe(), " must have rank >= 1");
    const int64_t k = ind.shape()[q - 1];
    PI_CHECK(k >= 1 && k <= r, InvalidArgument, label_, ": the last dimension of indices ",
             ind.describe(), " must be in [1, ", r, "]");
    Shape want(ind.shape().begin(), ind.shape().end() - 1);
    want.insert(want.end(), x.shape().begin() + k, x.shape().end());
    PI_CHECK(upd.shape() == want, ShapeMismatch, label_, ": updates ", upd.describe(),
             " must have shape ", shape_str(want));
    PI_CHECK(upd.dtype() == x.dtype(), InvalidArgument, label_, ": updates ", upd.describe(),
             " must have the dtype of data ", x.describe());
    const std::vector<int64_t> raw = read_raw_indices(ind, label_);
    const std::vector<int64_t> xs = strides_of(x.shape());
    const int64_t block = product(x.shape(), k, r);
    std::vector<int64_t> off(raw.size() / k);
    for (size_t t = 0; t < off.size(); ++t) {
      int64_t o = 0;
      for (int64_t j = 0; j < k; ++j) o += fix_index(raw[t * k + j], x.shape()[j], label_) * xs[j];
      off[t] = o;
    }
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    copy_elements(x, y, label_);
    apply_updates(y, upd, off, block, red_, label_);
  }

 private:
  std::string label_;
  Reduction red_;
};

}  // namespace

PI_CPU_KERNEL(Scatter, 9, 28, ScatterElementsKernel);
PI_CPU_KERNEL(ScatterElements, 11, 28, ScatterElementsKernel);
PI_CPU_KERNEL(ScatterND, 11, 28, ScatterNDKernel);

}  // namespace polyinfer
