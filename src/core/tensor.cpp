#include "polyinfer/tensor.h"

#include <sys/mman.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "core/deferred.h"
#include "core/device_registry.h"
#include "core/host_recycling.h"
#include "core/huge_pages.h"
#include "core/storage.h"

namespace polyinfer {

Storage::~Storage() {
  if (const void* p = pending.load(std::memory_order_relaxed)) source->release(p, bytes);
  if (data) allocator->deallocate(data, bytes);
}

Tensor TensorAccess::make(DType dtype, Shape shape, std::shared_ptr<Storage> storage) {
  Tensor t;
  t.numel_ = shape_numel(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::move(storage);
  return t;
}

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 40;

size_t rounded_size(size_t bytes) { return bytes == 0 ? 64 : (bytes + 63) / 64 * 64; }

// Large buffers freed while a HostRecycling exists (core/host_recycling.h), for reuse.
struct Recycled {
  static constexpr size_t kMaxBytes = size_t{32} << 20;
  std::mutex mu;
  int scopes = 0;
  size_t bytes = 0;
  std::deque<std::pair<void*, size_t>> buffers;  // (buffer, rounded size), oldest first
};
Recycled& recycled() {
  static Recycled r;
  return r;
}

class HostAllocator final : public Allocator {
 public:
  Device device() const override { return Device::cpu(); }
  void* allocate(size_t bytes) override {
    const size_t rounded = rounded_size(bytes);
    // Aligned to 2 MiB, a large buffer can take huge pages when advised to (core/huge_pages.h).
    const bool huge = bytes >= kHugePage;
    if (huge) {
      Recycled& r = recycled();
      std::lock_guard<std::mutex> lock(r.mu);
      for (auto it = r.buffers.begin(); it != r.buffers.end(); ++it)
        if (it->second == rounded) {
          void* p = it->first;
          r.bytes -= rounded;
          r.buffers.erase(it);
          return p;
        }
    }
    void* p = nullptr;
    if (::posix_memalign(&p, huge ? kHugePage : 64, rounded) != 0) p = nullptr;
    PI_CHECK(p != nullptr, OutOfMemory, "host allocation of ", bytes, " bytes failed");
    return p;
  }
  void deallocate(void* ptr, size_t bytes) override {
    const size_t rounded = rounded_size(bytes);
    if (bytes >= kHugePage && rounded <= Recycled::kMaxBytes) {
      Recycled& r = recycled();
      std::lock_guard<std::mutex> lock(r.mu);
      if (r.scopes > 0) {
        r.buffers.emplace_back(ptr, rounded);
        r.bytes += rounded;
        while (r.bytes > Recycled::kMaxBytes) {
          std::free(r.buffers.front().first);
          r.bytes -= r.buffers.front().second;
          r.buffers.pop_front();
        }
        return;
      }
    }
    std::free(ptr);
  }
};

void host_copy(const void* src, void* dst, size_t bytes) { std::memcpy(dst, src, bytes); }

struct Registry {
  std::mutex mu;
  std::map<std::pair<int, int>, DeviceBackend> backends;
  std::map<int, std::string (*)(int)> starters;  // by DeviceKind
  std::vector<void (*)(Device)> release_hooks;
  Registry() {
    backends[{static_cast<int>(DeviceKind::CPU), 0}] =
        DeviceBackend{host_allocator(), &host_copy, &host_copy};
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void advise_huge_pages(void* p, size_t bytes) {
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) / kHugePage * kHugePage;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / kHugePage * kHugePage;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

HostRecycling::HostRecycling() {
  Recycled& r = recycled();
  std::lock_guard<std::mutex> lock(r.mu);
  ++r.scopes;
}

HostRecycling::~HostRecycling() {
  Recycled& r = recycled();
  std::lock_guard<std::mutex> lock(r.mu);
  if (--r.scopes > 0) return;
  for (const auto& [p, size] : r.buffers) std::free(p);
  r.buffers.clear();
  r.bytes = 0;
}

size_t HostRecycling::kept_bytes() {
  Recycled& r = recycled();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.bytes;
}

std::shared_ptr<Allocator> host_allocator() {
  static auto a = std::make_shared<HostAllocator>();
  return a;
}

void register_device(Device device, DeviceBackend backend) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().backends[{static_cast<int>(device.kind), device.index}] = std::move(backend);
}

void unregister_device(Device device) {
  std::vector<void (*)(Device)> hooks;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    hooks = registry().release_hooks;
  }
  // Outside the lock: what a hook drops frees memory through the device's allocator.
  for (auto* hook : hooks) hook(device);
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().backends.erase({static_cast<int>(device.kind), device.index});
}

void add_device_release_hook(void (*hook)(Device device)) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().release_hooks.push_back(hook);
}

void register_device_starter(DeviceKind kind, std::string (*start)(int index)) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().starters[static_cast<int>(kind)] = start;
}

