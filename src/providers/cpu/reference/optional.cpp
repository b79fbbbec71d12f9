// Optional, OptionalHasElement and OptionalGetElement. An optional is not a kind of its own
// here: a full optional is the value it holds (a tensor or a sequence), an empty one is None.
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Optional(x) is x; Optional() with only the `type` attribute is the empty optional.
class OptionalKernel final : public Kernel {
 public:
  explicit OptionalKernel(const KernelInfo& info) {
    PI_CHECK(info.has_input(0) || info.has_attr("type"), InvalidModel, info.node().label(),
             ": an Optional without input needs the 'type' attribute");
  }
  void run(KernelContext& ctx) override { ctx.set_output(0, ctx.value(0)); }
};

// Opset 18 lets the input be a plain tensor or sequence (always "has an element") or be left
// out (never has one); the opset 15 form, an optional input, is the same code.
class OptionalHasElementKernel final : public Kernel {
 public:
  explicit OptionalHasElementKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    ctx.output(0, DType::Bool, {}).data<bool>()[0] = !ctx.value(0).is_none();
  }
};

class OptionalGetElementKernel final : public Kernel {
 public:
  explicit OptionalGetElementKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    const Value& v = ctx.value(0);
    PI_CHECK(!v.is_none(), InvalidArgument, ctx.node().label(),
             ": the optional input is empty, it has no element to get");
    ctx.set_output(0, v);
  }
};

}  // namespace

// Optional has one version (15); OptionalHasElement and OptionalGetElement 15 and 18 (which
// added plain tensor and sequence inputs); all unchanged through opset 23.
PI_CPU_KERNEL(Optional, 15, 28, OptionalKernel);
PI_CPU_KERNEL(OptionalHasElement, 15, 28, OptionalHasElementKernel);
PI_CPU_KERNEL(OptionalGetElement, 15, 28, OptionalGetElementKernel);

}  // namespace polyinfer
