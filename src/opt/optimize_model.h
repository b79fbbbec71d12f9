// The optimizer on a whole imported model: opt::optimize, with ONNX shape inference run again
// where import left shapes unknown that folding can settle.
//
//   Model m = import_onnx_file("shufflenet_v2.onnx");
//   opt::OptimizeReport r = opt::optimize_model(m, 3);
//
// Why: ONNX shape inference at import cannot evaluate shape arithmetic (a channel split's
// Shape -> Gather -> Div -> Slice), so the Slice's output shape is unknown, and so is every
// shape after it. Kernels that prepack or plan by shape then wait for the first run (ShuffleNetV2:
// 26 of its 1x1 convolutions). Level-1 folding turns such chains into constants; inference then
// sees through them. It runs only where a value's shape has an unknown dimension (not a named
// one: a dynamic batch stays symbolic whatever is folded) and folding changed the graph.
#pragma once

#include "onnx/import.h"
#include "opt/optimizer.h"

namespace polyinfer::opt {

// Optimizes m.graph at `level` (0..3) as optimize() does. Where a shape is unknown, inference
// runs as a pass after the level-1 cleanups (optimize()'s `after_cleanups`), named
// "infer-shapes-again" in the report with the number of values whose shape became known.
OptimizeReport optimize_model(Model& m, int level);

// Whether a node of g's top level has an output whose shape is not known, in rank or in a
// dimension that has no name.
bool has_unknown_shapes(const ir::Graph& g);

}  // namespace polyinfer::opt
