// Ops that pick, order or scan elements along an axis: Compress, NonZero, Unique, TopK, CumSum,
// CumProd, ReverseSequence.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// A total order that puts NaN after every number (and equal to NaN), so sorting is well defined.
template <class V> int compare(const V& a, const V& b) {
  if constexpr (std::is_floating_point_v<V>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Compress: keeps the slices along `axis` (or the elements of the flattened input) whose
// condition is true. A condition shorter than the axis drops the rest.
class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(const KernelInfo& info)
      : label_(info.node().label()),
        has_axis_(info.has_attr("axis")),
        axis_(info.attr_int("axis", 0)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& cond = ctx.input(1);
    PI_CHECK(cond.dtype() == DType::Bool && cond.rank() == 1, InvalidArgument, label_,
             ": condition must be a 1-D bool tensor, got ", cond.describe());
    Shape shape = x.shape();
    int64_t axis = 0;
    if (has_axis_) {
      axis = normalize_axis(axis_, x.rank(), label_.c_str());
    } else {
      shape = {x.numel()};
    }
    const int64_t dim = shape[axis];
    const bool* c = cond.data<bool>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < cond.numel(); ++i) {
      if (!c[i]) continue;
      PI_CHECK(i < dim, InvalidArgument, label_, ": condition ", cond.describe(), " selects index ",
               i, " beyond the axis size ", dim);
      keep.push_back(i);
    }
    Shape out = shape;
    out[axis] = static_cast<int64_t>(keep.size());
    Tensor& y = ctx.output(0, x.dtype(), out);
    const int64_t outer = product(shape, 0, axis);
    const int64_t inner = product(shape, axis + 1, shape.size());
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k : keep) {
          std::copy_n(src + (o * dim + k) * inner, inner, dst);
          dst += inner;
        }
    });
  }

 private:
  std::string label_;
  bool has_axis_;
  int64_t axis_;
};

// NonZero: int64 [rank, count] of the coordinates of non-zero elements, in row-major order. A
// scalar counts as a 1-D tensor of one element, as numpy.nonzero does.
class NonZeroKernel final : public Kernel {
 public:
  explicit NonZeroKernel(const KernelInfo& info) : label_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    const int r = static_cast<int>(shape.size());
    std::vector<int64_t> hits;
    dispatch(NumericTypes{} + TypeList<bool>{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i)
        if (static_cast<compute_t<T>>(p[i]) != compute_t<T>(0)) hits.push_back(i);
    });
    const int64_t n = static_cast<int64_t>(hits.size());
    Tensor& y = ctx.output(0, DType::Int64, {r, n});
    int64_t* out = y.data<int64_t>();
    for (int64_t h = 0; h < n; ++h) {
      int64_t rest = hits[h];
      for (int d = r - 1; d >= 0; --d) {
        out[d * n + h] = rest % shape[d];
        rest /= shape[d];
      }
    }
  }

 private:
  std::string label_;
};

