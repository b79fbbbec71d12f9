// The Vulkan provider: one device behind a process-wide context (context.h), kernels from ops/
// recorded into one command buffer that is submitted when the host needs a result. "vulkan"
// takes the device already started in this process, else the automatic choice (discrete >
// integrated > virtual > cpu); "vulkan:N" names device N of the loader's enumeration (the order
// `polyinfer providers` and `doctor` list). One device per process (docs/vulkan.md).
#include "runtime/provider.h"
#include "providers/vulkan/context.h"

namespace polyinfer {
namespace {

class VulkanProvider final : public RegistryProvider {
 public:
  // `index` is -1 for "vulkan", N for "vulkan:N".
  explicit VulkanProvider(int index) : index_(index) {}
  std::string name() const override {
    return index_ < 0 ? "vulkan" : "vulkan:" + std::to_string(index_);
  }
  Device device() const override {
    if (index_ >= 0) return {DeviceKind::Vulkan, index_};
    return vulkan::status().usable ? vulkan::Context::get()->device()
                                   : Device{DeviceKind::Vulkan, 0};
  }
  ProviderStatus probe() const override {
    const vulkan::Status st = vulkan::status(index_);
    return {st.usable, st.reason};
  }
  // The device in use and how it keeps memory (mapped or device-local with staging, and why);
  // with several devices, all of them as vulkan:N counts them, so `providers` shows what to
  // write.
  std::string describe() const override {
    if (!vulkan::status(index_).usable) return "";
    const std::string all = vulkan::device_listing();
    const auto ctx = vulkan::Context::get(index_);
    return ctx->describe() + "; memory: " + ctx->memory_description() +
           (all.find("; ") == std::string::npos ? "" : "; devices: " + all);
  }
  std::shared_ptr<Allocator> allocator() const override { return vulkan::device_allocator(index_); }
  void synchronize() const override {
    if (vulkan::Context::started()) vulkan::Context::get()->flush();
  }

 protected:
  // Kernels register under "vulkan" whichever device the provider names.
  std::string kernel_provider() const override { return "vulkan"; }

 private:
  int index_;
};

const bool registered = register_indexed_provider("vulkan", [](int index) {
  if (index >= 0) vulkan::check_device_index(index);
  return std::unique_ptr<Provider>(new VulkanProvider(index));
});

}  // namespace
}  // namespace polyinfer
