// The optimizer's unit of work: one graph rewrite, applied where its pattern matches.
//
// A pass rewrites a top-level ir::Graph in place and says how many rewrites it made (0: the
// graph is unchanged). Passes keep these invariants, which optimize() and the tests rely on:
//   - nodes stay in topological order (a node that replaces a chain takes the place of the
//     chain's last node, so everything it reads is already defined there);
//   - graph inputs and outputs keep their names, and every value a subgraph (If/Loop body) reads
//     from outside stays defined under its name;
//   - value_types stay right: a rewritten value keeps its type, a new value gets its own;
//   - bodies of If/Loop/Scan are not touched.
// Passes are matched to levels (docs/optimizer.md): a pass runs when the level is >= min_level().
#pragma once

#include "ir/graph.h"

namespace polyinfer::opt {

class Pass {
 public:
  virtual ~Pass() = default;
  // Short name for summaries: "constant-folding", "conv-bn".
  virtual const char* name() const = 0;
  // The lowest optimization level that runs this pass (1: standard ONNX output, 2: fusions
  // into ai.polyinfer operators).
  virtual int min_level() const = 0;
  // Rewrites `g`; returns the number of rewrites made (0 means the graph did not change).
  virtual int run(ir::Graph& g) = 0;
};

}  // namespace polyinfer::opt
