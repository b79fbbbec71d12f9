// Comparisons and logic with a bool output (ops/compare.cpp): Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual of two tensors of one dtype (float16/float32 compared as floats: NaN is unequal
// and unordered, -0 equals 0; integers as 64-bit signed or unsigned values; bools as 0/1), And,
// Or, Xor of bools and Not (a only), with numpy broadcasting up to rank 6. Elements are read from
// 32-bit words and the bools written a byte at a time (elem.glsl): no optional feature needed.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"
#include "half.glsl"

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer InA { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { uint b[]; };
layout(std430, set = 0, binding = 2) buffer Out { uint o[]; };

layout(push_constant) uniform Params {
  uint rank;
  uint n;      // output elements
  uint off_a;  // in elements of the inputs' type
  uint off_b;
  uint off_o;  // bytes
  uint size;   // the inputs' element size and kind (PI_KIND_*)
  uint kind;
  uint op;     // 0 Equal, 1 Less, 2 LessOrEqual, 3 Greater, 4 GreaterOrEqual, 5 And, 6 Or, 7 Xor,
               // 8 Not
  uint dims[6];
  uint sa[6];
  uint sb[6];
} p;

PI_DEFINE_LOAD(load_a, a)
PI_DEFINE_LOAD(load_b, b)
PI_DEFINE_STORE(store_o, o)

float as_float(uvec2 raw) {
  return p.size == 2u ? pi_half_to_float(raw.x) : uintBitsToFloat(raw.x);
}

bool compare(uvec2 ra, uvec2 rb) {
  if (p.kind == PI_KIND_FLOAT) {
    const float x = as_float(ra), y = as_float(rb);
    switch (p.op) {
      case 0u: return x == y;
      case 1u: return x < y;
      case 2u: return x <= y;
      case 3u: return x > y;
      default: return x >= y;
    }
  }
  const uvec2 x = pi_widen(ra, p.size, p.kind), y = pi_widen(rb, p.size, p.kind);
  const bool s = p.kind == PI_KIND_INT;
  switch (p.op) {
    case 0u: return x == y;
    case 1u: return s ? pi_slt64(x, y) : pi_ult64(x, y);
    case 2u: return !(s ? pi_slt64(y, x) : pi_ult64(y, x));
    case 3u: return s ? pi_slt64(y, x) : pi_ult64(y, x);
    default: return !(s ? pi_slt64(x, y) : pi_ult64(x, y));
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    uint rem = i, ia = p.off_a, ib = p.off_b;
    for (int k = int(p.rank) - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ia += coord * p.sa[k];
      ib += coord * p.sb[k];
    }
    const uvec2 ra = load_a(p.size, ia), rb = load_b(p.size, ib);
    bool r;
    if (p.op >= 5u) {
      const bool x = ra.x != 0u, y = rb.x != 0u;
      r = p.op == 5u ? x && y : p.op == 6u ? x || y : p.op == 7u ? x != y : !x;
    } else {
      r = compare(ra, rb);
    }
    store_o(1u, p.off_o + i, uvec2(r ? 1u : 0u, 0u));
  }
}
