#include "providers/cpu/fast/nhwc_conv_args.h"

#include "providers/cpu/fast/avx2_util.h"
#include "providers/cpu/fast/fast_util.h"

namespace polyinfer::fast {

void require_avx2_kernel(const KernelInfo& info, const char* who) {
#ifdef PI_X86_AVX2
  if (!avx2::supported()) info.unsupported(std::string(who) + ": needs AVX2 and FMA");
#else
  info.unsupported(std::string(who) + ": x86-64 only");
#endif
}

NhwcConvArgs NhwcConvArgs::read(const KernelInfo& info, const char* who) {
  const std::string what = who;
  require_float_input(info);
  NhwcConvArgs a;
  const Tensor* w = info.constant_input(1);
  if (!w || w->dtype() != DType::Float32 || w->rank() != 4)
    info.unsupported(what + ": constant float32 2-D weights only");
  a.M = w->shape()[0];
  a.C = w->shape()[1];
  a.KH = w->shape()[2];
  a.KW = w->shape()[3];
  a.weights = UnalignedFloats(w->peek_bytes());  // packed by every user: never copied first
  a.attrs = WindowAttrs::parse(info);
  a.act = FusedActivation::from(info);
  if (!avx2::covers(a.act.kind)) info.unsupported(what + ": this activation");
  a.has_z = info.has_input(3);
  if (info.has_input(2)) {
    const Tensor* b = info.constant_input(2);
    if (!b || b->dtype() != DType::Float32) info.unsupported(what + ": non-constant bias");
    PI_CHECK(b->numel() == a.M, ShapeMismatch, info.node().label(), ": bias has ", b->numel(),
             " values but the weights have ", a.M, " output channels");
    a.bias = b->data<float>();
  }
  return a;
}

void NhwcConvArgs::check_x(const Tensor& x, const std::string& label) const {
  PI_CHECK(x.dtype() == DType::Float32, InvalidArgument, label, ": X must be float32, got ",
           dtype_name(x.dtype()));
  const int64_t G = attrs.group, channels = C * G;
  PI_CHECK(x.rank() == 4 && x.shape()[3] == channels, ShapeMismatch, label, ": X has shape ",
           shape_str(x.shape()), " but the weights want [N, H, W, ", channels, "] (channels last",
           G > 1 ? ", " + std::to_string(G) + " groups of " + std::to_string(C) : std::string(),
           ")");
}

NhwcConvArgs::Run NhwcConvArgs::begin(KernelContext& ctx, const std::string& label) const {
  const Tensor& x = ctx.input(0);
  check_x(x, label);
  const int64_t N = x.dim(0), H = x.dim(1), W = x.dim(2);
  const WindowGeometry g = window_geometry(attrs, {H, W}, {KH, KW}, label);
  Tensor& y = ctx.output(0, DType::Float32, {N, g.out[0], g.out[1], M});
  return {x, N, H, W, g, y, residual(ctx, y, label)};
}

const float* NhwcConvArgs::residual(KernelContext& ctx, const Tensor& y,
                                    const std::string& label) const {
  if (!has_z) return nullptr;
  const Tensor& z = ctx.input(3);
  PI_CHECK(z.dtype() == DType::Float32 && z.shape() == y.shape(), ShapeMismatch, label,
           ": Z has shape ", shape_str(z.shape()), " but the output has ", shape_str(y.shape()));
  return z.data<float>();
}

}  // namespace polyinfer::fast
