// The optimizer's unit of work: one graph rewrite, applied where its pattern matches.
//
// A pass rewrites one ir::Graph in place and says how many rewrites it made (0: the graph is
// unchanged). optimize() runs it on the top level and on every If/Loop/Scan body, each as a graph
// of its own (a body's formal inputs and outputs are its graph inputs and outputs; the values it
// reads from enclosing graphs are names it does not define, and constant() sees those that are
// initializers there). Passes keep these invariants, which optimize() and the tests rely on:
//   - nodes stay in topological order (a node that replaces a chain takes the place of the
//     chain's last node, so everything it reads is already defined there);
//   - graph inputs and outputs keep their names, and every value a subgraph (If/Loop body) reads
//     from outside stays defined under its name;
//   - value_types stay right: a rewritten value keeps its type, a new value gets its own;
//   - the bodies of the graph's nodes are not touched (optimize() takes them one by one), but
//     by loop-invariant motion, whose rewrite is moving nodes out of a Loop's body.
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
