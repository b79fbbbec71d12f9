// Ops that only change how a tensor's elements are indexed (Reshape, Flatten, Squeeze,
// Unsqueeze) return views of their input; Shape and Size read only the shape.
#include <algorithm>
#include <string>

#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Reshape-1..4 take the target shape as an attribute, 5+ as an input; allowzero exists from 14.
class ReshapeKernel final : public Kernel {
 public:
  explicit ReshapeKernel(const KernelInfo& info)
      : label_(info.node().label()),
        from_attr_(info.opset() < 5),
        allowzero_(info.attr_int("allowzero", 0) != 0) {
    if (from_attr_) shape_attr_ = info.attr_ints("shape");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> req =
        from_attr_ ? shape_attr_ : read_int_list(ctx.input(1), label_.c_str());
    Shape out(req.size());
    int64_t infer_at = -1;
    int64_t known = 1;
    bool has_zero = false;
    for (size_t i = 0; i < req.size(); ++i) {
      int64_t d = req[i];
      if (d == -1) {
        PI_CHECK(infer_at < 0, InvalidArgument, label_, ": shape ", int_list_str(req),
                 " has more than one -1");
        infer_at = static_cast<int64_t>(i);
        continue;
      }
      PI_CHECK(d >= 0, InvalidArgument, label_, ": shape ", int_list_str(req),
               " has a negative dimension other than -1");
      if (d == 0 && !allowzero_) {
        PI_CHECK(i < x.shape().size(), InvalidArgument, label_, ": shape ", int_list_str(req),
                 " copies dimension ", i, " (0) but the input ", x.describe(), " has rank ",
                 x.rank());
        d = x.shape()[i];
      }
      has_zero = has_zero || d == 0;
      out[i] = d;
      known = shape_numel({known, d});  // checks overflow
    }
    if (infer_at >= 0) {
      PI_CHECK(!(allowzero_ && has_zero), InvalidArgument, label_, ": shape ", int_list_str(req),
               " has both 0 and -1, which allowzero=1 forbids");
      PI_CHECK(known != 0, InvalidArgument, label_, ": cannot infer the -1 in shape ",
               int_list_str(req), " when the other dimensions multiply to 0");
      PI_CHECK(x.numel() % known == 0, ShapeMismatch, label_, ": cannot reshape ", x.describe(),
               " to ", int_list_str(req));
      out[infer_at] = x.numel() / known;
    }
    PI_CHECK(shape_numel(out) == x.numel(), ShapeMismatch, label_, ": cannot reshape ",
             x.describe(), " to ", shape_str(out));
    ctx.set_output(0, x.reshaped(out));
  }

 private:
  std::string label_;
  bool from_attr_;
  bool allowzero_;
  std::vector<int64_t> shape_attr_;
};

class FlattenKernel final : public Kernel {
 public:
  explicit FlattenKernel(const KernelInfo& info)
      : label_(info.node().label()), axis_(info.attr_int("axis", 1)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    // axis is in [-r, r] and a negative one counts from r (not r + 1 as for Unsqueeze).
    const int64_t r = x.rank();
    PI_CHECK(axis_ >= -r && axis_ <= r, InvalidArgument, label_, ": axis ", axis_,
             " is out of range for ", x.describe());
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    const Shape& s = x.shape();
    const size_t a = static_cast<size_t>(axis);
    ctx.set_output(0, x.reshaped({product(s, 0, a), product(s, a, s.size())}));
  }

 private:
  std::string label_;
  int64_t axis_;
};

// Squeeze/Unsqueeze take axes as an attribute before opset 13 and as an input from 13 on.
std::vector<int64_t> read_axes(const KernelInfo& info, bool* from_attr) {
  *from_attr = info.opset() < 13;
  return *from_attr ? info.attr_ints("axes") : std::vector<int64_t>{};
}

