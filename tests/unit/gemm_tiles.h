// The GEMM register tiles this CPU runs (avx2_util.h's 6x16 ymm tile everywhere, and
// avx512_gemm.h's 8x32 zmm tile where the CPU has AVX-512), for tests that run a kernel on
// each: the packed MatMul and the fast Attention pick theirs when a session is created,
// from POLYINFER_AVX512_GEMM.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "providers/cpu/fast/avx512_gemm.h"

namespace polyinfer::test {

// A tile: the value of POLYINFER_AVX512_GEMM that selects it (null: unset, the default) and
// the suffix of the implementation name a kernel on it reports ("avx2", "avx512").
struct GemmTile {
  const char* env;
  const char* isa;
  // `kernel`'s implementation name on this tile, e.g. "fast:avx512-packed" for "packed".
  std::string impl(const std::string& kernel) const {
    return std::string("fast:") + isa + "-" + kernel;
  }
};

inline std::vector<GemmTile> gemm_tiles() {
  std::vector<GemmTile> t = {{"0", "avx2"}};
#ifdef PI_X86_AVX512_GEMM
  if (fast::avx512::supported()) t.push_back({nullptr, "avx512"});
#endif
  return t;
}

// Sets POLYINFER_AVX512_GEMM for the scope's sessions (they read it at creation).
class GemmTileScope {
 public:
  explicit GemmTileScope(const GemmTile& t) {
    if (t.env)
      setenv("POLYINFER_AVX512_GEMM", t.env, 1);
    else
      unsetenv("POLYINFER_AVX512_GEMM");
  }
  ~GemmTileScope() { unsetenv("POLYINFER_AVX512_GEMM"); }
  GemmTileScope(const GemmTileScope&) = delete;
  GemmTileScope& operator=(const GemmTileScope&) = delete;
};

}  // namespace polyinfer::test
