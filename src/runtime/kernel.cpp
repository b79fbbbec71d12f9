#include "runtime/kernel.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <tuple>
#include <unordered_map>

namespace polyinfer {

namespace {

// Registered at static initialization, looked up per node per provider (and per folded
// constant): an index by (provider, domain, op) instead of comparing every definition's strings,
// which showed in session creation. A deque keeps the definitions where the index points.
struct KernelRegistry {
  std::mutex mu;
  std::deque<KernelDef> defs;
  std::unordered_map<std::string, std::vector<const KernelDef*>> by_op;  // key(), in order
};

std::string key(const std::string& provider, const std::string& domain,
                const std::string& op_type) {
  std::string k = provider;
  k += '\0';
  k += domain;
  k += '\0';
  k += op_type;
  return k;
}

KernelRegistry& kernel_registry() {
  static KernelRegistry r;
  return r;
}

const ir::Attribute& get_attr(const KernelInfo& info, const std::string& name,
                              ir::Attribute::Type type, const char* type_name) {
  const ir::Attribute* a = info.node().attr(name);
  PI_CHECK(a != nullptr, InvalidModel, info.node().label(), ": required attribute '", name,
           "' is missing");
  PI_CHECK(a->type == type, InvalidModel, info.node().label(), ": attribute '", name, "' must be ",
           type_name);
  return *a;
}

}  // namespace

bool register_kernel(const KernelDef& def) {
  auto& r = kernel_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.defs.push_back(def);
  r.by_op[key(def.provider, def.domain, def.op_type)].push_back(&r.defs.back());
  return true;
}

std::vector<const KernelDef*> find_kernels(const std::string& provider, const std::string& domain,
                                           const std::string& op_type, int opset) {
  auto& r = kernel_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::string dom = domain == "ai.onnx" ? "" : domain;
  std::vector<const KernelDef*> out;
  const auto it = r.by_op.find(key(provider, dom, op_type));
  if (it == r.by_op.end()) return out;
  for (const KernelDef* d : it->second)
    if (opset >= d->since && opset <= d->until) out.push_back(d);
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelDef* a, const KernelDef* b) { return a->tier > b->tier; });
  return out;
}

std::unique_ptr<Kernel> make_first_taker(const std::vector<const KernelDef*>& defs,
                                         const KernelInfo& info) {
  for (size_t i = 0; i + 1 < defs.size(); ++i) {
    try {
      return defs[i]->make(info);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::UnsupportedOp) throw;
    }
  }
  return defs.back()->make(info);
}

std::vector<const KernelDef*> kernels_of(const std::string& provider) {
  auto& r = kernel_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const KernelDef*> out;
  for (const auto& d : r.defs)
    if (d.provider == provider) out.push_back(&d);
  std::sort(out.begin(), out.end(), [](const KernelDef* a, const KernelDef* b) {
    return std::tie(a->domain, a->op_type, a->since) < std::tie(b->domain, b->op_type, b->since);
  });
  return out;
}

using AT = ir::Attribute::Type;

const ProviderOptions& KernelInfo::options() const {
  static const ProviderOptions defaults;
  return defaults;
}

std::shared_ptr<const Tensor> KernelInfo::shared_prepack(
    size_t, const std::string&, const std::function<Tensor()>& make) const {
  return std::make_shared<const Tensor>(make());
}

int64_t KernelInfo::attr_int(const std::string& name) const {
  return get_attr(*this, name, AT::Int, "an int").i;
}
int64_t KernelInfo::attr_int(const std::string& name, int64_t def) const {
  return has_attr(name) ? attr_int(name) : def;
}
float KernelInfo::attr_float(const std::string& name) const {
  return get_attr(*this, name, AT::Float, "a float").f;
}
float KernelInfo::attr_float(const std::string& name, float def) const {
  return has_attr(name) ? attr_float(name) : def;
}
std::string KernelInfo::attr_string(const std::string& name) const {
  return get_attr(*this, name, AT::String, "a string").s;
}
std::string KernelInfo::attr_string(const std::string& name, const std::string& def) const {
  return has_attr(name) ? attr_string(name) : def;
}
std::vector<int64_t> KernelInfo::attr_ints(const std::string& name) const {
  return has_attr(name) ? get_attr(*this, name, AT::Ints, "a list of ints").ints
                        : std::vector<int64_t>{};
}
std::vector<int64_t> KernelInfo::attr_ints(const std::string& name,
                                           std::vector<int64_t> def) const {
  return has_attr(name) ? attr_ints(name) : def;
}
std::vector<float> KernelInfo::attr_floats(const std::string& name) const {
  return has_attr(name) ? get_attr(*this, name, AT::Floats, "a list of floats").floats
                        : std::vector<float>{};
}
std::vector<std::string> KernelInfo::attr_strings(const std::string& name) const {
  return has_attr(name) ? get_attr(*this, name, AT::Strings, "a list of strings").strings
                        : std::vector<std::string>{};
}
const Tensor* KernelInfo::attr_tensor(const std::string& name) const {
  return has_attr(name) ? &get_attr(*this, name, AT::Tensor, "a tensor").t : nullptr;
}

void KernelInfo::unsupported(const std::string& what) const {
  fail(ErrorCode::UnsupportedOp, node().label(), ": ", what, " is not implemented");
}

const Tensor& KernelContext::input(size_t i) const {
  const Value& v = value(i);
  if (v.is_tensor()) return v.tensor();
  const std::string name = i < node().inputs.size() ? node().inputs[i] : std::string();
  fail(ErrorCode::InvalidArgument, node().label(), ": input ", i, " ('", name, "') ",
       v.is_none() ? "is missing but required" : "must be a tensor, got " + v.describe());
}

}  // namespace polyinfer
