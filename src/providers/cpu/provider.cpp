// The CPU provider: the embedded default. It must work everywhere, so it probes as always usable.
// Its kernels come in two tiers (runtime/kernel.h): fast ones (oneDNN, vectorized, threaded) and
// the plain C++ reference ones in src/providers/cpu/ops/. `cpu-ref` runs the reference tier
// alone: the oracle the fast kernels are tested against, and a way for a user to tell whether a
// wrong output comes from a fast path.
#include <omp.h>

#include "providers/cpu/fast/fast_util.h"
#include "providers/cpu/onednn/onednn.h"
#include "runtime/cost.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

// A reference kernel the `cpu` provider ended up with for a node computing on 16-bit floats:
// the same kernel, with an advisory that says so. The fast kernels are float32; a float16
// session on the CPU ran BERT-base ~230x slower than float32 with nothing telling the user why.
class SixteenBitReference final : public Kernel {
 public:
  explicit SixteenBitReference(std::unique_ptr<Kernel> k) : k_(std::move(k)) {}
  void run(KernelContext& ctx) override { k_->run(ctx); }
  std::string impl() const override { return k_->impl(); }
  // The wrapped kernel's own caveat, if it has one, stays in front of this one.
  std::string advisory() const override {
    const std::string own = k_->advisory();
    return (own.empty() ? "" : own + "; ") +
           "float16/bfloat16 runs on the CPU's plain reference kernels (for checking results, "
           "not speed; the fast kernels are float32): on the CPU, run float32 "
           "(--precision fp32)";
  }
  bool prepacked(size_t i) const override { return k_->prepacked(i); }
  int inplace_input() const override { return k_->inplace_input(); }

 private:
  std::unique_ptr<Kernel> k_;
};

bool sixteen_bit(const ir::TypeInfo* t) {
  return t && (t->elem == DType::Float16 || t->elem == DType::BFloat16);
}

// Whether the node computes (not a view or a copy) on 16-bit floats.
bool computes_in_16_bits(const KernelInfo& info) {
  const OpClass c = op_class(info.node());
  if (c == OpClass::View || c == OpClass::DataMovement) return false;
  for (size_t i = 0; i < info.num_inputs(); ++i)
    if (sixteen_bit(info.input_type(i))) return true;
  return info.num_outputs() > 0 && sixteen_bit(info.output_type(0));
}

class CpuProvider final : public RegistryProvider {
 public:
  std::unique_ptr<Kernel> create_kernel(const KernelInfo& info) const override {
    std::unique_ptr<Kernel> k = RegistryProvider::create_kernel(info);
    if (k->impl() == "reference" && computes_in_16_bits(info))
      return std::make_unique<SixteenBitReference>(std::move(k));
    return k;
  }
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
