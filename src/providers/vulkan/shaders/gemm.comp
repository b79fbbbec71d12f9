// Float32 matrix products (ops/matmul.cpp): MatMul (batched, broadcast batch dimensions),
// Gemm (transposes through strides, alpha, beta * C with C broadcast), and the optimizer's
// FusedGemm / FusedMatMul (C as a bias, then an activation).
//
// Tiling: a workgroup of 16x16 threads computes a 64x64 tile of Y; each thread keeps a 4x4
// block of accumulators in registers (rows ty + 16r, columns tx + 16c, so neighbouring threads
// read neighbouring shared-memory words and write neighbouring columns). K is walked in steps
// of 16: the 64x16 slice of A and the 16x64 slice of B go through shared memory once per step,
// so each loaded element feeds 64 multiply-adds instead of one. Every output still sums its K
// products in order k = 0, 1, ..., K-1, as the CPU reference does, so the two differ only by
// fused multiply-adds. Elements past M, N or K load as 0 and are never stored.
//
// Strides make transposes free: A's element (i, k) is at i * a_rs + k * a_cs, B's (k, j) at
// k * b_rs + j * b_cs, C's (i, j) at i * c_rs + j * c_cs (0 on broadcast dimensions). The batch
// (workgroup z, looping past the dispatch limit) is up to 3 dimensions with A's and B's matrix
// offsets as strides; Y's matrices are contiguous.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, set = 0, binding = 0) readonly buffer InA { PI_T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { PI_T b[]; };
layout(std430, set = 0, binding = 2) readonly buffer InC { PI_T c[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { PI_T y[]; };

layout(push_constant) uniform Params {
  uint M, N, K;
  uint off_a, off_b, off_c, off_y;
  uint a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
  uint has_c;
  float alpha, beta;
  uint act;
  float act_alpha, act_beta;
  uint nbatch;
  uint bdims[3];
  uint a_bs[3];
  uint b_bs[3];
} p;

const uint TILE = 64;
const uint TK = 16;

shared float As[TK][TILE];  // As[k][i]: A's tile, transposed
shared float Bs[TK][TILE];  // Bs[k][j]

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint t = ty * 16u + tx;
  const uint m0 = gl_WorkGroupID.y * TILE, n0 = gl_WorkGroupID.x * TILE;
  for (uint bi = gl_WorkGroupID.z; bi < p.nbatch; bi += gl_NumWorkGroups.z) {
    uint rem = bi, ba = p.off_a, bb = p.off_b;
    for (int d = 2; d >= 0; --d) {
      const uint coord = rem % p.bdims[d];
      rem /= p.bdims[d];
      ba += coord * p.a_bs[d];
      bb += coord * p.b_bs[d];
    }
    float acc[4][4];
    for (uint r = 0u; r < 4u; ++r)
      for (uint q = 0u; q < 4u; ++q) acc[r][q] = 0.0;

    for (uint k0 = 0u; k0 < p.K; k0 += TK) {
      for (uint e = t; e < TILE * TK; e += 256u) {
        const uint row = e / TK, kk = e % TK;
        const uint i = m0 + row, k = k0 + kk;
        As[kk][row] = (i < p.M && k < p.K) ? PI_LD(a[ba + i * p.a_rs + k * p.a_cs]) : 0.0;
      }
      for (uint e = t; e < TILE * TK; e += 256u) {
        const uint kk = e / TILE, col = e % TILE;
        const uint j = n0 + col, k = k0 + kk;
        Bs[kk][col] = (j < p.N && k < p.K) ? PI_LD(b[bb + k * p.b_rs + j * p.b_cs]) : 0.0;
      }
      barrier();
      for (uint kk = 0u; kk < TK; ++kk) {
        float av[4], bv[4];
        for (uint r = 0u; r < 4u; ++r) av[r] = As[kk][ty + 16u * r];
        for (uint q = 0u; q < 4u; ++q) bv[q] = Bs[kk][tx + 16u * q];
        for (uint r = 0u; r < 4u; ++r)
          for (uint q = 0u; q < 4u; ++q) acc[r][q] += av[r] * bv[q];
      }
      barrier();
    }

    const uint by = p.off_y + bi * p.M * p.N;
    for (uint r = 0u; r < 4u; ++r) {
      const uint i = m0 + ty + 16u * r;
      if (i >= p.M) continue;
      for (uint q = 0u; q < 4u; ++q) {
        const uint j = n0 + tx + 16u * q;
        if (j >= p.N) continue;
        float v = p.alpha * acc[r][q];
        if (p.has_c != 0u) v += p.beta * PI_LD(c[p.off_c + i * p.c_rs + j * p.c_cs]);
        y[by + i * p.N + j] = PI_ST(pi_activate(v, p.act, p.act_alpha, p.act_beta));
      }
    }
  }
}
