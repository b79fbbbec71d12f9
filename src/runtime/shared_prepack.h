// Prepacked weights shared across a session (KernelInfo::shared_prepack): where several nodes
// read one weight and their kernels pack it alike (an exporter that unrolled an LSTM into a
// Gemm per step, each reading the same 6 MB matrix), the session holds one packed copy instead
// of one per node, makes it once, and every node reads that copy hot from the cache.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "polyinfer/tensor.h"

namespace polyinfer {

class SharedPrepacks {
 public:
  // The packing `key` of the weight `name` held by `graph` (an identity: never dereferenced):
  // made by `make` for the first caller; later callers, on any thread, get the same tensor
  // while any kernel still holds it (callers meanwhile wait on that key alone). A `make` that
  // throws leaves nothing behind: the next caller makes it again.
  std::shared_ptr<const Tensor> get(const void* graph, const std::string& name,
                                    const std::string& key, const std::function<Tensor()>& make);

 private:
  // The kernels own the packed copies; an entry only finds them. A kernel that was created and
  // then declined drops its copy with it, instead of the session keeping it.
  struct Entry {
    std::mutex mu;  // held while the packing is made
    std::weak_ptr<const Tensor> packed;
  };
  std::mutex mu_;  // guards entries_
  std::map<std::tuple<const void*, std::string, std::string>, std::shared_ptr<Entry>> entries_;
};

}  // namespace polyinfer
