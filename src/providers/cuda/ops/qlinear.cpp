// Quantized products on CUDA: QLinearConv, QLinearMatMul and the optimizer's ai.polyinfer
// QLinearConvAdd and QLinearGemm — what the fuse-qdq pass makes of a QDQ model
// (docs/optimizer.md), so `--providers cuda` runs an int8 model on the GPU's integer units.
//
// One mechanism for both: the 8-bit activations shifted to int8 (uint8 - 128), an int8 x int8 ->
// int32 product through cuBLASLt, then one requantization kernel (quant.cu) per output element:
//   Σ (x - zx)·w = Σ x'·w - z'·Σ w,   x' = x - 128 for uint8 (x for int8), z' likewise,
// so the shift and the zero point fold into one int32 per output channel, added with the bias
// (offset), and mult = sx·sw[c]/sy scales it in double as the CPU reference does: the results
// are the reference's (providers/cpu/reference/quantize.cpp) bit for bit. A padded tap of the
// convolution holds z', which cancels like any other tap at the zero point.
//
// cuBLASLt's int8 Tensor Core (IMMA) kernels take the "TN" form with m and k multiples of 4 and
// leading dimensions multiples of 4: the weights are packed at creation as int8 rows of kp
// (k rounded up to 16) with zero columns, the activations shifted into matching rows (im2col for
// the convolution, with its rows rounded up to 4). Where cuBLASLt has no algorithm for a shape
// a plain int8 GEMM kernel runs instead (impl "cuda:int8-gemm"). Grouped convolutions
// (depthwise) run a direct kernel: a GEMM per group of a few channels would be all launches.
//
// Refused at creation (the node then falls back with the reason): weights that are not a
// constant int8 tensor with zero point 0 (as the CPU's oneDNN kernels), scales, zero points or
// a bias that are not constants, A scales per row, 3-D convolutions.
#include <cstdlib>

#include "core/shape_util.h"
#include "ops/window.h"
#include "providers/cuda/ops/lt_matmul.h"
#include "providers/cuda/ops/qparams.h"

