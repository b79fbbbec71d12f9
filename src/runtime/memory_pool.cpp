#include "runtime/memory_pool.h"

#include <algorithm>
#include <iterator>

namespace polyinfer {

MemoryPool::~MemoryPool() {
  release_cached();
  if (arena_) backing_->deallocate(arena_, stats_.arena);
  // Buffers still live belong to tensors that outlive the session (returned outputs); they hold
  // a reference to this pool through their storage, so reaching here means none are left.
}

size_t MemoryPool::size_class(size_t bytes) {
  // Round to 256 bytes below 64 KiB and to 1/8 of the next power of two above, so reuse finds
  // a match without wasting more than 12.5%.
  if (bytes <= 65536) return (bytes + 255) / 256 * 256;
  size_t p = 65536;
  while (p < bytes) p <<= 1;
  const size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

void* MemoryPool::allocate(size_t bytes) {
  const size_t cls = size_class(bytes == 0 ? 1 : bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ == Mode::Replaying && !diverged_) {
    const size_t n = cursor_++;
    bool ok = n < events_.size() && events_[n].size == cls;
    if (ok && !events_[n].escaped) {
      const size_t off = events_[n].offset;
      // The block must not overlap an arena block still alive (it would if this run freed
      // something later than the recorded one did).
      auto next = arena_live_.lower_bound(off);
      ok = next == arena_live_.end() || next->first >= off + cls;
      if (ok && next != arena_live_.begin()) {
        auto prev = std::prev(next);
        ok = prev->first + prev->second <= off;
      }
      if (ok) {
        arena_live_[off] = cls;
        stats_.in_use += cls;
        stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
        ++stats_.planned_allocs;
        return arena_ + off;
      }
    }
    if (!ok) diverged_ = true;
  }
  void* p = pool_allocate(cls);
  if (mode_ == Mode::Recording) {
    recording_[p] = events_.size();
    events_.push_back({cls, clock_++, 0, false, 0});
  }
  return p;
}

void* MemoryPool::pool_allocate(size_t cls) {
  void* p = nullptr;
  auto it = free_.find(cls);
  if (it != free_.end()) {
    p = it->second;
    free_.erase(it);
  } else {
    p = backing_->allocate(cls);
    stats_.reserved += cls;
    ++stats_.system_allocs;
  }
  live_[p] = cls;
  stats_.in_use += cls;
  if (stats_.in_use > stats_.peak_in_use) stats_.peak_in_use = stats_.in_use;
  return p;
}

void MemoryPool::deallocate(void* ptr, size_t) {
  std::lock_guard<std::mutex> lock(mu_);
  char* c = static_cast<char*>(ptr);
  if (arena_ && c >= arena_ && c < arena_ + stats_.arena) {
    auto a = arena_live_.find(static_cast<size_t>(c - arena_));
    if (a != arena_live_.end()) {
      stats_.in_use -= a->second;
      arena_live_.erase(a);
    }
    return;
  }
  if (auto r = recording_.find(ptr); r != recording_.end()) {
    events_[r->second].end = clock_++;
    recording_.erase(r);
  }
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  stats_.in_use -= it->second;
  free_.emplace(it->second, ptr);
  live_.erase(it);
}

void MemoryPool::release_cached() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [cls, p] : free_) {
    backing_->deallocate(p, cls);
    stats_.reserved -= cls;
  }
  free_.clear();
}

void MemoryPool::begin_run() {
  std::lock_guard<std::mutex> lock(mu_);
  cursor_ = 0;
  diverged_ = false;
  if (disabled_) {
    mode_ = Mode::Idle;
  } else if (!planned_) {
    events_.clear();
    recording_.clear();
    clock_ = 0;
    mode_ = Mode::Recording;
  } else {
    mode_ = Mode::Replaying;
  }
}

void MemoryPool::end_run() {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ == Mode::Recording) {
    for (const auto& [p, e] : recording_) events_[e].escaped = true;
    recording_.clear();
    plan_arena();
  } else if (mode_ == Mode::Replaying && !arena_live_.empty()) {
    // An arena block outlives the run (a value the recorded run freed was handed to the
    // caller): a later run would overwrite it, so the arena is never used again.
    disabled_ = true;
    planned_ = false;
  } else if (mode_ == Mode::Replaying && (diverged_ || cursor_ != events_.size())) {
    // This run did not follow the plan: record the next one and plan again. The old arena
    // stays until no block of it is alive.
    planned_ = false;
  }
  mode_ = Mode::Idle;
}

void MemoryPool::plan_arena() {
  std::vector<size_t> order;
  for (size_t i = 0; i < events_.size(); ++i)
    if (!events_[i].escaped) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return events_[a].size > events_[b].size; });
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t i : order) {
    Event& e = events_[i];
    // Blocks alive at the same time as e, by offset; take the first gap that fits.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t j : placed) {
      const Event& o = events_[j];
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
  if (total == 0 || !arena_live_.empty()) return;  // nothing to plan, or the old arena is in use
  if (arena_) {
    backing_->deallocate(arena_, stats_.arena);
    stats_.reserved -= stats_.arena;
  }
  arena_ = static_cast<char*>(backing_->allocate(total));
  stats_.arena = total;
  stats_.reserved += total;
  planned_ = true;
  // The recorded run's buffers are cached in the pool; the arena replaces them.
  for (auto& [cls, p] : free_) {
    backing_->deallocate(p, cls);
    stats_.reserved -= cls;
  }
  free_.clear();
}

MemoryPool::Stats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace polyinfer
