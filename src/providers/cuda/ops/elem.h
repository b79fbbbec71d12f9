// The floating-point element types the CUDA kernels take: float32, float16 and bfloat16 in
// memory, float32 arithmetic (every kernel widens what it reads and rounds what it writes, once).
// Plain types only, so the .cu files need none of the runtime's headers; the device-side
// conversions are in elem.cuh.
#pragma once

namespace polyinfer::cuda {

enum class Elem : int { F32, F16, BF16 };

}  // namespace polyinfer::cuda
