// Float32 and float16 Conv / ai.polyinfer FusedConv over 1-D and 2-D inputs (ops/conv.cpp), a
// port of the Vulkan conv.comp: an implicit GEMM per (image, group), Y[m, j] = sum_k W[m, k] *
// X~[k, j], with m an output channel of the group, j = oh * OW + ow an output position and
// k = (c * KH + kh) * KW + kw a tap of an input channel of the group. X~ is never built: each
// tile load computes its input coordinates and reads 0 in the padding. The tiling is gemm.cl's
// (64x64 tiles, 8x8 work-items with an 8x8 register block as one float8 per row, K in steps of
// 16 through local memory; gemm.cl says why it differs from Vulkan's 16x16 work-items), and
// each output sums its taps in the CPU reference's order (channel, then kernel row, then
// column), so the two differ only by fused multiply-adds. Bias, then the residual Z
// (FusedConv), then the activation follow.
typedef struct {
  uint groups, cin_g, cout_g;  // groups, input and output channels per group
  uint H, W, OH, OW, KH, KW;
  uint sh, sw, dh, dw;
  int ph, pw;  // begin pads
  uint off_x, off_w, off_b, off_z, off_y;
  uint has_b, has_z;
  uint act;
  float act_alpha, act_beta;
  uint nbatch;  // images * groups
} ConvParams;

#define CONV_TILE 64
#define CONV_TK 16

__kernel __attribute__((reqd_work_group_size(8, 8, 1))) void conv(CTPTR x, CTPTR w, CTPTR bias,
                                                                  CTPTR z, TPTR y,
                                                                  const ConvParams p) {
  __local float As[CONV_TK][CONV_TILE];  // As[k][m]: weights, transposed
  __local float Bs[CONV_TK][CONV_TILE];  // Bs[k][j]: input taps
  const uint tx = get_local_id(0), ty = get_local_id(1);
  const uint M = p.cout_g, N = p.OH * p.OW, KK = p.KH * p.KW, K = p.cin_g * KK;
  const uint m0 = get_group_id(1) * CONV_TILE, n0 = get_group_id(0) * CONV_TILE;
  for (uint bi = get_group_id(2); bi < p.nbatch; bi += get_num_groups(2)) {
    const uint img = bi / p.groups, g = bi % p.groups;
    const uint xb = p.off_x + (img * p.groups + g) * p.cin_g * p.H * p.W;
    const uint wb = p.off_w + g * M * K;
    const uint yb = (img * p.groups + g) * M * N;  // also Z's
    float8 acc[8];
#pragma unroll
    for (uint r = 0u; r < 8u; ++r) acc[r] = (float8)(0.0f);

    for (uint k0 = 0u; k0 < K; k0 += CONV_TK) {
      // Work-item (tx, ty) loads the weights' k0 + 2tx and k0 + 2tx + 1 of channels ty + 8l, and
      // the taps k0 + ty and k0 + ty + 8 of positions tx + 8l.
#pragma unroll
      for (uint l = 0u; l < 8u; ++l)
#pragma unroll
        for (uint h = 0u; h < 2u; ++h) {
          const uint i = m0 + ty + 8u * l, kk = 2u * tx + h, k = k0 + kk;
          const bool in = i < M && k < K;
          const float v = LOAD(w, in ? wb + i * K + k : wb);
          As[kk][ty + 8u * l] = in ? v : 0.0f;
        }
#pragma unroll
      for (uint h = 0u; h < 2u; ++h)
#pragma unroll
        for (uint l = 0u; l < 8u; ++l) {
          const uint kk = ty + 8u * h, j = n0 + tx + 8u * l, k = k0 + kk;
          float v = 0.0f;
          if (j < N && k < K) {
            const uint c = k / KK, r = k % KK;
            const int ih = (int)((j / p.OW) * p.sh + (r / p.KW) * p.dh) - p.ph;
            const int iw = (int)((j % p.OW) * p.sw + (r % p.KW) * p.dw) - p.pw;
            if (ih >= 0 && ih < (int)p.H && iw >= 0 && iw < (int)p.W)
              v = LOAD(x, xb + (c * p.H + (uint)ih) * p.W + (uint)iw);
          }
          Bs[kk][tx + 8u * l] = v;
        }
      barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
      for (uint kk = 0u; kk < CONV_TK; ++kk) {
        const float8 bv = vload8(tx, &Bs[kk][0]);
#pragma unroll
        for (uint r = 0u; r < 8u; ++r) acc[r] += As[kk][ty + 8u * r] * bv;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (uint r = 0u; r < 8u; ++r) {
      const uint i = m0 + ty + 8u * r;
      if (i >= M) continue;
      float o[8];
      vstore8(acc[r], 0, o);
      for (uint q = 0u; q < 8u; ++q) {
        const uint j = n0 + 8u * tx + q;
        if (j >= N) continue;
        float v = o[q];
        if (p.has_b != 0u) v += LOAD(bias, p.off_b + g * M + i);
        if (p.has_z != 0u) v += LOAD(z, p.off_z + yb + i * N + j);
        STORE(y, p.off_y + yb + i * N + j, pi_activate(v, p.act, p.act_alpha, p.act_beta));
      }
    }
  }
}

// The same convolution with one work-item per output (ops/conv.cpp takes it when a group has few
// output channels, depthwise above all: the tiled kernel would fill 1 of the 64 rows of each
// tile). Each output sums its in-bounds taps in the tiled kernel's order (channel, kernel row,
// column); the padding's taps, zero there, are skipped.
__kernel void conv_direct(CTPTR x, CTPTR w, CTPTR bias, CTPTR z, TPTR y, const ConvParams p) {
  const uint M = p.cout_g, N = p.OH * p.OW, K = p.cin_g * p.KH * p.KW;
  const uint total = p.nbatch * M * N;
  for (uint t = get_global_id(0); t < total; t += get_global_size(0)) {
    const uint j = t % N, i = (t / N) % M, bi = t / (N * M);  // bi = image * groups + group
    const uint g = bi % p.groups;
    const uint xb = p.off_x + bi * p.cin_g * p.H * p.W;
    const uint wb = p.off_w + (g * M + i) * K;
    const uint oh = j / p.OW, ow = j % p.OW;
    float acc = 0.0f;
    for (uint c = 0u; c < p.cin_g; ++c)
      for (uint kh = 0u; kh < p.KH; ++kh) {
        const int ih = (int)(oh * p.sh + kh * p.dh) - p.ph;
        if (ih < 0 || ih >= (int)p.H) continue;
        for (uint kw = 0u; kw < p.KW; ++kw) {
          const int iw = (int)(ow * p.sw + kw * p.dw) - p.pw;
          if (iw < 0 || iw >= (int)p.W) continue;
          acc += LOAD(w, wb + (c * p.KH + kh) * p.KW + kw) *
                 LOAD(x, xb + (c * p.H + (uint)ih) * p.W + (uint)iw);
        }
      }
    const uint yi = bi * M * N + i * N + j;
    if (p.has_b != 0u) acc += LOAD(bias, p.off_b + g * M + i);
    if (p.has_z != 0u) acc += LOAD(z, p.off_z + yi);
    STORE(y, p.off_y + yi, pi_activate(acc, p.act, p.act_alpha, p.act_beta));
  }
}
