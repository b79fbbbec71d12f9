// Pooling: MaxPool (with Indices), AveragePool, LpPool, their Global forms, and MaxUnpool.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "ops/window.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

using MaxPoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>;

// The geometry of a windowed pool over X [N, C, D...].
WindowGeometry pool_geometry(const WindowAttrs& a, const Shape& x, const std::string& who) {
  PI_CHECK(x.size() >= 3, ShapeMismatch, who, ": input must be [N, C, D...], got ", shape_str(x));
  PI_CHECK(a.kernel_shape.size() == x.size() - 2, InvalidModel, who, ": kernel_shape must have ",
           x.size() - 2, " values");
  return window_geometry(a, Shape(x.begin() + 2, x.end()), a.kernel_shape, who, true);
}

Shape pooled_shape(const Shape& x, const WindowGeometry& g) {
  Shape s{x[0], x[1]};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

class MaxPoolKernel final : public Kernel {
 public:
  explicit MaxPoolKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info)),
        storage_order_(info.attr_int("storage_order", 0)),
        who_(info.node().label()) {
    if (storage_order_ != 0 && storage_order_ != 1)
      info.unsupported("storage_order=" + std::to_string(storage_order_));
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const WindowGeometry g = pool_geometry(attrs_, x.shape(), who_);
    const Shape ys = pooled_shape(x.shape(), g);
    std::vector<int64_t> taps;
    const int64_t planes = x.dim(0) * x.dim(1), isz = g.in_size(), osz = g.out_size(),
                  ksz = g.kernel_size();
    Tensor& y = ctx.output(0, x.dtype(), ys);
    int64_t* ip = ctx.wants_output(1) ? ctx.output(1, DType::Int64, ys).data<int64_t>() : nullptr;
    // Column-major strides of the spatial dims, for storage_order=1 indices.
    std::vector<int64_t> col(g.rank, 1), coord(g.rank);
    for (int d = 1; d < g.rank; ++d) col[d] = col[d - 1] * g.in[d - 1];
    dispatch(MaxPoolTypes{}, x.dtype(), "MaxPool", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t o = 0; o < osz; ++o) {
        window_taps(g, o, taps);
        for (int64_t pl = 0; pl < planes; ++pl) {
          A best = std::numeric_limits<A>::lowest();
          if constexpr (std::numeric_limits<A>::has_infinity)
            best = -std::numeric_limits<A>::infinity();
          int64_t arg = -1;
          for (int64_t k = 0; k < ksz; ++k) {
            const int64_t t = taps[k];
            if (t < 0) continue;
            const A v = A(xp[pl * isz + t]);
            if (arg < 0 || v > best) {
              best = v;
              arg = t;
            }
          }
          yp[pl * osz + o] = T(best);
          if (!ip) continue;
          int64_t idx = arg;
          if (arg >= 0 && storage_order_ == 1) {
            unflatten(arg, g.in, coord);
            idx = 0;
            for (int d = 0; d < g.rank; ++d) idx += coord[d] * col[d];
          }
          ip[pl * osz + o] = arg < 0 ? -1 : pl * isz + idx;
        }
      }
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t storage_order_;
  std::string who_;
};

