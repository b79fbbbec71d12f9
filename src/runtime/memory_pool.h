// The per-session, per-device allocator of intermediate tensors, in two modes.
//
// Caching pool: buffers the executor releases (their last reader has run) go back to the pool
// and serve the next request of their size class, or of a class down to half theirs, so a
// steady-state run allocates nothing from the system.
//
// Planned arena: the first run of a session is recorded — every allocation's size and when it
// was freed. Its lifetimes are then packed into one arena (runtime/arena_plan.h: greedy by size,
// each block takes the lowest offset that no block alive at the same time uses), and later runs
// serve the n-th allocation from its planned offset. The executor is deterministic, so a run with
// the same input shapes repeats the recorded sequence; buffers still alive after the recorded run
// (the outputs handed to the caller) are never planned. Each replayed allocation is checked — same
// size, and no overlap with an arena block still alive — and anything else is served by the
// pool, so a run that differs (new shapes, a data-dependent branch) stays correct; a run that
// differed is re-recorded.
//
// Concurrent runs: the arena serves one run at a time. The run that begins while no other holds
// it records or replays (its thread's allocations); runs that begin meanwhile are served by the
// caching pool, unrecorded, and leave the plan as it is.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer {

class MemoryPool final : public Allocator {
 public:
  explicit MemoryPool(std::shared_ptr<Allocator> backing) : backing_(std::move(backing)) {}
  ~MemoryPool() override;

  Device device() const override { return backing_->device(); }
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;

  // Returns every cached (free) buffer to the backing allocator.
  void release_cached();

  // Bracket one top-level run (Session::run), on the thread that runs it: the first is recorded,
  // later ones replay the plan; a run that begins while another holds the arena takes the pool.
  void begin_run();
  void end_run();

  struct Stats {
    size_t in_use = 0;       // bytes handed out now, by the size classes asked for
    size_t peak_in_use = 0;  // most bytes handed out at once
    size_t reserved = 0;     // bytes held from the backing allocator (in use + cached)
    size_t system_allocs = 0;
    size_t arena = 0;           // bytes of the planned arena (0 until a run has been planned)
    size_t planned_allocs = 0;  // allocations served from the arena so far
  };
  Stats stats() const;

 private:
  void* pool_allocate(size_t cls);  // caller holds mu_
  void plan_arena();                // caller holds mu_

  struct Event {
    size_t size = 0;
    size_t begin = 0, end = 0;  // event indices of the allocation and of its release
    bool escaped = false;       // still alive at the end of the recorded run
    size_t offset = 0;
  };
  enum class Mode { Idle, Recording, Replaying };

  std::shared_ptr<Allocator> backing_;
  mutable std::mutex mu_;
  Mode mode_ = Mode::Idle;
  // The thread of the run that holds the arena (mode_ is not Idle): only its allocations are
  // recorded or replayed.
  std::thread::id owner_;
  bool run_held_ = false;  // a run is between begin_run and end_run (disabled_: mode_ is Idle)
  bool planned_ = false, diverged_ = false, disabled_ = false;
  std::vector<Event> events_;          // the recorded run's allocations, in order
  std::map<void*, size_t> recording_;  // live recorded buffer → its event
  size_t clock_ = 0, cursor_ = 0;
  char* arena_ = nullptr;
  // Arena blocks in use as (offset, size), sorted by offset: a handful at a time, so a sorted
  // vector costs no allocation per run where a map would cost one per tensor.
  std::vector<std::pair<size_t, size_t>> arena_live_;
  struct Held {
    size_t held = 0;   // the buffer's size class
    size_t asked = 0;  // the request's (smaller where a larger cached buffer served it)
  };
  std::multimap<size_t, void*> free_;  // size class → cached buffer
  std::map<void*, Held> live_;         // buffer handed out from the pool
  Stats stats_;
};

}  // namespace polyinfer
