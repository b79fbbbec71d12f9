// Cast on OpenCL between float32, float16, bool and the integer types of 8 to 64 bits
// (kernels/cast.cl, one build variant per pair): the borders a session at precision fp16 puts
// around the ops that stay float32, and the int64 attention masks and shape arithmetic of
// exported transformers. Every pair follows the CPU's Cast exactly (rounding to nearest even,
// saturating float -> integer, NaN -> 0, wrapping integer -> integer; the kernel's comments). A
// Cast to the input's own dtype is a view of the input (no dispatch). Refused at creation, so
// the node falls back: other dtypes (float64, bfloat16, the 8-bit and packed floats, strings)
// and a dtype not known at load time.
#include <limits>

#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct CastParams {
  uint32_t n, off_x, off_y;
};

constexpr const char* kTakes =
    " (the OpenCL Cast converts between float32, float16, bool and the 8- to 64-bit integers)";

// cast.cl's PI_KIND_*: 0 unsigned, 1 signed, 2 float, 3 bool; -1 for a dtype it does not take.
int elem_kind(DType d) {
  switch (d) {
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return 0;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: return 1;
    case DType::Float16:
    case DType::Float32: return 2;
    case DType::Bool: return 3;
    default: return -1;
  }
}

// The unsigned OpenCL C type of `size` bytes.
std::string unsigned_type(size_t size) {
  switch (size) {
    case 1: return "uchar";
    case 2: return "ushort";
    case 8: return "ulong";
    default: return "uint";
  }
}

// The OpenCL C type an input element is read as: signed integers as signed (widening
// sign-extends them), float16 as its bits.
std::string source_type(DType d) {
  switch (d) {
    case DType::Int8: return "char";
    case DType::Int16: return "short";
    case DType::Int32: return "int";
    case DType::Int64: return "long";
    case DType::Float32: return "float";
    default: return unsigned_type(dtype_size(d));
  }
}

// The build options of the variant casting `from` to `to` (cast.cl's header). Integer outputs
// are written as unsigned types, whose narrowing conversions keep the low bytes by definition.
std::string cast_options(DType from, DType to) {
  std::string o = "-DPI_SRC=" + source_type(from) +
                  " -DPI_SRC_KIND=" + std::to_string(elem_kind(from)) +
                  " -DPI_DST=" + (to == DType::Float32 ? "float" : unsigned_type(dtype_size(to))) +
                  " -DPI_DST_KIND=" + std::to_string(elem_kind(to));
  if (from == DType::Float16) o += " -DPI_SRC_IS_HALF=1";
  if (to == DType::Float16) o += " -DPI_DST_IS_HALF=1";
  if (elem_kind(to) <= 1)
    o += " -DPI_DST_BITS=" + std::to_string(8 * dtype_size(to)) +
         " -DPI_DST_SIGNED=" + std::to_string(elem_kind(to));
  return o;
}

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
    kernel_ = ctx_->kernel("cast", "cast", cast_options(from_, to_));
  }
  std::string impl() const override { return from_ == to_ ? "opencl:view" : "opencl:cast"; }

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
    CastParams p{u32(y.numel()), element_offset(rx, from_), element_offset(ry, to_)};
    ctx_->dispatch(kernel_, {rx.buffer, ry.buffer}, &p, sizeof p, groups_for(p.n, *ctx_));
  }

 private:
  DType from_, to_;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

// From opset 6 ("to" an integer; before it a string); 19's saturate only concerns float8.
PI_REGISTER_KERNEL("opencl", "", Cast, 6, 28, CastKernel);

}  // namespace
}  // namespace polyinfer::opencl