// Unique over elements (no axis: the flattened input) or over slices along `axis`. Slices are
// compared lexicographically in row-major order with the axis moved to the front, as numpy does.
class UniqueKernel final : public Kernel {
 public:
  explicit UniqueKernel(const KernelInfo& info)
      : label_(info.node().label()),
        sorted_(info.attr_int("sorted", 1) != 0),
        has_axis_(info.has_attr("axis")),
        axis_(info.attr_int("axis", 0)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Shape shape = x.shape();
    int64_t axis = 0;
    if (has_axis_) {
      axis = normalize_axis(axis_, x.rank(), label_.c_str());
    } else {
      shape = {x.numel()};
    }
    const int64_t n = shape[axis];
    const int64_t outer = product(shape, 0, axis);
    const int64_t inner = product(shape, axis + 1, shape.size());
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* src = x.data<T>();
      auto at = [&](int64_t k, int64_t o, int64_t i) {
        return static_cast<C>(src[(o * n + k) * inner + i]);
      };
      auto cmp_slices = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i)
            if (int c = compare<C>(at(a, o, i), at(b, o, i))) return c;
        return 0;
      };
      // Stable sort keeps equal slices in input order, so each group starts at its first
      // occurrence.
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return cmp_slices(a, b) < 0; });
      std::vector<int64_t> first, count, group_of(n);
      for (int64_t p = 0; p < n; ++p) {
        if (p == 0 || cmp_slices(order[p - 1], order[p]) != 0) {
          first.push_back(order[p]);
          count.push_back(0);
        }
        group_of[order[p]] = static_cast<int64_t>(first.size()) - 1;
        ++count.back();
      }
      const int64_t u = static_cast<int64_t>(first.size());
      // Output position of each group: sorted order, or order of first occurrence.
      std::vector<int64_t> pos(u);
      std::iota(pos.begin(), pos.end(), int64_t{0});
      if (!sorted_) {
        std::vector<int64_t> by_first(u);
        std::iota(by_first.begin(), by_first.end(), int64_t{0});
        std::sort(by_first.begin(), by_first.end(),
                  [&](int64_t a, int64_t b) { return first[a] < first[b]; });
        for (int64_t p = 0; p < u; ++p) pos[by_first[p]] = p;
      }

      Shape yshape = shape;
      yshape[axis] = u;
      Tensor& y = ctx.output(0, x.dtype(), yshape);
      T* dst = y.data<T>();
      for (int64_t g = 0; g < u; ++g)
        for (int64_t o = 0; o < outer; ++o)
          std::copy_n(src + (o * n + first[g]) * inner, inner, dst + (o * u + pos[g]) * inner);
      if (ctx.wants_output(1)) {
        int64_t* out = ctx.output(1, DType::Int64, {u}).data<int64_t>();
        for (int64_t g = 0; g < u; ++g) out[pos[g]] = first[g];
      }
      if (ctx.wants_output(2)) {
        int64_t* out = ctx.output(2, DType::Int64, {n}).data<int64_t>();
        for (int64_t k = 0; k < n; ++k) out[k] = pos[group_of[k]];
      }
      if (ctx.wants_output(3)) {
        int64_t* out = ctx.output(3, DType::Int64, {u}).data<int64_t>();
        for (int64_t g = 0; g < u; ++g) out[pos[g]] = count[g];
      }
    });
  }

 private:
  std::string label_;
  bool sorted_;
  bool has_axis_;
  int64_t axis_;
};

// TopK: k from an attribute (opset 1..9) or an input (10+); largest/sorted from 11. Equal values
// keep the lower index first. With sorted=0 the order is unspecified; we return it sorted.
class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const KernelInfo& info)
      : label_(info.node().label()),
        axis_(info.attr_int("axis", -1)),
        largest_(info.attr_int("largest", 1) != 0),
        k_attr_(info.opset() < 10) {
    if (k_attr_) k_ = info.attr_int("k");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t k = k_;
    if (!k_attr_) {
      const std::vector<int64_t> kv = read_int_list(ctx.input(1), label_.c_str());
      PI_CHECK(kv.size() == 1, InvalidArgument, label_, ": K must hold one value");
      k = kv[0];
    }
    PI_CHECK(x.rank() > 0, InvalidArgument, label_, ": cannot take TopK of a scalar");
    const int64_t axis = normalize_axis(axis_, x.rank(), label_.c_str());
    const int64_t dim = x.shape()[axis];
    PI_CHECK(k >= 0 && k <= dim, InvalidArgument, label_, ": K=", k, " is out of range for axis ",
             axis, " of ", x.describe());
    Shape out = x.shape();
    out[axis] = k;
    Tensor& vals = ctx.output(0, x.dtype(), out);
    // Indices are computed anyway; they go to a scratch tensor when the node leaves them out.
    Tensor scratch;
    Tensor& inds = ctx.wants_output(1) ? ctx.output(1, DType::Int64, out)
                                       : (scratch = Tensor::empty(DType::Int64, out));
    const int64_t outer = product(x.shape(), 0, axis);
    const int64_t inner = product(x.shape(), axis + 1, x.shape().size());
    dispatch(NumericTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* src = x.data<T>();
      T* vdst = vals.data<T>();
      int64_t* idst = inds.data<int64_t>();
      std::vector<int64_t> order(dim);
      std::vector<C> line(dim);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          for (int64_t j = 0; j < dim; ++j)
            line[j] = static_cast<C>(src[(o * dim + j) * inner + i]);
          std::iota(order.begin(), order.end(), int64_t{0});
          std::partial_sort(order.begin(), order.begin() + k, order.end(),
                            [&](int64_t a, int64_t b) {
                              const int c = compare<C>(line[a], line[b]);
                              if (c != 0) return largest_ ? c > 0 : c < 0;
                              return a < b;
                            });
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = (o * k + j) * inner + i;
            vdst[at] = src[(o * dim + order[j]) * inner + i];
            idst[at] = order[j];
          }
        }
    });
  }

 private:
  std::string label_;
  int64_t axis_;
  bool largest_;
  bool k_attr_;
  int64_t k_ = 0;
};

