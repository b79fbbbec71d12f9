// Dynamic INT8 quantization: weights int8 ahead of time, activations quantized at run time from
// their actual range — no calibration data, and no range to get wrong, which suits MatMul-heavy
// models (transformers) whose activation ranges vary with the input. Written in standard ops
// that ONNX Runtime runs:
//
//   x ─ DynamicQuantizeLinear ─┬ x_q (uint8) ─┐
//                              ├ x_scale ─────┼──────────────────┐
//                              └ x_zero_point ┘                  │
//   W_q (int8, per column or per tensor) ── MatMulInteger ─ Cast(float) ─ Mul(x_scale · w_scale) [─
//   Add(bias)]
//
//   quant::DynamicReport r = quant::quantize_dynamic(*model.graph, {.per_channel = true});
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyinfer::quant {

struct DynamicOptions {
  bool per_channel = false;       // one weight scale per output column
  bool reduce_range = false;      // weights in [-63, 63]: see QdqOptions::reduce_range
  std::set<std::string> exclude;  // node names or op types kept in float
};

struct DynamicReport {
  int nodes = 0;  // MatMul / Gemm rewritten
  int64_t float_bytes = 0, quantized_bytes = 0;
  std::vector<std::string> notes;  // nodes of those types left in float, and why
};

// Rewrites every float32 MatMul whose B is a constant 2-D weight, and every Gemm with a constant
// 2-D B, alpha = beta = 1, no transA and an optional constant 1-D bias. Throws InvalidArgument
// when the model's opset lacks DynamicQuantizeLinear / MatMulInteger (< 11).
DynamicReport quantize_dynamic(ir::Graph& graph, const DynamicOptions& options);

}  // namespace polyinfer::quant
