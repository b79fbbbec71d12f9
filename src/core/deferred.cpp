#include "core/deferred.h"

#include <cstring>

#include "core/storage.h"

namespace polyinfer {

void materialize(Storage& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  const void* p = s.pending.load(std::memory_order_relaxed);
  if (!p) return;  // another thread copied it first
  void* d = s.allocator->allocate(s.bytes);
  std::memcpy(d, p, s.bytes);
  s.data = d;
  s.pending.store(nullptr, std::memory_order_release);
  s.source->release(p, s.bytes);
  s.source.reset();
}

void DeferredSource::materialize_all() {
  std::vector<std::shared_ptr<Storage>> alive;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& w : tensors_)
      if (auto s = w.lock()) alive.push_back(std::move(s));
    tensors_.clear();
  }
  for (const auto& s : alive) materialize(*s);
}

Tensor make_deferred(DType dtype, Shape shape, const void* bytes,
                     std::shared_ptr<DeferredSource> source) {
  PI_CHECK(dtype != DType::String, Internal, "string tensors cannot be deferred");
  auto storage = std::make_shared<Storage>();
  storage->allocator = host_allocator();
  storage->device = Device::cpu();
  Tensor t = TensorAccess::make(dtype, std::move(shape), storage);
  storage->bytes = t.nbytes();
  if (storage->bytes == 0) return t;
  storage->source = source;
  storage->pending.store(bytes, std::memory_order_release);
  std::lock_guard<std::mutex> lock(source->mu_);
  source->tensors_.push_back(storage);
  return t;
}

bool is_deferred(const Tensor& t) {
  const auto& s = TensorAccess::storage(t);
  return s && s->pending.load(std::memory_order_acquire) != nullptr;
}

}  // namespace polyinfer