// CumSum and CumProd (Product) along a run-time axis; exclusive shifts by one (the first
// element becomes the identity, 0 or 1), reverse scans from the end. Integers accumulate in
// uint64 so that overflow wraps instead of being undefined.
template <bool Product> class CumScanKernel final : public Kernel {
 public:
  explicit CumScanKernel(const KernelInfo& info)
      : label_(info.node().label()),
        exclusive_(info.attr_int("exclusive", 0) != 0),
        reverse_(info.attr_int("reverse", 0) != 0) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> av = read_int_list(ctx.input(1), label_.c_str());
    PI_CHECK(av.size() == 1, InvalidArgument, label_, ": axis must be a single value");
    PI_CHECK(x.rank() > 0, InvalidArgument, label_, ": cannot scan a scalar");
    const int64_t axis = normalize_axis(av[0], x.rank(), label_.c_str());
    const int64_t dim = x.shape()[axis];
    const int64_t outer = product(x.shape(), 0, axis);
    const int64_t inner = product(x.shape(), axis + 1, x.shape().size());
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(NumericTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = std::conditional_t<std::is_integral_v<T>, uint64_t, compute_t<T>>;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          A acc = Product ? A(1) : A(0);
          for (int64_t s = 0; s < dim; ++s) {
            const int64_t j = reverse_ ? dim - 1 - s : s;
            const int64_t at = (o * dim + j) * inner + i;
            const A v = static_cast<A>(static_cast<compute_t<T>>(src[at]));
            if (exclusive_) dst[at] = static_cast<T>(acc);
            acc = Product ? static_cast<A>(acc * v) : static_cast<A>(acc + v);
            if (!exclusive_) dst[at] = static_cast<T>(acc);
          }
        }
    });
  }

 private:
  std::string label_;
  bool exclusive_;
  bool reverse_;
};

using CumSumKernel = CumScanKernel<false>;
using CumProdKernel = CumScanKernel<true>;

// ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] steps along the
// time axis and copies the rest.
class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(const KernelInfo& info)
      : label_(info.node().label()),
        batch_axis_(info.attr_int("batch_axis", 1)),
        time_axis_(info.attr_int("time_axis", 0)) {
    PI_CHECK((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0),
             InvalidModel, label_, ": batch_axis and time_axis must be 0 and 1 in some order");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() >= 2, InvalidArgument, label_, ": expected rank >= 2, got ", x.describe());
    const int64_t batch = x.shape()[batch_axis_], steps = x.shape()[time_axis_];
    const std::vector<int64_t> lens = read_int_list(ctx.input(1), label_.c_str());
    PI_CHECK(static_cast<int64_t>(lens.size()) == batch, InvalidArgument, label_,
             ": sequence_lens has ", lens.size(), " entries for a batch of ", batch);
    for (int64_t l : lens)
      PI_CHECK(l >= 0 && l <= steps, InvalidArgument, label_, ": sequence length ", l,
               " is out of range [0, ", steps, "]");
    const int64_t inner = product(x.shape(), 2, x.shape().size());
    const int64_t bstride = (batch_axis_ == 0 ? steps : 1) * inner;
    const int64_t tstride = (time_axis_ == 0 ? batch : 1) * inner;
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    dispatch(AllTypes{}, x.dtype(), label_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
          std::copy_n(src + b * bstride + from * tstride, inner, dst + b * bstride + t * tstride);
        }
    });
  }

 private:
  std::string label_;
  int64_t batch_axis_;
  int64_t time_axis_;
};

}  // namespace

PI_CPU_KERNEL(Compress, 9, 28, CompressKernel);
PI_CPU_KERNEL(NonZero, 9, 28, NonZeroKernel);
PI_CPU_KERNEL(Unique, 11, 28, UniqueKernel);
PI_CPU_KERNEL(TopK, 1, 28, TopKKernel);
PI_CPU_KERNEL(CumSum, 11, 28, CumSumKernel);
PI_CPU_KERNEL(CumProd, 26, 28, CumProdKernel);
PI_CPU_KERNEL(ReverseSequence, 10, 28, ReverseSequenceKernel);

}  // namespace polyinfer
