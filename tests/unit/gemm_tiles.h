// The GEMM register tiles this CPU runs (avx2_util.h's 6x16 ymm tile everywhere, and
// avx512_gemm.h's zmm tiles where the CPU has AVX-512), for tests that run a kernel on each:
// the packed MatMul, the fast Attention and the convolutions on the packed GEMM pick theirs
// from CpuProviderOptions::gemm_tile when a session is created.
#pragma once

#include <string>
#include <vector>

#include "polyinfer/session.h"
#include "providers/cpu/fast/avx512_gemm.h"

namespace polyinfer::test {

// A tile: the option that selects it and the suffix of the implementation name a kernel on it
// reports ("avx2", "avx512").
struct Tile {
  GemmTile option;
  const char* isa;
  // `kernel`'s implementation name on this tile, e.g. "fast:avx512-packed" for "packed".
  std::string impl(const std::string& kernel) const {
    return std::string("fast:") + isa + "-" + kernel;
  }
  // Session options that run the CPU's GEMMs on this tile.
  SessionOptions session(SessionOptions o = {}) const {
    o.cpu.gemm_tile = option;
    return o;
  }
};

// The widest tile last: what a session gets by default.
inline std::vector<Tile> gemm_tiles() {
  std::vector<Tile> t = {{GemmTile::Avx2, "avx2"}};
#ifdef PI_X86_AVX512_GEMM
  if (fast::avx512::supported()) t.push_back({GemmTile::Auto, "avx512"});
#endif
  return t;
}

}  // namespace polyinfer::test
