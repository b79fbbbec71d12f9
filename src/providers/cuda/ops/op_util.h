// What every CUDA kernel class checks: float32 inputs known at creation (a refusal at creation
// lets the node fall back to the next provider with the reason; one at run time could not), and
// errors from its launches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "providers/cpu/ops/fused_activation.h"
#include "providers/cuda/ops/elementwise_kernels.h"
#include "providers/cuda/plugin/context.h"
#include "runtime/kernel.h"
#include "runtime/kernel_checks.h"

namespace polyinfer::cuda {

// Refuses (UnsupportedOp, so the partitioner tries the next provider) a node whose tensor inputs
// (the first `count`, all when -1) are not known to be float32, or whose rank is known and above
// `max_rank` (-1: any).
inline void require_float32(const KernelInfo& info, int count = -1, int max_rank = -1) {
  require_input_dtype(info, DType::Float32, "CUDA", max_rank,
                      count < 0 ? static_cast<size_t>(-1) : static_cast<size_t>(count));
}

// The same dtype check at run time (declared types can be wrong).
inline void check_float32(const KernelContext& ctx, const Tensor& t) {
  PI_CHECK(t.dtype() == DType::Float32, UnsupportedOp, ctx.node().label(), ": dtype ",
           dtype_name(t.dtype()), " (the CUDA kernels are float32 only)");
}

// After a launch: a bad configuration shows here, a fault in the kernel at the next sync.
inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  PI_CHECK(e == cudaSuccess, Internal, cuda_error_text(what, e));
}

// The rank of input i when known at creation (constant or declared), else -1.
inline int known_rank(const KernelInfo& info, size_t i) {
  if (const Tensor* c = info.constant_input(i)) return c->rank();
  if (const ir::TypeInfo* t = info.input_type(i);
      t && t->kind == ir::TypeInfo::Kind::Tensor && t->has_shape)
    return static_cast<int>(t->dims.size());
  return -1;
}

// The shape of input i when fully known at creation (constant, or declared without unknown
// dimensions); false otherwise.
inline bool known_shape(const KernelInfo& info, size_t i, Shape* out) {
  if (const Tensor* c = info.constant_input(i)) {
    *out = c->shape();
    return true;
  }
  const ir::TypeInfo* t = info.input_type(i);
  if (!t || t->kind != ir::TypeInfo::Kind::Tensor || !t->has_shape) return false;
  for (int64_t d : t->dims)
    if (d < 0) return false;
  *out = t->dims;
  return true;
}

// A fused operator's activation as the element-wise kernel that applies it in place; false for
// none.
inline bool unary_of(const cpu::FusedActivation& a, UnaryOp* op) {
  using K = cpu::ActKind;
  switch (a.kind) {
    case K::None: return false;
    case K::Relu: *op = UnaryOp::Relu; return true;
    case K::LeakyRelu: *op = UnaryOp::LeakyRelu; return true;
    case K::Clip: *op = UnaryOp::Clip; return true;
    case K::Sigmoid: *op = UnaryOp::Sigmoid; return true;
    case K::HardSigmoid: *op = UnaryOp::HardSigmoid; return true;
    case K::HardSwish: *op = UnaryOp::HardSwish; return true;
    case K::Tanh: *op = UnaryOp::Tanh; return true;
    case K::Silu: *op = UnaryOp::Silu; return true;
    case K::Gelu: *op = UnaryOp::Gelu; return true;
    case K::GeluTanh: *op = UnaryOp::GeluTanh; return true;
  }
  return false;
}

// Device scratch memory from the caching allocator for the length of one kernel's run: handed
// back when the kernel returns, which is safe on the one stream (whatever reuses it is queued
// after the work that reads it; context.h).
class Scratch {
 public:
  Scratch(Context& ctx, size_t bytes) : alloc_(ctx.allocator()), bytes_(bytes) {
    if (bytes_) ptr_ = alloc_->allocate(bytes_);
  }
  ~Scratch() {
    if (ptr_) alloc_->deallocate(ptr_, bytes_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  std::shared_ptr<CachingAllocator> alloc_;
  size_t bytes_;
  void* ptr_ = nullptr;
};

// Host copies of a node's constant inputs (shapes, axes, starts...), handed to code that takes
// a KernelContext in place of the executor's device copies: reading a device value back waits
// for all queued work. Reported prepacked.
class HostConstants {
 public:
  // Keeps host copies of the constant inputs from index `first` on.
  void keep(const KernelInfo& info, size_t first) {
    for (size_t i = first; i < info.num_inputs(); ++i)
      if (const Tensor* c = info.constant_input(i)) {
        if (values_.size() <= i) values_.resize(i + 1);
        values_[i] = Value(c->to(Device::cpu()).clone());
      }
  }
  bool prepacked(size_t i) const { return i < values_.size() && !values_[i].is_none(); }
  const std::vector<Value>& values() const { return values_; }

 private:
  std::vector<Value> values_;  // by input index; None where the input is not constant
};

// The executor's context with the constant inputs replaced by their host copies.
class HostConstantsContext final : public KernelContext {
 public:
  HostConstantsContext(KernelContext& outer, const HostConstants& constants)
      : outer_(outer), constants_(constants.values()) {}
  const ir::Node& node() const override { return outer_.node(); }
  const Value& value(size_t i) const override {
    return i < constants_.size() && !constants_[i].is_none() ? constants_[i] : outer_.value(i);
  }
  Tensor& output(size_t i, DType dtype, const Shape& shape) override {
    return outer_.output(i, dtype, shape);
  }
  void set_output(size_t i, Value value) override { outer_.set_output(i, std::move(value)); }
  const std::map<std::string, Value>& scope() const override { return outer_.scope(); }
  int threads() const override { return outer_.threads(); }

 private:
  KernelContext& outer_;
  const std::vector<Value>& constants_;
};

}  // namespace polyinfer::cuda

// Registers a CUDA kernel for the default ONNX domain.
#define PI_CUDA_KERNEL(OP, SINCE, UNTIL, K) PI_REGISTER_KERNEL("cuda", "", OP, SINCE, UNTIL, K)