namespace polyinfer::cuda {
namespace {

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// C[j][i] = Σ_k A[i][k]·B[j][k] (i < m, j < n; C row-major with rows of m) through cuBLASLt,
// planned once per shape in `plans` (lt_matmul.h). In its column-major terms A is stored k x m
// and transposed, B is k x n, C is m x n: the "TN" form. False when cuBLASLt has no algorithm.
bool lt_int8(Context& ctx, LtPlans& plans, int64_t m, int64_t n, int64_t k, const int8_t* a,
             const int8_t* b, int32_t* c) {
  LtSpec s;
  s.compute = CUBLAS_COMPUTE_32I;
  s.scale = CUDA_R_32I;
  s.trans_a = CUBLAS_OP_T;
  s.trans_b = CUBLAS_OP_N;
  s.a_type = s.b_type = CUDA_R_8I;
  s.c_type = CUDA_R_32I;
  s.a_rows = s.b_rows = static_cast<uint64_t>(k);
  s.a_cols = static_cast<uint64_t>(m);
  s.b_cols = static_cast<uint64_t>(n);
  s.c_rows = static_cast<uint64_t>(m);
  s.c_cols = static_cast<uint64_t>(n);
  s.lda = s.ldb = k;
  s.ldc = m;
  s.align[0] = alignment_of(a, 1);
  s.align[1] = alignment_of(b, 1);
  s.align[2] = s.align[3] = alignment_of(c, 4);
  const LtPlan* plan = plans.get(ctx, s);
  if (!plan) return false;
  const int32_t one = 1, zero = 0;
  plan->run(ctx, &one, a, b, &zero, c);
  return true;
}

// The product of lt_int8, by cuBLASLt (unless `plain`) or else the plain kernel; returns the
// path's name.
const char* int8_product(Context& ctx, LtPlans& plans, bool plain, int64_t m, int64_t n, int64_t k,
                         const int8_t* a, const int8_t* b, int32_t* c) {
  if (!plain && lt_int8(ctx, plans, m, n, k, a, b, c)) return "cuda:cublaslt-int8";
  launch_int8_gemm(a, b, c, m, n, k, ctx.max_grid_x(), ctx.stream());
  check_launch("int8 GEMM");
  return "cuda:int8-gemm";
}

int q8_lowest(DType t) { return t == DType::UInt8 ? 0 : -128; }
int q8_highest(DType t) { return t == DType::UInt8 ? 255 : 127; }

// The zero point z' the shifted activations are relative to (see the top).
int32_t shifted_zero(DType xt, int32_t zx) { return xt == DType::UInt8 ? zx - 128 : zx; }

// bias - z'·Σw, wrapping as int32 arithmetic does.
int32_t channel_offset(int32_t bias, int32_t zshift, int64_t wsum) {
  const int64_t v = int64_t{bias} - int64_t{zshift} * wsum;
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// Weights as the int8 rows of a product: row o < out holds w(o, 0..k) in a row of kp (zero
// columns past k), rows past `out` up to `rows` are zero; with each row's offset
// bias[o] - z'·Σ_k w(o, k) (see the top).
struct PackedRows {
  std::vector<int8_t> rows;
  std::vector<int32_t> offset;
};
template <class W>
PackedRows pack_rows(int64_t out, int64_t rows, int64_t k, int64_t kp,
                     const std::vector<int32_t>& bias, int32_t zshift, W w) {
  PackedRows p;
  p.rows.assign(static_cast<size_t>(rows * kp), 0);
  p.offset.resize(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int8_t v = w(o, j);
      p.rows[o * kp + j] = v;
      sum += v;
    }
    p.offset[o] = channel_offset(bias[o], zshift, sum);
  }
  return p;
}

// A constant int32 bias of `n` values (zeros without one); refuses anything else.
std::vector<int32_t> bias_of(const KernelInfo& info, size_t i, int64_t n) {
  std::vector<int32_t> b(static_cast<size_t>(n), 0);
  if (!info.has_input(i)) return b;
  const Tensor* t = info.constant_input(i);
  if (!t || t->dtype() != DType::Int32 || t->shape() != Shape{n})
    info.unsupported("a bias that is not a constant int32 tensor of shape [" + std::to_string(n) +
                     "]");
  for (int64_t k = 0; k < n; ++k) b[k] = t->data<int32_t>()[k];
  return b;
}

void require_zero_weights_zero_point(const KernelInfo& info, size_t i, int64_t per) {
  require_zero_point_type(info, i, DType::Int8, "a weight zero point");
  for (double z : constant_values(info, i, "a weight zero point", per))
    if (z != 0) info.unsupported("a weight zero point other than 0");
}

// ---- QLinearConv, QLinearConvAdd ----

class QLinearConvKernel final : public Kernel {
 public:
  explicit QLinearConvKernel(const KernelInfo& info)
      : ctx_(Context::get()),
        attrs_(WindowAttrs::parse(info)),
        who_(info.node().label()),
        residual_(info.node().op_type == "QLinearConvAdd") {
    xt_ = require_q8(info, 0, "X");
    const int r = known_rank(info, 0);
    if (r >= 0 && r != 3 && r != 4)
      info.unsupported("an input of rank " + std::to_string(r) +
                       " (the CUDA kernel does 1-D and 2-D convolutions)");
    const Tensor* w = info.constant_input(3);
    if (!w || w->dtype() != DType::Int8 || (w->rank() != 3 && w->rank() != 4))
      info.unsupported("weights that are not a constant 1-D or 2-D int8 kernel");
    w_shape_ = w->shape();
    if (w->numel() == 0) info.unsupported("empty weights");
    const int64_t M = w->dim(0), K = w->numel() / M;
    if (attrs_.group < 1 || M % attrs_.group != 0)
      info.unsupported("group " + std::to_string(attrs_.group) + " for " + std::to_string(M) +
                       " output channels");
    group_ = attrs_.group;
    require_zero_point_type(info, 2, xt_, "an X zero point");
    const double sx = constant_scale(info, 1, "the X scale")[0];
    const auto zx = static_cast<int32_t>(constant_values(info, 2, "the X zero point")[0]);
    const std::vector<double> sw = constant_scale(info, 4, "the weight scale", M);
    require_zero_weights_zero_point(info, 5, M);
    const size_t sy_i = residual_ ? 12 : 6, zy_i = residual_ ? 13 : 7;
    yt_ = require_q8(info, zy_i, "the Y zero point");
    const double sy = constant_scale(info, sy_i, "the Y scale")[0];
    r_.out = qelem_of(yt_);
    r_.zy = static_cast<int32_t>(constant_values(info, zy_i, "the Y zero point")[0]);
    if (residual_) {
      // The convolution's own saturation bounds, in Y's steps; the residual's scale likewise.
      const DType ct = require_q8(info, 7, "the convolution's zero point");
      const double sc = constant_scale(info, 6, "the convolution's scale")[0];
      const double zc = constant_values(info, 7, "the convolution's zero point")[0];
      r_.lo = (double(q8_lowest(ct)) - zc) * sc / sy;
      r_.hi = (double(q8_highest(ct)) - zc) * sc / sy;
      zt_ = require_q8(info, 9, "Z");
      require_zero_point_type(info, 11, zt_, "a Z zero point");
      r_.z_mult = constant_scale(info, 10, "the Z scale")[0] / sy;
      r_.zt = qelem_of(zt_);
      r_.zz = static_cast<int32_t>(constant_values(info, 11, "the Z zero point")[0]);
    }
    const std::vector<int32_t> bias = bias_of(info, 8, M);

    std::vector<double> mult(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) mult[m] = sx * sw[sw.size() == 1 ? 0 : m] / sy;
    const int8_t* wp = w->data<int8_t>();
    if (group_ == 1) {
      // z' folded into the offsets, and the padding value.
      kp_ = round_up(K, 16);
      const int32_t zs = shifted_zero(xt_, zx);
      const PackedRows p =
          pack_rows(M, M, K, kp_, bias, zs, [&](int64_t m, int64_t k) { return wp[m * K + k]; });
      pad_ = static_cast<int8_t>(zs);
      weights_ = device_array(p.rows);
      offset_ = device_array(p.offset);
    } else {
      zx_ = zx;  // the direct kernel subtracts it itself; the offset is the bias alone
      weights_ = device_array(std::vector<int8_t>(wp, wp + w->numel()));
      offset_ = device_array(bias);
    }
    mult_ = device_array(mult);
    plain_ = info.options().cuda.plain_int8_gemm;
    path_ = group_ != 1 ? "cuda:int8-direct" : plain_ ? "cuda:int8-gemm" : "cuda:cublaslt-int8";
  }

