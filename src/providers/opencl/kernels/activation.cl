// The activation a fused operator applies to its result (the `activation` attribute of
// ai.polyinfer FusedConv/FusedGemm/FusedMatMul): a port of the Vulkan provider's
// activation.glsl. `kind` follows ActKind's order, which the kernels pass through unchanged
// (static_assert in ops/matmul.cpp). Prepended to every program (program.cpp), so it holds plain
// functions only, named pi_* as on Vulkan so that ported kernels call them by the same names.

// OpenCL C has erf (GLSL has not, so Vulkan uses a polynomial): the built-in is within a few
// ulps, closer to the CPU's libm.
float pi_erf(float x) { return erf(x); }

// Never exp of a large positive number: no inf/inf.
float pi_sigmoid(float v) {
  const float e = exp(-fabs(v));
  return v >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

float pi_tanh(float v) {
  const float e = exp(-2.0f * fabs(v));
  return sign(v) * (1.0f - e) / (1.0f + e);
}

// min(max(t, 0), 1) with a NaN kept, as the CPU's fused HardSigmoid (ops/activation.h) has it;
// clamp() would give 0.
float pi_unit(float t) { return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t); }

float pi_activate(float x, uint kind, float alpha, float beta) {
  switch (kind) {
    case 1u: return x > 0.0f ? x : 0.0f;                                   // Relu
    case 2u: return x >= 0.0f ? x : alpha * x;                             // LeakyRelu
    case 3u: return x < alpha ? alpha : (x > beta ? beta : x);             // Clip(min, max)
    case 4u: return pi_sigmoid(x);                                         // Sigmoid
    case 5u: return pi_unit(alpha * x + beta);                             // HardSigmoid
    case 6u: return x * clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);                // HardSwish
    case 7u: return pi_tanh(x);                                            // Tanh
    case 8u: return x * pi_sigmoid(x);                                     // Silu
    case 9u: return 0.5f * x * (1.0f + pi_erf(x * 0.70710678118654752f));  // Gelu
    case 10u:                                                              // GeluTanh
      return 0.5f * x * (1.0f + pi_tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    default: return x;  // None
  }
}
