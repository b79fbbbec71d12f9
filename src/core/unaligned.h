// Floats read from memory of any alignment.
//
// A weight still in the model file (Tensor::peek_bytes, core/deferred.h) lies wherever the
// file's protobuf put it; a float* to it would promise the compiler an alignment it may not have
// (a vectorized loop may then use aligned loads). Kernels that prepack weights read them through
// this instead; memcpy of one float compiles to a plain load.
#pragma once

#include <cstdint>
#include <cstring>

namespace polyinfer {

class UnalignedFloats {
 public:
  UnalignedFloats() = default;
  explicit UnalignedFloats(const void* p) : p_(static_cast<const unsigned char*>(p)) {}

  float operator[](int64_t i) const {
    float v;
    std::memcpy(&v, p_ + i * static_cast<int64_t>(sizeof(float)), sizeof(float));
    return v;
  }
  // Element i's bytes, to memcpy a run of elements from.
  const void* at(int64_t i) const { return p_ + i * static_cast<int64_t>(sizeof(float)); }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  const unsigned char* p_ = nullptr;
};

}  // namespace polyinfer
