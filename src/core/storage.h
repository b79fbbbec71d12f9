// The memory block behind tensors, and the one way into a Tensor's internals (src/core only).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer {

class DeferredSource;

// The memory behind one or more tensors. String tensors keep std::string objects in `strings`.
struct Storage {
  void* data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<Allocator> allocator;
  std::vector<std::string> strings;
  Device device;
  // A deferred tensor's bytes (core/deferred.h): until the first access that needs `data`, they
  // lie at `pending`, in memory that `source` keeps.
  std::atomic<const void*> pending{nullptr};
  std::shared_ptr<DeferredSource> source;
  std::mutex mu;  // held while `pending` is copied into `data`

  ~Storage();
};

// Copies a deferred storage's bytes into memory of its own; a no-op when there is nothing
// pending. Thread-safe.
void materialize(Storage& s);

// Tensor befriends this: code in src/core that builds tensors the public API cannot.
struct TensorAccess {
  static const std::shared_ptr<Storage>& storage(const Tensor& t) { return t.storage_; }
  // A tensor over `storage`, which already holds (or will hold) nbytes of `dtype` x `shape`.
  static Tensor make(DType dtype, Shape shape, std::shared_ptr<Storage> storage);
};

}  // namespace polyinfer
