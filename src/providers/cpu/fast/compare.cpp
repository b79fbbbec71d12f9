// Fast comparisons, logic and selection with numpy broadcasting (opset 7+): Equal, Less,
// Greater, LessOrEqual, GreaterOrEqual of float32, int32 or int64 (Equal of bool too) into bool;
// And, Or, Xor of bool; Not; Where with a bool condition and values of 1, 2, 4 or 8 bytes.
//
// The broadcast is fast/broadcast.h's; each run is one vectorized loop per ISA clone, chosen by
// which operands are contiguous along it. A bool is one byte holding 0 or 1 (as every kernel
// writes it), so the logic operators are byte-wise &, |, ^ and Not is ^ 1. The results are the
// reference's bit for bit (a comparison of NaN is false, -0 equals +0). Other dtypes, strings,
// opset 1 (legacy broadcast) and mismatched dtypes go to the reference kernel.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/fast/broadcast.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

PI_FAST_MATH_BEGIN

struct EqualOp {
  template <class T> static PI_FAST_INLINE uint8_t f(T a, T b) { return a == b; }
};
struct LessOp {
  template <class T> static PI_FAST_INLINE uint8_t f(T a, T b) { return a < b; }
};
struct GreaterOp {
  template <class T> static PI_FAST_INLINE uint8_t f(T a, T b) { return a > b; }
};
struct LessOrEqualOp {
  template <class T> static PI_FAST_INLINE uint8_t f(T a, T b) { return a <= b; }
};
struct GreaterOrEqualOp {
  template <class T> static PI_FAST_INLINE uint8_t f(T a, T b) { return a >= b; }
};
struct AndOp {
  static PI_FAST_INLINE uint8_t f(uint8_t a, uint8_t b) { return a & b; }
};
struct OrOp {
  static PI_FAST_INLINE uint8_t f(uint8_t a, uint8_t b) { return a | b; }
};
struct XorOp {
  static PI_FAST_INLINE uint8_t f(uint8_t a, uint8_t b) { return a ^ b; }
};

template <class T, class Op, bool VA, bool VB>
PI_FAST_CLONES void cmp_rows(const T* __restrict a, int64_t sa, const T* __restrict b, int64_t sb,
                             uint8_t* __restrict y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, a += sa, b += sb, y += n) {
    const T a0 = a[0], b0 = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = Op::f(VA ? a[i] : a0, VB ? b[i] : b0);
  }
}

template <class T, bool VC, bool VX, bool VY>
PI_FAST_CLONES void where_rows(const uint8_t* __restrict c, int64_t sc, const T* __restrict x,
                               int64_t sx, const T* __restrict y, int64_t sy, T* __restrict o,
                               int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, c += sc, x += sx, y += sy, o += n) {
    const uint8_t c0 = c[0];
    const T x0 = x[0], y0 = y[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      // All ones where the condition (a 0/1 byte) holds: a select without a branch.
      const T m = T(0) - static_cast<T>(VC ? c[i] : c0);
      o[i] = static_cast<T>(((VX ? x[i] : x0) & m) | ((VY ? y[i] : y0) & ~m));
    }
  }
}

PI_FAST_CLONES void not_loop(const uint8_t* __restrict x, uint8_t* __restrict y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] ^ 1;
}

PI_FAST_MATH_END

// A bool tensor's bytes.
const uint8_t* bytes_of(const Tensor& t) { return static_cast<const uint8_t*>(t.raw_data()); }
uint8_t* bytes_of(Tensor& t) { return static_cast<uint8_t*>(t.raw_data()); }

template <class T, class Op>
void compare(const Tensor& a, const Tensor& b, Tensor& y, int threads) {
  using Fn = void (*)(const T*, int64_t, const T*, int64_t, uint8_t*, int64_t, int64_t);
  static constexpr Fn kFns[4] = {cmp_rows<T, Op, false, false>, cmp_rows<T, Op, false, true>,
                                 cmp_rows<T, Op, true, false>, cmp_rows<T, Op, true, true>};
  const BroadcastPlan<2> p = plan_broadcast<2>({&a.shape(), &b.shape()}, y.shape());
  const Fn fn = kFns[(p.vec(0) ? 2 : 0) + (p.vec(1) ? 1 : 0)];
  const int64_t ra = p.row_stride(0), rb = p.row_stride(1);
  const T* pa = static_cast<const T*>(a.raw_data());
  const T* pb = static_cast<const T*>(b.raw_data());
  uint8_t* py = bytes_of(y);
  for_each_run(p, y.numel(), threads, kGrain,
               [&](const std::array<int64_t, 2>& o, int64_t i, int64_t rows, int64_t len) {
                 fn(pa + o[0], ra, pb + o[1], rb, py + i, rows, len);
               });
}

