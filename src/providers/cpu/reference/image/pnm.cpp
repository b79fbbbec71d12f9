// Netpbm PBM, PGM and PPM (P1 to P6), plain (ASCII) and raw, maxval up to 65535. Samples scale
// to 8 bits as Pillow scales them: round(v / maxval * 255), ties to even (Python's round), raw
// samples above maxval clamped to 255, plain ones refused. (Pillow keeps a PGM of maxval above
// 255 as 32-bit integers, whose convert("L") clips instead of scaling; this scales.)
#include <cmath>
#include <cstdint>
#include <string>

#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {
namespace {

constexpr Format kPnm = Format::Pnm;

bool is_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// A cursor over the file that reads the header's and the plain formats' tokens.
class Reader {
 public:
  Reader(const uint8_t* d, size_t n, const std::string& who) : d_(d), n_(n), who_(who) {}
  size_t pos() const { return i_; }
  void seek(size_t i) { i_ = i; }

  // Skips whitespace and comments (# to the end of the line).
  void skip_space() {
    while (i_ < n_) {
      if (is_space(d_[i_])) {
        ++i_;
      } else if (d_[i_] == '#') {
        while (i_ < n_ && d_[i_] != '\n' && d_[i_] != '\r') ++i_;
      } else {
        break;
      }
    }
  }
  // A decimal number of at most 10 digits (Pillow's token limit), `what` naming it in errors.
  uint64_t number(const char* what) {
    skip_space();
    const size_t start = i_;
    uint64_t v = 0;
    while (i_ < n_ && d_[i_] >= '0' && d_[i_] <= '9' && i_ - start < 10)
      v = v * 10 + (d_[i_++] - '0');
    if (i_ == start) {
      if (i_ == n_) corrupt(who_, kPnm, std::string("the file ends before the ") + what);
      corrupt(who_, kPnm, std::string("the ") + what + " is not a decimal number");
    }
    if (i_ < n_ && !is_space(d_[i_]) && d_[i_] != '#')
      corrupt(who_, kPnm,
              std::string("the ") + what + " is not a decimal number of at most 10 digits");
    return v;
  }
  // One plain-PBM pixel: '0' or '1', whitespace between them optional.
  bool bit() {
    skip_space();
    if (i_ == n_) corrupt(who_, kPnm, "the pixel data ends early");
    const uint8_t c = d_[i_++];
    if (c != '0' && c != '1') corrupt(who_, kPnm, "a plain PBM pixel is neither 0 nor 1");
    return c == '1';
  }

 private:
  const uint8_t* d_;
  size_t n_;
  const std::string& who_;
  size_t i_ = 0;
};

}  // namespace

Rgb8 decode_pnm(const uint8_t* d, size_t n, const std::string& who, const Limits& limits) {
  if (n < 3 || d[0] != 'P' || d[1] < '1' || d[1] > '6') corrupt(who, kPnm, "no P1..P6 signature");
  const int kind = d[1] - '0';
  const bool plain = kind <= 3;
  const int channels = kind == 3 || kind == 6 ? 3 : 1;
  const bool bitmap = kind == 1 || kind == 4;
  Reader rd(d, n, who);
  rd.seek(2);
  const uint64_t width = rd.number("width");
  const uint64_t height = rd.number("height");
  uint64_t maxval = 1;
  if (!bitmap) {
    maxval = rd.number("maxval");
    if (maxval == 0 || maxval > 65535)
      corrupt(who, kPnm, "maxval " + std::to_string(maxval) + " is not in 1..65535");
  }
  // Ten digits at most: both fit an int64 with room to spare.
  Rgb8 img = allocate(static_cast<int64_t>(width), static_cast<int64_t>(height), who, kPnm, limits);
  const size_t pixels = static_cast<size_t>(width * height);
  uint8_t* out = img.pixels.data();
  // The 8-bit value of a sample.
  const auto scale = [&](uint64_t v) -> uint8_t {
    if (maxval == 255) return static_cast<uint8_t>(v);
    const double s = std::nearbyint(static_cast<double>(v) / static_cast<double>(maxval) * 255.0);
    return static_cast<uint8_t>(s > 255 ? 255 : s);
  };
  const auto put = [&](size_t sample, uint8_t v) {
    if (channels == 3) {
      out[sample] = v;
    } else {
      out[3 * sample] = out[3 * sample + 1] = out[3 * sample + 2] = v;
    }
  };

  if (plain) {
    for (size_t s = 0; s < pixels * channels; ++s) {
      if (bitmap) {
        put(s, rd.bit() ? 0 : 255);  // 1 is black
        continue;
      }
      const uint64_t v = rd.number("sample");
      if (v > maxval)
        corrupt(who, kPnm,
                "sample " + std::to_string(v) + " exceeds maxval " + std::to_string(maxval));
      put(s, scale(v));
    }
    return img;
  }

  // Raw: exactly one whitespace byte ends the header.
  size_t at = rd.pos();
  if (at >= n || !is_space(d[at])) corrupt(who, kPnm, "no whitespace after the header");
  ++at;
  const size_t avail = n - at;
  const uint8_t* p = d + at;
  if (bitmap) {
    const size_t row = (width + 7) / 8;
    if (row * height > avail) corrupt(who, kPnm, "the pixel data is truncated");
    for (uint64_t y = 0; y < height; ++y)
      for (uint64_t x = 0; x < width; ++x) {
        const bool black = (p[y * row + x / 8] >> (7 - x % 8)) & 1;
        put(static_cast<size_t>(y * width + x), black ? 0 : 255);
      }
    return img;
  }
  const size_t bytes = maxval > 255 ? 2 : 1;
  const size_t samples = pixels * channels;
  if (samples * bytes > avail) corrupt(who, kPnm, "the pixel data is truncated");
  for (size_t s = 0; s < samples; ++s) {
    const uint64_t v = bytes == 2 ? static_cast<uint64_t>(p[2 * s] << 8 | p[2 * s + 1]) : p[s];
    put(s, scale(v));
  }
  return img;
}

}  // namespace polyinfer::image
