// com.microsoft MatMulNBits: Y = A x dequantize(B)^T (+ bias), B block-quantized to 2, 4 or 8
// bits along K (what ONNX Runtime's MatMulNBitsQuantizer and onnxruntime-genai's int4 models
// write).
//
//   A [..., K] (float32, float16, bfloat16); B [N, k_blocks, block_size * bits / 8] uint8, each
//   block's values packed from the low bits of each byte up; scales [N, k_blocks] (or flattened),
//   A's dtype; zero_points: packed uint8 [N, ceil(k_blocks * bits / 8)] as B, or A's dtype
//   [N, k_blocks], or absent (2^(bits-1)); g_idx [K] (int32, deprecated): the block of each k
//   instead of k / block_size (with float zero points or none: with packed ones ONNX Runtime
//   1.32's CPU kernel ignores the zero points, so that form is refused); bias [N].
//   W[n, k] = (q[n, k] - zero_point[n, block]) * scale[n, block]; Y = A W^T + bias.
//   A B with a zero-sized dimension is an omitted projection: Y is the bias (or zeros).
//
// accuracy_level is ONNX Runtime's licence to quantize A (4: to int8) or downcast it; this
// kernel always computes in float32, which is level 0's semantics ("A is not quantized"): with
// A quantized, ONNX Runtime's own results differ from these by A's int8 rounding.
//
// How: the weights are dequantized once, when the kernel is created, into float32 — the fast
// tier hands them to the project's packed GEMM (fast/packed_gemm.h, as a MatMul with constant
// weights), so the product runs at float MatMul's speed; the reference tier keeps them [K, N]
// for a plain loop. The price is memory: float32 weights are 8 times the 4-bit ones (the packed
// B, scales and zero points are freed: prepacked). A GEMM on the int4 weights themselves
// (unpacking blocks into registers inside the tile, as MLAS's SQNBit kernels do) would keep
// them small and read 8 times fewer bytes per product — the future work for decoders whose
// weights do not fit in memory as float32. Weights known only at run time are dequantized on
// each run.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "providers/cpu/contrib/contrib_util.h"
#include "providers/cpu/contrib/projection.h"