// Refuses the node when a statically known input type is none of `ok`.
void require_types(const KernelInfo& info, size_t inputs, const std::vector<DType>& ok) {
  for (size_t i = 0; i < inputs && i < info.num_inputs(); ++i) {
    const ir::TypeInfo* t = info.input_type(i);
    if (!t || t->kind != ir::TypeInfo::Kind::Tensor || t->elem == DType::Undefined) continue;
    if (std::find(ok.begin(), ok.end(), t->elem) == ok.end())
      info.unsupported(std::string("the fast kernel for ") + dtype_name(t->elem));
  }
}

// Equal, Less, ...: `Logic` for And, Or, Xor (bool only); `WithBool` lets Equal compare bools.
template <class Op, bool Logic, bool WithBool> class FastCompareKernel final : public Kernel {
 public:
  explicit FastCompareKernel(const KernelInfo& info) : ref_(info) {
    if (info.opset() < 7) info.unsupported("the fast kernel for opset 1 (legacy broadcast)");
    if (Logic) {
      require_types(info, 2, {DType::Bool});
    } else if (WithBool) {
      require_types(info, 2, {DType::Float32, DType::Int32, DType::Int64, DType::Bool});
    } else {
      require_types(info, 2, {DType::Float32, DType::Int32, DType::Int64});
    }
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const DType t = a.dtype();
    if (b.dtype() != t) return ref_.run(ctx);
    const std::string who = ctx.node().label();
    if constexpr (Logic) {
      if (t != DType::Bool) return ref_.run(ctx);
      Tensor& y = output(ctx, a, b, who);
      if (y.numel()) compare<uint8_t, Op>(a, b, y, ctx.threads());
    } else {
      if (t == DType::Float32) return run_typed<float>(ctx, a, b, who);
      if (t == DType::Int32) return run_typed<int32_t>(ctx, a, b, who);
      if (t == DType::Int64) return run_typed<int64_t>(ctx, a, b, who);
      if (WithBool && t == DType::Bool) return run_typed<uint8_t>(ctx, a, b, who);
      ref_.run(ctx);
    }
  }

 private:
  static Tensor& output(KernelContext& ctx, const Tensor& a, const Tensor& b,
                        const std::string& who) {
    return ctx.output(0, DType::Bool, broadcast_shapes(a.shape(), b.shape(), who.c_str()));
  }
  template <class T>
  void run_typed(KernelContext& ctx, const Tensor& a, const Tensor& b, const std::string& who) {
    if constexpr (!Logic) {
      Tensor& y = output(ctx, a, b, who);
      if (y.numel()) compare<T, Op>(a, b, y, ctx.threads());
    }
  }

  RefFallback ref_;
};

class FastNotKernel final : public Kernel {
 public:
  explicit FastNotKernel(const KernelInfo& info) : ref_(info) {
    require_types(info, 1, {DType::Bool});
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::Bool) return ref_.run(ctx);
    Tensor& y = ctx.output(0, DType::Bool, x.shape());
    const uint8_t* px = bytes_of(x);
    uint8_t* py = bytes_of(y);
    parallel_for(x.numel(), ctx.threads(), kGrain * 4,
                 [&](int64_t b, int64_t e) { not_loop(px + b, py + b, e - b); });
  }

 private:
  RefFallback ref_;
};

