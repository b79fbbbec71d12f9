// The CPU provider: the embedded default. It must work everywhere, so it probes as always usable.
// Its kernels come in two tiers (runtime/kernel.h): fast ones (oneDNN, vectorized, threaded) and
// the plain C++ reference ones in src/providers/cpu/ops/. `cpu-ref` runs the reference tier
// alone: the oracle the fast kernels are tested against, and a way for a user to tell whether a
// wrong output comes from a fast path.
#include <omp.h>

#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/onednn/onednn.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

class CpuProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "cpu"; }
  Device device() const override { return Device::cpu(); }
  ProviderStatus probe() const override { return {true, ""}; }
  std::string describe() const override {
    return cpu::onednn::describe() + ", " + fast::impl_name() + " loops, OpenMP threads";
  }
  std::shared_ptr<Allocator> allocator() const override { return host_allocator(); }
  // Kernel constructors read only their node and its constants; oneDNN's primitive creation is
  // thread-safe, and each kernel owns its stream.
  bool concurrent_kernel_creation() const override { return true; }
};

class CpuReferenceProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "cpu-ref"; }
  Device device() const override { return Device::cpu(); }
  ProviderStatus probe() const override { return {true, ""}; }
  std::string describe() const override { return "plain C++ reference kernels, one thread"; }
  std::shared_ptr<Allocator> allocator() const override { return host_allocator(); }

 protected:
  std::string kernel_provider() const override { return "cpu"; }
  KernelTier max_tier() const override { return KernelTier::Reference; }
};

const bool registered =
    register_provider("cpu", [] { return std::unique_ptr<Provider>(new CpuProvider()); });
const bool registered_ref = register_provider(
    "cpu-ref", [] { return std::unique_ptr<Provider>(new CpuReferenceProvider()); });

}  // namespace
}  // namespace polyinfer
