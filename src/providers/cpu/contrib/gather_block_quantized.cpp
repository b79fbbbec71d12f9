// com.microsoft GatherBlockQuantized: Gather from a block-quantized table (onnxruntime-genai's
// quantized embeddings), dequantized on the way out.
//
//   data: uint8 [V, ..., C / (8 / bits)], bits = 2, 4 or 8 values per byte packed along the last
//   dimension, low bits first; logically [V, ..., C]
//   indices (int32/int64, any shape): rows along gather_axis 0; negative ones count from the
//   end, and one outside [-V, V) gives a row of zeros (as ONNX Runtime: not an error)
//   scales [V, ..., ceil(C / block_size)] (float32, float16, bfloat16: the output's dtype)
//   zero_points: uint8 packed as data (default 2^(bits-1))
//   output = (q - zero_point) * scale, shaped indices.shape + [..., C]
// Implemented: uint8 data quantized along its last axis (quantize_axis = rank - 1), gathered on
// axis 0 — the layout ONNX Runtime's CPU kernel takes for uint8. The int4/uint4 and float8/float4
// data types are not (polyinfer's tensors have no 4-bit or 8-bit float dtypes yet).
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/contrib/contrib_util.h"

namespace polyinfer::contrib {
namespace {

class GatherBlockQuantizedKernel final : public Kernel {
 public:
  explicit GatherBlockQuantizedKernel(const KernelInfo& info)
      : bits_(info.attr_int("bits", 4)),
        block_(info.attr_int("block_size", 128)),
        gather_axis_(info.attr_int("gather_axis", 0)),
        quant_axis_(info.attr_int("quantize_axis", 1)),
        who_(info.node().label()) {
    if (bits_ != 2 && bits_ != 4 && bits_ != 8)
      info.unsupported("bits=" + std::to_string(bits_) + " (2, 4 and 8 are)");
    if (block_ < 16 || (block_ & (block_ - 1)) != 0)
      info.unsupported("block_size=" + std::to_string(block_) + " (a power of 2 from 16 on)");
    if (gather_axis_ != 0) info.unsupported("gather_axis other than 0");
    const ir::TypeInfo* t = info.input_type(0);
    if (t && t->kind == ir::TypeInfo::Kind::Tensor && t->elem != DType::Undefined &&
        t->elem != DType::UInt8)
      info.unsupported(std::string("data of dtype ") + dtype_name(t->elem) + " (uint8 is)");
  }

  void run(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& idx_t = ctx.input(1);
    const Tensor& scales = ctx.input(2);
    PI_CHECK(data.dtype() == DType::UInt8, UnsupportedOp, who_, ": data of dtype ",
             dtype_name(data.dtype()), " is not supported (uint8 is)");
    const int r = data.rank();
    PI_CHECK(r >= 2, ShapeMismatch, who_, ": data must have rank >= 2, got ",
             shape_str(data.shape()));
    const int64_t qa = quant_axis_ < 0 ? quant_axis_ + r : quant_axis_;
    PI_CHECK(qa == r - 1, UnsupportedOp, who_, ": quantize_axis ", quant_axis_,
             " is not implemented (the last axis is)");
    const int64_t per = 8 / bits_;
    const int64_t V = data.shape()[0], Cp = data.shape().back(), C = Cp * per;
    const int64_t R = data.numel() / std::max<int64_t>(1, V * Cp);  // rows per entry
    const int64_t nb = (C + block_ - 1) / block_;
    Shape want_scales = data.shape();
    want_scales.back() = nb;
    PI_CHECK(scales.shape() == want_scales, ShapeMismatch, who_, ": scales has shape ",
             shape_str(scales.shape()), "; it must be ", shape_str(want_scales));
    const FloatIn sc(scales, who_, "scales");
    std::vector<float> zpv;
    const uint8_t* zp = nullptr;
    int64_t zp_row = 0;
    if (ctx.has_input(3)) {
      const Tensor& z = ctx.input(3);
      zp_row = (nb + per - 1) / per;
      Shape want = data.shape();
      want.back() = zp_row;
      PI_CHECK(z.dtype() == DType::UInt8 && z.shape() == want, ShapeMismatch, who_,
               ": zero_points ", z.describe(), " must be uint8 ", shape_str(want));
      zp = z.data<uint8_t>();
    }
    const std::vector<int64_t> idx = read_index_values(idx_t, who_, "indices");
    Shape ys = idx_t.shape();
    ys.insert(ys.end(), data.shape().begin() + 1, data.shape().end());
    ys.back() = C;
    FloatOut y(ctx, 0, scales.dtype(), ys);
    float* yp = y.data();
    const uint8_t* q = data.data<uint8_t>();
    const int mask = (1 << bits_) - 1;
    const float def_zp = static_cast<float>(1 << (bits_ - 1));
    const int64_t slice = R * C;
    for (size_t i = 0; i < idx.size(); ++i) {
      float* out = yp + static_cast<int64_t>(i) * slice;
      int64_t v = idx[i];
      if (v < 0) v += V;
      if (v < 0 || v >= V) {
        std::fill(out, out + slice, 0.0f);
        continue;
      }
      for (int64_t rr = 0; rr < R; ++rr) {
        const int64_t row = v * R + rr;
        const uint8_t* qr = q + row * Cp;
        const float* sr = sc.data() + row * nb;
        for (int64_t c = 0; c < C; ++c) {
          const int64_t bit = c * bits_, blk = c / block_;
          const int val = (qr[bit / 8] >> (bit % 8)) & mask;
          float z = def_zp;
          if (zp) {
            const int64_t zb = blk * bits_;
            z = static_cast<float>((zp[row * zp_row + zb / 8] >> (zb % 8)) & mask);
          }
          out[rr * C + c] = (static_cast<float>(val) - z) * sr[blk];
        }
      }
    }
    y.done();
  }

 private:
  int64_t bits_, block_, gather_axis_, quant_axis_;
  std::string who_;
};

}  // namespace

PI_MS_KERNEL(GatherBlockQuantized, GatherBlockQuantizedKernel);

}  // namespace polyinfer::contrib
