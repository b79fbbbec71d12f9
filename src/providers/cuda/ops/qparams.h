// What the CUDA quantized kernels (quantize.cpp, qlinear.cpp) read at creation: their scales,
// zero points, weights and biases must be constants. A parameter computed at run time would have
// to come back from the device mid-run (and would stop graph capture), so such a node is refused
// with the reason and falls back; QDQ exporters and polyinfer's quantizer write constants.
#pragma once

#include <string>
#include <vector>

#include "providers/cuda/ops/op_util.h"
#include "providers/cuda/ops/quant_kernels.h"

namespace polyinfer::cuda {

inline bool is_q8(DType d) { return d == DType::UInt8 || d == DType::Int8; }

inline QElem qelem_of(DType d) {
  switch (d) {
    case DType::UInt8: return QElem::U8;
    case DType::Int8: return QElem::S8;
    case DType::Int32: return QElem::I32;
    default: return QElem::F32;
  }
}

// Constant input i's values as doubles (the CPU reference reads them the same way); refuses the
// node when the input is absent or computed, of a dtype other than float32 / uint8 / int8 /
// int32, or has neither 1 nor `per` values (per 0: one value only) as a scalar or 1-D tensor.
inline std::vector<double> constant_values(const KernelInfo& info, size_t i, const char* what,
                                           int64_t per = 0) {
  const Tensor* t = info.has_input(i) ? info.constant_input(i) : nullptr;
  if (!t) info.unsupported(std::string(what) + " that is not a constant");
  const int64_t n = t->numel();
  if (t->rank() > 1 || !(n == 1 || (per > 0 && n == per)))
    info.unsupported(std::string(what) + " " + t->describe() + " (the CUDA kernel takes 1" +
                     (per > 0 ? " or " + std::to_string(per) : std::string()) + " values)");
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    switch (t->dtype()) {
      case DType::Float32: v[k] = t->data<float>()[k]; break;
      case DType::UInt8: v[k] = t->data<uint8_t>()[k]; break;
      case DType::Int8: v[k] = t->data<int8_t>()[k]; break;
      case DType::Int32: v[k] = t->data<int32_t>()[k]; break;
      default:
        info.unsupported(std::string(what) + " of dtype " + dtype_name(t->dtype()) +
                         " (the CUDA kernel takes float32 scales and 8-bit or int32 zero points)");
    }
  }
  return v;
}

// constant_values for a scale, which must be float32 (the CPU's kernels refuse other dtypes).
inline std::vector<double> constant_scale(const KernelInfo& info, size_t i, const char* what,
                                          int64_t per = 0) {
  const Tensor* t = info.has_input(i) ? info.constant_input(i) : nullptr;
  if (t && t->dtype() != DType::Float32)
    info.unsupported(std::string(what) + " of dtype " + dtype_name(t->dtype()) +
                     " (the CUDA kernel takes float32 scales)");
  return constant_values(info, i, what, per);
}

// A zero point's dtype must be its operand's (the CPU's kernels refuse others).
inline void require_zero_point_type(const KernelInfo& info, size_t zp, DType operand,
                                    const char* what) {
  const Tensor* z = info.has_input(zp) ? info.constant_input(zp) : nullptr;
  if (z && z->dtype() != operand)
    info.unsupported(std::string(what) + " of dtype " + dtype_name(z->dtype()) + " for " +
                     dtype_name(operand) + " values");
}

// The dtype of input i, known at creation and 8-bit; refuses the node otherwise.
inline DType require_q8(const KernelInfo& info, size_t i, const char* what) {
  const DType d = known_dtype(info, i);
  if (!is_q8(d))
    info.unsupported(std::string(what) + " of dtype " +
                     (d == DType::Undefined ? std::string("unknown at load") : dtype_name(d)) +
                     " (the CUDA kernel takes uint8 or int8)");
  return d;
}

// A device copy of host values, held by the kernel for its life.
template <class T> Tensor device_array(const std::vector<T>& v) {
  return Tensor::from_vector<T>({static_cast<int64_t>(v.size())}, v)
      .to(Device{DeviceKind::CUDA, 0});
}

template <class T> const T* device_ptr(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}

}  // namespace polyinfer::cuda
