#include "runtime/provider.h"

#include <algorithm>
#include <mutex>

namespace polyinfer {

namespace {

struct Entry {
  std::string name;
  IndexedProviderFactory factory;
  bool indexed = false;  // takes "name:N"
};

struct ProviderRegistry {
  std::mutex mu;
  std::vector<Entry> factories;
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
  return make_first_taker(defs, info);
}

std::vector<const KernelDef*> RegistryProvider::kernels() const {
  std::vector<const KernelDef*> out = kernels_of(kernel_provider());
  std::erase_if(out, [&](const KernelDef* d) { return d->tier > max_tier(); });
  return out;
}

bool register_provider(const std::string& name, ProviderFactory factory) {
  auto& r = provider_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.factories.push_back({name, [f = std::move(factory)](int) { return f(); }, false});
  return true;
}

bool register_indexed_provider(const std::string& name, IndexedProviderFactory factory) {
  auto& r = provider_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.factories.push_back({name, std::move(factory), true});
  return true;
}

ProviderName parse_provider_name(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {text, -1};
  const std::string num = text.substr(colon + 1);
  // Digits only (no sign, no spaces); Device::parse's bound of 1024 devices.
  const bool digits = !num.empty() && num.size() <= 4 &&
                      std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; });
  PI_CHECK(digits && std::stoi(num) < 1024, InvalidArgument, "bad device index in provider '",
           text, "'; write e.g. vulkan:0 (the index `polyinfer providers` lists)");
  return {text.substr(0, colon), std::stoi(num)};
}

std::unique_ptr<Provider> create_provider(const std::string& name) {
  const ProviderName pn = parse_provider_name(name);
  Entry found;
  {
    auto& r = provider_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const Entry& e : r.factories)
      if (e.name == pn.base) found = e;
  }
  if (!found.factory) {
    std::string known;
    for (const auto& n : provider_names()) known += (known.empty() ? "" : ", ") + n;
    fail(ErrorCode::InvalidArgument, "unknown provider '", name, "'; built-in providers: ", known,
         " (or auto: the usable ones `polyinfer doctor` finds, best first)");
  }
  PI_CHECK(pn.index < 0 || found.indexed, InvalidArgument, "provider '", pn.base,
           "' has one device and takes no index; write '", pn.base, "' instead of '", name, "'");
  return found.factory(pn.index);
}

std::vector<std::string> provider_names() {
  auto& r = provider_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const Entry& e : r.factories) out.push_back(e.name);
  std::stable_partition(out.begin(), out.end(), [](const std::string& n) { return n == "cpu"; });
  return out;
}

}  // namespace polyinfer
