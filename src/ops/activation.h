// The activation a fused operator applies to its result (docs/optimizer.md: the `activation`
// and `activation_params` attributes of ai.polyinfer FusedConv, FusedGemm and FusedMatMul).
//
// Reference kernels apply it with apply(); fast kernels map `kind` onto their library's post-ops
// (oneDNN eltwise) and fall back to apply() for the ones it lacks.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "runtime/kernel.h"

namespace polyinfer {

enum class ActKind {
  None,
  Relu,
  LeakyRelu,
  Clip,
  Sigmoid,
  HardSigmoid,
  HardSwish,
  Tanh,
  Silu,
  Gelu,
  GeluTanh
};

struct FusedActivation {
  ActKind kind = ActKind::None;
  float alpha = 0, beta = 0;  // LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha, beta

  // Reads the node's `activation` (absent or "" = none) and `activation_params`; throws
  // InvalidModel naming the node for an unknown activation or a wrong number of parameters.
  static FusedActivation from(const KernelInfo& info) { return from(info, "activation"); }

  // The same from the attributes `attr` and `attr`_params (a node fusing two activated steps
  // names the first one's otherwise).
  static FusedActivation from(const KernelInfo& info, const std::string& attr) {
    FusedActivation a;
    const std::string name = info.attr_string(attr, "");
    const auto p = info.attr_floats(attr + "_params");
    auto want = [&](size_t n) {
      PI_CHECK(p.size() == n, InvalidModel, info.node().label(), ": activation ", name, " takes ",
               n, " ", attr, "_params, got ", p.size());
    };
    if (name.empty() || name == "None") {
      want(0);
      return a;
    }
    struct {
      const char* name;
      ActKind kind;
      size_t params;
    } table[] = {{"Relu", ActKind::Relu, 0},
                 {"LeakyRelu", ActKind::LeakyRelu, 1},
                 {"Clip", ActKind::Clip, 2},
                 {"Sigmoid", ActKind::Sigmoid, 0},
                 {"HardSigmoid", ActKind::HardSigmoid, 2},
                 {"HardSwish", ActKind::HardSwish, 0},
                 {"Tanh", ActKind::Tanh, 0},
                 {"Silu", ActKind::Silu, 0},
                 {"Gelu", ActKind::Gelu, 0},
                 {"GeluTanh", ActKind::GeluTanh, 0}};
    for (const auto& t : table)
      if (name == t.name) {
        want(t.params);
        a.kind = t.kind;
        if (t.params > 0) a.alpha = p[0];
        if (t.params > 1) a.beta = p[1];
        return a;
      }
    fail(ErrorCode::InvalidModel, info.node().label(), ": unknown activation '", name,
         "' (known: Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh, Silu, Gelu, "
         "GeluTanh)");
  }

  float apply(float x) const {
    switch (kind) {
      case ActKind::None: return x;
      case ActKind::Relu: return x > 0 ? x : 0.f;
      case ActKind::LeakyRelu: return x >= 0 ? x : alpha * x;
      case ActKind::Clip: return x < alpha ? alpha : (x > beta ? beta : x);
      case ActKind::Sigmoid: return 1.f / (1.f + std::exp(-x));
      case ActKind::HardSigmoid: {
        const float y = alpha * x + beta;
        return y < 0 ? 0.f : (y > 1 ? 1.f : y);
      }
      case ActKind::HardSwish: {
        const float y = x / 6.f + 0.5f;
        return x * (y < 0 ? 0.f : (y > 1 ? 1.f : y));
      }
      case ActKind::Tanh: return std::tanh(x);
      case ActKind::Silu: return x / (1.f + std::exp(-x));
      case ActKind::Gelu: return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
      case ActKind::GeluTanh:
        return 0.5f * x * (1.f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    }
    return x;
  }
  void apply(float* x, size_t n) const {
    if (kind == ActKind::None) return;
    for (size_t i = 0; i < n; ++i) x[i] = apply(x[i]);
  }
};

}  // namespace polyinfer
