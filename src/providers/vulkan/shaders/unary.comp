// Float32 unary operators over contiguous tensors (ops/elementwise.cpp): Relu, Sigmoid, Tanh,
// Exp, Neg, Abs, LeakyRelu, HardSigmoid, HardSwish, Gelu (erf or tanh), Erf, Sqrt, Clip.
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
  float alpha;  // LeakyRelu, HardSigmoid: alpha; Clip: min
  float beta;   // HardSigmoid: beta; Clip: max
} p;

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
      default: {
        // Clip as the CPU does it, max then min: with min > max every element becomes max.
        r = v < p.alpha ? p.alpha : v;
        r = r > p.beta ? p.beta : r;
      }
    }
    y[p.off_y + i] = r;
  }
}
