// Transpose and Concat on OpenCL: both are strided copies (kernels/copy.cl), one dispatch for
// Transpose and one per input for Concat, of any dtype of 1, 2, 4 or 8 bytes (moved as bits:
// the integer Concats of shape arithmetic too). Ranks up to 6; other dtypes are refused at
// creation.
#include "core/shape_util.h"
#include "ops/shape_rules.h"
#include "providers/opencl/ops/copy.h"

namespace polyinfer::opencl {
namespace {

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const KernelInfo& info)
      : perm_(info.attr_ints("perm")), has_perm_(info.has_attr("perm")) {
    dtype_ = require_movable(info);
    ctx_ = Context::get();
    kernel_ = copy_kernel(*ctx_, dtype_);
  }
  std::string impl() const override { return "opencl:copy"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_input(kc, x, kMaxRank, dtype_);
    const int r = x.rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(r);
      for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
    }
    PI_CHECK(static_cast<int>(perm.size()) == r, InvalidArgument, who, ": perm has ", perm.size(),
             " entries but the input ", x.describe(), " has rank ", r);
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
    Tensor& y = kc.output(0, dtype_, out);
    enqueue_copy(*ctx_, kernel_, x, y, out, sx, contiguous_strides(out), 0);
  }

 private:
  std::vector<int64_t> perm_;
  bool has_perm_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  cl_kernel kernel_ = nullptr;
};

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info)
      : axis_(info.opset() < 4 ? info.attr_int("axis", 1) : info.attr_int("axis")) {
    dtype_ = require_movable(info);
    ctx_ = Context::get();
    kernel_ = copy_kernel(*ctx_, dtype_);
  }
  std::string impl() const override { return "opencl:copy"; }

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
      check_input(kc, t, kMaxRank, dtype_);
      PI_CHECK(t.rank() == r, ShapeMismatch, who, ": input ", i, " ", t.describe(),
               " has another rank than input 0 ", first.describe());
      for (int d = 0; d < r; ++d)
        PI_CHECK(d == axis || t.shape()[d] == first.shape()[d], ShapeMismatch, who, ": input ", i,
                 " ", t.describe(), " does not match input 0 ", first.describe(), " outside axis ",
                 axis);
      out[axis] += t.shape()[axis];
    }
    Tensor& y = kc.output(0, dtype_, out);
    check_input(kc, y, kMaxRank, dtype_);
    const std::vector<int64_t> ys = contiguous_strides(out);
    int64_t at = 0;  // where the next input starts along the axis
    for (size_t i = 0; i < kc.num_inputs(); ++i) {
      const Tensor& t = kc.input(i);
      enqueue_copy(*ctx_, kernel_, t, y, t.shape(), contiguous_strides(t.shape()), ys,
                   at * ys[axis]);
      at += t.shape()[axis];
    }
  }

 private:
  int64_t axis_;
  std::shared_ptr<Context> ctx_;
  DType dtype_ = DType::Float32;
  cl_kernel kernel_ = nullptr;
};

PI_REGISTER_KERNEL("opencl", "", Transpose, 1, 28, TransposeKernel);
PI_REGISTER_KERNEL("opencl", "", Concat, 1, 28, ConcatKernel);

}  // namespace
}  // namespace polyinfer::opencl