template <class T>
void where(const Tensor& c, const Tensor& x, const Tensor& y, Tensor& out, int threads) {
  using Fn =
      void (*)(const uint8_t*, int64_t, const T*, int64_t, const T*, int64_t, T*, int64_t, int64_t);
  static constexpr Fn kFns[8] = {
      where_rows<T, false, false, false>, where_rows<T, false, false, true>,
      where_rows<T, false, true, false>,  where_rows<T, false, true, true>,
      where_rows<T, true, false, false>,  where_rows<T, true, false, true>,
      where_rows<T, true, true, false>,   where_rows<T, true, true, true>};
  const BroadcastPlan<3> p = plan_broadcast<3>({&c.shape(), &x.shape(), &y.shape()}, out.shape());
  const Fn fn = kFns[(p.vec(0) ? 4 : 0) + (p.vec(1) ? 2 : 0) + (p.vec(2) ? 1 : 0)];
  const int64_t rc = p.row_stride(0), rx = p.row_stride(1), ry = p.row_stride(2);
  const uint8_t* pc = bytes_of(c);
  const T* px = static_cast<const T*>(x.raw_data());
  const T* py = static_cast<const T*>(y.raw_data());
  T* po = static_cast<T*>(out.raw_data());
  for_each_run(p, out.numel(), threads, kGrain,
               [&](const std::array<int64_t, 3>& o, int64_t i, int64_t rows, int64_t len) {
                 fn(pc + o[0], rc, px + o[1], rx, py + o[2], ry, po + i, rows, len);
               });
}

class FastWhereKernel final : public Kernel {
 public:
  explicit FastWhereKernel(const KernelInfo& info) : ref_(info) {
    require_types(info, 1, {DType::Bool});
    for (size_t i = 1; i < 3 && i < info.num_inputs(); ++i) {
      const ir::TypeInfo* t = info.input_type(i);
      if (t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem != DType::Undefined &&
          plain_element_size(t->elem) == 0)
        info.unsupported(std::string("the fast kernel for ") + dtype_name(t->elem));
    }
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    const size_t es = plain_element_size(x.dtype());
    if (c.dtype() != DType::Bool || y.dtype() != x.dtype() || es == 0) return ref_.run(ctx);
    const std::string who = ctx.node().label();
    const Shape shape = broadcast_shapes({c.shape(), x.shape(), y.shape()}, who.c_str());
    Tensor& out = ctx.output(0, x.dtype(), shape);
    if (out.numel() == 0) return;
    if (es == 1) return where<uint8_t>(c, x, y, out, ctx.threads());
    if (es == 2) return where<uint16_t>(c, x, y, out, ctx.threads());
    if (es == 4) return where<uint32_t>(c, x, y, out, ctx.threads());
    where<uint64_t>(c, x, y, out, ctx.threads());
  }

 private:
  RefFallback ref_;
};

using FastEqual = FastCompareKernel<EqualOp, false, true>;
using FastLess = FastCompareKernel<LessOp, false, false>;
using FastGreater = FastCompareKernel<GreaterOp, false, false>;
using FastLessOrEqual = FastCompareKernel<LessOrEqualOp, false, false>;
using FastGreaterOrEqual = FastCompareKernel<GreaterOrEqualOp, false, false>;
using FastAnd = FastCompareKernel<AndOp, true, false>;
using FastOr = FastCompareKernel<OrOp, true, false>;
using FastXor = FastCompareKernel<XorOp, true, false>;

}  // namespace

PI_CPU_FAST_KERNEL("", Equal, 7, 28, FastEqual);
PI_CPU_FAST_KERNEL("", Less, 7, 28, FastLess);
PI_CPU_FAST_KERNEL("", Greater, 7, 28, FastGreater);
PI_CPU_FAST_KERNEL("", LessOrEqual, 12, 28, FastLessOrEqual);
PI_CPU_FAST_KERNEL("", GreaterOrEqual, 12, 28, FastGreaterOrEqual);
PI_CPU_FAST_KERNEL("", And, 7, 28, FastAnd);
PI_CPU_FAST_KERNEL("", Or, 7, 28, FastOr);
PI_CPU_FAST_KERNEL("", Xor, 7, 28, FastXor);
PI_CPU_FAST_KERNEL("", Not, 1, 28, FastNotKernel);
PI_CPU_FAST_KERNEL("", Where, 9, 28, FastWhereKernel);

}  // namespace polyinfer::fast
