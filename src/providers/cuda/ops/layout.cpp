// Data movement on CUDA, float32, float16, bfloat16 and 8-bit (bit-exact copies): Transpose,
// Slice, Split, Expand (strided copies, layout.cu), Concat (one cudaMemcpy2DAsync per input) and
// Gather (layout.cu). The parameter rules are the CPU kernels' (plan_slice, plan_split, the
// Gather index check), so both agree on clamping and on errors. Starts/ends/axes/steps/split
// sizes that are constants are kept on the host (reported prepacked); computed ones are read back
// from the device, which waits for the queued work. Refused at creation: other dtypes (integer
// tensors other than 8-bit quantized values are shape arithmetic, which stays on the CPU), ranks
// above 8.
#include <numeric>

#include "core/shape_util.h"
#include "ops/gather.h"
#include "ops/shape_rules.h"
#include "ops/slice.h"
#include "ops/split.h"
#include "providers/cuda/ops/layout_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

std::vector<int64_t> packed_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

void check_rank(const KernelContext& kc, const Tensor& t) {
  PI_CHECK(t.rank() <= kLayoutMaxRank, UnsupportedOp, kc.node().label(), ": rank ", t.rank(),
           " (the CUDA layout kernels take up to ", kLayoutMaxRank, ")");
}

// Copies the view of x with output dims `out`, per-dimension input strides and base offset.
void copy_view(Context& ctx, const Tensor& x, Tensor& y, const Shape& out,
               const std::vector<int64_t>& stride, int64_t base) {
  if (y.numel() == 0) return;
  StridedView v;
  v.rank = static_cast<int>(out.size());
  for (int d = 0; d < v.rank; ++d) {
    v.dims[d] = out[d];
    v.stride[d] = stride[d];
  }
  v.base = base;
  launch_strided_copy(dtype_size(x.dtype()), x.raw_data(), y.raw_data(), y.numel(), v,
                      ctx.max_grid_x(), ctx.stream());
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const KernelInfo& info)
      : ctx_(Context::get()), perm_(info.attr_ints("perm")) {
    dtype_ = require_float_or_q8(info, 1, kLayoutMaxRank);
  }
  std::string impl() const override { return "cuda:transpose"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    check_rank(kc, x);
    const int r = x.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty()) {
      perm.resize(static_cast<size_t>(r));
      for (int d = 0; d < r; ++d) perm[d] = r - 1 - d;
    }
    PI_CHECK(static_cast<int>(perm.size()) == r, InvalidArgument, who, ": perm has ", perm.size(),
             " entries for an input of rank ", r);
    std::vector<bool> seen(static_cast<size_t>(r), false);
    const auto in_st = packed_strides(x.shape());
    Shape out(static_cast<size_t>(r));
    std::vector<int64_t> st(static_cast<size_t>(r));
    for (int d = 0; d < r; ++d) {
      const int64_t p = normalize_axis(perm[d], r, who.c_str());
      PI_CHECK(!seen[p], InvalidArgument, who, ": perm repeats axis ", perm[d]);
      seen[p] = true;
      out[d] = x.shape()[p];
      st[d] = in_st[p];
    }
    Tensor& y = kc.output(0, dtype_, out);
    copy_view(ctx_, x, y, out, st, 0);
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  std::vector<int64_t> perm_;
};

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info) : ctx_(Context::get()), attrs_(info) {
    dtype_ = require_float_or_q8(info, 1, kLayoutMaxRank);
    constants_.keep(info, 1);
  }
  std::string impl() const override { return "cuda:slice"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    check_rank(kc, x);
    HostConstantsContext hc(kc, constants_);
    const SlicePlan p = plan_slice(attrs_, hc);
    const auto in_st = packed_strides(x.shape());
    std::vector<int64_t> st(in_st.size());
    int64_t base = 0;
    for (size_t d = 0; d < st.size(); ++d) {
      st[d] = in_st[d] * p.step[d];
      base += p.first[d] * in_st[d];
    }
    Tensor& y = kc.output(0, dtype_, p.out);
    copy_view(ctx_, x, y, p.out, st, base);
    check_launch(kc.node().label().c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  SliceAttrs attrs_;
  HostConstants constants_;
};

class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const KernelInfo& info) : ctx_(Context::get()), attrs_(info) {
    dtype_ = require_float_or_q8(info, 1, kLayoutMaxRank);
    constants_.keep(info, 1);
  }
  std::string impl() const override { return "cuda:split"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    check_rank(kc, x);
    HostConstantsContext hc(kc, constants_);
    const SplitPlan p = plan_split(attrs_, hc);
    const auto st = packed_strides(x.shape());
    int64_t offset = 0;
    for (size_t o = 0; o < p.sizes.size(); ++o) {
      Shape out = x.shape();
      out[p.axis] = p.sizes[o];
      if (kc.wants_output(o)) {
        Tensor& y = kc.output(o, dtype_, out);
        copy_view(ctx_, x, y, out, st, offset * st[p.axis]);
      }
      offset += p.sizes[o];
    }
    check_launch(kc.node().label().c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  SplitAttrs attrs_;
  HostConstants constants_;
};

// Expand: the CPU's output shape rule (expand_shape: bidirectional broadcast), broadcast
// dimensions read with stride 0.
class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const KernelInfo& info) : ctx_(Context::get()) {
    dtype_ = require_float_or_q8(info, 1, kLayoutMaxRank);
    constants_.keep(info, 1);
  }
  std::string impl() const override { return "cuda:expand"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    HostConstantsContext hc(kc, constants_);
    const Shape out = expand_shape(x.shape(), read_int_list(hc.input(1), who.c_str()), who);
    PI_CHECK(out.size() <= static_cast<size_t>(kLayoutMaxRank), UnsupportedOp, who,
             ": output rank ", out.size(), " (the CUDA layout kernels take up to ", kLayoutMaxRank,
             ")");
    Tensor& y = kc.output(0, dtype_, out);
    copy_view(ctx_, x, y, out, broadcast_strides(x.shape(), out), 0);
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  HostConstants constants_;
};