// AveragePool and LpPool share the window walk; `lp` is 0 for the average.
class AvgLpPoolKernel final : public Kernel {
 public:
  AvgLpPoolKernel(const KernelInfo& info, bool lp)
      : attrs_(WindowAttrs::parse(info)),
        count_include_pad_(info.attr_int("count_include_pad", 0) != 0),
        p_(lp ? info.attr_int("p", 2) : 0),
        who_(info.node().label()) {
    if (lp && p_ <= 0) info.unsupported("p=" + std::to_string(p_));
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const WindowGeometry g = pool_geometry(attrs_, x.shape(), who_);
    std::vector<int64_t> taps;
    const int64_t planes = x.dim(0) * x.dim(1), isz = g.in_size(), osz = g.out_size(),
                  ksz = g.kernel_size();
    // With count_include_pad the divisor counts taps inside the padded input (not those past
    // the end padding that ceil_mode adds).
    std::vector<int64_t> padded_count(static_cast<size_t>(osz), 1);
    std::vector<int64_t> o_idx(g.rank);
    for (int64_t o = 0; o < osz; ++o) {
      unflatten(o, g.out, o_idx);
      for (int d = 0; d < g.rank; ++d) {
        int64_t n = 0;
        for (int64_t k = 0; k < g.kernel[d]; ++k) {
          const int64_t p = o_idx[d] * g.strides[d] - g.pad_begin[d] + k * g.dilations[d];
          if (p >= -g.pad_begin[d] && p < g.in[d] + g.pad_end[d]) ++n;
        }
        padded_count[o] *= n;
      }
    }
    Tensor& y = ctx.output(0, x.dtype(), pooled_shape(x.shape(), g));
    dispatch(FloatTypes{}, x.dtype(), p_ ? "LpPool" : "AveragePool", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t o = 0; o < osz; ++o) {
        window_taps(g, o, taps);
        for (int64_t pl = 0; pl < planes; ++pl) {
          A sum = A(0);
          int64_t valid = 0;
          for (int64_t k = 0; k < ksz; ++k) {
            const int64_t t = taps[k];
            if (t < 0) continue;
            const A v = A(xp[pl * isz + t]);
            sum += p_ ? A(std::pow(std::abs(v), A(p_))) : v;
            ++valid;
          }
          A r;
          if (p_) {
            r = A(std::pow(sum, A(1) / A(p_)));
          } else {
            const int64_t div = count_include_pad_ ? padded_count[o] : valid;
            r = div > 0 ? sum / A(div) : std::numeric_limits<A>::quiet_NaN();
          }
          yp[pl * osz + o] = T(r);
        }
      }
    });
  }

 private:
  WindowAttrs attrs_;
  bool count_include_pad_;
  int64_t p_;
  std::string who_;
};

struct AveragePoolKernel final : Kernel {
  explicit AveragePoolKernel(const KernelInfo& info) : k(info, false) {}
  void run(KernelContext& ctx) override { k.run(ctx); }
  AvgLpPoolKernel k;
};
struct LpPoolKernel final : Kernel {
  explicit LpPoolKernel(const KernelInfo& info) : k(info, true) {}
  void run(KernelContext& ctx) override { k.run(ctx); }
  AvgLpPoolKernel k;
};

enum class GlobalKind { Avg, Max, Lp };

template <GlobalKind K> class GlobalPoolKernel final : public Kernel {
 public:
  explicit GlobalPoolKernel(const KernelInfo& info)
      : p_(K == GlobalKind::Lp ? info.attr_int("p", 2) : 0), who_(info.node().label()) {
    if (K == GlobalKind::Lp && p_ <= 0) info.unsupported("p=" + std::to_string(p_));
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() >= 3, ShapeMismatch, who_, ": input must be [N, C, D...], got ",
             x.describe());
    Shape ys(x.shape().size(), 1);
    ys[0] = x.dim(0);
    ys[1] = x.dim(1);
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t sz = shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
    Tensor& y = ctx.output(0, x.dtype(), ys);
    using Types = std::conditional_t<K == GlobalKind::Max, MaxPoolTypes, FloatTypes>;
    dispatch(Types{}, x.dtype(), who_.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t pl = 0; pl < planes; ++pl) {
        const T* in = xp + pl * sz;
        A r = A(0);
        if constexpr (K == GlobalKind::Max) {
          r = std::numeric_limits<A>::lowest();
          if constexpr (std::numeric_limits<A>::has_infinity)
            r = -std::numeric_limits<A>::infinity();
          for (int64_t i = 0; i < sz; ++i) r = std::max(r, A(in[i]));
        } else if constexpr (K == GlobalKind::Avg) {
          for (int64_t i = 0; i < sz; ++i) r += A(in[i]);
          r = sz > 0 ? r / A(sz) : std::numeric_limits<A>::quiet_NaN();
        } else {
          for (int64_t i = 0; i < sz; ++i) r += A(std::pow(std::abs(A(in[i])), A(p_)));
          r = A(std::pow(r, A(1) / A(p_)));
        }
        yp[pl] = T(r);
      }
    });
  }

 private:
  int64_t p_;
  std::string who_;
};

