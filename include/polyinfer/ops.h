// polyinfer/ops.h — eager operators on Tensors, run where the tensors are.
//
//   auto x = polyinfer::Tensor::from_vector<float>({2, 2}, {1, -2, 3, -4})
//                .to(polyinfer::Device::parse("vulkan:0"));
//   auto y = polyinfer::ops::relu(polyinfer::ops::mul(x, x));   // computed on vulkan:0
//   std::vector<float> back = y.to_vector<float>();             // {1, 4, 9, 16}
//
// Each call runs the same kernels a session would, on the operands' device: the provider of that
// device ("cpu", "vulkan:N", "cuda:0"), strictly — an operator or dtype the device has no kernel
// for is an error (UnsupportedOp with the provider's reason), never a silent trip to the CPU.
// Semantics are ONNX's (opset 17): numpy broadcasting for the binary operators, MatMul's batch
// broadcasting. The result is on the operands' device.
//
// The first call for an (operator, dtypes, shapes, device) builds a one-node session; later calls
// with the same key reuse it (cache_stats() counts both). Thread-safe.
#pragma once

#include <cstddef>

#include "polyinfer/tensor.h"

namespace polyinfer::ops {

// Binary operators. Both operands must be defined, of one dtype and on one device, else
// InvalidArgument saying which; shapes that do not broadcast are ShapeMismatch.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);

// Element-wise unary operators.
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sqrt(const Tensor& x);

struct CacheStats {
  size_t built = 0;   // one-node sessions built since the process started
  size_t reused = 0;  // calls served by a session built earlier
  size_t cached = 0;  // sessions held now (at most 256; the least recently used goes first)
};
CacheStats cache_stats();

}  // namespace polyinfer::ops
