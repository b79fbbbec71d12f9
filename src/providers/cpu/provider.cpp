// The CPU provider: the embedded default. It must work everywhere, so it probes as always usable.
// Its kernels come in two tiers (runtime/kernel.h): fast ones (oneDNN, vectorized, threaded;
// where an operator has several, its choice table orders them: choice.h) and the plain C++
// reference ones in src/providers/cpu/reference/. `cpu-ref` runs the reference tier alone: the
// oracle the fast kernels are tested against, and a way for a user to tell whether a wrong
// output comes from a fast path.
#include <omp.h>

#include <algorithm>

#include "providers/cpu/choice.h"
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
  explicit SixteenBitReference(std::unique_ptr<Kernel> k) : k_(std::move(k)) {
    set_choice(k_->choice());
  }
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

struct Named {
  const char* text;
  int value;
};

template <class E>
E parse_value(const std::string& key, const std::string& value,
              std::initializer_list<Named> names) {
  std::string choices;
  for (const Named& n : names) {
    if (value == n.text) return static_cast<E>(n.value);
    choices += (choices.empty() ? "" : ", ") + std::string(n.text);
  }
  fail(ErrorCode::InvalidArgument, "cpu option ", key, "=", value, ": the value must be one of ",
       choices);
}

constexpr std::initializer_list<Named> kSwitches = {{"auto", static_cast<int>(KernelSwitch::Auto)},
                                                    {"on", static_cast<int>(KernelSwitch::On)},
                                                    {"off", static_cast<int>(KernelSwitch::Off)}};
constexpr std::initializer_list<Named> kTiles = {
    {"auto", static_cast<int>(GemmTile::Auto)},
    {"avx2", static_cast<int>(GemmTile::Avx2)},
    {"avx512", static_cast<int>(GemmTile::Avx512)},
    {"avx512_pairs", static_cast<int>(GemmTile::Avx512Pairs)}};

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

class CpuProvider final : public RegistryProvider {
 public:
  std::vector<ProviderOptionInfo> option_list() const override {
    std::vector<ProviderOptionInfo> out = {
        {"gemm_tile", "auto|avx2|avx512|avx512_pairs",
         "register tiles of the packed GEMM (auto: the widest this CPU runs)"}};
    for (const cpu::ChoiceTable& t : cpu::choice_tables())
      for (const cpu::ChoiceRow& r : t.rows) {
        std::string ops;
        for (const auto& [domain, op] : t.ops)
          if (ops.find(op) == std::string::npos) ops += (ops.empty() ? "" : ", ") + std::string(op);
        out.push_back({r.kernel, "auto|on|off", ops + ": " + r.why});
      }
    return out;
  }
  void set_option(ProviderOptions& options, const std::string& key,
                  const std::string& value) const override {
    if (key == "gemm_tile") {
      options.cpu.gemm_tile = parse_value<GemmTile>(key, value, kTiles);
      return;
    }
    const std::vector<std::string> kernels = cpu::kernel_switch_names();
    PI_CHECK(std::find(kernels.begin(), kernels.end(), key) != kernels.end(), InvalidArgument,
             "cpu has no option '", key, "'; it takes gemm_tile and the kernel switches ",
             joined(kernels), " (`polyinfer providers` explains each)");
    options.cpu.kernels[key] = parse_value<KernelSwitch>(key, value, kSwitches);
  }
  void check_options(const ProviderOptions& options) const override {
    const std::vector<std::string> kernels = cpu::kernel_switch_names();
    for (const auto& [name, sw] : options.cpu.kernels)
      PI_CHECK(std::find(kernels.begin(), kernels.end(), name) != kernels.end(), InvalidArgument,
               "CpuProviderOptions::kernels names '", name,
               "', which no choice table has; the "
               "kernels are ",
               joined(kernels));
    const cpu::CpuFeatures f = cpu::CpuFeatures::of_this_cpu(options.cpu);
    const GemmTile t = options.cpu.gemm_tile;
    PI_CHECK(t == GemmTile::Auto || f.avx2, InvalidArgument,
             "gemm_tile: this CPU has no AVX2 and FMA, so the packed GEMM does not run here; "
             "leave gemm_tile at auto");
    PI_CHECK((t != GemmTile::Avx512 && t != GemmTile::Avx512Pairs) || f.avx512, InvalidArgument,
             "gemm_tile=avx512", t == GemmTile::Avx512Pairs ? "_pairs" : "",
             ": this CPU has no AVX-512; use gemm_tile=avx2 or auto");
  }
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

 protected:
  std::unique_ptr<Kernel> choose(const std::vector<const KernelDef*>& defs,
                                 const KernelInfo& info) const override {
    return cpu::choose_kernel(defs, info);
  }
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
