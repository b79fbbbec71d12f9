// BitCast (opset 26): reinterprets each element's bits as another type of the same width
// (float32 <-> int32, float16 -> uint16, ...); the shape is kept.
//
// Only types whose elements fill whole bytes are taken: the packed 4- and 2-bit types, string
// and complex are refused with the reason. Bytes cast to bool are normalized to 0 or 1, since a
// C++ bool holding another byte is undefined (numpy would keep the byte and call it true).
#include <cstdint>
#include <cstring>
#include <string>

#include "polyinfer/tensor.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

// The width in bits of an ONNX element type (TensorProto.DataType), 0 where it has none (string,
// undefined, unknown numbers). Written by ONNX's numbers so that types polyinfer does not hold yet
// still get a precise refusal.
int onnx_bits(int32_t type) {
  switch (type) {
    case 1:   // float
    case 6:   // int32
    case 12:  // uint32
      return 32;
    case 7:   // int64
    case 11:  // double
    case 13:  // uint64
    case 14:  // complex64
      return 64;
    case 15: return 128;  // complex128
    case 4:               // uint16
    case 5:               // int16
    case 10:              // float16
    case 16:              // bfloat16
      return 16;
    case 2:   // uint8
    case 3:   // int8
    case 9:   // bool
    case 17:  // float8e4m3fn
    case 18:  // float8e4m3fnuz
    case 19:  // float8e5m2
    case 20:  // float8e5m2fnuz
    case 24:  // float8e8m0
      return 8;
    case 21:  // uint4
    case 22:  // int4
    case 23:  // float4e2m1
      return 4;
    case 25:  // uint2
    case 26:  // int2
      return 2;
    case 27:  // float6e2m3
    case 28:  // float6e3m2
      return 6;
    default: return 0;
  }
}

std::string type_label(DType t) {
  const std::string name = dtype_name(t);
  return name != "unknown" ? name : "ONNX type " + std::to_string(static_cast<int32_t>(t));
}

// Why BitCast cannot take `t` as its input or output type, or "" when it can. dtype_size is only
// asked about whole-byte types: it refuses the packed ones.
std::string refusal(DType t) {
  const int32_t n = static_cast<int32_t>(t);
  if (t == DType::String) return "string tensors cannot be bitcast";
  if (t == DType::Complex64 || t == DType::Complex128) return "complex tensors are not supported";
  const int bits = onnx_bits(n);
  if (bits == 0) return "ONNX type " + std::to_string(n) + " is not a fixed-width tensor type";
  if (bits % 8 != 0)
    return type_label(t) + " packs " + std::to_string(bits) +
           "-bit elements into bytes; BitCast of packed types is not implemented";
  if (std::string(dtype_name(t)) == "unknown" || dtype_size(t) * 8 != static_cast<size_t>(bits))
    return type_label(t) + " is not supported by this build";
  return "";
}

class BitCastKernel final : public Kernel {
 public:
  explicit BitCastKernel(const KernelInfo& info)
      : to_(static_cast<DType>(info.attr_int("to"))), who_(info.node().label()) {
    const std::string why = refusal(to_);
    if (!why.empty()) info.unsupported("to=" + type_label(to_) + " (" + why + ")");
    const ir::TypeInfo* in = info.input_type(0);
    if (in && in->kind == ir::TypeInfo::Kind::Tensor && in->elem != DType::Undefined)
      check(in->elem);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check(x.dtype());
    Tensor& y = ctx.output(0, to_, x.shape());
    const size_t bytes =
        static_cast<size_t>(x.numel()) * static_cast<size_t>(onnx_bits(to_n())) / 8;
    if (bytes == 0) return;
    if (to_ == DType::Bool) {
      const auto* src = static_cast<const uint8_t*>(x.raw_data());
      bool* dst = y.data<bool>();
      for (size_t i = 0; i < bytes; ++i) dst[i] = src[i] != 0;
      return;
    }
    std::memcpy(y.raw_data(), x.raw_data(), bytes);
  }

 private:
  void check(DType from) const {
    const std::string why = refusal(from);
    PI_CHECK(why.empty(), UnsupportedOp, who_, ": input of ", type_label(from), ": ", why);
    const int from_bits = onnx_bits(static_cast<int32_t>(from)), to_bits = onnx_bits(to_n());
    PI_CHECK(from_bits == to_bits, InvalidArgument, who_, ": cannot bitcast ", type_label(from),
             " (", from_bits, " bits) to ", type_label(to_), " (", to_bits,
             " bits); the types must have the same width");
  }
  int32_t to_n() const { return static_cast<int32_t>(to_); }

  DType to_;
  std::string who_;
};

}  // namespace

PI_CPU_KERNEL(BitCast, 26, 28, BitCastKernel);

}  // namespace polyinfer
