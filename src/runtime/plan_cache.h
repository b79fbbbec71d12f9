// What a kernel prepares per input shape (a oneDNN primitive with its JIT code and scratchpad
// layout, a reorder, a descriptor), kept so that a shape seen again runs without preparing it
// again — and bounded, because a model with dynamic shapes may show a node a new shape on every
// run: a decoder's attention products grow by one key per generated token, an encoder serves
// sentences of every length. Unbounded, such a cache held one plan per shape ever seen (a
// decoder's session grew by ~100 KB per generated token; docs/design.md, Memory).
//
// ShapePlans keeps the `capacity` most recently used plans and drops the least recently used one
// beyond that. Kernels whose library can describe a product with run-time dimensions do better
// than re-plan each new shape: onednn/matmul.cpp gives one-off shapes one shared plan
// (ShapePlans::seen tells a recurring shape from a one-off one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <list>
#include <map>
#include <set>
#include <utility>

namespace polyinfer {

// Counts over every ShapePlans of the process, for tests and diagnostics: a session whose shapes
// change from run to run must stop making plans once its nodes have seen their shapes' pattern.
struct ShapePlanStats {
  uint64_t made = 0;     // plans added
  uint64_t evicted = 0;  // plans dropped to make room (each one made again if its shape returns)
  uint64_t held = 0;     // plans alive now
};
ShapePlanStats shape_plan_stats();

namespace detail {
void count_plans(int64_t made, int64_t evicted, int64_t destroyed);
}  // namespace detail

template <class Key, class Plan> class ShapePlans {
 public:
  // Eight shapes: a decoder's prefill and decode step, an encoder's few batch sizes, with room.
  static constexpr size_t kDefaultCapacity = 8;

  explicit ShapePlans(size_t capacity = kDefaultCapacity) : capacity_(capacity ? capacity : 1) {}
  ~ShapePlans() { detail::count_plans(0, 0, static_cast<int64_t>(order_.size())); }
  ShapePlans(const ShapePlans&) = delete;
  ShapePlans& operator=(const ShapePlans&) = delete;

  // The plan for `key`, now the most recently used; nullptr when there is none.
  Plan* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Adds the plan for `key` (which has none) as the most recently used, dropping the least
  // recently used one when the cache is full. The reference stays valid until that plan is
  // dropped: at the earliest, `capacity` adds later.
  Plan& add(const Key& key, Plan plan) {
    int64_t evicted = 0;
    if (order_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
      evicted = 1;
    }
    order_.emplace_front(key, std::move(plan));
    index_[key] = order_.begin();
    detail::count_plans(1, evicted, 0);
    return order_.front().second;
  }

  // Whether `key` was asked about before (true from its second call on). Remembers up to
  // 8 x capacity keys, then starts over: a shape that recurs only after that many others counts
  // as new again.
  bool seen(const Key& key) {
    if (seen_.count(key)) return true;
    if (seen_.size() >= 8 * capacity_) seen_.clear();
    seen_.insert(key);
    return false;
  }

  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  size_t capacity_;
  std::list<std::pair<Key, Plan>> order_;  // most recently used first
  std::map<Key, typename std::list<std::pair<Key, Plan>>::iterator> index_;
  std::set<Key> seen_;
};

}  // namespace polyinfer
