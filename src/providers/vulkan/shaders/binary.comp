// Float32 Add/Sub/Mul/Div with numpy broadcasting up to rank 6 (ops/elementwise.cpp).
// The tensors are whole VkBuffers (binding offsets would need minStorageBufferOffsetAlignment);
// each tensor's start inside its buffer comes as an element offset. `dims` is the output shape
// (rank <= 6) and sa/sb the inputs' element strides in it (0 on broadcast dimensions).
#version 450
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer InA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float c[]; };

layout(push_constant) uniform Params {
  uint op;     // 0 Add, 1 Sub, 2 Mul, 3 Div
  uint rank;
  uint n;      // output elements
  uint off_a;
  uint off_b;
  uint off_c;
  uint dims[6];
  uint sa[6];
  uint sb[6];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    uint rem = i;
    uint ia = p.off_a;
    uint ib = p.off_b;
    for (int k = int(p.rank) - 1; k >= 0; --k) {
      const uint d = p.dims[k];
      const uint coord = rem % d;
      rem /= d;
      ia += coord * p.sa[k];
      ib += coord * p.sb[k];
    }
    const float x = a[ia];
    const float y = b[ib];
    float r;
    if (p.op == 0u) r = x + y;
    else if (p.op == 1u) r = x - y;
    else if (p.op == 2u) r = x * y;
    else r = x / y;
    c[p.off_c + i] = r;
  }
}
