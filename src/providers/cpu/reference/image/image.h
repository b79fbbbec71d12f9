// Image decoders for ImageDecoder (opset 20): BMP and PNM parsed here, JPEG (libjpeg-turbo),
// PNG (libpng), TIFF (libtiff), WebP (libwebp) and JPEG 2000 (OpenJPEG) through the Debian
// libraries. The ONNX test data was made with Pillow on these same libraries, so every decoder
// gives what Pillow gives for the images Pillow reads (pixel_format RGB: numpy.array(img);
// Grayscale: img.convert("L")), and the kernel's uint8 outputs compare exactly.
//
// The bytes are untrusted: every decoder bounds-checks what it reads, refuses images of more
// than Limits::max_pixels pixels before allocating them, and turns every library error (libjpeg's
// and libpng's longjmp included) into a polyinfer::Error; none prints or exits. tests/fuzz/
// fuzz_image.cpp keeps it so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace polyinfer::image {

enum class Format { Unknown, Bmp, Jpeg, Jpeg2000, Png, Pnm, Tiff, WebP };

// "BMP", "JPEG", "JPEG 2000", "PNG", "PNM", "TIFF", "WebP"; "unknown".
const char* format_name(Format f);

// The format whose signature `data` starts with, or Unknown.
Format sniff(const uint8_t* data, size_t size);

struct Limits {
  // The most pixels an image may have: 2^28 (768 MiB of RGB), far beyond any photograph, so that
  // a few header bytes cannot ask for an unbounded allocation.
  int64_t max_pixels = int64_t{1} << 28;
};

// A decoded image: height rows, top first, of width pixels of 3 bytes (R, G, B). Images stored
// as grey are replicated into the three channels; alpha is dropped (Pillow's convert("RGB")).
struct Rgb8 {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;
};

// Decodes an image of any of the formats above. Throws polyinfer::Error: InvalidArgument whose
// message starts with `who` and names the format and the fault for bytes that are no image,
// truncated or corrupt; OutOfMemory for an image over `limits`.
Rgb8 decode(const uint8_t* data, size_t size, const std::string& who, const Limits& limits = {});

// The decoders decode() picks from (each expects its own format's signature).
Rgb8 decode_bmp(const uint8_t* data, size_t size, const std::string& who, const Limits& limits);
Rgb8 decode_jpeg(const uint8_t* data, size_t size, const std::string& who, const Limits& limits);
Rgb8 decode_jpeg2000(const uint8_t* data, size_t size, const std::string& who,
                     const Limits& limits);
Rgb8 decode_png(const uint8_t* data, size_t size, const std::string& who, const Limits& limits);
Rgb8 decode_pnm(const uint8_t* data, size_t size, const std::string& who, const Limits& limits);
Rgb8 decode_tiff(const uint8_t* data, size_t size, const std::string& who, const Limits& limits);
Rgb8 decode_webp(const uint8_t* data, size_t size, const std::string& who, const Limits& limits);

// Helpers of the decoders.
// Throws InvalidArgument "<who>: cannot decode the <format> image: <why>".
[[noreturn]] void corrupt(const std::string& who, Format f, const std::string& why);
// An image of width x height (zeroed), after checking both are positive and within `limits`.
Rgb8 allocate(int64_t width, int64_t height, const std::string& who, Format f,
              const Limits& limits);

// Pillow's grey level of an RGB pixel (ITU-R 601-2 luma in 16-bit fixed point, convert("L")).
inline uint8_t luma(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

}  // namespace polyinfer::image