  // The path the last run took; before the first, the one it will try first.
  std::string impl() const override { return path_; }
  // Everything but X (and Z) was read at creation.
  bool prepacked(size_t i) const override { return i != 0 && i != 9; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, xt_);
    PI_CHECK(x.rank() == 3 || x.rank() == 4, UnsupportedOp, who_, ": input ", x.describe(),
             " (the CUDA kernel does 1-D and 2-D convolutions)");
    const WindowGeometry wg = conv_geometry(attrs_, x.shape(), w_shape_, who_);
    const int64_t N = x.dim(0), M = w_shape_[0];
    Shape ys{N, M};
    ys.insert(ys.end(), wg.out.begin(), wg.out.end());
    Requant r = r_;
    if (residual_) {
      const Tensor& z = kc.input(9);
      check_dtype(kc, z, zt_);
      PI_CHECK(z.shape() == ys, ShapeMismatch, who_, ": Z ", z.describe(),
               " must have the output's shape ", shape_str(ys));
      r.z = z.raw_data();
    }
    Tensor& y = kc.output(0, yt_, ys);
    if (y.numel() == 0) return;
    QConvGeom g;
    g.channels = x.dim(1);
    const int h = wg.rank == 2 ? 0 : -1, c = wg.rank - 1;  // -1: the 1-D form's missing row
    if (h == 0) {
      g.in_h = wg.in[0], g.out_h = wg.out[0], g.k_h = wg.kernel[0], g.s_h = wg.strides[0];
      g.d_h = wg.dilations[0], g.p_t = wg.pad_begin[0];
    }
    g.in_w = wg.in[c], g.out_w = wg.out[c], g.k_w = wg.kernel[c], g.s_w = wg.strides[c];
    g.d_w = wg.dilations[c], g.p_l = wg.pad_begin[c];
    const int64_t P = g.out_h * g.out_w;
    r.mult = device_ptr<double>(mult_);
    r.offset = device_ptr<int32_t>(offset_);
    const int max_grid = ctx_.max_grid_x();
    if (group_ == 1) {
      // acc [M][rows]: row n·P + p of image n's pixel p (lt_int8 with the pixels as m).
      const int64_t rows = round_up(N * P, 4);
      Scratch cols(ctx_, static_cast<size_t>(rows * kp_));
      Scratch acc(ctx_, static_cast<size_t>(rows * M) * sizeof(int32_t));
      auto* cp = static_cast<int8_t*>(cols.get());
      auto* ap = static_cast<int32_t*>(acc.get());
      launch_im2col_s8(qelem_of(xt_), x.raw_data(), cp, N, g, rows, kp_, pad_, max_grid,
                       ctx_.stream());
      check_launch("int8 im2col");
      path_ = int8_product(ctx_, lt_, plain_, rows, M, kp_, cp, device_ptr<int8_t>(weights_), ap);
      launch_requantize(ap, P, rows, y.raw_data(), N, M, P, r, max_grid, ctx_.stream());
    } else {
      Scratch acc(ctx_, static_cast<size_t>(y.numel()) * sizeof(int32_t));
      auto* ap = static_cast<int32_t*>(acc.get());
      launch_qconv_direct(qelem_of(xt_), x.raw_data(), zx_, device_ptr<int8_t>(weights_), ap, N, M,
                          group_, g, max_grid, ctx_.stream());
      check_launch("int8 direct convolution");
      launch_requantize(ap, M * P, P, y.raw_data(), N, M, P, r, max_grid, ctx_.stream());
      path_ = "cuda:int8-direct";
    }
    check_launch(who_.c_str());
  }

