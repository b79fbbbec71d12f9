// polyinfer/tensor.h — n-dimensional arrays on any device, and the values a model passes around.
//
// A Tensor is a cheap handle (shared ownership) to a dense, row-major block of elements on one
// Device. Copies of the handle share memory; clone() copies the elements. reshaped() returns a
// view of the same memory with another shape of equal element count.
//
//   auto x = polyinfer::Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4});
//   auto y = x.to(polyinfer::Device::parse("vulkan:0"));   // copy to a GPU, when one is usable
//   std::vector<float> back = y.to_vector<float>();          // and back to host memory
//
// A Value is what flows along a model's edges: a Tensor, a sequence of Tensors, a map (ONNX's
// map(key, value): scikit-learn classifiers converted by skl2onnx end in a sequence of maps), a
// sequence of maps, or nothing (an empty ONNX optional, or an input the model leaves out).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "polyinfer/device.h"
#include "polyinfer/dtype.h"
#include "polyinfer/status.h"

namespace polyinfer {

using Shape = std::vector<int64_t>;

// "[1,3,224,224]"; a dynamic dimension (negative) prints as "?".
std::string shape_str(const Shape& shape);
// Product of the dimensions; throws InvalidArgument on a negative dimension and OutOfMemory when
// the product overflows or exceeds the 2^40-element limit.
int64_t shape_numel(const Shape& shape);

// Hands out memory of one device. Implementations must be thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Device device() const = 0;
  // Returns at least `bytes` bytes (64-byte aligned on the host); throws OutOfMemory.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
};

// The process-wide host allocator (aligned malloc).
std::shared_ptr<Allocator> host_allocator();

struct Storage;  // the shared memory block behind tensors; defined in the implementation

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor: defined() is false

  // Uninitialized elements (strings: empty strings) from `allocator`, or from the device's
  // default allocator.
  static Tensor empty(DType dtype, Shape shape, Device device = Device::cpu());
  static Tensor empty(DType dtype, Shape shape, const std::shared_ptr<Allocator>& allocator);
  static Tensor zeros(DType dtype, Shape shape);
  // Copies `nbytes` bytes of host memory; nbytes must equal the tensor's byte size.
  static Tensor from_host(DType dtype, Shape shape, const void* data, size_t nbytes);
  // A host tensor over memory the caller owns, without a copy: `data` holds `nbytes` bytes (the
  // tensor's byte size), aligned to the element size. The memory must stay valid while any
  // handle to the tensor exists; `owner`, when given, is held until then (a Python array's
  // reference, say). A run reads such an input where it lies and never writes to it.
  static Tensor borrow(DType dtype, Shape shape, void* data, size_t nbytes,
                       std::shared_ptr<void> owner = nullptr);
  template <class T> static Tensor from_vector(Shape shape, const std::vector<T>& values);
  template <class T> static Tensor scalar(T value) { return from_vector<T>({}, {value}); }

  bool defined() const { return storage_ != nullptr; }
  // True when this handle is the only one to its memory (no other copy of the handle, no view)
  // and starts at its beginning: once the holder is done with the values, the memory may be
  // reused in place for a result of the same size.
  bool sole_owner() const;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // Dimension i; negative i counts from the back.
  int64_t dim(int i) const;
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return dtype_nbytes(dtype_, numel_); }
  Device device() const;

  // Element access. data<T>() checks that T matches dtype() and throws Internal if not.
  void* raw_data();
  const void* raw_data() const;
  template <class T> T* data() {
    check_type(dtype_of<T>());
    return static_cast<T*>(raw_data());
  }
  template <class T> const T* data() const {
    check_type(dtype_of<T>());
    return static_cast<const T*>(raw_data());
  }
  // The elements' bytes for one read, without making a copy. For a weight still in the model
  // file (a session's weights are, until its kernels exist: src/core/deferred.h) that is where
  // the file holds them, at any alignment: read them with memcpy or unaligned loads, and only
  // while creating a kernel. For any other host tensor, the same as raw_data().
  const void* peek_bytes() const;
  // Host copy of the elements (works for tensors on any device).
  template <class T> std::vector<T> to_vector() const;

  // A copy on `device` (the same handle when already there).
  Tensor to(Device device) const;
  // A view with another shape of the same element count; shares memory.
  Tensor reshaped(Shape shape) const;
  // A deep copy on the same device.
  Tensor clone() const;
  // Copies src's elements into this tensor's memory (shared by every handle to it): same dtype
  // and shape, any devices (device-to-device copies stay on the device where it can copy within
  // itself). Throws InvalidArgument naming both tensors when they differ, or for strings off
  // the host.
  void copy_from(const Tensor& src);
  // "float32[1,3,224,224]".
  std::string describe() const;

 private:
  friend struct TensorAccess;  // src/core's own way in
  void check_type(DType requested) const;

  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes into the storage (elements for string tensors)
  DType dtype_ = DType::Undefined;
  Shape shape_;
  int64_t numel_ = 0;
};

