// Reshape, Flatten, Squeeze, Unsqueeze and Identity on OpenCL, of tensors of any dtype but
// strings (the integer ones of masks and shape arithmetic too): no kernel, the output is a view
// of the input's device memory with another shape (context.h: a pointer inside a block, which
// find() maps back to the buffer). The shape arithmetic is the CPU reference kernel's, which this
// kernel creates and runs (its only effect is set_output(x.reshaped(...)), which works on any
// device), so both agree on every rule (0 and -1 in Reshape, allowzero, negative axes).
//
// A shape or axes input that is a constant is kept on the host, reported prepacked, and handed to
// the CPU kernel in place of the executor's value: otherwise it would be copied to the device
// every run and read back, which waits for all enqueued work. One computed at run time is still
// read that way (read_int_list copies it to the host).
#include "providers/opencl/ops/common.h"
#include "runtime/host_constants.h"

namespace polyinfer::opencl {
namespace {

class ViewKernel final : public Kernel {
 public:
  explicit ViewKernel(const KernelInfo& info) {
    // The data input only: shapes and axes are int64 and stay where they are. A view needs no
    // kernel, so no dtype is refused but strings (which never live in device memory) and one not
    // known at load time (a refusal at run time could not fall back).
    dtype_ = known_dtype(info, 0);
    if (dtype_ == DType::Undefined || dtype_ == DType::String)
      info.unsupported(std::string("dtype ") + dtype_name(dtype_) +
                       " (the OpenCL views take any dtype but strings, known at load time)");
    if (known_rank(info, 0) > kMaxRank)
      info.unsupported("rank " + std::to_string(known_rank(info, 0)) +
                       " (this OpenCL kernel takes rank <= 6)");
    const ir::Node& n = info.node();
    for (const KernelDef* d : find_kernels("cpu", n.domain, n.op_type, n.opset))
      if (d->tier == KernelTier::Reference) {
        inner_ = d->make(info);
        break;
      }
    if (!inner_) info.unsupported("opset " + std::to_string(n.opset));
    constants_.keep(info, 1);
  }
  std::string impl() const override { return "opencl:view"; }
  bool prepacked(size_t i) const override { return constants_.prepacked(i); }

  void run(KernelContext& kc) override {
    check_input(kc, kc.input(0), kMaxRank, dtype_);
    HostConstantsContext ctx(kc, constants_);
    inner_->run(ctx);
  }

 private:
  std::unique_ptr<Kernel> inner_;
  HostConstants constants_;
  DType dtype_ = DType::Float32;
};

PI_REGISTER_KERNEL("opencl", "", Reshape, 1, 28, ViewKernel);
PI_REGISTER_KERNEL("opencl", "", Flatten, 1, 28, ViewKernel);
PI_REGISTER_KERNEL("opencl", "", Squeeze, 1, 28, ViewKernel);
PI_REGISTER_KERNEL("opencl", "", Unsqueeze, 1, 28, ViewKernel);
PI_REGISTER_KERNEL("opencl", "", Identity, 1, 28, ViewKernel);

}  // namespace
}  // namespace polyinfer::opencl