const DeviceBackend& device_backend(Device device) {
  const std::pair<int, int> key{static_cast<int>(device.kind), device.index};
  std::string (*start)(int) = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    auto it = registry().backends.find(key);
    if (it != registry().backends.end()) return it->second;
    auto s = registry().starters.find(key.first);
    if (s != registry().starters.end()) start = s->second;
  }
  // Outside the lock: starting registers the device (register_device takes the lock).
  const std::string why = start ? start(device.index) : "no provider for it is loaded";
  std::lock_guard<std::mutex> lock(registry().mu);
  auto it = registry().backends.find(key);
  PI_CHECK(it != registry().backends.end(), ProviderUnavailable, "device ", device.str(),
           " is not available: ", why.empty() ? "its provider did not register it" : why,
           "; run `polyinfer providers`");
  return it->second;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    PI_CHECK(d >= 0, InvalidArgument, "shape ", shape_str(shape), " has a negative dimension");
    if (d == 0) return 0;
    PI_CHECK(n <= kMaxElements / d, OutOfMemory, "shape ", shape_str(shape),
             " has more than 2^40 elements");
    n *= d;
  }
  return n;
}

Tensor Tensor::empty(DType dtype, Shape shape, Device device) {
  return empty(dtype, std::move(shape), device_backend(device).allocator);
}

