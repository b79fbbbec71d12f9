// Float32 Conv / ai.polyinfer FusedConv over 1-D and 2-D inputs (ops/conv.cpp), as an implicit
// GEMM per (image, group): Y[m, j] = sum_k W[m, k] * X~[k, j], with m an output channel of the
// group, j = oh * OW + ow an output position and k = (c * KH + kh) * KW + kw a tap of an input
// channel of the group. X~ is never built: each tile load computes its input coordinates and
// reads 0 in the padding. The tiling is gemm.comp's (64x64 tiles, 16x16 threads with a 4x4
// register block, K in steps of 16 through shared memory), and each output sums its taps in the
// CPU reference's order (channel, then kernel row, then column), so the two differ only by
// fused multiply-adds. Bias, then the residual Z (FusedConv), then the activation follow.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, set = 0, binding = 0) readonly buffer InX { PI_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer InW { PI_T w[]; };
layout(std430, set = 0, binding = 2) readonly buffer InB { PI_T bias[]; };
layout(std430, set = 0, binding = 3) readonly buffer InZ { PI_T z[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { PI_T y[]; };

layout(push_constant) uniform Params {
  uint groups, cin_g, cout_g;  // groups, input and output channels per group
  uint H, W, OH, OW, KH, KW;
  uint sh, sw, dh, dw;
  int ph, pw;                  // begin pads
  uint off_x, off_w, off_b, off_z, off_y;
  uint has_b, has_z;
  uint act;
  float act_alpha, act_beta;
  uint nbatch;                 // images * groups
} p;

const uint TILE = 64;
const uint TK = 16;

shared float As[TK][TILE];  // As[k][m]: weights, transposed
shared float Bs[TK][TILE];  // Bs[k][j]: input taps

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint t = ty * 16u + tx;
  const uint M = p.cout_g, N = p.OH * p.OW, KK = p.KH * p.KW, K = p.cin_g * KK;
  const uint m0 = gl_WorkGroupID.y * TILE, n0 = gl_WorkGroupID.x * TILE;
  for (uint bi = gl_WorkGroupID.z; bi < p.nbatch; bi += gl_NumWorkGroups.z) {
    const uint img = bi / p.groups, g = bi % p.groups;
    const uint xb = p.off_x + (img * p.groups + g) * p.cin_g * p.H * p.W;
    const uint wb = p.off_w + g * M * K;
    const uint yb = (img * p.groups + g) * M * N;  // also Z's
    float acc[4][4];
    for (uint r = 0u; r < 4u; ++r)
      for (uint q = 0u; q < 4u; ++q) acc[r][q] = 0.0;

    for (uint k0 = 0u; k0 < K; k0 += TK) {
      for (uint e = t; e < TILE * TK; e += 256u) {
        const uint row = e / TK, kk = e % TK;
        const uint i = m0 + row, k = k0 + kk;
        As[kk][row] = (i < M && k < K) ? PI_LD(w[wb + i * K + k]) : 0.0;
      }
      for (uint e = t; e < TILE * TK; e += 256u) {
        const uint kk = e / TILE, col = e % TILE;
        const uint j = n0 + col, k = k0 + kk;
        float v = 0.0;
        if (j < N && k < K) {
          const uint c = k / KK, r = k % KK;
          const int ih = int((j / p.OW) * p.sh + (r / p.KW) * p.dh) - p.ph;
          const int iw = int((j % p.OW) * p.sw + (r % p.KW) * p.dw) - p.pw;
          if (ih >= 0 && ih < int(p.H) && iw >= 0 && iw < int(p.W))
            v = PI_LD(x[xb + (c * p.H + uint(ih)) * p.W + uint(iw)]);
        }
        Bs[kk][col] = v;
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

    for (uint r = 0u; r < 4u; ++r) {
      const uint i = m0 + ty + 16u * r;
      if (i >= M) continue;
      for (uint q = 0u; q < 4u; ++q) {
        const uint j = n0 + tx + 16u * q;
        if (j >= N) continue;
        float v = acc[r][q];
        if (p.has_b != 0u) v += PI_LD(bias[p.off_b + g * M + i]);
        if (p.has_z != 0u) v += PI_LD(z[p.off_z + yb + i * N + j]);
        y[p.off_y + yb + i * N + j] = PI_ST(pi_activate(v, p.act, p.act_alpha, p.act_beta));
      }
    }
  }
}
