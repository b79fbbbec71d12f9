// Float32 Transpose and Concat on Vulkan: both are strided copies (shaders/copy.comp), one
// dispatch for Transpose and one per input for Concat. Ranks up to 6; other dtypes are refused
// at creation (integer Concats of shapes belong on the CPU, where their consumers are).
#include "core/shape_util.h"
#include "providers/cpu/ops/op_util.h"
#include "providers/vulkan/ops/common.h"

namespace polyinfer::vulkan {
namespace {

struct CopyParams {
  uint32_t n, rank, off_x, off_y;
  uint32_t dims[kMaxRank], sx[kMaxRank], sy[kMaxRank];
};
static_assert(sizeof(CopyParams) == 88, "matches the push-constant block of copy.comp");

std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

// Records one copy of `dims` elements from x (strides sx) to y (strides sy, from element y0).
void record_copy(Context& ctx, const Pipeline& pl, const Tensor& x, const Tensor& y,
                 const Shape& dims, const std::vector<int64_t>& sx,
                 const std::vector<int64_t>& sy, int64_t y0) {
  const int64_t n = shape_numel(dims);
  if (n == 0) return;
  CopyParams p{};
  const BufferRef rx = ctx.find(x.raw_data()), ry = ctx.find(y.raw_data());
  p.n = u32(n);
  p.rank = u32(dims.size());
  p.off_x = element_offset(rx);
  p.off_y = element_offset(ry) + u32(y0);
  for (size_t d = 0; d < dims.size(); ++d) {
    p.dims[d] = u32(dims[d]);
    p.sx[d] = u32(sx[d]);
    p.sy[d] = u32(sy[d]);
  }
  ctx.dispatch(pl, {rx.buffer, ry.buffer}, &p, groups_for(n, ctx));
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const KernelInfo& info)
      : perm_(info.attr_ints("perm")), has_perm_(info.has_attr("perm")) {
    require_float32(info);
    ctx_ = Context::get();
    pipeline_ = &ctx_->pipeline("copy", 2, sizeof(CopyParams));
  }
  std::string impl() const override { return "vulkan:copy"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x);
    const int r = x.rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(r);
      for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
    }
    PI_CHECK(static_cast<int>(perm.size()) == r, InvalidArgument, who, ": perm has ",
             perm.size(), " entries but the input ", x.describe(), " has rank ", r);
    std::vector<bool> seen(r, false);
    Shape out(r);
    const std::vector<int64_t> xs = contiguous_strides(x.shape());
    std::vector<int64_t> sx(r);
    for (int i = 0; i < r; ++i) {
      const int64_t p = perm[i];
      PI_CHECK(p >= 0 && p < r && !seen[p], InvalidArgument, who, ": perm ", int_list_str(perm),
               " is not a permutation of 0..", r - 1);
      seen[p] = true;
      out[i] = x.shape()[p];
      sx[i] = xs[p];
    }
    Tensor& y = kc.output(0, DType::Float32, out);
    record_copy(*ctx_, *pipeline_, x, y, out, sx, contiguous_strides(out), 0);
  }

 private:
  std::vector<int64_t> perm_;
  bool has_perm_;
  std::shared_ptr<Context> ctx_;
  const Pipeline* pipeline_ = nullptr;
};

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info)
      : axis_(info.opset() < 4 ? info.attr_int("axis", 1) : info.attr_int("axis")) {
    require_float32(info);
    ctx_ = Context::get();
    pipeline_ = &ctx_->pipeline("copy", 2, sizeof(CopyParams));
  }
  std::string impl() const override { return "vulkan:copy"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    PI_CHECK(kc.num_inputs() > 0, InvalidModel, who, ": needs at least one input");
    const Tensor& first = kc.input(0);
    const int r = first.rank();
    PI_CHECK(r > 0, InvalidArgument, who, ": cannot concatenate scalars");
    const int64_t axis = normalize_axis(axis_, r, who.c_str());
    Shape out = first.shape();
    out[axis] = 0;
    for (size_t i = 0; i < kc.num_inputs(); ++i) {
      const Tensor& t = kc.input(i);
      check_input(kc, t);
      PI_CHECK(t.rank() == r, ShapeMismatch, who, ": input ", i, " ", t.describe(),
               " has another rank than input 0 ", first.describe());
      for (int d = 0; d < r; ++d)
        PI_CHECK(d == axis || t.shape()[d] == first.shape()[d], ShapeMismatch, who, ": input ",
                 i, " ", t.describe(), " does not match input 0 ", first.describe(),
                 " outside axis ", axis);
      out[axis] += t.shape()[axis];
    }
    Tensor& y = kc.output(0, DType::Float32, out);
    check_input(kc, y);
    const std::vector<int64_t> ys = contiguous_strides(out);
    int64_t at = 0;  // where the next input starts along the axis
    for (size_t i = 0; i < kc.num_inputs(); ++i) {
      const Tensor& t = kc.input(i);
      record_copy(*ctx_, *pipeline_, t, y, t.shape(), contiguous_strides(t.shape()), ys,
                  at * ys[axis]);
      at += t.shape()[axis];
    }
  }

 private:
  int64_t axis_;
  std::shared_ptr<Context> ctx_;
  const Pipeline* pipeline_ = nullptr;
};

PI_REGISTER_KERNEL("vulkan", "", Transpose, 1, 23, TransposeKernel);
PI_REGISTER_KERNEL("vulkan", "", Concat, 1, 23, ConcatKernel);

}  // namespace
}  // namespace polyinfer::vulkan