Tensor Tensor::empty(DType dtype, Shape shape, const std::shared_ptr<Allocator>& allocator) {
  PI_CHECK(dtype != DType::Undefined && dtype != DType::Complex64 && dtype != DType::Complex128,
           InvalidArgument, "tensors of dtype ", dtype_name(dtype), " are not supported");
  Tensor t;
  t.numel_ = shape_numel(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>();
  t.storage_->allocator = allocator;
  t.storage_->device = allocator->device();
  if (dtype == DType::String) {
    PI_CHECK(allocator->device().is_cpu(), InvalidArgument,
             "string tensors live on the host only, not on ", allocator->device().str());
    t.storage_->strings.resize(static_cast<size_t>(t.numel_));
  } else if (t.numel_ > 0) {
    t.storage_->bytes = t.nbytes();
    t.storage_->data = allocator->allocate(t.storage_->bytes);
  }
  return t;
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t = empty(dtype, std::move(shape));
  if (dtype != DType::String && t.numel_ > 0) std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

Tensor Tensor::from_host(DType dtype, Shape shape, const void* data, size_t nbytes) {
  PI_CHECK(dtype != DType::String, InvalidArgument,
           "from_host cannot take string data; build the tensor with empty() and set strings");
  Tensor t = empty(dtype, std::move(shape));
  PI_CHECK(nbytes == t.nbytes(), InvalidArgument, "from_host: ", nbytes, " bytes given for ",
           t.describe(), " which needs ", t.nbytes());
  if (nbytes) std::memcpy(t.raw_data(), data, nbytes);
  return t;
}

namespace {
// Memory a tensor borrows: nothing to allocate or free, only an owner to keep alive.
class BorrowedMemory final : public Allocator {
 public:
  explicit BorrowedMemory(std::shared_ptr<void> owner) : owner_(std::move(owner)) {}
  Device device() const override { return Device::cpu(); }
  void* allocate(size_t) override { fail(ErrorCode::Internal, "borrowed memory cannot allocate"); }
  void deallocate(void*, size_t) override {}

 private:
  std::shared_ptr<void> owner_;
};
}  // namespace

Tensor Tensor::borrow(DType dtype, Shape shape, void* data, size_t nbytes,
                      std::shared_ptr<void> owner) {
  PI_CHECK(dtype != DType::Undefined && dtype != DType::Complex64 && dtype != DType::Complex128,
           InvalidArgument, "tensors of dtype ", dtype_name(dtype), " are not supported");
  PI_CHECK(dtype != DType::String && !is_packed(dtype), InvalidArgument,
           "a tensor can borrow memory of whole-byte elements only, not ", dtype_name(dtype),
           "; copy it with from_host");
  Tensor t = TensorAccess::make(dtype, std::move(shape), std::make_shared<Storage>());
  PI_CHECK(nbytes == t.nbytes(), InvalidArgument, "borrow: ", nbytes, " bytes given for ",
           t.describe(), " which needs ", t.nbytes());
  PI_CHECK(data || nbytes == 0, InvalidArgument, "borrow: no memory given for ", t.describe());
  PI_CHECK(reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0, InvalidArgument,
           "borrow: memory for ", t.describe(), " is not aligned to its ", dtype_size(dtype),
           "-byte elements; copy it with from_host");
  Storage& st = *TensorAccess::storage(t);
  st.allocator = std::make_shared<BorrowedMemory>(std::move(owner));
  st.device = Device::cpu();
  st.data = nbytes ? data : nullptr;
  st.bytes = nbytes;
  return t;
}

int64_t Tensor::dim(int i) const {
  const int r = rank();
  PI_CHECK(i >= -r && i < r, InvalidArgument, "dimension ", i, " of a rank-", r, " tensor");
  return shape_[static_cast<size_t>(i < 0 ? i + r : i)];
}

Device Tensor::device() const { return storage_ ? storage_->device : Device::cpu(); }

bool Tensor::sole_owner() const {
  return storage_ && storage_.use_count() == 1 && offset_ == 0 && dtype_ != DType::String;
}

void* Tensor::raw_data() {
  if (!storage_) return nullptr;
  if (dtype_ == DType::String) return storage_->strings.data() + offset_;
  if (storage_->pending.load(std::memory_order_acquire)) materialize(*storage_);
  return static_cast<char*>(storage_->data) + offset_;
}

const void* Tensor::raw_data() const { return const_cast<Tensor*>(this)->raw_data(); }

const void* Tensor::peek_bytes() const {
  if (storage_ && dtype_ != DType::String)
    if (const void* p = storage_->pending.load(std::memory_order_acquire))
      return static_cast<const char*>(p) + offset_;
  return raw_data();
}

void Tensor::check_type(DType requested) const {
  PI_CHECK(storage_ != nullptr, Internal, "access to the data of an undefined tensor");
  PI_CHECK(requested == dtype_, Internal, "tensor of dtype ", dtype_name(dtype_), " read as ",
           dtype_name(requested));
}

Tensor Tensor::to(Device device) const {
  PI_CHECK(defined(), InvalidArgument, "cannot copy an undefined tensor to ", device.str());
  const Device here = this->device();
  if (here == device) return *this;
  PI_CHECK(dtype_ != DType::String, InvalidArgument, "string tensors cannot leave the host");
  Tensor out = empty(dtype_, shape_, device);
  out.copy_from(*this);
  return out;
}

void Tensor::copy_from(const Tensor& src) {
  PI_CHECK(defined() && src.defined(), InvalidArgument, "copy_from: ", describe(), " <- ",
           src.describe(), ": both tensors must be defined");
  PI_CHECK(dtype_ == src.dtype_ && shape_ == src.shape_, InvalidArgument, "copy_from: ", describe(),
           " <- ", src.describe(), ": dtype and shape must match");
  const Device from = src.device(), to = device();
  if (dtype_ == DType::String) {
    PI_CHECK(from.is_cpu() && to.is_cpu(), InvalidArgument, "string tensors cannot leave the host");
    const auto* s = static_cast<const std::string*>(src.raw_data());
    auto* d = static_cast<std::string*>(raw_data());
    for (int64_t i = 0; i < numel_; ++i) d[i] = s[i];
    return;
  }
  const size_t n = nbytes();
  if (n == 0) return;
  if (from.is_cpu() && to.is_cpu()) {
    std::memcpy(raw_data(), src.peek_bytes(), n);
  } else if (from.is_cpu()) {
    device_backend(to).to_device(src.peek_bytes(), raw_data(), n);
  } else if (to.is_cpu()) {
    device_backend(from).to_host(src.raw_data(), raw_data(), n);
  } else if (const DeviceBackend& b = device_backend(to); from == to && b.on_device) {
    b.on_device(src.raw_data(), raw_data(), n);
  } else {
    copy_from(src.to(Device::cpu()));
  }
}

Tensor Tensor::reshaped(Shape shape) const {
  PI_CHECK(defined(), InvalidArgument, "cannot reshape an undefined tensor");
  const int64_t n = shape_numel(shape);
  PI_CHECK(n == numel_, ShapeMismatch, "cannot reshape ", describe(), " to ", shape_str(shape),
           ": element counts differ (", numel_, " vs ", n, ")");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  // Memory lent by the caller (borrow) has no allocator of its own to make more from.
  const bool borrowed = dynamic_cast<const BorrowedMemory*>(storage_->allocator.get()) != nullptr;
  Tensor t =
      borrowed ? empty(dtype_, shape_, device()) : empty(dtype_, shape_, storage_->allocator);
  t.copy_from(*this);
  return t;
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined";
  return std::string(dtype_name(dtype_)) + shape_str(shape_);
}

Value Value::sequence(std::vector<Tensor> items, DType elem) {
  Value v;
  v.kind_ = Kind::Sequence;
  v.items_ = std::move(items);
  v.elem_ = elem;
  return v;
}

const Tensor& Value::tensor() const {
  PI_CHECK(is_tensor(), InvalidArgument, "expected a tensor, got ", describe());
  return tensor_;
}

Tensor& Value::tensor() {
  PI_CHECK(is_tensor(), InvalidArgument, "expected a tensor, got ", describe());
  return tensor_;
}

namespace {

bool is_key_dtype(DType t) { return is_integer(t) || t == DType::String; }

}  // namespace

Value Value::map(Tensor keys, Tensor values) {
  PI_CHECK(keys.defined() && values.defined(), InvalidArgument,
           "a map needs defined key and value tensors");
  PI_CHECK(is_key_dtype(keys.dtype()), InvalidArgument, "map keys must be of an integer type or ",
           "string, not ", dtype_name(keys.dtype()));
  PI_CHECK(keys.rank() == 1 && values.rank() == 1 && keys.numel() == values.numel(),
           InvalidArgument, "a map's keys and values must be 1-D tensors of one length, got ",
           keys.describe(), " and ", values.describe());
  PI_CHECK(keys.device().is_cpu() && values.device().is_cpu(), InvalidArgument,
           "a map's keys and values live on the host");
  PI_CHECK(!is_packed(values.dtype()), InvalidArgument, "map values of packed type ",
           dtype_name(values.dtype()), " are not supported");
  Value v;
  v.kind_ = Kind::Map;
  v.keys_ = std::move(keys);
  v.tensor_ = std::move(values);
  return v;
}

Value Value::map_sequence(std::vector<Value> maps, DType key, DType value) {
  PI_CHECK(key == DType::Undefined || is_key_dtype(key), InvalidArgument,
           "map keys must be of an integer type or string, not ", dtype_name(key));
  for (size_t i = 0; i < maps.size(); ++i) {
    const Value& m = maps[i];
    PI_CHECK(m.is_map(), InvalidArgument, "item ", i, " of a sequence of maps is ", m.describe());
    PI_CHECK(m.key_type() == key && m.elem_type() == value, InvalidArgument, "item ", i,
             " of a sequence of map<", dtype_name(key), ",", dtype_name(value), "> is ",
             m.describe());
  }
  Value v;
  v.kind_ = Kind::Sequence;
  v.of_maps_ = true;
  v.maps_ = std::move(maps);
  v.key_ = key;
  v.elem_ = value;
  return v;
}

const std::vector<Tensor>& Value::items() const {
  PI_CHECK(is_sequence() && !of_maps_, InvalidArgument, "expected a sequence of tensors, got ",
           describe());
  return items_;
}

std::vector<Tensor>& Value::items() {
  PI_CHECK(is_sequence() && !of_maps_, InvalidArgument, "expected a sequence of tensors, got ",
           describe());
  return items_;
}

const std::vector<Value>& Value::maps() const {
  PI_CHECK(holds_maps(), InvalidArgument, "expected a sequence of maps, got ", describe());
  return maps_;
}

const Tensor& Value::map_keys() const {
  PI_CHECK(is_map(), InvalidArgument, "expected a map, got ", describe());
  return keys_;
}

const Tensor& Value::map_values() const {
  PI_CHECK(is_map(), InvalidArgument, "expected a map, got ", describe());
  return tensor_;
}

std::string Value::describe() const {
  const auto map_type = [](DType k, DType v) {
    return std::string("map<") + dtype_name(k) + "," + dtype_name(v) + ">";
  };
  switch (kind_) {
    case Kind::None: return "none";
    case Kind::Tensor: return tensor_.describe();
    case Kind::Sequence: {
      const std::string elem = of_maps_ ? map_type(key_, elem_) : dtype_name(elem_);
      const size_t n = of_maps_ ? maps_.size() : items_.size();
      return "seq<" + elem + ">[" + std::to_string(n) + " items]";
    }
    case Kind::Map:
      return map_type(keys_.dtype(), tensor_.dtype()) + "[" + std::to_string(keys_.numel()) + "]";
  }
  return "?";
}

}  // namespace polyinfer
