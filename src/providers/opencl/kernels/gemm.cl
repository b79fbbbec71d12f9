// Float32 and float16 matrix products (ops/matmul.cpp), a port of the Vulkan gemm.comp: MatMul
// (batched, broadcast batch dimensions), Gemm (transposes through strides, alpha, beta * C with
// C broadcast), and the optimizer's FusedGemm / FusedMatMul (C as a bias, then an activation).
//
// Tiling: a work-group computes a 64x64 tile of Y, as on Vulkan, but with 8x8 work-items that
// each keep an 8x8 block of accumulators (rows ty + 8r, columns 8tx..8tx+7 as one float8)
// instead of 16x16 with 4x4 blocks: CPU drivers (PoCL) run a work-group's work-items as a loop
// and keep what lives across a barrier in memory per work-item, so fewer, larger work-items
// with explicit vectors run about 5x faster there (23 against 4 GFLOP/s for 512^3 on PoCL),
// and GPUs take the 64-register block well. K is walked in steps of 16: the 64x16 slice of A
// and the 16x64 slice of B go through local memory once per step, so each loaded element feeds
// 64 multiply-adds instead of one. Every output still sums its K products in order
// k = 0, 1, ..., K-1, as the CPU reference does, so the two differ only by fused multiply-adds.
// Elements past M, N or K load as 0 (from a clamped, always valid address, so that the load
// needs no branch) and are never stored.
//
// Strides make transposes free: A's element (i, k) is at i * a_rs + k * a_cs, B's (k, j) at
// k * b_rs + j * b_cs, C's (i, j) at i * c_rs + j * c_cs (0 on broadcast dimensions). The batch
// (work-group z, looping past the dispatch limit) is up to 3 dimensions with A's and B's matrix
// offsets as strides; Y's matrices are contiguous.
typedef struct {
  uint M, N, K;
  uint off_a, off_b, off_c, off_y;
  uint a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
  uint has_c;
  float alpha, beta;
  uint act;
  float act_alpha, act_beta;
  uint nbatch;
  uint bdims[3], a_bs[3], b_bs[3];
} GemmParams;

#define GEMM_TILE 64
#define GEMM_TK 16

__kernel __attribute__((reqd_work_group_size(8, 8, 1))) void gemm(CTPTR a, CTPTR b, CTPTR c, TPTR y,
                                                                  const GemmParams p) {
  __local float As[GEMM_TK][GEMM_TILE];  // As[k][i]: A's tile, transposed
  __local float Bs[GEMM_TK][GEMM_TILE];  // Bs[k][j]
  const uint tx = get_local_id(0), ty = get_local_id(1);
  const uint m0 = get_group_id(1) * GEMM_TILE, n0 = get_group_id(0) * GEMM_TILE;
  for (uint bi = get_group_id(2); bi < p.nbatch; bi += get_num_groups(2)) {
    uint rem = bi, ba = p.off_a, bb = p.off_b;
    for (int d = 2; d >= 0; --d) {
      const uint coord = rem % p.bdims[d];
      rem /= p.bdims[d];
      ba += coord * p.a_bs[d];
      bb += coord * p.b_bs[d];
    }
    float8 acc[8];
#pragma unroll
    for (uint r = 0u; r < 8u; ++r) acc[r] = (float8)(0.0f);

    for (uint k0 = 0u; k0 < p.K; k0 += GEMM_TK) {
      // Work-item (tx, ty) loads A's k0 + 2tx and k0 + 2tx + 1 of rows ty + 8l (neighbouring
      // work-items read neighbouring k), and B's k0 + ty and k0 + ty + 8 of columns tx + 8l.
#pragma unroll
      for (uint l = 0u; l < 8u; ++l)
#pragma unroll
        for (uint h = 0u; h < 2u; ++h) {
          const uint i = m0 + ty + 8u * l, kk = 2u * tx + h, k = k0 + kk;
          const bool in = i < p.M && k < p.K;
          const float v = LOAD(a, in ? ba + i * p.a_rs + k * p.a_cs : ba);
          As[kk][ty + 8u * l] = in ? v : 0.0f;
        }
#pragma unroll
      for (uint h = 0u; h < 2u; ++h)
#pragma unroll
        for (uint l = 0u; l < 8u; ++l) {
          const uint kk = ty + 8u * h, j = n0 + tx + 8u * l, k = k0 + kk;
          const bool in = j < p.N && k < p.K;
          const float v = LOAD(b, in ? bb + k * p.b_rs + j * p.b_cs : bb);
          Bs[kk][tx + 8u * l] = in ? v : 0.0f;
        }
      barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
      for (uint kk = 0u; kk < GEMM_TK; ++kk) {
        const float8 bv = vload8(tx, &Bs[kk][0]);
#pragma unroll
        for (uint r = 0u; r < 8u; ++r) acc[r] += As[kk][ty + 8u * r] * bv;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }

    const uint by = p.off_y + bi * p.M * p.N;
    for (uint r = 0u; r < 8u; ++r) {
      const uint i = m0 + ty + 8u * r;
      if (i >= p.M) continue;
      float o[8];
      vstore8(acc[r], 0, o);
      for (uint q = 0u; q < 8u; ++q) {
        const uint j = n0 + 8u * tx + q;
        if (j >= p.N) continue;
        float v = p.alpha * o[q];
        if (p.has_c != 0u) v += p.beta * LOAD(c, p.off_c + i * p.c_rs + j * p.c_cs);
        STORE(y, by + i * p.N + j, pi_activate(v, p.act, p.act_alpha, p.act_beta));
      }
    }
  }
}
