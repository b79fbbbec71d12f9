// TensorProto (.pb test data) reader fuzzer.
#include <cstddef>
#include <cstdint>

#include "onnx/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    polyinfer::parse_tensor_pb(data, size, "fuzz input");
  } catch (const polyinfer::Error&) {
  }
  return 0;
}
