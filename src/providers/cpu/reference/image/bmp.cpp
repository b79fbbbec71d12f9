// Windows BMP: the OS/2 1.x (12-byte) and Windows (40 to 124-byte) headers; 1, 2, 4 and 8-bit
// palettes, uncompressed or RLE8/RLE4; 16, 24 and 32-bit pixels, uncompressed or with bit-field
// masks. Channels wider or narrower than 8 bits scale as Pillow's unpackers do: v * 255 / max,
// truncated. Pillow reads a subset of these (it refuses unusual bit-field masks).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {
namespace {

constexpr Format kBmp = Format::Bmp;

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// One channel of a bit-field pixel: where its bits are and how to widen them to 8 bits.
struct Channel {
  uint32_t mask = 0;
  int shift = 0;
  uint32_t max = 0;  // the largest value of the field (mask >> shift); 0 for an absent channel

  explicit Channel(uint32_t m) : mask(m) {
    if (m == 0) return;
    shift = std::countr_zero(m);
    max = m >> shift;
  }
  uint8_t operator()(uint32_t pixel) const {
    if (max == 0) return 0;
    const uint64_t v = (pixel & mask) >> shift;
    return static_cast<uint8_t>(max == 255 ? v : v * 255 / max);
  }
};

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// RLE8 / RLE4 (bottom-up only) into one palette index per pixel. Runs past a row's end are
// clipped; a delta or end-of-line past the last row ends the image.
std::vector<uint8_t> decode_rle(const uint8_t* p, size_t n, int64_t width, int64_t height,
                                bool rle4, const std::string& who) {
  std::vector<uint8_t> idx(static_cast<size_t>(width * height), 0);
  int64_t x = 0, y = 0;  // y counts rows from the bottom
  const auto put = [&](uint8_t v) {
    if (x < width && y < height) idx[static_cast<size_t>((height - 1 - y) * width + x)] = v;
    ++x;
  };
  size_t i = 0;
  while (y < height) {
    if (n - i < 2) corrupt(who, kBmp, "the RLE data ends before the end-of-bitmap code");
    const uint8_t count = p[i], code = p[i + 1];
    i += 2;
    if (count > 0) {  // a run of `count` pixels
      for (int k = 0; k < count && x < width; ++k)
        put(rle4 ? static_cast<uint8_t>(k % 2 ? code & 15 : code >> 4) : code);
      continue;
    }
    if (code == 0) {  // end of line
      x = 0;
      ++y;
    } else if (code == 1) {  // end of bitmap
      break;
    } else if (code == 2) {  // delta
      if (n - i < 2) corrupt(who, kBmp, "the RLE data ends inside a delta code");
      x += p[i];
      y += p[i + 1];
      i += 2;
    } else {  // `code` literal pixels, padded to an even number of bytes
      const size_t bytes = rle4 ? (code + 1u) / 2 : code;
      if (n - i < bytes) corrupt(who, kBmp, "the RLE data ends inside a literal run");
      for (int k = 0; k < code; ++k) {
        const uint8_t b = p[i + static_cast<size_t>(rle4 ? k / 2 : k)];
        put(rle4 ? static_cast<uint8_t>(k % 2 ? b & 15 : b >> 4) : b);
      }
      i += bytes + (bytes & 1);
      i = std::min(i, n);
    }
  }
  return idx;
}

}  // namespace

