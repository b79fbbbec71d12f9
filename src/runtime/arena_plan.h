// Packing buffer lifetimes into one arena: the planner behind MemoryPool's planned arena, shared
// with `plan`, which predicts a session's arena from the graph alone with the same algorithm.
#pragma once

#include <cstddef>
#include <vector>

namespace polyinfer {

// One buffer: its size and the half-open interval [begin, end) of allocation events it is alive
// in (the clock counts allocations and releases together, in the order they happen).
struct Lifetime {
  size_t size = 0;
  size_t begin = 0, end = 0;
  size_t offset = 0;  // set by plan_arena
};

// Greedy by size, largest first: each buffer takes the lowest offset that no buffer alive at the
// same time uses. Sets every `offset`; returns the arena's size in bytes.
size_t plan_arena(std::vector<Lifetime>& buffers);

// The size class a request of `bytes` is served at (MemoryPool rounds every request to one):
// 256-byte steps up to 64 KiB, then 1/8 of the next power of two, so a reused buffer wastes at
// most 12.5%.
size_t size_class(size_t bytes);

}  // namespace polyinfer