// What flows along a model edge: nothing, a tensor, a sequence (of tensors or of maps), or a map.
//
// A map is held as ONNX's MapProto holds it: its keys as one 1-D host tensor (an integer type or
// string) and its values as another of the same length (any dtype), entry i being
// keys[i] -> values[i], in insertion order. Two tensors make a map cheap to build from a row of
// scores and to read; lookups by key are the reader's business (the readers are few and small).
// Keys should be distinct; as in a MapProto, that is not checked.
//
//   Value m = Value::map(Tensor::from_vector<int64_t>({2}, {0, 1}),
//                        Tensor::from_vector<float>({2}, {0.25f, 0.75f}));
//   m.describe();  // "map<int64,float32>[2]"
class Value {
 public:
  enum class Kind { None, Tensor, Sequence, Map };

  Value() = default;  // None: an absent input or an empty optional
  Value(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT: implicit by design
  // A sequence of tensors; `elem` is its element type, needed when the sequence is empty.
  static Value sequence(std::vector<Tensor> items, DType elem);
  // A map of keys[i] -> values[i]. Throws InvalidArgument unless both are 1-D host tensors of
  // equal length and the keys are of an integer type or string.
  static Value map(Tensor keys, Tensor values);
  // A sequence of maps (what ZipMap gives). `key` and `value` are the maps' key and value
  // dtypes (Undefined: not known, only for an empty sequence); every item must be a map of them.
  static Value map_sequence(std::vector<Value> maps, DType key, DType value);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  bool is_map() const { return kind_ == Kind::Map; }
  // A sequence whose items are maps (maps()) rather than tensors (items()).
  bool holds_maps() const { return kind_ == Kind::Sequence && of_maps_; }
  // Throws InvalidArgument when the value is of another kind.
  const Tensor& tensor() const;
  Tensor& tensor();
  // The items of a sequence of tensors.
  const std::vector<Tensor>& items() const;
  std::vector<Tensor>& items();
  // The items of a sequence of maps, each a Value of kind Map.
  const std::vector<Value>& maps() const;
  // A map's keys and values.
  const Tensor& map_keys() const;
  const Tensor& map_values() const;
  // The element type: a tensor's dtype, a sequence's item dtype, a map's (or a sequence of
  // maps') value dtype.
  DType elem_type() const { return is_tensor() || is_map() ? tensor_.dtype() : elem_; }
  // The key dtype of a map or of a sequence of maps; Undefined for anything else.
  DType key_type() const {
    return is_map() ? keys_.dtype() : holds_maps() ? key_ : DType::Undefined;
  }
  // "float32[2,3]", "seq<float32>[4 items]", "map<string,float32>[3]",
  // "seq<map<int64,float32>>[4 items]", "none".
  std::string describe() const;

 private:
  Kind kind_ = Kind::None;
  Tensor tensor_;  // the tensor, or a map's values
  Tensor keys_;    // a map's keys
  std::vector<Tensor> items_;
  std::vector<Value> maps_;
  bool of_maps_ = false;
  DType elem_ = DType::Undefined;  // a sequence's item dtype (a sequence of maps': value dtype)
  DType key_ = DType::Undefined;   // a sequence of maps' key dtype
};

template <class T> Tensor Tensor::from_vector(Shape shape, const std::vector<T>& values) {
  Tensor t = empty(dtype_of<T>(), std::move(shape));
  PI_CHECK(static_cast<int64_t>(values.size()) == t.numel(), InvalidArgument,
           "from_vector: ", values.size(), " values given for shape ", shape_str(t.shape()),
           " which holds ", t.numel());
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

template <class T> std::vector<T> Tensor::to_vector() const {
  Tensor host = to(Device::cpu());
  const T* p = host.data<T>();
  return std::vector<T>(p, p + numel_);
}

}  // namespace polyinfer
