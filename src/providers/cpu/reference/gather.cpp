// Gather, GatherElements and GatherND. Indices may be negative (counting from the end of the
// indexed dimension); anything outside [-dim, dim) is an InvalidArgument naming the node
// (read_indices in gather_params.h, shared with the Vulkan Gather).
#include <algorithm>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/gather.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

using IndexTypes = TypeList<int32_t, int64_t>;

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const KernelInfo& info)
      : label_(info.node().label()), axis_(info.attr_int("axis", 0)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const int64_t axis = gather_axis(x, axis_, label_);
    const int64_t dim = x.shape()[axis];
    const std::vector<int64_t> idx = read_indices(ind, dim, label_);
    const Shape out = gather_shape(x.shape(), ind.shape(), axis);
    Tensor& y = ctx.output(0, x.dtype(), out);
    const int64_t outer = product(x.shape(), 0, axis);
    const int64_t inner = product(x.shape(), axis + 1, x.shape().size());
    const int64_t n = static_cast<int64_t>(idx.size());
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < n; ++j)
          std::copy_n(src + (o * dim + idx[j]) * inner, inner, dst + (o * n + j) * inner);
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

// out[i0..i(r-1)] = data[i0.., indices[i0..], ..] with the index replacing dimension `axis`.
class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const KernelInfo& info)
      : label_(info.node().label()), axis_(info.attr_int("axis", 0)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const int r = x.rank();
    PI_CHECK(r > 0 && ind.rank() == r, ShapeMismatch, label_, ": indices ", ind.describe(),
             " must have the rank of data ", x.describe());
    const int64_t axis = normalize_axis(axis_, r, label_.c_str());
    for (int d = 0; d < r; ++d)
      PI_CHECK(d == axis || ind.shape()[d] <= x.shape()[d], ShapeMismatch, label_, ": indices ",
               ind.describe(), " exceed data ", x.describe(), " in dimension ", d);
    const std::vector<int64_t> idx = read_indices(ind, x.shape()[axis], label_);
    Tensor& y = ctx.output(0, x.dtype(), ind.shape());
    const int64_t total = y.numel();
    if (total == 0) return;
    const std::vector<int64_t> xs = strides_of(x.shape());
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      std::vector<int64_t> pos(r, 0);
      int64_t base = 0;  // offset of pos in data, with pos[axis] taken as 0
      for (int64_t i = 0; i < total; ++i) {
        dst[i] = src[base + idx[i] * xs[axis]];
        for (int d = r - 1; d >= 0; --d) {
          const int64_t s = d == axis ? 0 : xs[d];
          if (++pos[d] < ind.shape()[d]) {
            base += s;
            break;
          }
          base -= s * (ind.shape()[d] - 1);
          pos[d] = 0;
        }
      }
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

// indices[..., k] address a slice data[b..., i0..i(k-1), :] where the first batch_dims
// dimensions of data and indices are shared.
class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(const KernelInfo& info)
      : label_(info.node().label()), batch_dims_(info.attr_int("batch_dims", 0)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const int64_t b = batch_dims_;
    const int64_t r = x.rank(), q = ind.rank();
    PI_CHECK(r >= 1 && q >= 1 && b >= 0 && b < std::min(r, q), InvalidArgument, label_,
             ": batch_dims=", b, " does not fit data ", x.describe(), " and indices ",
             ind.describe());
    const int64_t k = ind.shape()[q - 1];
    PI_CHECK(k >= 1 && k <= r - b, InvalidArgument, label_, ": the last dimension of indices ",
             ind.describe(), " must be in [1, ", r - b, "]");
    for (int64_t d = 0; d < b; ++d)
      PI_CHECK(x.shape()[d] == ind.shape()[d], ShapeMismatch, label_, ": batch dimension ", d,
               " differs between data ", x.describe(), " and indices ", ind.describe());

    Shape out(ind.shape().begin(), ind.shape().end() - 1);
    out.insert(out.end(), x.shape().begin() + b + k, x.shape().end());
    Tensor& y = ctx.output(0, x.dtype(), out);

    const int64_t batches = product(x.shape(), 0, b);
    const int64_t per_batch = product(ind.shape(), b, q - 1);  // index tuples per batch
    const int64_t slice = product(x.shape(), b + k, r);
    const int64_t batch_stride = product(x.shape(), b, r);
    const std::vector<int64_t> xs = strides_of(x.shape());

    std::vector<int64_t> raw(static_cast<size_t>(ind.numel()));
    dispatch(IndexTypes{}, ind.dtype(), label_.c_str(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      std::copy_n(ind.data<I>(), raw.size(), raw.begin());
    });
    // Offsets of each index tuple within its batch, checked before any copy.
    std::vector<int64_t> offs(static_cast<size_t>(batches * per_batch));
    for (size_t t = 0; t < offs.size(); ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dim = x.shape()[b + j];
        int64_t v = raw[t * k + j];
        PI_CHECK(v >= -dim && v < dim, InvalidArgument, label_, ": index ", v,
                 " is out of range for dimension ", b + j, " of size ", dim);
        off += (v < 0 ? v + dim : v) * xs[b + j];
      }
      offs[t] = off;
    }
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for (int64_t bi = 0; bi < batches; ++bi)
        for (int64_t t = 0; t < per_batch; ++t)
          std::copy_n(src + bi * batch_stride + offs[bi * per_batch + t], slice,
                      dst + (bi * per_batch + t) * slice);
    });
  }

 private:
  std::string label_;
  int64_t batch_dims_;
};

}  // namespace

PI_CPU_KERNEL(Gather, 1, 28, GatherKernel);
PI_CPU_KERNEL(GatherElements, 11, 28, GatherElementsKernel);
PI_CPU_KERNEL(GatherND, 11, 28, GatherNDKernel);

}  // namespace polyinfer
