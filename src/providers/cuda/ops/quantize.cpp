// Linear quantization on CUDA (quant.cu): QuantizeLinear (float32, float16 or bfloat16 to uint8
// or int8), DequantizeLinear (uint8, int8 or int32 to float32), per tensor or per axis, and the
// optimizer's ai.polyinfer QLinearAdd. The formulas and roundings are the CPU reference's
// (providers/cpu/reference/quantize.cpp), so both give the same bytes. Scales and zero points must
// be constants (qparams.h); refused at creation otherwise, and for other dtypes.
#include "core/shape_util.h"
#include "providers/cuda/ops/qparams.h"

namespace polyinfer::cuda {
namespace {

// Scale and zero point of a Quantize/DequantizeLinear, on the device, with the axis they run
// along when there is one value per index.
struct AxisParams {
  Tensor scale, zp;
  int64_t count = 1, axis = 1;
  std::string who;

  AxisParams(const KernelInfo& info, DType zp_type) : who(info.node().label()) {
    axis = info.attr_int("axis", 1);
    if (info.node().attr("block_size") != nullptr) info.unsupported("blocked quantization");
    const Tensor* s = info.constant_input(1);
    if (s && s->dtype() != DType::Float32)
      info.unsupported(std::string("a scale of dtype ") + dtype_name(s->dtype()) +
                       " (the CUDA kernel takes float32)");
    const std::vector<double> sv = constant_values(info, 1, "a scale", s ? s->numel() : 0);
    count = static_cast<int64_t>(sv.size());
    std::vector<double> zv(sv.size(), 0.0);
    if (info.has_input(2)) {
      const Tensor* z = info.constant_input(2);
      if (z && z->dtype() != zp_type)
        info.unsupported(std::string("a zero point of dtype ") + dtype_name(z->dtype()) +
                         " where " + dtype_name(zp_type) + " was expected");
      zv = constant_values(info, 2, "a zero point", count);
      if (zv.size() != sv.size()) info.unsupported("a zero point of another length than the scale");
    }
    scale = device_array(std::vector<float>(sv.begin(), sv.end()));
    zp = device_array(std::vector<int32_t>(zv.begin(), zv.end()));
  }

  // The layout over x: the CPU's param_layout rules and errors.
  QAxis layout(const Tensor& x) const {
    QAxis l;
    if (count == 1) return l;
    const int64_t a = normalize_axis(axis, x.rank(), who.c_str());
    PI_CHECK(count == x.dim(static_cast<int>(a)), ShapeMismatch, who, ": scale has ", count,
             " values, one per index of axis ", a, " of ", x.describe(), " expected");
    l.count = count;
    for (int d = static_cast<int>(a) + 1; d < x.rank(); ++d) l.inner *= x.dim(d);
    return l;
  }
};

// The zero point's dtype gives Y's (uint8 without one).
DType quantized_type(const KernelInfo& info) {
  if (!info.has_input(2)) return DType::UInt8;
  return require_q8(info, 2, "a zero point");
}

class QuantizeLinearKernel final : public Kernel {
 public:
  explicit QuantizeLinearKernel(const KernelInfo& info)
      : ctx_(Context::get()),
        dtype_(require_float(info, 1)),
        yt_(quantized_type(info)),
        params_(info, yt_) {}
  std::string impl() const override { return "cuda:quantize"; }
  bool prepacked(size_t i) const override { return i > 0; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    Tensor& y = kc.output(0, yt_, x.shape());
    launch_quantize(elem_of(dtype_), x.raw_data(), qelem_of(yt_), y.raw_data(), x.numel(),
                    device_ptr<float>(params_.scale), device_ptr<int32_t>(params_.zp),
                    params_.layout(x), ctx_.max_grid_x(), ctx_.stream());
    check_launch(params_.who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_, yt_;
  AxisParams params_;
};

DType dequantized_source(const KernelInfo& info) {
  const DType d = known_dtype(info, 0);
  if (!is_q8(d) && d != DType::Int32)
    info.unsupported(std::string("input of dtype ") +
                     (d == DType::Undefined ? std::string("unknown at load") : dtype_name(d)) +
                     " (the CUDA kernel takes uint8, int8 or int32)");
  return d;
}

class DequantizeLinearKernel final : public Kernel {
 public:
  explicit DequantizeLinearKernel(const KernelInfo& info)
      : ctx_(Context::get()), xt_(dequantized_source(info)), params_(info, xt_) {}
  std::string impl() const override { return "cuda:dequantize"; }
  bool prepacked(size_t i) const override { return i > 0; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, xt_);
    Tensor& y = kc.output(0, DType::Float32, x.shape());
    launch_dequantize(qelem_of(xt_), x.raw_data(), y.data<float>(), x.numel(),
                      device_ptr<float>(params_.scale), device_ptr<int32_t>(params_.zp),
                      params_.layout(x), ctx_.max_grid_x(), ctx_.stream());
    check_launch(params_.who.c_str());
  }

 private:
  Context& ctx_;
  DType xt_;
  AxisParams params_;
};

// ai.polyinfer QLinearAdd(A, sa, za, B, sb, zb, sc, zc), A and B of one shape.
class QLinearAddKernel final : public Kernel {
 public:
  explicit QLinearAddKernel(const KernelInfo& info)
      : ctx_(Context::get()),
        at_(require_q8(info, 0, "A")),
        bt_(require_q8(info, 3, "B")),
        ct_(require_q8(info, 7, "zc")) {
    require_zero_point_type(info, 2, at_, "za");
    require_zero_point_type(info, 5, bt_, "zb");
    p_.sa = static_cast<float>(constant_scale(info, 1, "sa")[0]);
    p_.za = static_cast<int32_t>(constant_values(info, 2, "za")[0]);
    p_.sb = static_cast<float>(constant_scale(info, 4, "sb")[0]);
    p_.zb = static_cast<int32_t>(constant_values(info, 5, "zb")[0]);
    p_.sc = static_cast<float>(constant_scale(info, 6, "sc")[0]);
    p_.zc = static_cast<int32_t>(constant_values(info, 7, "zc")[0]);
  }
  std::string impl() const override { return "cuda:qlinear-add"; }
  bool prepacked(size_t i) const override { return i != 0 && i != 3; }

  void run(KernelContext& kc) override {
    const Tensor& a = kc.input(0);
    const Tensor& b = kc.input(3);
    check_dtype(kc, a, at_);
    check_dtype(kc, b, bt_);
    PI_CHECK(a.shape() == b.shape(), ShapeMismatch, kc.node().label(), ": A ", a.describe(),
             " and B ", b.describe(), " must have the same shape");
    Tensor& c = kc.output(0, ct_, a.shape());
    launch_qlinear_add(qelem_of(at_), a.raw_data(), qelem_of(bt_), b.raw_data(), qelem_of(ct_),
                       c.raw_data(), a.numel(), p_, ctx_.max_grid_x(), ctx_.stream());
    check_launch(kc.node().label().c_str());
  }

 private:
  Context& ctx_;
  DType at_, bt_, ct_;
  QAdd p_;
};

}  // namespace

// Opset 19-20 only add float8 types and `saturate`; 21 adds blocks and 16-bit types.
PI_CUDA_KERNEL(QuantizeLinear, 10, 20, QuantizeLinearKernel);
PI_CUDA_KERNEL(DequantizeLinear, 10, 20, DequantizeLinearKernel);
PI_REGISTER_KERNEL("cuda", "ai.polyinfer", QLinearAdd, 1, 1, QLinearAddKernel);

}  // namespace polyinfer::cuda