// Concat: input k's rows of in_axis*inner elements go, outer times, to column offset
// sum(previous in_axis)*inner of the output's rows of out_axis*inner: a 2-D copy each.
class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info)
      : ctx_(Context::get()), axis_(info.attr_int("axis", 0)) {
    dtype_ = require_float_or_q8(info);
  }
  std::string impl() const override { return "cuda:concat"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& first = kc.input(0);
    check_dtype(kc, first, dtype_);
    const int r = first.rank();
    PI_CHECK(r > 0, InvalidArgument, who, ": Concat of scalars");
    const int64_t axis = normalize_axis(axis_, r, who.c_str());
    Shape out = first.shape();
    out[axis] = 0;
    for (size_t i = 0; i < kc.num_inputs(); ++i) {
      const Tensor& t = kc.input(i);
      check_dtype(kc, t, dtype_);
      PI_CHECK(t.rank() == r, ShapeMismatch, who, ": input ", i, " ", t.describe(),
               " has another rank than input 0 ", first.describe());
      for (int d = 0; d < r; ++d)
        PI_CHECK(d == axis || t.shape()[d] == first.shape()[d], ShapeMismatch, who, ": input ", i,
                 " ", t.describe(), " differs from input 0 ", first.describe(), " outside axis ",
                 axis);
      out[axis] += t.shape()[axis];
    }
    Tensor& y = kc.output(0, dtype_, out);
    if (y.numel() == 0) return;
    const int64_t outer = shape_numel(Shape(out.begin(), out.begin() + axis));
    const int64_t inner = shape_numel(Shape(out.begin() + axis + 1, out.end()));
    const size_t es = dtype_size(dtype_);
    const size_t row = static_cast<size_t>(out[axis] * inner) * es;
    int64_t col = 0;
    for (size_t i = 0; i < kc.num_inputs(); ++i) {
      const Tensor& t = kc.input(i);
      const size_t width = static_cast<size_t>(t.shape()[axis] * inner) * es;
      char* dst = static_cast<char*>(y.raw_data()) + static_cast<size_t>(col * inner) * es;
      // One row (axis 0, say): a plain copy, which has no pitch limit.
      if (width > 0 && outer == 1)
        PI_CUDA_CHECK(
            cudaMemcpyAsync(dst, t.raw_data(), width, cudaMemcpyDeviceToDevice, ctx_.stream()));
      else if (width > 0 && outer > 1)
        PI_CUDA_CHECK(cudaMemcpy2DAsync(dst, row, t.raw_data(), width, width,
                                        static_cast<size_t>(outer), cudaMemcpyDeviceToDevice,
                                        ctx_.stream()));
      col += t.shape()[axis];
    }
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  int64_t axis_;
};

