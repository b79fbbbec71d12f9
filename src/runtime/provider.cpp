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
  return choose(defs, info);
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
  ProviderName pn;
  size_t at = text.find(':');
  pn.base = text.substr(0, at);
  bool first = true;
  while (at != std::string::npos) {
    const size_t next = text.find(':', at + 1);
    const std::string part = text.substr(at + 1, next == std::string::npos ? next : next - at - 1);
    at = next;
    const size_t eq = part.find('=');
    if (eq == std::string::npos) {
      // Digits only (no sign, no spaces); Device::parse's bound of 1024 devices.
      const bool digits =
          first && !part.empty() && part.size() <= 4 &&
          std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
      PI_CHECK(digits && std::stoi(part) < 1024, InvalidArgument, "bad device index '", part,
               "' in provider '", text,
               "'; write e.g. vulkan:0 (the index `polyinfer providers` lists) or an option as "
               "key=value (cpu:winograd=off)");
      pn.index = std::stoi(part);
    } else {
      PI_CHECK(eq > 0, InvalidArgument, "option '", part, "' in provider '", text,
               "' has no key; write key=value (cpu:winograd=off)");
      pn.options.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    }
    first = false;
  }
  return pn;
}

std::string ProviderName::device_name() const {
  return index < 0 ? base : base + ":" + std::to_string(index);
}

void Provider::set_option(ProviderOptions&, const std::string& key, const std::string&) const {
  fail(ErrorCode::InvalidArgument, "provider '", name(), "' takes no options (got '", key, "')");
}

void set_provider_option(ProviderOptions& options, const std::string& provider,
                         const std::string& key, const std::string& value) {
  create_provider(parse_provider_name(provider).device_name())->set_option(options, key, value);
}

std::vector<ProviderOptionInfo> provider_option_list(const std::string& provider) {
  return create_provider(parse_provider_name(provider).device_name())->option_list();
}

std::unique_ptr<Provider> create_provider(const std::string& name) {
  const ProviderName pn = parse_provider_name(name);
  PI_CHECK(pn.options.empty(), Internal, "create_provider('", name,
           "'): options are applied by the session, not here");
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
