// The partitioner: decides which provider runs each node (placement rules 2 and 4 of
// docs/design.md) and creates the node's kernel there. The second step of a session's creation,
// after the optimizer and before the executor plans the run (docs/design.md "A node's life").
#pragma once

#include <memory>
#include <vector>

#include "runtime/executor.h"
#include "runtime/weight_release.h"

namespace polyinfer {

// Pass 1: for each node in order, ask the providers in preference order to create its kernel;
//         the first that can, takes it; each refusal's reason is kept.
// Pass 2: a node that nobody took is an UnsupportedOp error that names the op, the node and
//         every provider's reason, and suggests adding cpu when it is not listed.
// `weights` sees each node as soon as its kernel exists, and frees the weights every reader
// prepacked then, before the next kernel makes its own copy.
// `workers` > 1 creates kernels on that many threads when every provider allows it
// (Provider::concurrent_kernel_creation) and the graph is big enough to pay for the threads:
// placement and the error raised are the same as in order, and `weights` sees one node at a
// time but not in node order.
// `outer` is set where `graph` is a subgraph (runtime/kernel_info.h: OuterScope).
std::vector<PlacedNode> partition(std::shared_ptr<const ir::Graph> graph,
                                  std::shared_ptr<const RuntimeContext> rt, WeightRelease& weights,
                                  int workers = 1, const OuterScope* outer = nullptr);

}  // namespace polyinfer
