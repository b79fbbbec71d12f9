// Cast on Vulkan between float32, float16, bool and the integer types of 8 to 64 bits. float32 <->
// float16 (the borders a session at precision fp16 puts around the ops that stay float32) is
// shaders/cast.comp, which needs 16-bit storage; every pair with an integer or bool side (the
// int64 attention masks and shape arithmetic of exported transformers) is shaders/cast_any.comp,
// 32-bit integer arithmetic that needs no optional feature. Both follow the CPU's Cast exactly
// (rounding to nearest even, saturating float -> integer, NaN -> 0, wrapping integer -> integer;
// the shaders' comments). A Cast to the input's own dtype is a view of the input (no dispatch).
// Refused at creation, so the node falls back: other dtypes (float64, bfloat16, the 8-bit and
// packed floats, strings), a dtype not known at load time, float32 <-> float16 without 16-bit
// storage.
#include <limits>

#include "providers/vulkan/ops/common.h"

namespace polyinfer::vulkan {
namespace {

struct CastParams {
  uint32_t to_half, n, off_x, off_y;
};
static_assert(sizeof(CastParams) == 16, "matches the push-constant block of cast.comp");

struct CastAnyParams {
  uint32_t n, off_x, off_y, from_size, from_kind, to_size, to_kind;
};
static_assert(sizeof(CastAnyParams) == 28, "matches the push-constant block of cast_any.comp");

bool float32_or_16(DType d) { return d == DType::Float32 || d == DType::Float16; }

constexpr const char* kTakes =
    " (the Vulkan Cast converts between float32, float16, bool and the 8- to 64-bit integers)";

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInfo& info)
      : from_(known_dtype(info, 0)), to_(DType(info.attr_int("to"))) {
    if (from_ == DType::Undefined) info.unsupported(std::string("input of unknown dtype") + kTakes);
    ctx_ = Context::get();
    if (from_ == to_) {
      if (from_ == DType::String) info.unsupported(std::string("Cast of strings") + kTakes);
      return;  // a view
    }
    if (elem_kind(from_) < 0 || elem_kind(to_) < 0)
      info.unsupported(std::string("Cast from ") + dtype_name(from_) + " to " + dtype_name(to_) +
                       kTakes);
    if (float32_or_16(from_) && float32_or_16(to_)) {
      if (!ctx_->storage16())
        info.unsupported(
            "float16 tensors on a device without 16-bit storage "
            "(storageBuffer16BitAccess)");
      pipeline_ = &ctx_->pipeline("cast", 4, sizeof(CastParams));
    } else {
      any_ = true;
      pipeline_ = &ctx_->pipeline("cast_any", 2, sizeof(CastAnyParams));
    }
  }
  std::string impl() const override {
    return from_ == to_ ? "vulkan:view" : any_ ? "vulkan:cast_any" : "vulkan:cast";
  }

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
    if (any_) {
      CastAnyParams p{u32(y.numel()),          element_offset(rx, from_),
                      element_offset(ry, to_), u32(int64_t(dtype_size(from_))),
                      u32(elem_kind(from_)),   u32(int64_t(dtype_size(to_))),
                      u32(elem_kind(to_))};
      ctx_->dispatch(*pipeline_, {rx.buffer, ry.buffer}, &p, groups_for(p.n, *ctx_));
      return;
    }
    CastParams p{to_ == DType::Float16 ? 1u : 0u, u32(y.numel()), element_offset(rx, from_),
                 element_offset(ry, to_)};
    // Both tensors bind twice (as float32 and as 16-bit words); the shader uses one of each.
    ctx_->dispatch(*pipeline_, {rx.buffer, rx.buffer, ry.buffer, ry.buffer}, &p,
                   groups_for(p.n, *ctx_));
  }

 private:
  DType from_, to_;
  bool any_ = false;
  std::shared_ptr<Context> ctx_;
  const Pipeline* pipeline_ = nullptr;
};

// From opset 6 ("to" an integer; before it a string); 19's saturate only concerns float8.
PI_REGISTER_KERNEL("vulkan", "", Cast, 6, 28, CastKernel);

}  // namespace
}  // namespace polyinfer::vulkan
