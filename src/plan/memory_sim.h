// Activation memory of a graph, predicted without running it: the executor's allocation order
// replayed from static shapes (each node's outputs allocated when it runs, each value released
// after its last reader, views sharing their source's buffer), rounded to the runtime pool's
// size classes and packed by the same arena planner (runtime/arena_plan.h) the runtime uses after
// its first run. So the prediction is the session's planned arena, not a naive sum.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/cost.h"

namespace polyinfer::plan {

struct ActivationMemory {
  size_t arena_bytes = 0;      // the planned arena: what a session serves intermediates from
  size_t peak_live_bytes = 0;  // most bytes alive at one time (a lower bound for any packing)
  size_t total_bytes = 0;      // every intermediate added up (what no reuse at all would need)
  size_t output_bytes = 0;     // the graph's outputs (handed to the caller, not in the arena)
  size_t buffers = 0;          // allocations the run makes
  // Values whose size is unknown (dynamic shapes the prediction could not resolve); each is
  // counted as 0 bytes, so a non-empty list means the figures are lower bounds.
  std::vector<std::string> unknown;
};

// `element_bytes` prices elements as in node_cost (default: their own dtype's size).
ActivationMemory simulate_activation_memory(const ir::Graph& graph,
                                            const ElementBytes& element_bytes = {});

}  // namespace polyinfer::plan
