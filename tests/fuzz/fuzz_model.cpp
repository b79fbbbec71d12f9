// Model loader fuzzer: any bytes → Session creation either succeeds or throws polyinfer::Error.
#include <cstddef>
#include <cstdint>

#include "polyinfer/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    polyinfer::Session::load_bytes(data, size);
  } catch (const polyinfer::Error&) {
  }
  return 0;
}