 private:
  Context& ctx_;
  WindowAttrs attrs_;
  std::string who_;
  bool residual_;
  DType xt_ = DType::UInt8, yt_ = DType::UInt8, zt_ = DType::UInt8;
  Shape w_shape_;
  int64_t group_ = 1, kp_ = 0;
  int8_t pad_ = 0;
  int32_t zx_ = 0;
  bool plain_ = false;  // CudaProviderOptions::plain_int8_gemm
  LtPlans lt_;
  Tensor weights_, mult_, offset_;  // on the device
  Requant r_;                       // everything but the device pointers and Z
  std::string path_;
};

// ---- QLinearMatMul, QLinearGemm ----

// QLinearMatMul(A, sa, za, B, sb, zb, sy, zy) with B a constant [K, N]; ai.polyinfer
// QLinearGemm adds an int32 bias (input 8) and, without sy and zy, a float32 Y
// ((acc + bias)·sa·sb[n]). A's leading dimensions fold into its rows: one product.
class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(const KernelInfo& info)
      : ctx_(Context::get()),
        who_(info.node().label()),
        gemm_(info.node().op_type == "QLinearGemm") {
    at_ = require_q8(info, 0, "A");
    const Tensor* b = info.constant_input(3);
    if (!b || b->dtype() != DType::Int8 || b->rank() != 2)
      info.unsupported("a B that is not a constant 2-D int8 matrix");
    K_ = b->dim(0);
    N_ = b->dim(1);
    if (K_ == 0 || N_ == 0) info.unsupported("an empty B");
    require_zero_point_type(info, 2, at_, "an A zero point");
    const double sa = constant_scale(info, 1, "the A scale")[0];
    const auto za = static_cast<int32_t>(constant_values(info, 2, "the A zero point")[0]);
    const std::vector<double> sb = constant_scale(info, 4, "the B scale", N_);
    require_zero_weights_zero_point(info, 5, N_);
    const bool float_y = gemm_ && !info.has_input(6);
    double sy = 1.0;
    if (float_y) {
      yt_ = DType::Float32;
      r_.out = QElem::F32;
    } else {
      yt_ = require_q8(info, 7, "the Y zero point");
      sy = constant_scale(info, 6, "the Y scale")[0];
      r_.out = qelem_of(yt_);
      r_.zy = static_cast<int32_t>(constant_values(info, 7, "the Y zero point")[0]);
    }
    const std::vector<int32_t> bias =
        gemm_ ? bias_of(info, 8, N_) : std::vector<int32_t>(static_cast<size_t>(N_), 0);

    // B^T as rows of kp (lt_int8's A: the output columns are its m, rounded up to 4).
    kp_ = round_up(K_, 16);
    np_ = round_up(N_, 4);
    const int8_t* bp = b->data<int8_t>();
    const PackedRows p = pack_rows(N_, np_, K_, kp_, bias, shifted_zero(at_, za),
                                   [&](int64_t n, int64_t k) { return bp[k * N_ + n]; });
    std::vector<double> mult(static_cast<size_t>(N_));
    for (int64_t n = 0; n < N_; ++n) mult[n] = sa * sb[sb.size() == 1 ? 0 : n] / sy;
    weights_ = device_array(p.rows);
    mult_ = device_array(mult);
    offset_ = device_array(p.offset);
    plain_ = info.options().cuda.plain_int8_gemm;
    path_ = plain_ ? "cuda:int8-gemm" : "cuda:cublaslt-int8";
  }

