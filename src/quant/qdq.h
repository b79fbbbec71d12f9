// Static INT8 quantization as a graph rewrite into the standard QDQ form: every quantized
// activation T gets QuantizeLinear → DequantizeLinear (int8, scale and zero point from its
// calibrated range) and its readers read the dequantized copy; the weights of quantized Conv,
// MatMul and Gemm nodes become int8 initializers behind a DequantizeLinear (symmetric, per output
// channel with `per_channel`), and their biases int32 with scale = input scale × weight scale.
// ONNX Runtime runs the result as it is; polyinfer's optimizer turns DQ → op → Q into int8
// kernels. The float graph is the reference: a QDQ model computed in float simulates int8 exactly.
//
//   quant::QdqPlan p = quant::plan_qdq(*model.graph, opts);     // what to quantize
//   ... calibrate p.activations ...                              // quant/calibration.h
//   quant::QdqReport r = quant::apply_qdq(*model.graph, p, ranges, opts);
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/calibration.h"

namespace polyinfer::quant {

struct QdqOptions {
  bool per_channel = false;  // weights: one scale per output channel (needs opset >= 13)
  // Activations: symmetric (zero point 0, range ±max|x|) or asymmetric (zero point placed so
  // the calibrated [lo, hi] spans all 256 levels: a ReLU output does not waste its negative half).
  bool symmetric_activations = false;
  // Weights in [-63, 63] instead of [-127, 127]: x86 CPUs without VNNI (AVX2, AVX-512 without
  // VNNI) multiply u8 by s8 with VPMADDUBSW, which saturates a pair of products at 16 bits
  // (2 x 255 x 127 > 32767); 7-bit weights keep every pair in range (2 x 255 x 63 < 32767), so
  // int8 kernels there compute exactly what the QDQ graph says. Costs one bit of weight precision.
  bool reduce_range = false;
  // Node names or op types that stay in float (their weights too; they read the float tensors).
  std::set<std::string> exclude;
  // Op types quantized: the compute-heavy ones whose int8 kernels pay for the Q/DQ around them.
  std::set<std::string> op_types = {"Conv", "MatMul", "Gemm"};
};

struct QdqPlan {
  std::vector<std::string> nodes;        // names of the nodes to quantize, in graph order
  std::vector<std::string> activations;  // tensors to calibrate and wrap in Q/DQ
  std::vector<std::string> notes;        // nodes of a quantized type left in float, and why
};

// Chooses what to quantize: every float32 node of `op_types` (Conv with a constant weight, Gemm
// with a constant B, any MatMul) not excluded; its float activation inputs, and its output —
// or, when that output feeds only a Relu, the Relu's output, so the int8 kernel can fuse the
// activation — except graph outputs, which stay float. Throws InvalidArgument when the model's
// opset has no QuantizeLinear (< 10) or no per-axis scales (< 13) and `per_channel` is asked.
QdqPlan plan_qdq(const ir::Graph& graph, const QdqOptions& options);

struct QdqReport {
  int nodes = 0;        // nodes now reading dequantized int8 weights and activations
  int activations = 0;  // Q/DQ pairs inserted
  int weights = 0;      // initializers stored as int8
  int biases = 0;       // biases stored as int32
  int64_t float_bytes = 0, quantized_bytes = 0;  // of the weights and biases converted
  std::vector<std::string> notes;  // biases kept in float (their int32 would overflow), ...
};

// Rewrites `graph` by `plan`, with each activation's calibrated range. Scales are stored as
// float32 scalars (vectors per channel), zero points as int8 (weights and biases: 0).
QdqReport apply_qdq(ir::Graph& graph, const QdqPlan& plan,
                    const std::map<std::string, Range>& ranges, const QdqOptions& options);

// The scale and zero point an int8 tensor over `r` gets (exposed for tests): symmetric → zero
// point 0 and scale max(|lo|, |hi|) / 127; asymmetric → scale (hi - lo) / 255 and the zero point
// that maps lo to -128 (rounded; both ends stay inside int8). A range of width 0 gets scale 1.
struct QuantParams {
  float scale = 1;
  int8_t zero_point = 0;
};
QuantParams quant_params(Range r, bool symmetric);

}  // namespace polyinfer::quant