// Gather: indices checked on the host with the CPU's rule (constant ones once, kept on the host
// and on the device; computed ones copied back each run, which waits for the queued work).
class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const KernelInfo& info)
      : ctx_(Context::get()), axis_(info.attr_int("axis", 0)) {
    dtype_ = require_float_or_q8(info, 1, kLayoutMaxRank);
    DType it = DType::Undefined;
    if (const Tensor* c = info.constant_input(1)) {
      it = c->dtype();
    } else if (const ir::TypeInfo* t = info.input_type(1);
               t && t->kind == ir::TypeInfo::Kind::Tensor) {
      it = t->elem;
    }
    if (it != DType::Int64 && it != DType::Int32)
      info.unsupported(std::string("indices of dtype ") + dtype_name(it) +
                       " (the CUDA Gather takes int32 or int64 known at load time)");
    if (const Tensor* c = info.constant_input(1)) {
      host_ = c->to(Device::cpu()).clone();
      if (host_.numel() > 0) device_ = host_.to(Device{DeviceKind::CUDA, 0});
    }
  }
  std::string impl() const override { return "cuda:gather"; }
  bool prepacked(size_t i) const override { return i == 1 && host_.defined(); }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, dtype_);
    check_rank(kc, x);
    const int64_t axis = gather_axis(x, axis_, who);
    const int64_t dim = x.shape()[axis];
    Tensor fetched, uploaded;
    const Tensor* host = &host_;
    const Tensor* dev = &device_;
    if (!host_.defined()) {
      dev = &kc.input(1);
      fetched = dev->to(Device::cpu());
      host = &fetched;
      if (dev->device().kind != DeviceKind::CUDA && dev->numel() > 0) {
        uploaded = dev->to(Device{DeviceKind::CUDA, 0});
        dev = &uploaded;
      }
    }
    PI_CHECK(host->dtype() == DType::Int64 || host->dtype() == DType::Int32, UnsupportedOp, who,
             ": indices of dtype ", dtype_name(host->dtype()));
    read_indices(*host, dim, who);
    const Shape out = gather_shape(x.shape(), host->shape(), axis);
    Tensor& y = kc.output(0, dtype_, out);
    if (y.numel() == 0) return;
    const int64_t outer = shape_numel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const int64_t inner = shape_numel(Shape(x.shape().begin() + axis + 1, x.shape().end()));
    launch_gather(dtype_size(dtype_), x.raw_data(), dev->raw_data(), host->dtype() == DType::Int64,
                  y.raw_data(), outer, dim, host->numel(), inner, ctx_.max_grid_x(), ctx_.stream());
    check_launch(who.c_str());
  }

 private:
  Context& ctx_;
  DType dtype_ = DType::Float32;
  int64_t axis_;
  Tensor host_, device_;
};

PI_CUDA_KERNEL(Transpose, 1, 28, TransposeKernel);
PI_CUDA_KERNEL(Slice, 1, 28, SliceKernel);
PI_CUDA_KERNEL(Split, 1, 28, SplitKernel);
PI_CUDA_KERNEL(Concat, 1, 28, ConcatKernel);
PI_CUDA_KERNEL(Expand, 8, 28, ExpandKernel);
PI_CUDA_KERNEL(Gather, 1, 28, GatherKernel);

}  // namespace
}  // namespace polyinfer::cuda
