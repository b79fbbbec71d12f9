#include "runtime/memory_pool.h"

#include "core/huge_pages.h"
#include "runtime/arena_plan.h"

#include <algorithm>
#include <iterator>

namespace polyinfer {

MemoryPool::~MemoryPool() {
  release_cached();
  if (arena_) backing_->deallocate(arena_, stats_.arena);
  // Buffers still live belong to tensors that outlive the session (returned outputs); they hold
  // a reference to this pool through their storage, so reaching here means none are left.
}

void* MemoryPool::allocate(size_t bytes) {
  const size_t cls = size_class(bytes == 0 ? 1 : bytes);
  std::lock_guard<std::mutex> lock(mu_);
  const bool owner = mode_ != Mode::Idle && std::this_thread::get_id() == owner_;
  if (owner && mode_ == Mode::Replaying && !diverged_) {
    const size_t n = cursor_++;
    bool ok = n < events_.size() && events_[n].size == cls;
    if (ok && !events_[n].escaped) {
      const size_t off = events_[n].offset;
      // The block must not overlap an arena block still alive (it would if this run freed
      // something later than the recorded one did).
      auto next = std::lower_bound(arena_live_.begin(), arena_live_.end(),
                                   std::pair<size_t, size_t>(off, 0));
      ok = next == arena_live_.end() || next->first >= off + cls;
      if (ok && next != arena_live_.begin()) {
        auto prev = std::prev(next);
        ok = prev->first + prev->second <= off;
      }
      if (ok) {
        arena_live_.insert(next, {off, cls});
        stats_.in_use += cls;
        stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
        ++stats_.planned_allocs;
        return arena_ + off;
      }
    }
    if (!ok) diverged_ = true;
  }
  void* p = pool_allocate(cls);
  if (owner && mode_ == Mode::Recording) {
    recording_[p] = events_.size();
    events_.push_back({cls, clock_++, 0, false, 0});
  }
  return p;
}

void* MemoryPool::pool_allocate(size_t cls) {
  void* p = nullptr;
  // The smallest cached buffer that fits, up to twice the request: sizes that change from layer
  // to layer (DenseNet's concatenated features gain 32 channels per layer) then reuse a buffer
  // freed earlier instead of taking fresh memory for every class not seen yet (a faster first
  // run and a lower peak; the planned runs after the first use the arena either way).
  size_t held = cls;
  auto it = free_.lower_bound(cls);
  if (it != free_.end() && it->first <= 2 * cls) {
    p = it->second;
    held = it->first;
    free_.erase(it);
  } else {
    p = backing_->allocate(cls);
    stats_.reserved += cls;
    ++stats_.system_allocs;
  }
  live_[p] = {held, cls};
  stats_.in_use += cls;
  if (stats_.in_use > stats_.peak_in_use) stats_.peak_in_use = stats_.in_use;
  return p;
}

void MemoryPool::deallocate(void* ptr, size_t) {
  std::lock_guard<std::mutex> lock(mu_);
  char* c = static_cast<char*>(ptr);
  if (arena_ && c >= arena_ && c < arena_ + stats_.arena) {
    const size_t off = static_cast<size_t>(c - arena_);
    auto a =
        std::lower_bound(arena_live_.begin(), arena_live_.end(), std::pair<size_t, size_t>(off, 0));
    if (a != arena_live_.end() && a->first == off) {
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
  stats_.in_use -= it->second.asked;
  free_.emplace(it->second.held, ptr);
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
  if (run_held_) return;  // another run holds the arena
  owner_ = std::this_thread::get_id();
  run_held_ = true;
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
  if (!run_held_ || std::this_thread::get_id() != owner_) return;
  run_held_ = false;
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
  std::vector<size_t> index;
  std::vector<Lifetime> buffers;
  for (size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].escaped) continue;
    index.push_back(i);
    buffers.push_back({events_[i].size, events_[i].begin, events_[i].end, 0});
  }
  const size_t total = polyinfer::plan_arena(buffers);
  for (size_t k = 0; k < index.size(); ++k) events_[index[k]].offset = buffers[k].offset;
  if (total == 0 || !arena_live_.empty()) return;  // nothing to plan, or the old arena is in use
  if (arena_) {
    backing_->deallocate(arena_, stats_.arena);
    stats_.reserved -= stats_.arena;
  }
  arena_ = static_cast<char*>(backing_->allocate(total));
  if (backing_->device().is_cpu()) advise_huge_pages(arena_, total);
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
