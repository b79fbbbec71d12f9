// Reuse of large host buffers while a session is being created.
#pragma once

#include <cstddef>

namespace polyinfer {

// While one exists, the host allocator keeps the buffers of 2 MiB and more that are freed (up to
// 32 MiB of them, oldest freed first when over) and gives each to the next allocation of the same
// size instead of new memory. Session creation holds one: a kernel's prepacked weight then takes
// the memory of an original freed just before it (a transposed or reordered copy often has the
// same size) instead of fresh pages, which the system must zero first. Weights read from the
// model file in place (core/deferred.h) have no such original; copies remain for a model
// loaded from memory and for weights staged at an aligned address for oneDNN. The kept buffers
// are freed when the last one is destroyed. Thread-safe.
class HostRecycling {
 public:
  HostRecycling();
  ~HostRecycling();
  HostRecycling(const HostRecycling&) = delete;
  HostRecycling& operator=(const HostRecycling&) = delete;

  // Bytes kept for reuse right now (for tests).
  static size_t kept_bytes();
};

}  // namespace polyinfer
