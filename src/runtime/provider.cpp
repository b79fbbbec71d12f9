#include "runtime/provider.h"

#include <algorithm>
#include <mutex>

namespace polyinfer {

namespace {

struct ProviderRegistry {
  std::mutex mu;
  std::vector<std::pair<std::string, ProviderFactory>> factories;
};

ProviderRegistry& provider_registry() {
  static ProviderRegistry r;
  return r;
}

}  // namespace

std::unique_ptr<Kernel> RegistryProvider::create_kernel(const KernelInfo& info) const {
  const ir::Node& n = info.node();
  const std::string reg = kernel_provider();
  std::vector<const KernelDef*> defs = find_kernels(reg, n.domain, n.op_type, n.opset);
  std::erase_if(defs, [&](const KernelDef* d) { return d->tier > max_tier(); });
  if (defs.empty()) {
    bool other_version = false;
    for (const KernelDef* d : kernels_of(reg))
      if (d->op_type == n.op_type && d->domain == n.domain && d->tier <= max_tier())
        other_version = true;
    fail(ErrorCode::UnsupportedOp, "no ", name(), " kernel for ",
         n.domain.empty() ? "" : n.domain + ".", n.op_type,
         other_version ? " at opset " + std::to_string(n.opset) + " (other versions exist)" : "");
  }
  for (size_t i = 0; i + 1 < defs.size(); ++i) {
    try {
      return defs[i]->make(info);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::UnsupportedOp) throw;
    }
  }
  return defs.back()->make(info);
}

std::vector<const KernelDef*> RegistryProvider::kernels() const {
  std::vector<const KernelDef*> out = kernels_of(kernel_provider());
  std::erase_if(out, [&](const KernelDef* d) { return d->tier > max_tier(); });
  return out;
}

bool register_provider(const std::string& name, ProviderFactory factory) {
  auto& r = provider_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.factories.emplace_back(name, std::move(factory));
  return true;
}

std::unique_ptr<Provider> create_provider(const std::string& name) {
  ProviderFactory f;
  {
    auto& r = provider_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& [n, fac] : r.factories)
      if (n == name) f = fac;
  }
  if (!f) {
    std::string known;
    for (const auto& n : provider_names()) known += (known.empty() ? "" : ", ") + n;
    fail(ErrorCode::InvalidArgument, "unknown provider '", name, "'; built-in providers: ", known,
         " (or auto: the usable ones `polyinfer doctor` finds, best first)");
  }
  return f();
}

std::vector<std::string> provider_names() {
  auto& r = provider_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [n, f] : r.factories) out.push_back(n);
  std::stable_partition(out.begin(), out.end(), [](const std::string& n) { return n == "cpu"; });
  return out;
}

}  // namespace polyinfer
