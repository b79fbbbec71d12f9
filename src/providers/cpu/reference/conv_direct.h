// The reference tier's direct N-D grouped convolution loop, parameterized by how inputs are
// read: Conv, ConvInteger and QLinearConv share it.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/window.h"

namespace polyinfer::cpu {

// Direct grouped convolution over the batch:
//   y[n, m, o] = sum_{c in group(m), k} x(n, c, in(o, k)) * w(m, c - group_start, k)
// x_at(n, c, spatial_offset) and w_at(m, c_in_group, kernel_offset) return Acc; padded taps
// contribute nothing (x is treated as zero there, which the caller's zero-point handling must
// respect). `y` receives N*M*out_size accumulators.
template <class Acc, class XAt, class WAt>
void conv_direct(const WindowGeometry& g, int64_t N, int64_t C, int64_t M, int64_t group,
                 const XAt& x_at, const WAt& w_at, Acc* y) {
  const int64_t osz = g.out_size(), ksz = g.kernel_size();
  const int64_t cg = C / group, mg = M / group;
  std::vector<int64_t> taps;
  for (int64_t o = 0; o < osz; ++o) {
    window_taps(g, o, taps);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t c0 = (m / mg) * cg;
        Acc acc = Acc(0);
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t k = 0; k < ksz; ++k)
            if (taps[k] >= 0) acc += x_at(n, c0 + c, taps[k]) * w_at(m, c, k);
        y[(n * M + m) * osz + o] = acc;
      }
  }
}

}  // namespace polyinfer::cpu
