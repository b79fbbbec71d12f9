// The cuda provider's front in libpolyinfer: the probe (loader.h's verdict, worked out once per
// process) and the plugin that does the work. Kernels come from the kernel registry under "cuda":
// the plugin's op files register them when it is loaded, so a build whose plugin does not load
// lists none. Device memory and copies are Device{CUDA, 0}'s backend, which the plugin's init()
// registers.
#include <atomic>

#include "core/device_registry.h"
#include "hw/report.h"
#include "hw/system.h"
#include "providers/cuda/loader.h"
#include "runtime/provider.h"

namespace polyinfer::cuda {
namespace {

struct State {
  PluginLoad plugin;
  ProviderStatus status;
};

// Set once state() has run: release_memory() must not start CUDA just to free nothing.
std::atomic<bool> g_started{false};

// The plugin is loaded whatever the NVIDIA stack says (its kernels then list), but its init(),
// which touches the driver, runs only when doctor's check passed (cuda_status).
const State& state() {
  static const State s = [] {
    State x;
    x.plugin = load_plugin(default_plugin_path());
    const hw::StackCheck stack =
        hw::check_cuda_stack(hw::probe_nvidia(hw::system_files(), hw::system_loader()));
    x.status = cuda_status(stack, x.plugin);
    g_started = true;
    return x;
  }();
  return s;
}

const Device kCuda{DeviceKind::CUDA, 0};

// The plugin drives device 0 (cudaSetDevice(0)); "cuda:0" is the same as "cuda".
constexpr const char* kOnlyDevice0 =
    "the cuda provider drives CUDA device 0 only for now (write cuda or cuda:0)";

class CudaProvider final : public RegistryProvider {
 public:
  // `index` is -1 for "cuda", 0 for "cuda:0": the name is kept as written for the reports.
  explicit CudaProvider(int index) : index_(index) {}
  std::string name() const override {
    return index_ < 0 ? "cuda" : "cuda:" + std::to_string(index_);
  }
  Device device() const override { return kCuda; }
  ProviderStatus probe() const override { return state().status; }
  std::string describe() const override {
    return state().status.usable ? state().plugin.api->describe() : "";
  }
  std::unique_ptr<Kernel> create_kernel(const KernelInfo& info) const override {
    require_usable();
    return RegistryProvider::create_kernel(info);
  }
  std::shared_ptr<Allocator> allocator() const override {
    require_usable();
    return device_backend(kCuda).allocator;
  }
  void synchronize() const override {
    if (state().status.usable) state().plugin.api->synchronize();
  }
  size_t release_memory() const override {
    if (!g_started || !state().status.usable) return 0;
    return state().plugin.api->release_memory();
  }
  std::unique_ptr<Capture> begin_capture() const override {
    require_usable();
    return state().plugin.api->begin_capture();
  }
  std::vector<const KernelDef*> kernels() const override {
    state();  // loads the plugin, whose kernels then register
    return RegistryProvider::kernels();
  }
  std::vector<ProviderOptionInfo> option_list() const override {
    return {{"plain_int8_gemm", "on|off",
             "int8 products on polyinfer's plain GEMM instead of cuBLASLt, every shape"}};
  }
  void set_option(ProviderOptions& options, const std::string& key,
                  const std::string& value) const override {
    PI_CHECK(key == "plain_int8_gemm", InvalidArgument, "cuda has no option '", key,
             "'; it takes plain_int8_gemm");
    PI_CHECK(value == "on" || value == "off", InvalidArgument, "cuda option ", key, "=", value,
             ": the value must be on or off");
    options.cuda.plain_int8_gemm = value == "on";
  }

 protected:
  std::string kernel_provider() const override { return "cuda"; }

 private:
  int index_;
  static void require_usable() {
    const ProviderStatus& st = state().status;
    PI_CHECK(st.usable, ProviderUnavailable, "cuda is not usable here: ", st.reason);
  }
};

const bool registered = register_indexed_provider("cuda", [](int index) {
  PI_CHECK(index <= 0, InvalidArgument, "cuda:", index, ": ", kOnlyDevice0);
  return std::unique_ptr<Provider>(new CudaProvider(index));
});
// Tensor::to(cuda) before any session: start the provider then (its init registers the device).
const bool starter = [] {
  register_device_starter(DeviceKind::CUDA, [](int index) {
    if (index != 0) return std::string(kOnlyDevice0);
    const ProviderStatus& st = state().status;
    return st.usable ? std::string() : st.reason;
  });
  return true;
}();

}  // namespace
}  // namespace polyinfer::cuda
