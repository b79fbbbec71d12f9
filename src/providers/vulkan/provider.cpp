// The Vulkan provider: one device chosen by type (discrete > integrated > virtual > cpu) behind
// a process-wide context (context.h), kernels from ops/ recorded into one command buffer that is
// submitted when the host needs a result. `vulkan:N` (naming a device) is not supported yet:
// provider names are looked up as given, so only "vulkan" exists (docs/vulkan.md).
#include "providers/vulkan/context.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

class VulkanProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "vulkan"; }
  Device device() const override { return {DeviceKind::Vulkan, 0}; }
  ProviderStatus probe() const override {
    const vulkan::Status st = vulkan::status();
    return {st.usable, st.reason};
  }
  std::string describe() const override {
    return vulkan::status().usable ? vulkan::Context::get()->describe() : "";
  }
  std::shared_ptr<Allocator> allocator() const override { return vulkan::device_allocator(); }
  void synchronize() const override {
    if (vulkan::status().usable) vulkan::Context::get()->flush();
  }
};

const bool registered =
    register_provider("vulkan", [] { return std::unique_ptr<Provider>(new VulkanProvider()); });

}  // namespace
}  // namespace polyinfer
