// Cast on CUDA between float32, float16 and bfloat16 (cast.cu): the borders a session at
// precision fp16 or bf16 puts around the ops that stay float32, and the graph's own float
// inputs and outputs. A Cast to the input's own dtype is a view of the input (no kernel).
// Refused at creation, so the node falls back: other dtypes (integer and bool casts are shape
// arithmetic, which stays on the CPU) and a dtype not known at load time.
#include "providers/cuda/ops/cast_kernels.h"
#include "providers/cuda/ops/op_util.h"

namespace polyinfer::cuda {
namespace {

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInfo& info)
      : ctx_(Context::get()), from_(known_dtype(info, 0)), to_(DType(info.attr_int("to"))) {
    const char* takes = " (the CUDA Cast converts between float32, float16 and bfloat16)";
    if (from_ == DType::Undefined) info.unsupported(std::string("input of unknown dtype") + takes);
    if (!cuda_float(from_) || !cuda_float(to_))
      info.unsupported(std::string("Cast from ") + dtype_name(from_) + " to " + dtype_name(to_) +
                       takes);
  }
  std::string impl() const override { return from_ == to_ ? "cuda:view" : "cuda:cast"; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_dtype(kc, x, from_);
    if (from_ == to_) {
      kc.set_output(0, Value(x));
      return;
    }
    Tensor& y = kc.output(0, to_, x.shape());
    launch_cast(elem_of(from_), elem_of(to_), x.raw_data(), y.raw_data(), y.numel(),
                ctx_.max_grid_x(), ctx_.stream());
    check_launch(kc.node().label().c_str());
  }

 private:
  Context& ctx_;
  DType from_, to_;
};

// From opset 6 ("to" an integer; before it a string); 19's saturate concerns float8 only.
PI_CUDA_KERNEL(Cast, 6, 28, CastKernel);

}  // namespace
}  // namespace polyinfer::cuda
