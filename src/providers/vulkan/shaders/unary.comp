// Float32 unary operators over contiguous tensors (ops/elementwise.cpp): Relu, Sigmoid, Tanh,
// Exp, Neg, Abs, LeakyRelu, HardSigmoid, HardSwish, Gelu (erf or tanh), Erf, Sqrt, Clip, Floor,
// Ceil, Round (halves to even), Reciprocal, Log, Sin, Cos, Tan, Sign, Softplus, Softsign, Elu,
// Selu, Celu, ThresholdedRelu, Mish.
// Offsets are in elements into whole VkBuffers, as in binary.comp.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "activation.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint op;      // elementwise.cpp's UnaryOp
  uint n;
  uint off_x;
  uint off_y;
  float alpha;  // LeakyRelu, HardSigmoid, Elu, Selu, Celu, ThresholdedRelu: alpha; Clip: min
  float beta;   // HardSigmoid: beta; Selu: gamma; Clip: max
} p;

// exp(v) - 1 and log(1 + v) without the cancellation near 0 (the CPU uses expm1/log1p): near 0
// a series, since the device's exp and log are only accurate to an absolute ~1e-7 around 1
// (llvmpipe), which would be a large relative error there; further out there is no
// cancellation to amplify it.
float pi_expm1(float v) {
  if (abs(v) >= 0.5) return exp(v) - 1.0;
  // Taylor to v^9 / 9!: the next term is below 1e-9 relative for |v| < 0.5.
  float t = 1.0 / 362880.0;
  t = t * v + 1.0 / 40320.0;
  t = t * v + 1.0 / 5040.0;
  t = t * v + 1.0 / 720.0;
  t = t * v + 1.0 / 120.0;
  t = t * v + 1.0 / 24.0;
  t = t * v + 1.0 / 6.0;
  t = t * v + 0.5;
  t = t * v + 1.0;
  return t * v;
}

float pi_log1p(float v) {
  if (abs(v) >= 0.5) return log(1.0 + v);
  // 2 atanh(s) with s = v / (2 + v), |s| <= 1/3: odd powers of s to s^15.
  const float s = v / (2.0 + v), s2 = s * s;
  float t = 1.0 / 15.0;
  t = t * s2 + 1.0 / 13.0;
  t = t * s2 + 1.0 / 11.0;
  t = t * s2 + 1.0 / 9.0;
  t = t * s2 + 1.0 / 7.0;
  t = t * s2 + 1.0 / 5.0;
  t = t * s2 + 1.0 / 3.0;
  t = t * s2 + 1.0;
  return 2.0 * s * t;
}

// tanh with its relative accuracy kept near 0 (Mish of a large negative v is v * tanh(tiny)).
float pi_tanh_accurate(float v) {
  const float t = pi_expm1(-2.0 * abs(v));
  return sign(v) * (-t / (t + 2.0));
}

// As the CPU: split at 0 so that exp never overflows.
float pi_softplus(float v) {
  return v > 0.0 ? v + pi_log1p(exp(-v)) : pi_log1p(exp(v));
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const float v = x[p.off_x + i];
    float r;
    switch (p.op) {
      case 0u: r = v > 0.0 ? v : 0.0; break;
      case 1u: r = pi_sigmoid(v); break;
      case 2u: r = pi_tanh(v); break;
      case 3u: r = exp(v); break;
      case 4u: r = -v; break;
      case 5u: r = abs(v); break;
      case 6u: r = v < 0.0 ? p.alpha * v : v; break;
      case 7u: r = clamp(p.alpha * v + p.beta, 0.0, 1.0); break;
      case 8u: r = v * clamp(v / 6.0 + 0.5, 0.0, 1.0); break;
      case 9u: r = pi_activate(v, 9u, 0.0, 0.0); break;    // Gelu
      case 10u: r = pi_activate(v, 10u, 0.0, 0.0); break;  // Gelu, tanh approximation
      case 11u: r = pi_erf(v); break;
      case 12u: r = sqrt(v); break;
      case 14u: r = floor(v); break;
      case 15u: r = ceil(v); break;
      case 16u: r = roundEven(v); break;
      case 17u: r = 1.0 / v; break;
      case 18u: r = log(v); break;
      case 19u: r = sin(v); break;
      case 20u: r = cos(v); break;
      case 21u: r = tan(v); break;
      case 22u: r = v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v); break;  // Sign: NaN and -0 kept
      case 23u: r = pi_softplus(v); break;
      case 24u: r = v / (1.0 + abs(v)); break;                   // Softsign
      case 25u: r = v < 0.0 ? p.alpha * pi_expm1(v) : v; break;  // Elu
      case 26u: r = p.beta * (v > 0.0 ? v : p.alpha * pi_expm1(v)); break;  // Selu
      case 27u: r = v > 0.0 ? v : p.alpha * pi_expm1(v / p.alpha); break;   // Celu
      case 28u: r = v > p.alpha ? v : 0.0; break;                // ThresholdedRelu
      case 29u: r = v * pi_tanh_accurate(pi_softplus(v)); break;  // Mish
      default: {
        // Clip as the CPU does it, max then min: with min > max every element becomes max.
        r = v < p.alpha ? p.alpha : v;
        r = r > p.beta ? p.beta : r;
      }
    }
    y[p.off_y + i] = r;
  }
}
