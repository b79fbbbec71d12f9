// What a device provider's kernel keeps on the host: the constant inputs it reads while
// recording or launching its work (shapes, axes, starts, split sizes, pads, Resize's scales), and
// a KernelContext that hands them to code written for the executor's context (the CPU kernels'
// parameter parsing, plan_slice, plan_resize). Shared by the Vulkan and CUDA kernels.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernel.h"

namespace polyinfer {

// Constant inputs that a kernel reads on the host when it records its dispatch (shapes, axes,
// starts, split sizes, pads, Resize's scales): kept here as host copies and reported prepacked,
// so they are never copied to the device each run and read back (which waits for all recorded
// work). One computed at run time is still read that way (read_int_list copies it to the host).
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

// The executor's context with the constant inputs replaced by the host copies, for code that
// takes a KernelContext (the CPU kernels' parameter parsing, plan_slice).
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

}  // namespace polyinfer
