#include "runtime/plan_cache.h"

#include <atomic>

namespace polyinfer {

namespace {
std::atomic<uint64_t> g_made{0}, g_evicted{0}, g_dropped{0};
}  // namespace

namespace detail {
void count_plans(int64_t made, int64_t evicted, int64_t destroyed) {
  if (made) g_made.fetch_add(static_cast<uint64_t>(made), std::memory_order_relaxed);
  if (evicted) g_evicted.fetch_add(static_cast<uint64_t>(evicted), std::memory_order_relaxed);
  if (destroyed) g_dropped.fetch_add(static_cast<uint64_t>(destroyed), std::memory_order_relaxed);
}
}  // namespace detail

ShapePlanStats shape_plan_stats() {
  ShapePlanStats s;
  s.made = g_made.load(std::memory_order_relaxed);
  s.evicted = g_evicted.load(std::memory_order_relaxed);
  // Read one after another while other threads may count: never below zero.
  const uint64_t gone = s.evicted + g_dropped.load(std::memory_order_relaxed);
  s.held = s.made > gone ? s.made - gone : 0;
  return s;
}

}  // namespace polyinfer
