// The optimizer on a whole imported model: opt::optimize, with type inference (src/infer/) run
// again where shapes are unknown that folding can settle.
//
//   Model m = import_onnx_file("shufflenet_v2.onnx");
//   infer::infer_types(m);
//   opt::OptimizeReport r = opt::optimize_model(m, 3);
//
// Why: a shape computed by arithmetic on a dynamic value stays unknown until folding turns the
// arithmetic into constants; kernels that prepack or plan by shape then wait for the first run.
// It runs only where a value's shape has an unknown dimension (not a named one: a dynamic batch
// stays symbolic whatever is folded) and folding made new constants.
#pragma once

#include "onnx/import.h"
#include "opt/optimizer.h"

namespace polyinfer::opt {

// Optimizes m.graph at `level` (0..3) as optimize() does. Where a shape is unknown, inference
// runs as a pass after the level-1 cleanups (optimize()'s `after_cleanups`), named
// "infer-types" in the report with the number of values whose type it refined.
OptimizeReport optimize_model(Model& m, int level);

// Whether a node of g's top level has an output whose shape is not known, in rank or in a
// dimension that has no name.
bool has_unknown_shapes(const ir::Graph& g);

}  // namespace polyinfer::opt
