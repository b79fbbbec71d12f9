// The OpenCL provider: one device behind a process-wide context (context.h), kernels from ops/
// enqueued on one in-order queue that the host waits on when it needs a result. "opencl" takes
// the device already started in this process, else the automatic choice (gpu > accelerator >
// other > cpu); "opencl:N" names device N in doctor's order. One device per process
// (docs/opencl.md).
#include "runtime/provider.h"
#include "providers/opencl/context.h"

namespace polyinfer {
namespace {

class OpenClProvider final : public RegistryProvider {
 public:
  // `index` is -1 for "opencl", N for "opencl:N".
  explicit OpenClProvider(int index) : index_(index) {}
  std::string name() const override {
    return index_ < 0 ? "opencl" : "opencl:" + std::to_string(index_);
  }
  Device device() const override {
    if (index_ >= 0) return {DeviceKind::OpenCL, index_};
    return opencl::status().usable ? opencl::Context::get()->device()
                                   : Device{DeviceKind::OpenCL, 0};
  }
  ProviderStatus probe() const override {
    const opencl::Status st = opencl::status(index_);
    return {st.usable, st.reason};
  }
  // The device in use and how it keeps memory; with several devices, all of them as opencl:N.
  std::string describe() const override {
    if (!opencl::status(index_).usable) return "";
    const std::string all = opencl::device_listing();
    const auto ctx = opencl::Context::get(index_);
    return ctx->describe() + "; memory: " + ctx->memory_description() +
           (all.find("; ") == std::string::npos ? "" : "; devices: " + all);
  }
  std::shared_ptr<Allocator> allocator() const override { return opencl::device_allocator(index_); }
  void synchronize() const override {
    if (opencl::Context::started()) opencl::Context::get()->flush();
  }

 protected:
  // Kernels register under "opencl" whichever device the provider names.
  std::string kernel_provider() const override { return "opencl"; }

 private:
  int index_;
};

const bool registered = register_indexed_provider("opencl", [](int index) {
  if (index >= 0) opencl::check_device_index(index);
  return std::unique_ptr<Provider>(new OpenClProvider(index));
});

}  // namespace
}  // namespace polyinfer
