// Fast float32 Add, Sub, Mul, Div (opset 7+, numpy broadcasting).
//
// Every broadcast is first collapsed: output dimensions of size 1 are dropped and neighbouring
// dimensions where A and B both have the full extent (or where the same one of them is broadcast)
// are merged. [N,C,H,W] * [1,C,1,1] becomes [N | C | H*W] with B present only on the middle one,
// [B,S,768] + [768] becomes [B*S | 768], same shapes become one run. The innermost collapsed
// dimension is then a contiguous run of one of three kinds — vector op vector, vector op scalar,
// scalar op vector — done by a vectorized loop; the runs along the next dimension out go to one
// call, and the other outer dimensions only pick where those start in A and B. Division stays a
// division (no reciprocal) so results match the reference bit for bit.
#include <cstdint>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {
namespace {

// `rows` contiguous runs of n outputs each (y advances by n per run), A and B advancing by their
// own strides per run: the runs of the innermost outer dimension in one call. Calling per run
// cost more than short runs themselves (the squeeze-and-excitation Muls of 32 channels, NHWC:
// 12544 calls of 32 elements in EfficientNet-B0's first block).
using RowsFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, int64_t);

PI_FAST_MATH_BEGIN

// One run kind's loop, compiled per ISA (PI_FAST_CLONES): X0 and X1 read the operands of output
// i (a[0] for an operand that is one value per run; __restrict lets the compiler hoist it).
#define PI_FAST_BINARY_ROWS(FN, X0, X1, EXPR)                                              \
  PI_FAST_CLONES void FN(const float* __restrict a, int64_t sa, const float* __restrict b, \
                         int64_t sb, float* __restrict y, int64_t rows, int64_t n) {       \
    for (int64_t r = 0; r < rows; ++r, a += sa, b += sb, y += n)                           \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) {                                \
        const float x0 = (X0), x1 = (X1);                                                  \
        y[i] = (EXPR);                                                                     \
      }                                                                                    \
  }
