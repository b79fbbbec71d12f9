#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::cpu::onednn {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
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

std::string impl_name(const dnnl::primitive_desc_base& pd) {
  return std::string("onednn:") + pd.impl_info_str();
}

}  // namespace polyinfer::cpu::onednn