Rgb8 decode_bmp(const uint8_t* d, size_t n, const std::string& who, const Limits& limits) {
  if (n < 18) corrupt(who, kBmp, "the file is shorter than its headers");
  const uint32_t data_offset = u32(d + 10);
  const uint32_t header_size = u32(d + 14);
  if (header_size != 12 && header_size != 40 && header_size != 52 && header_size != 56 &&
      header_size != 64 && header_size != 108 && header_size != 124)
    corrupt(who, kBmp, "unknown header size " + std::to_string(header_size));
  if (n < 14 + header_size) corrupt(who, kBmp, "the file ends inside its header");
  const uint8_t* h = d + 14;
  int64_t width = 0, height = 0;
  uint32_t bits = 0, compression = 0, colors = 0;
  bool top_down = false;
  if (header_size == 12) {
    width = u16(h + 4);
    height = u16(h + 6);
    bits = u16(h + 10);
  } else {
    width = static_cast<int32_t>(u32(h + 4));
    const int32_t rows = static_cast<int32_t>(u32(h + 8));
    top_down = rows < 0;
    height = top_down ? -static_cast<int64_t>(rows) : rows;
    bits = u16(h + 14);
    compression = u32(h + 16);
    colors = u32(h + 32);
  }
  // 0 none, 1 RLE8, 2 RLE4, 3 bit fields, 6 bit fields with alpha (ignored); the OS/2 2.x header
  // (64 bytes) gives 3 and 4 other meanings (Huffman, RLE24), which nothing reads any more.
  const bool bitfields = compression == 3 || compression == 6;
  if (compression > 3 && compression != 6)
    corrupt(who, kBmp, "compression " + std::to_string(compression) + " is not supported");
  if (bitfields && header_size == 64)
    corrupt(who, kBmp, "OS/2 Huffman compression is not supported");
  if ((compression == 1 && bits != 8) || (compression == 2 && bits != 4) ||
      (bitfields && bits != 16 && bits != 24 && bits != 32) ||
      (bits != 1 && bits != 2 && bits != 4 && bits != 8 && bits != 16 && bits != 24 && bits != 32))
    corrupt(who, kBmp,
            std::to_string(bits) + " bits per pixel with compression " +
                std::to_string(compression) + " is not a valid combination");
  if ((compression == 1 || compression == 2) && top_down)
    corrupt(who, kBmp, "an RLE image cannot be stored top-down");
  Rgb8 img = allocate(width, height, who, kBmp, limits);

  // Bit-field masks: in the header from V2 (52 bytes) on, else right after a 40-byte header.
  uint32_t masks[3] = {0x7c00, 0x3e0, 0x1f};  // 16-bit default: 5-5-5
  if (bits == 24 || bits == 32) {
    masks[0] = 0xff0000;
    masks[1] = 0xff00;
    masks[2] = 0xff;
  }
  size_t palette_at = 14 + header_size;
  if (bitfields) {
    const uint8_t* m = h + 40;
    if (header_size == 40) {
      const size_t extra = compression == 6 ? 16 : 12;
      if (n < palette_at + extra) corrupt(who, kBmp, "the file ends inside its bit-field masks");
      m = d + palette_at;
      palette_at += extra;
    }
    for (int c = 0; c < 3; ++c) masks[c] = u32(m + 4 * c);
  }

  std::vector<Rgb> palette;
  if (bits <= 8) {
    const size_t entry = header_size == 12 ? 3 : 4;
    const size_t count = std::min<size_t>(colors ? colors : 1u << bits, size_t{1} << bits);
    if (palette_at + count * entry > n) corrupt(who, kBmp, "the file ends inside its palette");
    palette.resize(count);
    for (size_t c = 0; c < count; ++c) {
      const uint8_t* e = d + palette_at + c * entry;
      palette[c] = {e[2], e[1], e[0]};
    }
  }
  if (data_offset >= n) corrupt(who, kBmp, "the pixel data offset is past the end of the file");
  const uint8_t* data = d + data_offset;
  const size_t avail = n - data_offset;
  uint8_t* out = img.pixels.data();
  const auto put_index = [&](int64_t at, uint32_t i) {
    const Rgb c = i < palette.size() ? palette[i] : Rgb{};  // an index past the palette: black
    out[3 * at] = c.r;
    out[3 * at + 1] = c.g;
    out[3 * at + 2] = c.b;
  };

  if (compression == 1 || compression == 2) {
    const std::vector<uint8_t> idx = decode_rle(data, avail, width, height, compression == 2, who);
    for (int64_t i = 0; i < width * height; ++i) put_index(i, idx[static_cast<size_t>(i)]);
    return img;
  }

  const int64_t stride = (width * bits + 31) / 32 * 4;
  if (static_cast<uint64_t>(stride) * static_cast<uint64_t>(height) > avail)
    corrupt(who, kBmp,
            "the pixel data needs " + std::to_string(stride * height) + " bytes, the file has " +
                std::to_string(avail));
  const Channel r(masks[0]), g(masks[1]), b(masks[2]);
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = data + (top_down ? y : height - 1 - y) * stride;
    const int64_t at = y * width;
    for (int64_t x = 0; x < width; ++x) {
      if (bits <= 8) {
        const int64_t bit = x * bits;
        const uint32_t byte = row[bit / 8];
        const uint32_t i = (byte >> (8 - bits - bit % 8)) & ((1u << bits) - 1);
        put_index(at + x, i);
        continue;
      }
      const uint8_t* p = row + x * (bits / 8);
      const uint32_t v = bits == 16   ? u16(p)
                         : bits == 24 ? static_cast<uint32_t>(p[0] | p[1] << 8 | p[2] << 16)
                                      : u32(p);
      uint8_t* o = out + 3 * (at + x);
      o[0] = r(v);
      o[1] = g(v);
      o[2] = b(v);
    }
  }
  return img;
}

}  // namespace polyinfer::image
