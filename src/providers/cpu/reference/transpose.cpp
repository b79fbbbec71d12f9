// Transpose and the two ops that are a reshape-transpose-reshape (DepthToSpace, SpaceToDepth).
#include <string>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Writes `in`, read as a row-major array of shape `view`, into `out` transposed by `perm`
// (out's dimension i is view's dimension perm[i]). Walks the output in order and keeps the input
// offset in step, so no division per element.
template <class T>
void permute(const T* in, const Shape& view, const std::vector<int64_t>& perm, T* out) {
  const size_t r = view.size();
  const std::vector<int64_t> in_strides = strides_of(view);
  Shape dims(r);
  std::vector<int64_t> st(r);
  for (size_t i = 0; i < r; ++i) {
    dims[i] = view[perm[i]];
    st[i] = in_strides[perm[i]];
  }
  const int64_t total = shape_numel(dims);
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    out[i] = in[off];
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) {
        off += st[d];
        break;
      }
      off -= st[d] * (dims[d] - 1);
      idx[d] = 0;
    }
  }
}

void permute_tensor(const Tensor& x, const Shape& view, const std::vector<int64_t>& perm, Tensor& y,
                    const char* who) {
  dispatch(AllTypes{}, x.dtype(), who, [&](auto tag) {
    using T = typename decltype(tag)::type;
    permute<T>(x.data<T>(), view, perm, y.data<T>());
  });
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const KernelInfo& info)
      : label_(info.node().label()),
        perm_(info.attr_ints("perm")),
        has_perm_(info.has_attr("perm")) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int r = x.rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(r);
      for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
    }
    PI_CHECK(static_cast<int>(perm.size()) == r, InvalidArgument, label_, ": perm has ",
             perm.size(), " entries but the input ", x.describe(), " has rank ", r);
    std::vector<bool> seen(r, false);
    Shape out(r);
    for (int i = 0; i < r; ++i) {
      int64_t p = perm[i];
      PI_CHECK(p >= 0 && p < r && !seen[p], InvalidArgument, label_, ": perm ", int_list_str(perm),
               " is not a permutation of 0..", r - 1);
      seen[p] = true;
      out[i] = x.shape()[p];
    }
    Tensor& y = ctx.output(0, x.dtype(), out);
    permute_tensor(x, x.shape(), perm, y, label_.c_str());
  }

 private:
  std::string label_;
  std::vector<int64_t> perm_;
  bool has_perm_;
};

// DepthToSpace moves channel blocks into b×b spatial tiles. DCR reads the channel as
// (block_row, block_col, out_channel); CRD (opset 11+) as (out_channel, block_row, block_col).
class DepthToSpaceKernel final : public Kernel {
 public:
  explicit DepthToSpaceKernel(const KernelInfo& info)
      : label_(info.node().label()), b_(info.attr_int("blocksize")) {
    const std::string mode = info.attr_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") info.unsupported("mode=" + mode);
    crd_ = mode == "CRD";
    // A tensor holds at most 2^40 elements, so a valid blocksize is at most 2^20; the bound
    // keeps blocksize² and the output dimensions from overflowing.
    PI_CHECK(b_ > 0 && b_ <= (int64_t{1} << 20), InvalidModel, label_,
             ": blocksize must be in [1, 2^20], got ", b_);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() == 4, InvalidArgument, label_, ": expected a 4-D input, got ", x.describe());
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    PI_CHECK(c % (b_ * b_) == 0, ShapeMismatch, label_, ": channels of ", x.describe(),
             " are not divisible by blocksize² = ", b_ * b_);
    const int64_t oc = c / (b_ * b_);
    Shape view;
    std::vector<int64_t> perm;
    if (crd_) {
      view = {n, oc, b_, b_, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      view = {n, b_, b_, oc, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
    Tensor& y = ctx.output(0, x.dtype(), {n, oc, h * b_, w * b_});
    permute_tensor(x, view, perm, y, label_.c_str());
  }

 private:
  std::string label_;
  int64_t b_;
  bool crd_ = false;
};

// SpaceToDepth is DepthToSpace's inverse: output channel = (block_row, block_col, channel) in
// DCR mode, (channel, block_row, block_col) in CRD mode (opset 28).
class SpaceToDepthKernel final : public Kernel {
 public:
  explicit SpaceToDepthKernel(const KernelInfo& info)
      : label_(info.node().label()), b_(info.attr_int("blocksize")) {
    const std::string mode = info.attr_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") info.unsupported("mode=" + mode);
    crd_ = mode == "CRD";
    // A tensor holds at most 2^40 elements, so a valid blocksize is at most 2^20; the bound
    // keeps blocksize² and the output dimensions from overflowing.
    PI_CHECK(b_ > 0 && b_ <= (int64_t{1} << 20), InvalidModel, label_,
             ": blocksize must be in [1, 2^20], got ", b_);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.rank() == 4, InvalidArgument, label_, ": expected a 4-D input, got ", x.describe());
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    PI_CHECK(h % b_ == 0 && w % b_ == 0, ShapeMismatch, label_, ": height and width of ",
             x.describe(), " are not divisible by blocksize ", b_);
    const Shape view = {n, c, h / b_, b_, w / b_, b_};
    const std::vector<int64_t> perm =
        crd_ ? std::vector<int64_t>{0, 1, 3, 5, 2, 4} : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
    Tensor& y = ctx.output(0, x.dtype(), {n, c * b_ * b_, h / b_, w / b_});
    permute_tensor(x, view, perm, y, label_.c_str());
  }

 private:
  std::string label_;
  int64_t b_;
  bool crd_ = false;
};

}  // namespace

PI_CPU_KERNEL(Transpose, 1, 28, TransposeKernel);
PI_CPU_KERNEL(DepthToSpace, 1, 28, DepthToSpaceKernel);
PI_CPU_KERNEL(SpaceToDepth, 1, 28, SpaceToDepthKernel);

}  // namespace polyinfer
