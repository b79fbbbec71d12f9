// The provider interface: the one seam every backend (cpu, vulkan, cuda, ...) plugs into.
//
// A provider is a device plus the operators it can run there. The partitioner asks each listed
// provider, in the user's order, to create the kernel for a node; the first that can, runs it.
// "Can it run this node?" and "create its kernel" are one call on purpose: a kernel knows best
// which attribute values and dtypes it covers, and a single mechanism cannot disagree with itself.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace polyinfer {

// A recording of the device work one run's kernels queue (CUDA Graphs): replayed, it queues
// the same work on the same memory again, without the host issuing each kernel. Made by
// Provider::begin_capture(); destroying one that is still recording stops the recording and
// discards it. The memory the recorded work used stays reserved for it until it is destroyed.
class Capture {
 public:
  virtual ~Capture() = default;
  // Stops recording. Throws, saying why, when the work could not be recorded (a kernel waited for
  // the device or read it back mid-run); the capture is then unusable.
  virtual void end() = 0;
  // Queues the recorded work once more (after end()).
  virtual void replay() = 0;
  // Work items recorded (kernels, copies), for reports; after end().
  virtual size_t size() const = 0;
};

// Whether a provider can be used on this machine, and if not, why and how to fix it. `doctor`
// prints the same text.
struct ProviderStatus {
  bool usable = false;
  std::string reason;  // empty when usable
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string name() const = 0;  // "cpu", "vulkan", ...
  virtual Device device() const = 0;
  virtual ProviderStatus probe() const = 0;
  // How it runs, for `providers` and `doctor` ("oneDNN 2.6.2 (avx512_core_amx), fast:avx512
  // loops, 2 threads"); "" when there is nothing to add to the device.
  virtual std::string describe() const { return ""; }
  // Creates the kernel for info.node(). Throws UnsupportedOp with the reason ("Resize
  // mode=cubic is not implemented", "no kernel for LSTM at opset 14") when this provider cannot
  // run the node; the partitioner then tries the next provider and reports the reason.
  virtual std::unique_ptr<Kernel> create_kernel(const KernelInfo& info) const = 0;
  // The allocator for this provider's device (sessions wrap it in a caching pool).
  virtual std::shared_ptr<Allocator> allocator() const = 0;
  // Waits until work queued on the device is done. (Optional: synchronous providers need not.)
  virtual void synchronize() const {}
  // Frees the device memory the provider keeps cached for reuse after tensors and sessions are
  // gone (memory in use stays); returns the bytes freed. (Optional: 0 when nothing is cached.)
  virtual size_t release_memory() const { return 0; }
  // The kernels this provider can create (for `providers` listings); empty if it cannot say.
  virtual std::vector<const KernelDef*> kernels() const { return {}; }
  // Whether create_kernel may run on several threads at once (for different nodes of one
  // graph). Sessions whose providers all allow it create their kernels on as many threads as
  // they run on (runtime/partitioner.h).
  virtual bool concurrent_kernel_creation() const { return false; }
  // Starts recording the work its kernels queue, instead of running it, until Capture::end().
  // nullptr when the provider cannot record its work (the default).
  virtual std::unique_ptr<Capture> begin_capture() const { return nullptr; }

  // The options this provider takes as text (provider_options.h), for help and errors.
  // (Optional: none by default.)
  virtual std::vector<ProviderOptionInfo> option_list() const { return {}; }
  // Sets option `key` from text in `options`; throws InvalidArgument naming the key and what
  // it takes. (Optional: the default takes no options and says so.)
  virtual void set_option(ProviderOptions& options, const std::string& key,
                          const std::string& value) const;
  // Checks the typed options a session will create kernels with (a kernel name no choice table
  // knows, an instruction set this machine lacks); throws InvalidArgument. (Optional.)
  virtual void check_options(const ProviderOptions& options) const {}
};

// A provider that creates kernels from the process-wide kernel registry: every provider whose
// kernels register with PI_REGISTER_KERNEL can derive from it. It tries the registered kernels
// fast tier first (or as choose() orders them); one that refuses (UnsupportedOp from its
// constructor) passes the node on to the next, and only when every one refuses does the node
// leave this provider. The reason then reported is the reference kernel's (the most complete
// one).
class RegistryProvider : public Provider {
 public:
  std::unique_ptr<Kernel> create_kernel(const KernelInfo& info) const override;
  std::vector<const KernelDef*> kernels() const override;

 protected:
  // The name kernels are registered under (the provider's own name by default) and the fastest
  // tier this provider may use; `cpu-ref` uses cpu's kernels at the reference tier only.
  virtual std::string kernel_provider() const { return name(); }
  virtual KernelTier max_tier() const { return KernelTier::Fast; }
  // The kernel among `defs` (the node's registered kernels up to max_tier(), fast first) that
  // takes the node; make_first_taker() by default.
  virtual std::unique_ptr<Kernel> choose(const std::vector<const KernelDef*>& defs,
                                         const KernelInfo& info) const {
    return make_first_taker(defs, info);
  }
};

using ProviderFactory = std::function<std::unique_ptr<Provider>()>;
// For providers whose devices come several to a machine (vulkan, cuda): the factory gets the
// device index from "name:N", or -1 for plain "name" (the provider's own choice of device). It
// throws InvalidArgument for an index that names no device, listing the devices there are.
using IndexedProviderFactory = std::function<std::unique_ptr<Provider>(int index)>;

// Providers register a factory under their name (from a static initializer in their own file).
bool register_provider(const std::string& name, ProviderFactory factory);
// The same for a provider that takes a device index ("vulkan:1"): N counts the provider's
// devices in the order `polyinfer providers` and `doctor` list them.
bool register_indexed_provider(const std::string& name, IndexedProviderFactory factory);

// A provider list entry split once: "vulkan:1" is {"vulkan", 1}, "vulkan" is {"vulkan", -1},
// "cpu:winograd=off:gemm_tile=avx2" is {"cpu", -1, {{"winograd", "off"}, {"gemm_tile",
// "avx2"}}}. After the name come an optional device index, then options as key=value, each
// behind a colon.
struct ProviderName {
  std::string base;
  int index = -1;
  std::vector<std::pair<std::string, std::string>> options;
  // "vulkan:1" without the options: the name a session reports the provider by.
  std::string device_name() const;
};
// Throws InvalidArgument on an index that is not a small non-negative number ("vulkan:x") and
// on an option that is not key=value.
ProviderName parse_provider_name(const std::string& text);

// A new instance of the named provider ("cpu", "vulkan", "vulkan:1"; options in the name are
// not read here); throws InvalidArgument naming the known providers for an unknown name, and for
// an index given to a provider that has only one device (cpu).
std::unique_ptr<Provider> create_provider(const std::string& name);
// Names of all providers built into this binary, in registration order with "cpu" first.
std::vector<std::string> provider_names();

}  // namespace polyinfer
