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

std::string impl_name(const dnnl::primitive_desc_base& pd) {
  return std::string("onednn:") + pd.impl_info_str();
}

}  // namespace polyinfer::cpu::onednn