// The three run kinds of one operator: vector op vector, vector op scalar (B's one value per
// run), scalar op vector.
#define PI_FAST_BINARY_LOOPS(NAME, EXPR)           \
  PI_FAST_BINARY_ROWS(NAME##_vv, a[i], b[i], EXPR) \
  PI_FAST_BINARY_ROWS(NAME##_vs, a[i], b[0], EXPR) \
  PI_FAST_BINARY_ROWS(NAME##_sv, a[0], b[i], EXPR)

PI_FAST_BINARY_LOOPS(add, x0 + x1)
PI_FAST_BINARY_LOOPS(sub, x0 - x1)
PI_FAST_BINARY_LOOPS(mul, x0* x1)
PI_FAST_BINARY_LOOPS(div, x0 / x1)
#undef PI_FAST_BINARY_LOOPS
#undef PI_FAST_BINARY_ROWS

PI_FAST_MATH_END

// Loops of one operator, indexed by run kind: 0 vector-vector, 1 vector-scalar, 2 scalar-vector.
struct OpLoops {
  RowsFn run[3];
};
constexpr OpLoops kAdd{{add_vv, add_vs, add_sv}};
constexpr OpLoops kSub{{sub_vv, sub_vs, sub_sv}};
constexpr OpLoops kMul{{mul_vv, mul_vs, mul_sv}};
constexpr OpLoops kDiv{{div_vv, div_vs, div_sv}};

// The broadcast of A and B to `out`, collapsed as described at the top of the file. dims[i] is
// an extent, sa/sb the element strides of A and B along it (0 where broadcast).
struct Collapsed {
  std::vector<int64_t> dims, sa, sb;
};

Collapsed collapse(const Shape& a, const Shape& b, const Shape& out) {
  const size_t r = out.size();
  // Per output dimension (skipping extent 1): does A / B have the full extent?
  std::vector<int64_t> ext;
  std::vector<bool> fa, fb;
  for (size_t d = 0; d < r; ++d) {
    if (out[d] == 1) continue;
    const size_t oa = r - a.size(), ob = r - b.size();
    const bool ha = d >= oa && a[d - oa] == out[d];
    const bool hb = d >= ob && b[d - ob] == out[d];
    if (!ext.empty() && fa.back() == ha && fb.back() == hb) {
      ext.back() *= out[d];
    } else {
      ext.push_back(out[d]);
      fa.push_back(ha);
      fb.push_back(hb);
    }
  }
  if (ext.empty()) {  // every extent is 1: one element
    ext.push_back(1);
    fa.push_back(true);
    fb.push_back(true);
  }
  Collapsed c;
  c.dims = ext;
  c.sa.assign(ext.size(), 0);
  c.sb.assign(ext.size(), 0);
  int64_t pa = 1, pb = 1;
  for (size_t i = ext.size(); i-- > 0;) {
    if (fa[i]) c.sa[i] = pa, pa *= ext[i];
    if (fb[i]) c.sb[i] = pb, pb *= ext[i];
  }
  return c;
}

template <const OpLoops& L> class FastArithKernel final : public Kernel {
 public:
  explicit FastArithKernel(const KernelInfo& info) : ref_(info) {
    require_float_input(info, 0);
    require_float_input(info, 1);
  }
  std::string impl() const override { return ref_.impl(); }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != DType::Float32 || b.dtype() != DType::Float32) return ref_.run(ctx);
    if (run_flat(ctx, a, b)) return;
    const std::string who = ctx.node().label();
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), who.c_str());
    Tensor& y = ctx.output(0, DType::Float32, shape);
    const int64_t n = y.numel();
    if (n == 0) return;
    const Collapsed c = collapse(a.shape(), b.shape(), shape);
    const size_t k = c.dims.size() - 1;
    const int64_t inner = c.dims[k];
    const int kind = c.sa[k] && c.sb[k] ? 0 : (c.sa[k] ? 1 : 2);
    const RowsFn fn = L.run[kind];
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y.data<float>();
    // Each thread takes a contiguous range of output elements. The outer index of its first run
    // is split into per-dimension counters once; then whole runs along the innermost outer
    // dimension go to one call, and the counters step like an odometer.
    const int64_t rows_dim = k > 0 ? c.dims[k - 1] : 1;
    const int64_t ra = k > 0 ? c.sa[k - 1] : 0, rb = k > 0 ? c.sb[k - 1] : 0;
    parallel_for(n, ctx.threads(), kGrain, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> idx(k);
      int64_t row = begin / inner, col = begin - row * inner, oa = 0, ob = 0;
      for (size_t d = k; d-- > 0;) {
        idx[d] = row % c.dims[d];
        row /= c.dims[d];
        oa += idx[d] * c.sa[d];
        ob += idx[d] * c.sb[d];
      }
      for (int64_t i = begin; i < end;) {
        // A run started inside (a thread's first) or cut short (its last) goes alone; whole
        // runs go together up to the end of the innermost outer dimension.
        int64_t rows = 1, len = std::min(inner - col, end - i);
        if (col == 0 && k > 0)
          rows = std::max<int64_t>(1, std::min(rows_dim - idx[k - 1], (end - i) / inner));
        if (rows > 1) len = inner;
        fn(pa + oa + (kind == 2 ? 0 : col), ra, pb + ob + (kind == 1 ? 0 : col), rb, py + i, rows,
           len);
        i += rows * len;
        col = 0;
        // The next run: `rows` steps of the innermost outer dimension, then a carry through
        // the others where it wraps.
        if (k == 0) continue;
        oa += ra * rows;
        ob += rb * rows;
        idx[k - 1] += rows;
        for (size_t d = k; d-- > 0;) {
          if (idx[d] < c.dims[d]) break;
          oa -= c.sa[d] * c.dims[d];
          ob -= c.sb[d] * c.dims[d];
          idx[d] = 0;
          if (d == 0) break;
          oa += c.sa[d - 1];
          ob += c.sb[d - 1];
          ++idx[d - 1];
        }
      }
    });
  }

 private:
  // Equal shapes, or one side a single value of no higher rank: the output has the other's
  // shape and is one run, with nothing to broadcast, collapse or name (the per-node cost of a
  // tiny tensor). False for any other pair.
  static bool run_flat(KernelContext& ctx, const Tensor& a, const Tensor& b) {
    const Shape &sa = a.shape(), &sb = b.shape();
    const int kind = sa == sb                                   ? 0
                     : b.numel() == 1 && sb.size() <= sa.size() ? 1
                     : a.numel() == 1 && sa.size() <= sb.size() ? 2
                                                                : -1;
    if (kind < 0) return false;
    Tensor& y = ctx.output(0, DType::Float32, kind == 2 ? sb : sa);
    const RowsFn fn = L.run[kind];
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y.data<float>();
    parallel_for(y.numel(), ctx.threads(), kGrain, [&](int64_t begin, int64_t end) {
      fn(pa + (kind == 2 ? 0 : begin), 0, pb + (kind == 1 ? 0 : begin), 0, py + begin, 1,
         end - begin);
    });
    return true;
  }

  RefFallback ref_;
};

using FastAdd = FastArithKernel<kAdd>;
using FastSub = FastArithKernel<kSub>;
using FastMul = FastArithKernel<kMul>;
using FastDiv = FastArithKernel<kDiv>;

}  // namespace

// Opsets 1-6 use the legacy broadcast/axis attributes: the reference kernel keeps those.
PI_CPU_FAST_KERNEL("", Add, 7, 28, FastAdd);
PI_CPU_FAST_KERNEL("", Sub, 7, 28, FastSub);
PI_CPU_FAST_KERNEL("", Mul, 7, 28, FastMul);
PI_CPU_FAST_KERNEL("", Div, 7, 28, FastDiv);

}  // namespace polyinfer::fast
