// Level 3 (layout): runs the convolutional parts of a graph in channels-last (NHWC) layout.
//
// oneDNN's fastest convolutions read and write NHWC (or blocked) activations; fed NCHW they
// need a reorder on the way in and out of every convolution, which for pointwise and depthwise
// layers costs as much as the convolution itself. This pass rewrites 2-D float convolutions with
// constant weights, int8 QLinearConv of the form oneDNN runs, and poolings, into ai.polyinfer
// Nhwc* operators (docs/optimizer.md), keeps layout-agnostic operators (activations, same-shape
// binary ops, channel Concat, per-tensor Quantize/DequantizeLinear) in NHWC between
// them — and inference BatchNormalization too, as a Mul and an Add by per-channel constants —
// and inserts one Transpose at each border with the rest of the graph. Graph inputs,
// outputs and every value an unconverted node reads keep their names and NCHW layout.
#pragma once

#include "ir/graph.h"

namespace polyinfer::opt {

// Returns true when the graph changed. Only rewrites the top-level graph.
bool to_channels_last(ir::Graph& g);

}  // namespace polyinfer::opt
