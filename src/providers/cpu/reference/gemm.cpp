// Matrix products: Gemm, MatMul (numpy semantics) and MatMulInteger.
#include "core/dispatch.h"
#include "core/shape_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// How a numpy-style matmul of shapes a and b walks its batch: per output matrix, the element
// offsets of its A [M, K] and B [K, N] operands.
struct MatMulPlan {
  Shape out;
  int64_t M = 0, K = 0, N = 0;
  std::vector<int64_t> a_off, b_off;
};

MatMulPlan plan_matmul(const Shape& a, const Shape& b, const std::string& who) {
  PI_CHECK(!a.empty() && !b.empty(), ShapeMismatch, who, ": operands must not be scalars, got ",
           shape_str(a), " and ", shape_str(b));
  Shape a2 = a, b2 = b;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  MatMulPlan p;
  p.M = a2[a2.size() - 2];
  p.K = a2.back();
  p.N = b2.back();
  PI_CHECK(b2[b2.size() - 2] == p.K, ShapeMismatch, who, ": inner dimensions of ", shape_str(a),
           " and ", shape_str(b), " differ");
  const Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
  const std::string ctx =
      who + " (batch dimensions of " + shape_str(a) + " and " + shape_str(b) + ")";
  const Shape batch = broadcast_shapes(ab, bb, ctx.c_str());
  p.out = batch;
  if (a.size() > 1) p.out.push_back(p.M);
  if (b.size() > 1) p.out.push_back(p.N);
  const int64_t nb = shape_numel(batch);
  p.a_off.resize(static_cast<size_t>(nb));
  p.b_off.resize(static_cast<size_t>(nb));
  const std::vector<int64_t> strides[2] = {broadcast_strides(ab, batch),
                                           broadcast_strides(bb, batch)};
  for_each_broadcast<2>(batch, strides, [&](int64_t i, int64_t ao, int64_t bo) {
    p.a_off[i] = ao * p.M * p.K;
    p.b_off[i] = bo * p.K * p.N;
  });
  return p;
}

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(const KernelInfo& info) : who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    PI_CHECK(a.dtype() == b.dtype(), InvalidArgument, who_, ": operand dtypes differ");
    const MatMulPlan p = plan_matmul(a.shape(), b.shape(), who_);
    Tensor& y = ctx.output(0, a.dtype(), p.out);
    dispatch(NumericTypes{}, a.dtype(), "MatMul", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* ap = a.data<T>();
      const T* bp = b.data<T>();
      T* yp = y.data<T>();
      for (size_t bi = 0; bi < p.a_off.size(); ++bi) {
        const T* am = ap + p.a_off[bi];
        const T* bm = bp + p.b_off[bi];
        T* ym = yp + static_cast<int64_t>(bi) * p.M * p.N;
        for (int64_t i = 0; i < p.M; ++i)
          for (int64_t j = 0; j < p.N; ++j) {
            A acc = A(0);
            for (int64_t k = 0; k < p.K; ++k) acc += A(am[i * p.K + k]) * A(bm[k * p.N + j]);
            ym[i * p.N + j] = T(acc);
          }
      }
    });
  }

 private:
  std::string who_;
};

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const KernelInfo& info)
      : alpha_(info.attr_float("alpha", 1.0f)),
        beta_(info.attr_float("beta", 1.0f)),
        trans_a_(info.attr_int("transA", 0) != 0),
        trans_b_(info.attr_int("transB", 0) != 0),
        who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    PI_CHECK(a.rank() == 2 && b.rank() == 2 && a.dtype() == b.dtype(), ShapeMismatch, who_,
             ": A and B must be matrices of one dtype, got ", a.describe(), " and ", b.describe());
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t N = trans_b_ ? b.dim(0) : b.dim(1);
    PI_CHECK((trans_b_ ? b.dim(1) : b.dim(0)) == K, ShapeMismatch, who_, ": inner dimensions of ",
             a.describe(), " and ", b.describe(), " differ");
    const Shape ys{M, N};
    const Tensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    std::vector<int64_t> cstr;
    if (c) {
      PI_CHECK(c->dtype() == a.dtype() && c->rank() <= 2 &&
                   broadcast_shapes(c->shape(), ys, who_.c_str()) == ys,
               ShapeMismatch, who_, ": C ", c->describe(), " does not broadcast to ",
               shape_str(ys));
      cstr = broadcast_strides(c->shape(), ys);
    }
    Tensor& y = ctx.output(0, a.dtype(), ys);
    dispatch(NumericTypes{}, a.dtype(), "Gemm", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = compute_t<T>;
      const T* ap = a.data<T>();
      const T* bp = b.data<T>();
      const T* cp = c ? c->data<T>() : nullptr;
      T* yp = y.data<T>();
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          A acc = A(0);
          for (int64_t k = 0; k < K; ++k) {
            const A av = A(trans_a_ ? ap[k * M + i] : ap[i * K + k]);
            const A bv = A(trans_b_ ? bp[j * K + k] : bp[k * N + j]);
            acc += av * bv;
          }
          A v = A(alpha_) * acc;
          if (cp) v += A(beta_) * A(cp[i * cstr[0] + j * cstr[1]]);
          yp[i * N + j] = T(v);
        }
    });
  }

 private:
  float alpha_, beta_;
  bool trans_a_, trans_b_;
  std::string who_;
};

