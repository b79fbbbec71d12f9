// .npy reader fuzzer: any bytes → a tensor or polyinfer::Error.
#include <cstddef>
#include <cstdint>

#include "polyinfer/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    polyinfer::parse_npy(data, size, "fuzz input");
  } catch (const polyinfer::Error&) {
  }
  return 0;
}
