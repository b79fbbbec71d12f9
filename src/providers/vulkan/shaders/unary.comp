// Float32 Relu, Sigmoid, Tanh, Exp, Neg, Abs over contiguous tensors (ops/elementwise.cpp).
// Offsets are in elements into whole VkBuffers, as in binary.comp.
#version 450
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint op;     // 0 Relu, 1 Sigmoid, 2 Tanh, 3 Exp, 4 Neg, 5 Abs
  uint n;
  uint off_x;
  uint off_y;
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const float v = x[p.off_x + i];
    float r;
    if (p.op == 0u) {
      r = v > 0.0 ? v : 0.0;
    } else if (p.op == 1u) {
      // Never exp of a large positive number: no inf/inf.
      const float e = exp(-abs(v));
      r = v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    } else if (p.op == 2u) {
      // GLSL's tanh may be computed as a ratio of exponentials that overflows; this form cannot.
      const float e = exp(-2.0 * abs(v));
      r = sign(v) * (1.0 - e) / (1.0 + e);
    } else if (p.op == 3u) {
      r = exp(v);
    } else if (p.op == 4u) {
      r = -v;
    } else {
      r = abs(v);
    }
    y[p.off_y + i] = r;
  }
}
