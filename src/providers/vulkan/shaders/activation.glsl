// The activation a fused operator applies to its result (the `activation` attribute of
// ai.polyinfer FusedConv/FusedGemm/FusedMatMul). `kind` follows ActKind's order, which the
// kernels pass through unchanged (static_assert in ops/common.h keeps the two in step).
// Included by the shaders that fuse it (GL_GOOGLE_include_directive).

// GLSL has no erf: Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7, enough for float32 Gelu.
float pi_erf(float x) {
  const float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  const float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t -
                         0.284496736) * t + 0.254829592) * t * exp(-x * x);
  return sign(x) * y;
}

// Never exp of a large positive number: no inf/inf (as unary.comp).
float pi_sigmoid(float v) {
  const float e = exp(-abs(v));
  return v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

float pi_tanh(float v) {
  const float e = exp(-2.0 * abs(v));
  return sign(v) * (1.0 - e) / (1.0 + e);
}

// min(max(t, 0), 1) with a NaN kept, as the CPU's fused HardSigmoid (ops/activation.h) has it;
// GLSL's clamp may return either bound for one.
float pi_unit(float t) { return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t); }

float pi_activate(float x, uint kind, float alpha, float beta) {
  switch (kind) {
    case 1u: return x > 0.0 ? x : 0.0;                         // Relu
    case 2u: return x >= 0.0 ? x : alpha * x;                  // LeakyRelu
    case 3u: return x < alpha ? alpha : (x > beta ? beta : x); // Clip(min, max)
    case 4u: return pi_sigmoid(x);                             // Sigmoid
    case 5u: return pi_unit(alpha * x + beta);                 // HardSigmoid
    case 6u: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);        // HardSwish
    case 7u: return pi_tanh(x);                                // Tanh
    case 8u: return x * pi_sigmoid(x);                         // Silu
    case 9u: return 0.5 * x * (1.0 + pi_erf(x * 0.70710678118654752));  // Gelu
    case 10u: return 0.5 * x * (1.0 + pi_tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    default: return x;                                         // None
  }
}
