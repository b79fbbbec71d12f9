#include "providers/cpu/onednn/onednn.h"

#include <algorithm>
#include <cstdint>

#include "providers/cpu/fast/activation_pass.h"
#include "providers/cpu/onednn/blocked_copy.h"

namespace polyinfer::cpu::onednn {

void write_weights(const void* src, const dnnl::memory::desc& src_md, const dnnl::memory& dst,
                   dnnl::stream& s) {
  if (copy_into_blocked(src, src_md, dst)) return;
  Tensor staged;  // freed once reordered
  const size_t n = src_md.get_size();
  if (reinterpret_cast<uintptr_t>(src) % dnnl::memory::data_type_size(src_md.data_type()) != 0) {
    staged = Tensor::from_host(DType::UInt8, {static_cast<int64_t>(n)}, src, n);
    src = staged.raw_data();
  }
  dnnl::memory user(src_md, engine(), const_cast<void*>(src));
  dnnl::memory out = dst;  // a handle: execute() takes a non-const one
  dnnl::reorder(user, out).execute(s, user, out);
  s.wait();
}

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

void use_own_scratchpad(dnnl::primitive_attr& attr) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
}

void add_thread_scratchpad(std::unordered_map<int, dnnl::memory>& args,
                           const dnnl::memory::desc& md) {
  const int64_t n = static_cast<int64_t>(md.get_size());
  if (n == 0) return;
  thread_local Tensor buffer;
  if (!buffer.defined() || buffer.nbytes() < static_cast<size_t>(n))
    buffer = Tensor::empty(DType::UInt8, {n});
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(md, engine(), buffer.raw_data()));
}

bool append_activation(dnnl::post_ops& ops, const FusedActivation& act) {
  using A = dnnl::algorithm;
  switch (act.kind) {
    case ActKind::None: return true;
    case ActKind::Relu: ops.append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f); return true;
    case ActKind::LeakyRelu: ops.append_eltwise(1.f, A::eltwise_relu, act.alpha, 0.f); return true;
    case ActKind::Clip: ops.append_eltwise(1.f, A::eltwise_clip, act.alpha, act.beta); return true;
    case ActKind::Sigmoid: ops.append_eltwise(1.f, A::eltwise_logistic, 0.f, 0.f); return true;
    case ActKind::Tanh: ops.append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f); return true;
    case ActKind::HardSigmoid:
      ops.append_eltwise(1.f, A::eltwise_linear, act.alpha, act.beta);
      ops.append_eltwise(1.f, A::eltwise_clip, 0.f, 1.f);
      return true;
    case ActKind::HardSwish: ops.append_eltwise(1.f, A::eltwise_hardswish, 0.f, 0.f); return true;
    case ActKind::Silu: ops.append_eltwise(1.f, A::eltwise_swish, 1.f, 0.f); return true;
    case ActKind::Gelu: ops.append_eltwise(1.f, A::eltwise_gelu_erf, 0.f, 0.f); return true;
    case ActKind::GeluTanh: ops.append_eltwise(1.f, A::eltwise_gelu_tanh, 0.f, 0.f); return true;
  }
  return false;
}

SplitActivation split_activation(const FusedActivation& act) {
  SplitActivation s;
  (fast::activation_pass(act.kind) ? s.after : s.post_op) = act;
  return s;
}

std::string SplitActivation::impl_suffix() const {
  const char* pass = fast::activation_pass(after.kind);
  return pass ? std::string(" + ") + pass : std::string();
}

void SplitActivation::apply_after(Tensor& y, int threads) const {
  if (after.kind != ActKind::None)
    fast::activate_in_place(y.data<float>(), y.numel(), after, threads);
}

std::string describe() {
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "unknown ISA";
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: isa = "sse41"; break;
    case dnnl_cpu_isa_avx: isa = "avx"; break;
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    default: break;
  }
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (" + isa + ")";
}

bool avx512_kernels() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx512_core:
    case dnnl_cpu_isa_avx512_core_vnni:
    case dnnl_cpu_isa_avx512_core_bf16:
    case dnnl_cpu_isa_avx512_core_amx: return true;
    default: return false;
  }
}

bool int8_products_exact() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41:
    case dnnl_cpu_isa_avx:
    case dnnl_cpu_isa_avx2:
    case dnnl_cpu_isa_avx512_mic:
    case dnnl_cpu_isa_avx512_mic_4ops:
    case dnnl_cpu_isa_avx512_core: return false;
    default: return true;
  }
}

std::string int8_advisory(const Tensor& w, bool signed_source, bool exact, bool pairs) {
  if (exact || w.dtype() != DType::Int8) return "";
  // Reached only where `onednn_int8` is switched on past its rule (choice_tables.cpp).
  if (signed_source)
    return "this CPU has no VNNI and onednn_int8 is switched on: oneDNN runs int8 (s8) sources "
           "through halved weights, so results may differ slightly from the QDQ model's; leave "
           "onednn_int8 at auto for the exact form (onednn_int8_exact)";
  const int8_t* p = static_cast<const int8_t*>(w.peek_bytes());
  const bool wide = std::any_of(p, p + w.numel(), [](int8_t v) { return v > 64 || v < -64; });
  if (!wide || !pairs) return "";
  return "this CPU has no VNNI and onednn_int8 is switched on: its int8 dot products add u8 x s8 "
         "products in pairs that saturate at 16 bits, and these weights use 8 bits, so results "
         "may differ from the QDQ model's; leave onednn_int8 at auto for the exact form "
         "(onednn_int8_exact: twice the products) or quantize with `polyinfer quantize "
         "--reduce-range` (7-bit weights, exact here as they are)";
}

std::string impl_name(const dnnl::primitive_desc_base& pd) {
  return std::string("onednn:") + pd.impl_info_str();
}

}  // namespace polyinfer::cpu::onednn
