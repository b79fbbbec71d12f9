// Comparisons and logic with a bool output on OpenCL (kernels/compare.cl): Equal, Less,
// LessOrEqual, Greater, GreaterOrEqual of float32, float16 and the 8- to 64-bit integers (Equal
// of bools too), And, Or, Xor and Not of bools; numpy broadcasting up to rank 6. These build the
// masks of exported transformers (attention_mask == 0, position comparisons) from int64 inputs.
// One build variant per dtype compares in the elements' own type, so results are exact. Refused
// at creation: other dtypes, dtypes not known at load time, ranks above 6, and opset 1's legacy
// broadcast (from opset 7 on only).
#include "core/shape_util.h"
#include "providers/opencl/ops/common.h"

namespace polyinfer::opencl {
namespace {

struct CompareParams {
  uint32_t rank, n, off_a, off_b, off_o, op;
  uint32_t dims[kMaxRank], sa[kMaxRank], sb[kMaxRank];
};

// compare.cl's operator codes.
enum CompareOp : uint32_t {
  kEqual,
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor,
  kNot
};

// The OpenCL C element type of the variant for `d`; "" for a dtype the kernel does not take.
std::string element_type(DType d) {
  switch (d) {
    case DType::Bool:
    case DType::UInt8: return "uchar";
    case DType::Int8: return "char";
    case DType::UInt16: return "ushort";
    case DType::Int16: return "short";
    case DType::UInt32: return "uint";
    case DType::Int32: return "int";
    case DType::UInt64: return "ulong";
    case DType::Int64: return "long";
    case DType::Float16: return "half";
    case DType::Float32: return "float";
    default: return "";
  }
}

template <uint32_t Op> class CompareKernel final : public Kernel {
 public:
  explicit CompareKernel(const KernelInfo& info) {
    const bool logic = Op >= kAnd;
    const size_t inputs = Op == kNot ? 1 : 2;
    dtype_ = known_dtype(info, 0);
    const std::string type = element_type(dtype_);
    const bool ok =
        logic ? dtype_ == DType::Bool : !type.empty() && (dtype_ != DType::Bool || Op == kEqual);
    if (!ok)
      info.unsupported(std::string("dtype ") + dtype_name(dtype_) +
                       (logic ? " (the OpenCL " + info.node().op_type + " takes bool)"
                              : " (the OpenCL " + info.node().op_type +
                                    " takes float32, float16 or the 8- to 64-bit integers, "
                                    "known at load time" +
                                    (Op == kEqual ? ", or bool)" : ")")));
    require_input_dtype(info, dtype_, "OpenCL " + info.node().op_type, kMaxRank, inputs);
    ctx_ = Context::get();
    std::string options = "-DPI_T=" + type;
    if (dtype_ == DType::Float16) options += " -DPI_HALF";
    if (dtype_ == DType::Bool) options += " -DPI_BOOL";
    kernel_ = ctx_->kernel("compare", "compare", options);
  }
  std::string impl() const override { return "opencl:compare"; }

  void run(KernelContext& kc) override {
    const std::string who = kc.node().label();
    const Tensor& a = kc.input(0);
    const Tensor& b = Op == kNot ? a : kc.input(1);
    check_input(kc, a, kMaxRank, dtype_);
    check_input(kc, b, kMaxRank, dtype_);
    const Shape out = broadcast_shapes(a.shape(), b.shape(), who.c_str());
    PI_CHECK(out.size() <= kMaxRank, UnsupportedOp, who, ": rank ", out.size(),
             " (this OpenCL kernel takes rank <= 6)");
    Tensor& o = kc.output(0, DType::Bool, out);
    check_input(kc, o, kMaxRank, DType::Bool);
    if (o.numel() == 0) return;
    CompareParams p{};
    p.n = u32(o.numel());
    p.op = Op;
    if (a.shape() == b.shape()) {
      p.rank = 1;  // same shape: one flat dimension
      p.dims[0] = p.n;
      p.sa[0] = p.sb[0] = 1;
    } else {
      const std::vector<int64_t> sa = broadcast_strides(a.shape(), out),
                                 sb = broadcast_strides(b.shape(), out);
      p.rank = u32(static_cast<int64_t>(out.size()));
      for (size_t k = 0; k < out.size(); ++k) {
        p.dims[k] = u32(out[k]);
        p.sa[k] = u32(sa[k]);
        p.sb[k] = u32(sb[k]);
      }
    }
    const BufferRef ra = ctx_->find(a.raw_data()), rb = ctx_->find(b.raw_data()),
                    ro = ctx_->find(o.raw_data());
    p.off_a = element_offset(ra, dtype_);
    p.off_b = element_offset(rb, dtype_);
    p.off_o = element_offset(ro, DType::Bool);
    ctx_->dispatch(kernel_, {ra.buffer, rb.buffer, ro.buffer}, &p, sizeof p,
                   groups_for(p.n, *ctx_));
  }

 private:
  DType dtype_ = DType::Undefined;
  std::shared_ptr<Context> ctx_;
  cl_kernel kernel_ = nullptr;
};

// Opset 1 broadcast with the legacy `broadcast`/`axis` attributes: from 7 on only.
PI_REGISTER_KERNEL("opencl", "", Equal, 7, 28, CompareKernel<kEqual>);
PI_REGISTER_KERNEL("opencl", "", Less, 7, 28, CompareKernel<kLess>);
PI_REGISTER_KERNEL("opencl", "", LessOrEqual, 12, 28, CompareKernel<kLessOrEqual>);
PI_REGISTER_KERNEL("opencl", "", Greater, 7, 28, CompareKernel<kGreater>);
PI_REGISTER_KERNEL("opencl", "", GreaterOrEqual, 12, 28, CompareKernel<kGreaterOrEqual>);
PI_REGISTER_KERNEL("opencl", "", And, 7, 28, CompareKernel<kAnd>);
PI_REGISTER_KERNEL("opencl", "", Or, 7, 28, CompareKernel<kOr>);
PI_REGISTER_KERNEL("opencl", "", Xor, 7, 28, CompareKernel<kXor>);
PI_REGISTER_KERNEL("opencl", "", Not, 1, 28, CompareKernel<kNot>);

}  // namespace
}  // namespace polyinfer::opencl
