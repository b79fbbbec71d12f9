// Format detection and the decoders' shared checks (image.h).
#include <cstring>
#include <string>

#include "polyinfer/status.h"
#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {

const char* format_name(Format f) {
  switch (f) {
    case Format::Bmp: return "BMP";
    case Format::Jpeg: return "JPEG";
    case Format::Jpeg2000: return "JPEG 2000";
    case Format::Png: return "PNG";
    case Format::Pnm: return "PNM";
    case Format::Tiff: return "TIFF";
    case Format::WebP: return "WebP";
    case Format::Unknown: break;
  }
  return "unknown";
}

Format sniff(const uint8_t* d, size_t n) {
  const auto starts = [&](const char* magic, size_t len, size_t at = 0) {
    return n >= at + len && std::memcmp(d + at, magic, len) == 0;
  };
  if (starts("\x89PNG\r\n\x1a\n", 8)) return Format::Png;
  if (starts("\xff\xd8\xff", 3)) return Format::Jpeg;
  // A JP2 file (its signature box) or a bare J2K codestream (SOC then SIZ marker).
  if (starts("\x00\x00\x00\x0cjP  \r\n\x87\n", 12) || starts("\xff\x4f\xff\x51", 4))
    return Format::Jpeg2000;
  if (starts("RIFF", 4) && starts("WEBP", 4, 8)) return Format::WebP;
  // Classic and BigTIFF, either byte order.
  if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4))
    return Format::Tiff;
  if (starts("BM", 2)) return Format::Bmp;
  if (n >= 3 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6' &&
      (d[2] == ' ' || (d[2] >= '\t' && d[2] <= '\r')))
    return Format::Pnm;
  return Format::Unknown;
}

void corrupt(const std::string& who, Format f, const std::string& why) {
  fail(ErrorCode::InvalidArgument, who, ": cannot decode the ", format_name(f), " image: ", why);
}

Rgb8 allocate(int64_t width, int64_t height, const std::string& who, Format f,
              const Limits& limits) {
  if (width <= 0 || height <= 0)
    corrupt(who, f,
            "its size is " + std::to_string(width) + " x " + std::to_string(height) + " pixels");
  PI_CHECK(width <= limits.max_pixels / height, OutOfMemory, who, ": the ", format_name(f),
           " image is ", width, " x ", height, " pixels, more than the ", limits.max_pixels,
           " that ImageDecoder decodes");
  Rgb8 img;
  img.width = width;
  img.height = height;
  img.pixels.assign(static_cast<size_t>(width * height * 3), 0);
  return img;
}

Rgb8 decode(const uint8_t* data, size_t size, const std::string& who, const Limits& limits) {
  PI_CHECK(size > 0, InvalidArgument, who, ": the encoded image is empty");
  switch (sniff(data, size)) {
    case Format::Bmp: return decode_bmp(data, size, who, limits);
    case Format::Jpeg: return decode_jpeg(data, size, who, limits);
    case Format::Jpeg2000: return decode_jpeg2000(data, size, who, limits);
    case Format::Png: return decode_png(data, size, who, limits);
    case Format::Pnm: return decode_pnm(data, size, who, limits);
    case Format::Tiff: return decode_tiff(data, size, who, limits);
    case Format::WebP: return decode_webp(data, size, who, limits);
    case Format::Unknown: break;
  }
  std::string head;
  for (size_t i = 0; i < size && i < 8; ++i) {
    if (i) head += ' ';
    head += "0123456789abcdef"[data[i] >> 4];
    head += "0123456789abcdef"[data[i] & 15];
  }
  fail(ErrorCode::InvalidArgument, who, ": the encoded stream (", size, " bytes, starting ", head,
       ") is not a BMP, JPEG, JPEG 2000, PNG, PNM, TIFF or WebP image");
}

}  // namespace polyinfer::image
