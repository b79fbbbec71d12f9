// Bitwise operators on integer tensors (opset 18): BitwiseAnd, BitwiseOr and BitwiseXor with numpy
// broadcasting, and the unary BitwiseNot.
//
// The operators act on the two's-complement bit patterns, so signed and unsigned types behave
// alike; the results are cast back to T (C++ promotes narrow operands of ~, &, | and ^ to int).
#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

struct AndOp {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct OrOp {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct XorOp {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// A op B element-wise; A and B share one integer dtype and broadcast to the output shape.
template <class Op> class BitwiseBinaryKernel final : public Kernel {
 public:
  explicit BitwiseBinaryKernel(const KernelInfo&) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const std::string who = ctx.node().label();
    PI_CHECK(a.dtype() == b.dtype(), InvalidArgument, who, ": A is ", a.describe(), " but B is ",
             b.describe(), "; both must have the same dtype");
    const Shape shape = broadcast_shapes(a.shape(), b.shape(), who.c_str());
    dispatch(IntTypes{}, a.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.output(0, a.dtype(), shape);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.template data<T>();
      const Op op{};
      if (a.shape() == shape && b.shape() == shape) {
        for (int64_t i = 0, n = y.numel(); i < n; ++i) py[i] = op(pa[i], pb[i]);
        return;
      }
      const std::vector<int64_t> strides[2] = {broadcast_strides(a.shape(), shape),
                                               broadcast_strides(b.shape(), shape)};
      for_each_broadcast(shape, strides,
                         [&](int64_t i, int64_t ia, int64_t ib) { py[i] = op(pa[ia], pb[ib]); });
    });
  }
};

class BitwiseNotKernel final : public Kernel {
 public:
  explicit BitwiseNotKernel(const KernelInfo&) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::string who = ctx.node().label();
    dispatch(IntTypes{}, x.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.output(0, x.dtype(), x.shape());
      const T* in = x.data<T>();
      T* out = y.template data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = static_cast<T>(~in[i]);
    });
  }
};

using BitwiseAndKernel = BitwiseBinaryKernel<AndOp>;
using BitwiseOrKernel = BitwiseBinaryKernel<OrOp>;
using BitwiseXorKernel = BitwiseBinaryKernel<XorOp>;

}  // namespace

PI_CPU_KERNEL(BitwiseAnd, 18, 28, BitwiseAndKernel);
PI_CPU_KERNEL(BitwiseOr, 18, 28, BitwiseOrKernel);
PI_CPU_KERNEL(BitwiseXor, 18, 28, BitwiseXorKernel);
PI_CPU_KERNEL(BitwiseNot, 18, 28, BitwiseNotKernel);

}  // namespace polyinfer
