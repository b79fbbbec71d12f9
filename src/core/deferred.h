// Tensors whose bytes stay in a model file's mapping until something needs a copy of them.
//
// Session creation imports a model's weights this way (ImportOptions::defer_weights). A kernel
// that prepacks a weight reads it straight from the file (Tensor::peek_bytes), so the weight is
// never first copied whole into fresh memory; any other access (raw_data(), data<T>()) copies
// the tensor into memory of its own on its first use. Once every kernel exists, the session
// calls materialize_all(): no tensor reads the file after that, so a model file replaced or
// truncated while a session runs cannot fault it.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer {

struct Storage;

// The memory that deferred tensors read from (a mapped file), and the list of those tensors.
class DeferredSource {
 public:
  virtual ~DeferredSource() = default;

  // Copies every tensor still deferred from here into memory of its own.
  void materialize_all();

  // Called once per tensor when its bytes [p, p + n) are no longer read from here (copied, or
  // the tensor freed): a mapping drops those pages from the process.
  virtual void release(const void* p, size_t n) const = 0;

 private:
  friend Tensor make_deferred(DType, Shape, const void*, std::shared_ptr<DeferredSource>);
  std::mutex mu_;
  std::vector<std::weak_ptr<Storage>> tensors_;
};

// A tensor of `dtype` and `shape` whose nbytes() bytes lie at `bytes` (any alignment) in memory
// that `source` keeps readable for as long as it lives. Not for strings.
Tensor make_deferred(DType dtype, Shape shape, const void* bytes,
                     std::shared_ptr<DeferredSource> source);

// Whether `t` still reads its bytes from a DeferredSource.
bool is_deferred(const Tensor& t);

}  // namespace polyinfer