class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info)), who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    PI_CHECK(x.rank() >= 3, ShapeMismatch, who_, ": input must be [N, C, D...], got ",
             x.describe());
    PI_CHECK(ind.dtype() == DType::Int64 && ind.shape() == x.shape(), ShapeMismatch, who_,
             ": indices must be int64 of the input's shape ", shape_str(x.shape()), ", got ",
             ind.describe());
    const size_t r = static_cast<size_t>(x.rank() - 2);
    PI_CHECK(attrs_.kernel_shape.size() == r, InvalidModel, who_, ": kernel_shape must have ", r,
             " values");
    // Indices address the default (inferred) output; an explicit output_shape may be larger,
    // and then each index keeps its coordinates, not its flat position.
    const auto strides = attrs_.strides.empty() ? std::vector<int64_t>(r, 1) : attrs_.strides;
    const auto pads = attrs_.pads.empty() ? std::vector<int64_t>(2 * r, 0) : attrs_.pads;
    PI_CHECK(strides.size() == r && pads.size() == 2 * r, InvalidModel, who_,
             ": strides/pads have the wrong length");
    Shape inferred{x.dim(0), x.dim(1)};
    for (size_t i = 0; i < r; ++i) {
      const int64_t d = (x.dim(static_cast<int>(i + 2)) - 1) * strides[i] + attrs_.kernel_shape[i] -
                        pads[i] - pads[i + r];
      PI_CHECK(d >= 0, ShapeMismatch, who_, ": computed output size is negative");
      inferred.push_back(d);
    }
    Shape ys = inferred;
    if (ctx.has_input(2)) {
      ys = read_int_list(ctx.input(2), who_.c_str());
      PI_CHECK(ys.size() == x.shape().size() && ys[0] == x.dim(0) && ys[1] == x.dim(1),
               ShapeMismatch, who_, ": output_shape ", shape_str(ys), " does not match the input ",
               shape_str(x.shape()));
      for (size_t d = 2; d < ys.size(); ++d)
        PI_CHECK(ys[d] >= inferred[d], ShapeMismatch, who_, ": output_shape ", shape_str(ys),
                 " is smaller than the pooled input's ", shape_str(inferred));
    }
    const int64_t total = shape_numel(inferred);
    const int64_t* ip = ind.data<int64_t>();
    std::vector<int64_t> dest(static_cast<size_t>(ind.numel()));
    std::vector<int64_t> coord(ys.size());
    for (int64_t i = 0; i < ind.numel(); ++i) {
      PI_CHECK(ip[i] >= 0 && ip[i] < total, InvalidArgument, who_, ": index ", ip[i],
               " is out of range for ", shape_str(inferred));
      unflatten(ip[i], inferred, coord);
      int64_t off = 0;
      for (size_t d = 0; d < ys.size(); ++d) off = off * ys[d] + coord[d];
      dest[i] = off;
    }
    Tensor& y = ctx.output(0, x.dtype(), ys);
    dispatch(NumericTypes{}, x.dtype(), "MaxUnpool", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      std::fill(yp, yp + y.numel(), T(0.0f));
      for (int64_t i = 0; i < x.numel(); ++i) yp[dest[i]] = xp[i];
    });
  }

 private:
  WindowAttrs attrs_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(MaxPool, 1, 28, MaxPoolKernel);
PI_CPU_KERNEL(AveragePool, 1, 28, AveragePoolKernel);
PI_CPU_KERNEL(LpPool, 2, 28, LpPoolKernel);
PI_CPU_KERNEL(GlobalAveragePool, 1, 28, GlobalPoolKernel<GlobalKind::Avg>);
PI_CPU_KERNEL(GlobalMaxPool, 1, 28, GlobalPoolKernel<GlobalKind::Max>);
PI_CPU_KERNEL(GlobalLpPool, 2, 28, GlobalPoolKernel<GlobalKind::Lp>);
PI_CPU_KERNEL(MaxUnpool, 9, 28, MaxUnpoolKernel);

}  // namespace polyinfer::cpu
