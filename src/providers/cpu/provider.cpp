// The CPU provider: the embedded default. It must work everywhere, so it probes as always usable
// and its kernels are plain C++ (src/providers/cpu/ops/), registered beside their code.
#include <omp.h>

#include "runtime/provider.h"

namespace polyinfer {
namespace {

class CpuProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "cpu"; }
  Device device() const override { return Device::cpu(); }
  ProviderStatus probe() const override { return {true, ""}; }
  std::shared_ptr<Allocator> allocator() const override { return host_allocator(); }
};

const bool registered =
    register_provider("cpu", [] { return std::unique_ptr<Provider>(new CpuProvider()); });

}  // namespace
}  // namespace polyinfer
