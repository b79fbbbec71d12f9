// The partitioner: decides which provider runs each node (placement rules 2 and 4 of
// docs/DESIGN.md) and creates the node's kernel on it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/executor.h"

namespace polyinfer {

// Makes the KernelInfo a provider sees for a node (the executor supplies it: it knows the
// graph's constants and how to compile subgraphs).
using KernelInfoFactory = std::function<std::unique_ptr<KernelInfo>(const ir::Node&)>;

// Pass 1: for each node in order, ask the providers in preference order to create its kernel;
//         the first that can, takes it; each refusal's reason is kept.
// Pass 2: a node that nobody took is an UnsupportedOp error that names the op, the node and
//         every provider's reason, and suggests adding cpu when it is not listed.
// `on_placed`, when given, sees each node as soon as its kernel exists (the executor frees
// prepacked weights there, before the next kernel makes its own copy).
// `workers` > 1 creates kernels on that many threads when every provider allows it
// (Provider::concurrent_kernel_creation) and the graph is big enough to pay for the threads:
// placement and the error raised are the same as in order, and on_placed is called for one node
// at a time but not in node order; `make_info` and on_placed must be safe to call from any thread
// (the executor guards its weights, runtime/executor.cpp).
std::vector<PlacedNode> partition(const ir::Graph& graph, const RuntimeContext& rt,
                                  const KernelInfoFactory& make_info,
                                  const std::function<void(const PlacedNode&)>& on_placed = {},
                                  int workers = 1);

}  // namespace polyinfer