class MatMulIntegerKernel final : public Kernel {
 public:
  explicit MatMulIntegerKernel(const KernelInfo& info) : who_(info.node().label()) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const MatMulPlan p = plan_matmul(a.shape(), b.shape(), who_);
    // Zero points: a scalar, or one per row of A / per column of B.
    const auto zero_points = [&](size_t i, DType dt, int64_t per) {
      if (!ctx.has_input(i)) return std::vector<int32_t>(1, 0);
      const Tensor& z = ctx.input(i);
      PI_CHECK(z.dtype() == dt && (z.numel() == 1 || (z.rank() == 1 && z.numel() == per)),
               ShapeMismatch, who_, ": zero point ", z.describe(), " must be ", dtype_name(dt),
               " with 1 or ", per, " values");
      std::vector<int32_t> v(static_cast<size_t>(z.numel()));
      for (size_t k = 0; k < v.size(); ++k)
        v[k] = dt == DType::UInt8 ? int32_t(z.data<uint8_t>()[k]) : int32_t(z.data<int8_t>()[k]);
      return v;
    };
    const auto az = zero_points(2, a.dtype(), p.M);
    const auto bz = zero_points(3, b.dtype(), p.N);
    Tensor& y = ctx.output(0, DType::Int32, p.out);
    int32_t* yp = y.data<int32_t>();
    using U8 = TypeList<uint8_t, int8_t>;
    dispatch(U8{}, a.dtype(), "MatMulInteger", [&](auto atag) {
      using TA = typename decltype(atag)::type;
      dispatch(U8{}, b.dtype(), "MatMulInteger", [&](auto btag) {
        using TB = typename decltype(btag)::type;
        const TA* ap = a.data<TA>();
        const TB* bp = b.data<TB>();
        for (size_t bi = 0; bi < p.a_off.size(); ++bi)
          for (int64_t i = 0; i < p.M; ++i)
            for (int64_t j = 0; j < p.N; ++j) {
              const int32_t za = az[az.size() == 1 ? 0 : i], zb = bz[bz.size() == 1 ? 0 : j];
              int32_t acc = 0;
              for (int64_t k = 0; k < p.K; ++k)
                acc += (int32_t(ap[p.a_off[bi] + i * p.K + k]) - za) *
                       (int32_t(bp[p.b_off[bi] + k * p.N + j]) - zb);
              yp[static_cast<int64_t>(bi) * p.M * p.N + i * p.N + j] = acc;
            }
      });
    });
  }

 private:
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(Gemm, 1, 28, GemmKernel);
PI_CPU_KERNEL(MatMul, 1, 28, MatMulKernel);
PI_CPU_KERNEL(MatMulInteger, 10, 28, MatMulIntegerKernel);

}  // namespace polyinfer
