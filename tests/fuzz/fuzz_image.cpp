// ImageDecoder's decoders (BMP, JPEG, JPEG 2000, PNG, PNM, TIFF, WebP): any bytes → an image or
// polyinfer::Error. Seeds: tests/data/images/.
#include <cstddef>
#include <cstdint>

#include "polyinfer/status.h"
#include "providers/cpu/reference/image/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  polyinfer::image::Limits limits;
  // Small images only, so that each run stays quick: the size checks are the same code.
  limits.max_pixels = int64_t{1} << 20;
  try {
    polyinfer::image::decode(data, size, "fuzz input", limits);
  } catch (const polyinfer::Error&) {
  }
  return 0;
}
