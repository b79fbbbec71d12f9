#include "runtime/shared_prepack.h"

namespace polyinfer {

std::shared_ptr<const Tensor> SharedPrepacks::get(const void* graph, const std::string& name,
                                                  const std::string& key,
                                                  const std::function<Tensor()>& make) {
  std::shared_ptr<Entry> e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<Entry>& slot = entries_[{graph, name, key}];
    if (!slot) slot = std::make_shared<Entry>();
    e = slot;
  }
  // Per key, so that packing one weight does not hold up the kernels packing others.
  std::lock_guard<std::mutex> lock(e->mu);
  if (std::shared_ptr<const Tensor> p = e->packed.lock()) return p;
  auto p = std::make_shared<const Tensor>(make());
  e->packed = p;
  return p;
}

}  // namespace polyinfer
