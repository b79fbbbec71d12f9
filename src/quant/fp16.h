// Half-precision conversion: weights and activations of the ops that are safe in half precision
// become float16, or bfloat16 (Fp16Options::type) — half the memory and bandwidth; GPUs and NPUs
// run them natively — while the numerically sensitive ops — reductions (Softmax,
// LayerNormalization, ReduceMean, ...), Exp, Log, Pow, Sqrt, Div — and every op not known to be
// safe stay float32, with Cast nodes at each border. Graph inputs and outputs keep their float32
// types, so callers feed and read the same tensors. The two targets share one rule set: bfloat16
// trades float16's 3 extra mantissa bits for float32's exponent range, which changes how much
// each op loses but not which ops are safe to store in 16 bits.
//
//   quant::Fp16Report r = quant::convert_fp16(*model.graph, {});
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyinfer::quant {

struct Fp16Options {
  std::set<std::string> exclude;  // node names or op types kept in float32 as well
  // Also the optimizer's ai.polyinfer products (FusedConv, FusedGemm, FusedMatMul, with any
  // activation) and its Gelu: a session's precision fp16/bf16 converts after the optimizer. The
  // fused forms round once per output, so they lose no more than the plain product does.
  bool fused = false;
  // The 16-bit type the safe ops run in: Float16 or BFloat16 (anything else is an
  // InvalidArgument error). Initializers round to nearest even.
  DType type = DType::Float16;
};

struct Fp16Report {
  // Float nodes in each precision after the rewrite (fp16_nodes: in Fp16Options::type).
  int fp16_nodes = 0, fp32_nodes = 0;
  int casts = 0;          // Cast nodes inserted at precision borders
  int casts_removed = 0;  // Casts that did nothing (same type) or undid the one before
  int64_t float_bytes = 0, half_bytes = 0;  // of the initializers converted
};

// Converts `graph` in place. Values whose types are unknown keep their nodes in float32.
Fp16Report convert_fp16(ir::Graph& graph, const Fp16Options& options);

// Whether `op_type` (default domain) runs in 16 bits under convert_fp16.
bool fp16_safe(const std::string& op_type);

// Removes Casts that change nothing: a Cast to its input's own type, and a T -> float32 -> T
// pair for T float16 or bfloat16 (float32 holds every T exactly), whose readers then read the
// first Cast's input. The other order (float32 -> T -> float32) rounds, and so does float16 ->
// float32 -> bfloat16: those stay. Casts whose output is a graph output or read by a subgraph
// stay. Returns how many Casts went.
int fold_casts(ir::Graph& graph);

}  // namespace polyinfer::quant