namespace polyinfer::contrib {
namespace {

// The quantization layout of one node.
struct NBitsLayout {
  int64_t K = 0, N = 0, bits = 4, block = 32, k_blocks = 0, blob = 0;
};

// The dequantized weights W as [N, K] floats (B's own order: written row after row), from the
// node's B, scales, zero points and g_idx: each read through peek_bytes (constants at creation)
// or as a plain host tensor.
std::vector<float> dequantize(const NBitsLayout& l, const Tensor& b, const Tensor& scales,
                              const Tensor* zp, const Tensor* g_idx, const std::string& who) {
  std::vector<float> w(static_cast<size_t>(l.K * l.N), 0.0f);
  PI_CHECK(b.dtype() == DType::UInt8, InvalidArgument, who, ": B must be uint8, got ",
           dtype_name(b.dtype()));
  if (b.numel() == 0) return w;  // an omitted projection
  PI_CHECK(b.numel() == l.N * l.k_blocks * l.blob, ShapeMismatch, who, ": B has shape ",
           shape_str(b.shape()), "; N=", l.N, ", K=", l.K, ", block_size=", l.block,
           " and bits=", l.bits, " make it [", l.N, ", ", l.k_blocks, ", ", l.blob, "]");
  PI_CHECK(scales.numel() == l.N * l.k_blocks, ShapeMismatch, who, ": scales has shape ",
           shape_str(scales.shape()), "; it must hold [", l.N, ", ", l.k_blocks, "] values");
  const std::vector<float> sc = peek_floats(scales, who, "scales");
  const auto* q = static_cast<const uint8_t*>(b.peek_bytes());
  const int mask = (1 << l.bits) - 1;
  // Zero points as floats, [N, k_blocks].
  std::vector<float> zpv(static_cast<size_t>(l.N * l.k_blocks),
                         static_cast<float>(1 << (l.bits - 1)));
  PI_CHECK(!(g_idx && zp && zp->dtype() == DType::UInt8), UnsupportedOp, who,
           ": g_idx with packed uint8 zero_points is not implemented (ONNX Runtime 1.32's CPU "
           "kernel ignores the zero points there; give them as floats)");
  if (zp) {
    if (zp->dtype() == DType::UInt8) {
      const int64_t row = (l.k_blocks * l.bits + 7) / 8;
      PI_CHECK(zp->numel() == l.N * row, ShapeMismatch, who, ": packed zero_points has shape ",
               shape_str(zp->shape()), "; it must hold [", l.N, ", ", row, "] bytes");
      const auto* z = static_cast<const uint8_t*>(zp->peek_bytes());
      for (int64_t n = 0; n < l.N; ++n)
        for (int64_t kb = 0; kb < l.k_blocks; ++kb) {
          const int64_t bit = kb * l.bits;
          zpv[n * l.k_blocks + kb] = static_cast<float>((z[n * row + bit / 8] >> (bit % 8)) & mask);
        }
    } else {
      PI_CHECK(zp->numel() == l.N * l.k_blocks, ShapeMismatch, who, ": zero_points has shape ",
               shape_str(zp->shape()), "; it must hold [", l.N, ", ", l.k_blocks, "] values");
      zpv = peek_floats(*zp, who, "zero_points");
    }
  }
  std::vector<int64_t> block_of(static_cast<size_t>(l.K));
  for (int64_t k = 0; k < l.K; ++k) block_of[k] = k / l.block;
  if (g_idx) {
    PI_CHECK(g_idx->dtype() == DType::Int32 && g_idx->numel() == l.K, ShapeMismatch, who,
             ": g_idx must be int32 with K=", l.K, " values, got ", g_idx->describe());
    const auto* g = static_cast<const unsigned char*>(g_idx->peek_bytes());
    for (int64_t k = 0; k < l.K; ++k) {
      int32_t v;
      std::memcpy(&v, g + 4 * k, 4);
      PI_CHECK(v >= 0 && v < l.k_blocks, InvalidArgument, who, ": g_idx[", k, "] = ", v,
               " is not a block index below ", l.k_blocks);
      block_of[k] = v;
    }
  }
  for (int64_t n = 0; n < l.N; ++n) {
    const uint8_t* row = q + n * l.k_blocks * l.blob;
    float* wr = w.data() + n * l.K;
    for (int64_t kb = 0; kb < l.k_blocks; ++kb) {
      // Element k sits in block k / block_size whatever g_idx says; g_idx picks its scale.
      const uint8_t* blob = row + kb * l.blob;
      const int64_t k0 = kb * l.block, k1 = std::min(l.K, k0 + l.block);
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t bit = (k - k0) * l.bits;
        const int v = (blob[bit / 8] >> (bit % 8)) & mask;
        const int64_t s = n * l.k_blocks + (g_idx ? block_of[k] : kb);
        wr[k] = (static_cast<float>(v) - zpv[s]) * sc[s];
      }
    }
  }
  return w;
}

class MatMulNBitsKernel : public Kernel {
 public:
  MatMulNBitsKernel(const KernelInfo& info, bool fast) : who_(info.node().label()) {
    l_.K = info.attr_int("K");
    l_.N = info.attr_int("N");
    l_.bits = info.attr_int("bits", 4);
    l_.block = info.attr_int("block_size");
    if (l_.bits != 2 && l_.bits != 4 && l_.bits != 8)
      info.unsupported("bits=" + std::to_string(l_.bits) + " (2, 4 and 8 are)");
    if (l_.block < 16 || (l_.block & (l_.block - 1)) != 0)
      info.unsupported("block_size=" + std::to_string(l_.block) + " (a power of 2 from 16 on)");
    if (l_.K <= 0 || l_.N <= 0) info.unsupported("K or N not positive");
    if (info.attr_int("weight_prepacked", 0) != 0) info.unsupported("weight_prepacked");
    l_.k_blocks = (l_.K + l_.block - 1) / l_.block;
    l_.blob = l_.block * l_.bits / 8;
    const Tensor* b = info.constant_input(1);
    const Tensor* sc = info.constant_input(2);
    const Tensor* zp = info.has_input(3) ? info.constant_input(3) : nullptr;
    const Tensor* g = info.has_input(4) ? info.constant_input(4) : nullptr;
    const Tensor* bias = info.has_input(5) ? info.constant_input(5) : nullptr;
    const bool constant = b && sc && (zp || !info.has_input(3)) && (g || !info.has_input(4));
    if (fast) {
      if (fast::known_not_float(info, 0)) info.unsupported("the packed GEMM for a non-float32 A");
      if (!constant) info.unsupported("the packed GEMM: weights known only at run time");
      if (info.has_input(5) && (!bias || bias->dtype() != DType::Float32 || bias->numel() != l_.N))
        info.unsupported("the packed GEMM: a bias that is not a float32 constant of N values");
    }
    const ir::TypeInfo* zt = info.input_type(3);
    if (info.has_input(4) &&
        ((zp && zp->dtype() == DType::UInt8) || (zt && zt->elem == DType::UInt8)))
      info.unsupported("g_idx with packed uint8 zero_points");
    if (!constant) return;
    const std::vector<float> w = dequantize(l_, *b, *sc, zp, g, who_);
    std::vector<float> bv;
    if (bias && bias->dtype() == DType::Float32 && bias->numel() == l_.N)
      bv = peek_floats(*bias, who_, "bias");
    bias_in_proj_ = !bv.empty();
    proj_.emplace(info, w.data(), l_.K, l_.N, bias_in_proj_ ? bv.data() : nullptr, fast,
                  "MatMulNBits", /*trans=*/true);
  }
  bool prepacked(size_t i) const override {
    return proj_ && (i == 1 || i == 2 || i == 3 || i == 4 || (i == 5 && bias_in_proj_));
  }
  std::string impl() const override {
    return proj_ && proj_->packed() ? std::string("fast:") + proj_->isa() + "-dequantized-packed"
                                    : "reference";
  }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    PI_CHECK(a.rank() >= 1 && a.shape().back() == l_.K, ShapeMismatch, who_, ": A has shape ",
             shape_str(a.shape()), " but K is ", l_.K, " (A's last dimension must match)");
    Shape ys = a.shape();
    ys.back() = l_.N;
    const int64_t P = a.numel() / l_.K;
    const FloatIn as(a, who_, "A");
    FloatOut y(ctx, 0, a.dtype(), ys);
    if (proj_) {
      if (P > 0) proj_->run(as.data(), y.data(), P, ctx.threads());
    } else {
      const Tensor* zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
      const Tensor* g = ctx.has_input(4) ? &ctx.input(4) : nullptr;
      const std::vector<float> w = dequantize(l_, ctx.input(1), ctx.input(2), zp, g, who_);
      Projection::plain_nk(as.data(), w.data(), y.data(), P, l_.K, l_.N, ctx.threads());
    }
    if (ctx.has_input(5) && !bias_in_proj_) {
      const Tensor& bt = ctx.input(5);
      PI_CHECK(bt.numel() == l_.N, ShapeMismatch, who_, ": bias has ", bt.numel(),
               " values; it must have N=", l_.N);
      const std::vector<float> bv = peek_floats(bt, who_, "bias");
      float* yp = y.data();
      for (int64_t p = 0; p < P; ++p)
        for (int64_t n = 0; n < l_.N; ++n) yp[p * l_.N + n] += bv[n];
    }
    y.done();
  }

 private:
  NBitsLayout l_;
  std::string who_;
  std::optional<Projection> proj_;
  bool bias_in_proj_ = false;
};

class MatMulNBitsRef final : public MatMulNBitsKernel {
 public:
  explicit MatMulNBitsRef(const KernelInfo& info) : MatMulNBitsKernel(info, false) {}
};
class MatMulNBitsFast final : public MatMulNBitsKernel {
 public:
  explicit MatMulNBitsFast(const KernelInfo& info) : MatMulNBitsKernel(info, true) {}
};

}  // namespace

PI_MS_KERNEL(MatMulNBits, MatMulNBitsRef);
PI_MS_FAST_KERNEL(MatMulNBits, MatMulNBitsFast);

}  // namespace polyinfer::contrib
