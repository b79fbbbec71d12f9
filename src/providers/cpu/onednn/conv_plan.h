// What the float32 (conv.cpp) and the int8 (qlinear.cpp) oneDNN convolutions share: the window
// arithmetic in oneDNN's terms, and the plan made once per input shape — the primitive, its
// prepacked weights, and the reorders between the tensors' layout (NCHW, or NHWC for the Nhwc*
// operators) and the primitive's own — and how one run goes through it.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "ops/window.h"
#include "providers/cpu/onednn/onednn.h"

namespace polyinfer::cpu::onednn {

// One convolution as oneDNN describes it: 1-D convolutions run as 2-D ones of height 1, and
// oneDNN counts dilation from 0.
struct ConvDims {
  dnnl::memory::dims src, dst, weights, strides, dilation, pad_l, pad_r;
  dnnl::memory::dims kernel;  // the window: [kH, kW] or [kD, kH, kW]
  // Empty: X is dense `src`. Else X's element strides for `src`, which is then a view of every
  // stride-th pixel of X: a 1x1 convolution with strides and no padding reads only those, so it
  // runs as a stride-1 convolution of that view, gathered into a dense copy by the reorder into
  // the primitive's layout: oneDNN's strided brgconv_1x1 runs well below its stride-1 speed
  // (docs/kernels.md has the figures).
  dnnl::memory::dims src_strides;
  dnnl::memory::dims dst_strides;  // empty: Y is dense `dst`; else Y's strides (a folded depth)
  Shape y_shape;                   // the output tensor's shape, in the tensors' layout
  int64_t M = 0;                   // output channels
};

// The dimensions for input shape `xs` and weights `ws` ([M, C/group, k...], 1 to 3 spatial
// axes); X and Y are [N, H, W, C] when `channels_last` (2-D only). Shape errors name `label`.
// `fold_depth`: a 3-D convolution whose window neither spans, strides nor pads the depth axis
// runs as a 2-D one over the depth slices, as N*D images, where X is one image or D is 1 (the
// slices are then one stride apart); else it stays 3-D.
ConvDims conv_dims(const Shape& xs, const Shape& ws, const WindowAttrs& attrs, bool channels_last,
                   const std::string& label, bool fold_depth = false);

struct ConvPlan {
  Shape y_shape;
  dnnl::convolution_forward prim;
  dnnl::memory::desc user_src, user_dst;
  dnnl::memory weights;
  Tensor weights_buf;  // behind `weights`
  std::optional<dnnl::memory> bias, src_buf, dst_buf;
  dnnl::memory::desc scratchpad;  // for add_thread_scratchpad (the attributes say user mode)
  // Made with the plan, not per run: layout changes in and out, and Z into dst.
  std::optional<dnnl::reorder> to_src, from_dst, z_in;
};

// The plan around primitive `pd` for `dims`: `weights` (of `weight_type`, in [G,] O, I, H, W
// order, at any address: a weight still in the model file, Tensor::peek_bytes) reordered into
// the primitive's layout, the user layouts of X and Y (`src_type`,
// `dst_type`), and the reorders a run needs; `with_z` adds the one that copies a residual Z into
// the destination, which the sum post-op then accumulates into. `bias` is used as it is.
ConvPlan make_conv_plan(const dnnl::convolution_forward::primitive_desc& pd, const ConvDims& dims,
                        bool channels_last, dnnl::memory::data_type src_type,
                        dnnl::memory::data_type dst_type, const void* weights,
                        dnnl::memory::data_type weight_type, std::optional<dnnl::memory> bias,
                        bool with_z, dnnl::stream& s);

// One run: X into the primitive's layout, Z (when not null) into the destination, the primitive
// with `extra` arguments (zero points, say) beside its source, weights, bias and destination,
// then the destination back into Y. Waits for the stream.
void run_conv_plan(ConvPlan& p, dnnl::stream& s, const Tensor& x, Tensor& y, const Tensor* z,
                   std::unordered_map<int, dnnl::memory> extra = {});
// The same with X's bytes at `x` (a buffer of the kernel's own, read as the plan's user_src).
void run_conv_plan(ConvPlan& p, dnnl::stream& s, const void* x, Tensor& y, const Tensor* z,
                   std::unordered_map<int, dnnl::memory> extra = {});

}  // namespace polyinfer::cpu::onednn
