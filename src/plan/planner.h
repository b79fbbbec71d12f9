// The arithmetic behind `polyinfer plan`: a model's compute, bytes and memory against a target.
//
// analyze() prices a graph once for a precision: every node's FLOPs and bytes (runtime/cost.h),
// weights at that precision, the activation arena (plan/memory_sim.h) and the KV cache of
// decoder-shaped models. predict() then holds the analysis against one target: the roofline per
// node (time = max(FLOPs / peak, bytes / bandwidth) + the target's fixed cost per node), the
// totals by operator class, the verdict on memory and the nodes the target's toolchain would not
// run. docs/plan.md explains each figure and its limits.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "plan/catalog.h"
#include "plan/memory_sim.h"
#include "plan/op_support.h"
#include "runtime/cost.h"

namespace polyinfer::plan {

// Weight storage: int4 carries one fp16 scale per 32 weights (llama.cpp's q4_0, 4.5 bits per
// weight); the other precisions store plain elements (per-channel scales are negligible).
constexpr double kInt4BlockSize = 32;
// Bytes per float weight element stored at `p` (biases and norm scales too: they are a rounding
// error beside the matrices).
double weight_bytes_per_element(Precision p);
// Bytes per float activation element computed at `p` (int4 is weight-only: fp16 activations).
double activation_bytes_per_element(Precision p);

struct NodeEstimate {
  const ir::Node* node = nullptr;
  NodeCost cost;
};

struct Analysis {
  Precision precision = Precision::FP32;
  std::vector<NodeEstimate> nodes;  // the priced graph's nodes, in execution order
  double flops = 0, bytes = 0;      // totals over nodes
  double parameters = 0;            // float weight elements
  double weight_bytes = 0;          // every initializer at `precision`
  ActivationMemory activations;     // the planned arena at `precision`
  double kv_cache_bytes = 0;        // decoder KV-cache inputs ("past…", "…cache…"), 0 if none
  std::vector<std::string> kv_inputs;
  // Outputs that are the next step's cache ("present…", "…cache…"): a runtime keeps one cache,
  // so with KV inputs these are not counted again in the memory needed.
  double kv_output_bytes = 0;
  std::vector<std::string> unknown_shape_nodes;  // nodes priced without their full shapes
  std::vector<std::string> memory_only_ops;      // op types without a FLOP model (sorted, unique)
};

// Prices `graph` (already optimized as the runtime would run it) at `precision`. `weights_from`
// supplies the initializers to count as weights (the model as stored, before folding).
Analysis analyze(const ir::Graph& graph, const ir::Graph& weights_from, Precision precision);

struct ClassTotals {
  OpClass cls = OpClass::Other;
  int nodes = 0;
  double flops = 0, bytes = 0, seconds = 0;
  int compute_bound = 0;  // nodes of the class whose compute time exceeds their memory time
};

struct TimedNode {
  const ir::Node* node = nullptr;
  double flops = 0, bytes = 0, seconds = 0;
  bool compute_bound = false;
};

struct Prediction {
  const Target* target = nullptr;
  // Compute peak and efficiency used, and which precision's peak stood in (e.g. int4 weights
  // compute at fp16); 0 peak: unknown, compute time not predicted.
  double peak = 0;
  Precision peak_precision = Precision::FP32;
  double bandwidth = 0;  // DRAM rate used (after efficiency); 0: unknown
  double seconds = 0;    // predicted latency of one run (all nodes)
  double compute_seconds = 0, memory_seconds = 0, overhead_seconds = 0;  // sums per node
  std::string bound;         // "compute", "memory" or "overhead": the largest of the three
  double intensity = 0;      // model FLOPs per byte
  double ridge = 0;          // target peak / bandwidth (FLOP per byte); 0 when unknown
  double memory_needed = 0;  // weights + activations + KV cache + other outputs, bytes
  bool fits = true;          // memory_needed <= target memory (true when memory unknown)
  bool memory_known = false;
  std::vector<ClassTotals> classes;    // by predicted seconds, largest first
  std::vector<TimedNode> top;          // the slowest nodes, largest first (up to 10)
  std::vector<Rejection> unsupported;  // nodes the target's toolchain would not run
  std::string op_support;              // "RKNN-Toolkit2 2.3.2" when a profile was checked
  std::vector<std::string> notes;      // substitutions and unknowns, said plainly
};

// Holds `a` against `target`; `original` (the model as given to the target's toolchain) is
// checked against `profile` (nullptr: no profile).
Prediction predict(const Analysis& a, const Target& target, const ir::Graph& original,
                   const OpSupportProfile* profile);

}  // namespace polyinfer::plan
