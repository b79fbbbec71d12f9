// Cast on Vulkan between float32 and float16 (shaders/cast.comp), the borders a session at
// precision fp16 puts around the ops that stay float32; a Cast to the input's own dtype is a
// view of the input (no dispatch). The conversions round to nearest even, overflow to inf and keep
// NaNs and subnormals, as the CPU's Cast does (storage.glsl). Refused at creation, so the node
// falls back: other dtypes (integer and bool casts are shape arithmetic, which stays on the CPU),
// a dtype not known at load time, and float16 on a device without 16-bit storage.
#include <limits>

#include "providers/vulkan/ops/common.h"

namespace polyinfer::vulkan {
namespace {

struct CastParams {
  uint32_t to_half, n, off_x, off_y;
};
static_assert(sizeof(CastParams) == 16, "matches the push-constant block of cast.comp");

bool float32_or_16(DType d) { return d == DType::Float32 || d == DType::Float16; }

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInfo& info)
      : from_(known_dtype(info, 0)), to_(DType(info.attr_int("to"))) {
    if (from_ == DType::Undefined)
      info.unsupported("input of unknown dtype (the Vulkan Cast converts float32 <-> float16)");
    if (!float32_or_16(from_) || !float32_or_16(to_))
      info.unsupported(std::string("Cast from ") + dtype_name(from_) + " to " + dtype_name(to_) +
                       " (the Vulkan Cast converts float32 <-> float16)");
    ctx_ = Context::get();
    if (from_ == to_) return;
    if (!ctx_->storage16())
      info.unsupported(
          "float16 tensors on a device without 16-bit storage "
          "(storageBuffer16BitAccess)");
    pipeline_ = &ctx_->pipeline("cast", 4, sizeof(CastParams));
  }
  std::string impl() const override { return from_ == to_ ? "vulkan:view" : "vulkan:cast"; }

  void run(KernelContext& kc) override {
    const Tensor& x = kc.input(0);
    check_input(kc, x, std::numeric_limits<int>::max(), from_);
    if (from_ == to_) {
      kc.set_output(0, Value(x));
      return;
    }
    Tensor& y = kc.output(0, to_, x.shape());
    if (y.numel() == 0) return;
    const BufferRef rx = ctx_->find(x.raw_data()), ry = ctx_->find(y.raw_data());
    CastParams p{to_ == DType::Float16 ? 1u : 0u, u32(y.numel()), element_offset(rx, from_),
                 element_offset(ry, to_)};
    // Both tensors bind twice (as float32 and as 16-bit words); the shader uses one of each.
    ctx_->dispatch(*pipeline_, {rx.buffer, rx.buffer, ry.buffer, ry.buffer}, &p,
                   groups_for(p.n, *ctx_));
  }

 private:
  DType from_, to_;
  std::shared_ptr<Context> ctx_;
  const Pipeline* pipeline_ = nullptr;
};

// From opset 6 ("to" an integer; before it a string); 19's saturate only concerns float8.
PI_REGISTER_KERNEL("vulkan", "", Cast, 6, 28, CastKernel);

}  // namespace
}  // namespace polyinfer::vulkan