class SqueezeKernel final : public Kernel {
 public:
  explicit SqueezeKernel(const KernelInfo& info) : label_(info.node().label()) {
    axes_ = read_axes(info, &from_attr_);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = axes_;
    if (!from_attr_ && ctx.has_input(1)) axes = read_int_list(ctx.input(1), label_.c_str());
    // No axes (absent, or an empty list) removes every dimension of size 1.
    const bool all_ones = axes.empty();
    std::vector<bool> drop(x.rank(), false);
    if (all_ones) {
      for (int i = 0; i < x.rank(); ++i) drop[i] = x.shape()[i] == 1;
    } else {
      for (int64_t a : axes) {
        const int64_t n = normalize_axis(a, x.rank(), label_.c_str());
        PI_CHECK(!drop[n], InvalidArgument, label_, ": axis ", a, " is listed twice");
        PI_CHECK(x.shape()[n] == 1, ShapeMismatch, label_, ": cannot squeeze axis ", a, " of ",
                 x.describe(), ": its size is not 1");
        drop[n] = true;
      }
    }
    Shape out;
    for (int i = 0; i < x.rank(); ++i)
      if (!drop[i]) out.push_back(x.shape()[i]);
    ctx.set_output(0, x.reshaped(out));
  }

 private:
  std::string label_;
  bool from_attr_ = false;
  std::vector<int64_t> axes_;
};

class UnsqueezeKernel final : public Kernel {
 public:
  explicit UnsqueezeKernel(const KernelInfo& info) : label_(info.node().label()) {
    axes_ = read_axes(info, &from_attr_);
    PI_CHECK(!from_attr_ || info.has_attr("axes"), InvalidModel, label_,
             ": attribute 'axes' is required before opset 13");
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> axes =
        from_attr_ ? axes_ : read_int_list(ctx.input(1), label_.c_str());
    const int64_t rank = x.rank() + static_cast<int64_t>(axes.size());
    std::vector<bool> inserted(rank, false);
    for (int64_t a : axes) {
      const int64_t n = normalize_axis(a, rank, label_.c_str());
      PI_CHECK(!inserted[n], InvalidArgument, label_, ": axis ", a, " is listed twice");
      inserted[n] = true;
    }
    Shape out(rank);
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) out[i] = inserted[i] ? 1 : x.shape()[next++];
    ctx.set_output(0, x.reshaped(out));
  }

 private:
  std::string label_;
  bool from_attr_ = false;
  std::vector<int64_t> axes_;
};

// Shape-15 added start/end, which clamp into [0, rank] after adding rank to negative values.
class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(const KernelInfo& info)
      : start_(info.attr_int("start", 0)), end_(info.attr_int("end", INT64_MAX)) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t r = x.rank();
    auto clamp = [r](int64_t i) { return std::clamp(i < 0 ? i + r : i, int64_t{0}, r); };
    const int64_t b = clamp(start_);
    const int64_t e = std::max(b, clamp(end_));
    Tensor& y = ctx.output(0, DType::Int64, {e - b});
    int64_t* out = y.data<int64_t>();
    for (int64_t i = b; i < e; ++i) out[i - b] = x.shape()[i];
  }

 private:
  int64_t start_;
  int64_t end_;
};

class SizeKernel final : public Kernel {
 public:
  explicit SizeKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const int64_t n = ctx.input(0).numel();
    ctx.output(0, DType::Int64, {}).data<int64_t>()[0] = n;
  }
};

}  // namespace

PI_CPU_KERNEL(Reshape, 1, 28, ReshapeKernel);
PI_CPU_KERNEL(Flatten, 1, 28, FlattenKernel);
PI_CPU_KERNEL(Squeeze, 1, 28, SqueezeKernel);
PI_CPU_KERNEL(Unsqueeze, 1, 28, UnsqueezeKernel);
PI_CPU_KERNEL(Shape, 1, 28, ShapeKernel);
PI_CPU_KERNEL(Size, 1, 28, SizeKernel);

}  // namespace polyinfer
