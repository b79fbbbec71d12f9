// WebP (lossy and lossless) through libwebp, decoded straight into the image as RGB: alpha is
// dropped, not composited (Pillow's convert("RGB")). Animated files are refused.
#include <webp/decode.h>

#include <cstdint>
#include <string>

#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {
namespace {

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OK: return "no error";
    case VP8_STATUS_OUT_OF_MEMORY: return "libwebp ran out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "the bitstream is corrupt";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "it uses a feature libwebp does not support";
    case VP8_STATUS_SUSPENDED: return "decoding was suspended";
    case VP8_STATUS_USER_ABORT: return "decoding was aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the file is truncated";
  }
  return "unknown libwebp error";
}

}  // namespace

Rgb8 decode_webp(const uint8_t* data, size_t size, const std::string& who, const Limits& limits) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) corrupt(who, Format::WebP, "libwebp version mismatch");
  VP8StatusCode st = WebPGetFeatures(data, size, &config.input);
  if (st != VP8_STATUS_OK) corrupt(who, Format::WebP, status_text(st));
  if (config.input.has_animation) corrupt(who, Format::WebP, "animated WebP is not supported");
  Rgb8 img = allocate(config.input.width, config.input.height, who, Format::WebP, limits);
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = img.pixels.data();
  config.output.u.RGBA.stride = static_cast<int>(img.width * 3);
  config.output.u.RGBA.size = img.pixels.size();
  st = WebPDecode(data, size, &config);
  WebPFreeDecBuffer(&config.output);  // frees nothing of ours (external memory)
  if (st != VP8_STATUS_OK) corrupt(who, Format::WebP, status_text(st));
  return img;
}

}  // namespace polyinfer::image
