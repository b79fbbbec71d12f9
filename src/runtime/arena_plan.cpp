#include "runtime/arena_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace polyinfer {

size_t size_class(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= 65536) return (bytes + 255) / 256 * 256;
  size_t p = 65536;
  while (p < bytes) p <<= 1;
  const size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

size_t plan_arena(std::vector<Lifetime>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;
  size_t total = 0;
  for (size_t i : order) {
    Lifetime& e = buffers[i];
    // Buffers alive at the same time as e, by offset; take the first gap that fits.
    busy.clear();
    for (size_t j : placed) {
      const Lifetime& o = buffers[j];
      if (o.begin < e.end && e.begin < o.end) busy.push_back({o.offset, o.offset + o.size});
    }
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& [b, en] : busy) {
      if (off + e.size <= b) break;
      off = std::max(off, en);
    }
    e.offset = off;
    total = std::max(total, off + e.size);
    placed.push_back(i);
  }
  return total;
}

}  // namespace polyinfer
