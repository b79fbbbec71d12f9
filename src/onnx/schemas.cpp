#include "onnx/schemas.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace polyinfer::onnx_io {
namespace {

// The domain part of libonnx's schema class names (ONNX_OPERATOR_SET_SCHEMA_CLASS_NAME); ""
// for a domain libonnx registers no schemas in.
const char* class_infix(const std::string& domain) {
  if (domain == onnx::ONNX_DOMAIN) return "Onnx";
  if (domain == onnx::AI_ONNX_ML_DOMAIN) return "OnnxML";
  if (domain == onnx::AI_ONNX_PREVIEW_TRAINING_DOMAIN) return "OnnxPreview";
  return "";
}

// The exported symbol of onnx::GetOpSchema<Op_Infix_verN>() (Itanium mangling).
std::string symbol_of(const std::string& op, const char* infix, int version) {
  const std::string cls = op + "_" + infix + "_ver" + std::to_string(version);
  return "_ZN4onnx11GetOpSchemaINS_" + std::to_string(cls.size()) + cls + "EEENS_8OpSchemaEv";
}

// libonnx itself, found from one of its functions, so that lookups work however polyinfer was
// loaded. Null when it cannot be found: every lookup then goes to the full registry.
void* libonnx_handle() {
  static void* const handle = []() -> void* {
    Dl_info info{};
    auto* fn = reinterpret_cast<void*>(&onnx::OpSchemaRegistry::Instance);
    if (!dladdr(fn, &info) || !info.dli_fname) return nullptr;
    return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }();
  return handle;
}

class LazySchemas final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& op, const int max_version,
                                  const std::string& domain) const override {
    const char* infix = class_infix(domain);
    if (!*infix) return nullptr;  // what the full registry answers: it holds no such domain
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = answers_.try_emplace({domain, op, max_version}, nullptr);
    if (inserted) it->second = find(op, max_version, domain, infix);
    return it->second;
  }

 private:
  // The schema with the highest since-version <= max_version, as the full registry picks it.
  const onnx::OpSchema* find(const std::string& op, int max_version, const std::string& domain,
                             const char* infix) const {
    void* lib = libonnx_handle();
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto range = ranges.find(domain);
    if (lib && range != ranges.end()) {
      for (int v = std::min(max_version, range->second.second); v >= range->second.first; --v) {
        void* sym = dlsym(lib, symbol_of(op, infix, v).c_str());
        if (!sym) continue;
        auto& built = built_[{domain, op, v}];
        if (!built) {
          built = std::make_unique<onnx::OpSchema>(reinterpret_cast<onnx::OpSchema (*)()>(sym)());
          built->Finalize();  // as registration does: arity, type constraints
        }
        return built.get();
      }
    }
    // Not exported under the expected name (or an op libonnx does not have): libonnx's answer.
    return onnx::OpSchemaRegistry::Schema(op, max_version, domain);
  }

  mutable std::mutex mu_;
  mutable std::map<std::tuple<std::string, std::string, int>, const onnx::OpSchema*> answers_;
  mutable std::map<std::tuple<std::string, std::string, int>, std::unique_ptr<onnx::OpSchema>>
      built_;
};

}  // namespace

const onnx::ISchemaRegistry* lazy_schemas() {
  // Never destroyed: schemas may be referenced until the process ends, as libonnx's are.
  static const LazySchemas* const registry = new LazySchemas;
  return registry;
}

}  // namespace polyinfer::onnx_io
