// The graph optimizer: rewrites an imported ir::Graph so that it runs faster, with the same
// outputs (docs/optimizer.md).
//
//   Model m = import_onnx_file("resnet18.onnx");
//   opt::OptimizeReport r = opt::optimize(*m.graph, 3);
//   std::cout << r.summary() << "\n";  // "122 -> 51 nodes: conv-bn 20, fuse-activation 17, ..."
//
// Levels: 0 nothing; 1 standard-ONNX rewrites (constant folding, Identity/Dropout and dead-node
// elimination, static Shape folding, Conv+BatchNormalization folding, MatMul+Add -> Gemm); 2 and
// 3 add fusions into ai.polyinfer operators, which only polyinfer runs. Session runs it at
// SessionOptions::optimization_level; `polyinfer optimize` writes its result.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "opt/pass.h"

namespace polyinfer::opt {

struct OptimizeReport {
  int level = 0;
  int nodes_before = 0, nodes_after = 0;
  int rounds = 0;  // passes over the whole pass list until nothing changed (capped)
  // Rewrites per pass, totalled over the rounds, in pass order (passes that ran only).
  std::vector<std::pair<std::string, int>> rewrites;
  bool polyinfer_only = false;  // the result uses ai.polyinfer operators

  // "122 -> 51 nodes (conv-bn 20, fuse-activation 17)".
  std::string summary() const;
};

// Every pass, in the order optimize() runs them.
std::vector<std::unique_ptr<Pass>> all_passes();
// The passes run once after the channels-last layout (level 3), on the operators it emits.
std::vector<std::unique_ptr<Pass>> after_layout_passes();

// Runs the passes of `level` (0..3) over `g` until none changes it (at most 10 rounds), then
// drops initializers nothing reads. Throws InvalidArgument for a level outside 0..3.
// `after_cleanups`, when given, joins the list right after the level-1 cleanups (Identity, shape
// and constant folding, dead nodes) and before Conv+BatchNormalization folding and the fusions:
// in the first round it sees the graph folded but still standard ONNX (optimize_model.h).
OptimizeReport optimize(ir::Graph& g, int level, std::unique_ptr<Pass> after_cleanups = nullptr);

}  // namespace polyinfer::opt