  std::string impl() const override { return path_; }
  bool prepacked(size_t i) const override { return i != 0; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    check_dtype(kc, a, at_);
    PI_CHECK(a.rank() >= 1, ShapeMismatch, who_, ": A must not be a scalar");
    PI_CHECK(!gemm_ || a.rank() == 2, ShapeMismatch, who_, ": QLinearGemm takes a 2-D A, got ",
             a.describe());
    PI_CHECK(a.shape().back() == K_, ShapeMismatch, who_, ": inner dimensions of ", a.describe(),
             " and B [", K_, ", ", N_, "] differ");
    Shape ys = a.shape();
    ys.back() = N_;  // a 1-D A ([K]) gives [N], as numpy's rule does
    const int64_t rows = shape_numel(a.shape()) / K_;
    Tensor& y = kc.output(0, yt_, ys);
    if (y.numel() == 0) return;
    Requant r = r_;
    r.mult = device_ptr<double>(mult_);
    r.offset = device_ptr<int32_t>(offset_);
    const int max_grid = ctx_.max_grid_x();
    Scratch shifted(ctx_, static_cast<size_t>(rows * kp_));
    Scratch acc(ctx_, static_cast<size_t>(rows * np_) * sizeof(int32_t));
    auto* sp = static_cast<int8_t*>(shifted.get());
    auto* ap = static_cast<int32_t*>(acc.get());
    launch_rows_s8(qelem_of(at_), a.raw_data(), sp, rows, K_, kp_, max_grid, ctx_.stream());
    check_launch("int8 rows");
    // acc [rows][np]: B^T's rows are lt_int8's m, A's rows its n.
    path_ = int8_product(ctx_, lt_, plain_, np_, rows, kp_, device_ptr<int8_t>(weights_), sp, ap);
    launch_requantize(ap, np_, 1, y.raw_data(), rows, N_, 1, r, max_grid, ctx_.stream());
    check_launch(who_.c_str());
  }

 private:
  Context& ctx_;
  std::string who_;
  bool gemm_;
  DType at_ = DType::UInt8, yt_ = DType::UInt8;
  int64_t K_ = 0, N_ = 0, kp_ = 0, np_ = 0;
  bool plain_ = false;  // CudaProviderOptions::plain_int8_gemm
  LtPlans lt_;
  Tensor weights_, mult_, offset_;
  Requant r_;
  std::string path_;
};

}  // namespace

// QLinearConv has had no new version since 10; QLinearMatMul-21 adds float8 operands and
// float16 scales, which the creation checks refuse.
PI_CUDA_KERNEL(QLinearConv, 10, 28, QLinearConvKernel);
PI_CUDA_KERNEL(QLinearMatMul, 10, 28, QLinearMatMulKernel);
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", QLinearConvAdd, 1, 1, QLinearConvKernel);
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", QLinearGemm, 1, 1, QLinearMatMulKernel);

}  // namespace polyinfer::cuda
