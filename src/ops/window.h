// Window arithmetic of Conv-like and pooling operators, shared by every provider: attribute
// parsing, output sizes and begin pads (explicit pads or auto_pad), ConvTranspose's geometry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "polyinfer/tensor.h"
#include "runtime/kernel.h"

namespace polyinfer {

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

}  // namespace polyinfer
