// Window arithmetic shared by the CPU Conv, ConvInteger, QLinearConv and pooling kernels:
// attribute parsing, output sizes and begin pads (explicit pads or auto_pad), and a direct N-D
// convolution loop parameterized by how inputs are read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "polyinfer/tensor.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {

// The window attributes of Conv-like and pooling nodes, as written in the model. Empty vectors
// mean "not given"; window_geometry fills defaults once the spatial rank is known.
struct WindowAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  int64_t group = 1;
  bool ceil_mode = false;

  // Reads auto_pad, kernel_shape, strides, dilations, pads, group and ceil_mode; rejects an
  // unknown auto_pad value.
  static WindowAttrs parse(const KernelInfo& info);
};

// Resolved geometry of one windowed op over `rank` spatial dimensions.
struct WindowGeometry {
  int rank = 0;
  Shape in, kernel, out;  // spatial sizes
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;

  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// Resolves the geometry for spatial input sizes `in` and kernel sizes `kernel`. Checks that the
// attribute lengths match the rank, that strides/dilations are positive and that the output is
// not negative; errors name `who`. `pool` applies pooling's ceil_mode rule (a window must start
// inside the input or its begin padding).
WindowGeometry window_geometry(const WindowAttrs& a, const Shape& in, const Shape& kernel,
                               const std::string& who, bool pool = false);

// Splits a flat row-major index over `dims` into coordinates.
inline void unflatten(int64_t flat, const Shape& dims, std::vector<int64_t>& idx) {
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
}

// For output spatial position `o` (flat), the flat input spatial offset of every kernel tap, or
// -1 where the tap falls into padding. Fills `taps` (resized to kernel_size()).
void window_taps(const WindowGeometry& g, int64_t o, std::vector<int64_t>& taps);

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

// Checks the X / W shapes of a Conv-like node (X [N, C, D...], W [M, C/group, k...]) and
// returns the geometry; kernel_shape, when given, must agree with W.
WindowGeometry conv_geometry(const WindowAttrs& a, const Shape& x, const Shape& w,
                             const std::string& who);

// ConvTranspose's geometry (X [N, C, D...], W [C, M/group, k...]): input position i and kernel
// tap k land on output position i * stride - pad_begin + k * dilation when that is inside `out`.
// Output sizes come from output_shape (spatial sizes or the whole shape), auto_pad SAME_* (input
// times stride) or the pads, with output_padding added at the end; an output larger than the
// full result is zero-extended at the end. Checks the shapes and attribute lengths; errors name
// `who`. Shared with the GPU kernels so every provider sizes outputs alike.
struct ConvTransposeAttrs {
  WindowAttrs window;
  std::vector<int64_t> output_padding, output_shape;
  static ConvTransposeAttrs parse(const KernelInfo& info);
};
struct ConvTransposeGeometry {
  int64_t N = 0, C = 0, M = 0, group = 1;  // M: output channels (W's dim 1 times group)
  Shape in, kernel, out;                   // spatial sizes
  std::vector<int64_t> strides, dilations, pad_begin;
};
ConvTransposeGeometry conv_transpose_geometry(const ConvTransposeAttrs& a, const Shape& x,
                                              const Shape& w, const std::string& who);

}  // namespace polyinfer::cpu
