// Identity: passes any value through.
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// Identity forwards its input, whatever it holds (tensor, sequence or optional); outputs share
// memory with the input, which is safe because kernels never write into their inputs.
class IdentityKernel final : public Kernel {
 public:
  explicit IdentityKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override { ctx.set_output(0, ctx.value(0)); }
};

}  // namespace

PI_CPU_KERNEL(Identity, 1, 28, IdentityKernel);

}  // namespace polyinfer
