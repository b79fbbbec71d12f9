// JPEG 2000 (a JP2 file or a bare J2K codestream) through OpenJPEG. One or two components are
// grey (plus alpha), three or four RGB (plus alpha); alpha is dropped. Samples scale to 8 bits as
// Pillow's unpackers do: signed ones offset by half their range, then shifted by 8 - precision.
// sYCC images are turned into RGB with the JFIF equations (Pillow's integer tables may differ by
// one level). A subsampled component is read at the nearest sample.
#include <openjpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {
namespace {

constexpr Format kJ2k = Format::Jpeg2000;

struct Source {
  const uint8_t* data;
  uint64_t size;
  uint64_t pos;
  std::string message;  // OpenJPEG's first error
};

OPJ_SIZE_T read_fn(void* buf, OPJ_SIZE_T count, void* user) {
  auto* s = static_cast<Source*>(user);
  if (s->pos >= s->size) return static_cast<OPJ_SIZE_T>(-1);  // the end of the stream
  const uint64_t n = std::min<uint64_t>(count, s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, n);
  s->pos += n;
  return static_cast<OPJ_SIZE_T>(n);
}
OPJ_OFF_T skip_fn(OPJ_OFF_T count, void* user) {
  auto* s = static_cast<Source*>(user);
  if (count < 0) {
    if (static_cast<uint64_t>(-count) > s->pos) return -1;
    s->pos -= static_cast<uint64_t>(-count);
    return count;
  }
  const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(count), s->size - s->pos);
  if (n == 0) return -1;
  s->pos += n;
  return static_cast<OPJ_OFF_T>(n);
}
OPJ_BOOL seek_fn(OPJ_OFF_T to, void* user) {
  auto* s = static_cast<Source*>(user);
  if (to < 0 || static_cast<uint64_t>(to) > s->size) return OPJ_FALSE;
  s->pos = static_cast<uint64_t>(to);
  return OPJ_TRUE;
}
void on_error(const char* msg, void* user) {
  auto* s = static_cast<Source*>(user);
  if (!s->message.empty() || !msg) return;
  s->message = msg;
  while (!s->message.empty() && (s->message.back() == '\n' || s->message.back() == ' '))
    s->message.pop_back();
}
void quiet(const char*, void*) {}

[[noreturn]] void fail_with(const std::string& who, const Source& src, const char* what) {
  corrupt(who, kJ2k,
          src.message.empty() ? std::string(what) : std::string(what) + ": " + src.message);
}

}  // namespace

Rgb8 decode_jpeg2000(const uint8_t* data, size_t size, const std::string& who,
                     const Limits& limits) {
  Source src{data, size, 0, {}};
  const bool jp2 = size >= 12 && std::memcmp(data, "\x00\x00\x00\x0cjP  \r\n\x87\n", 12) == 0;
  struct Codec {
    opj_codec_t* c;
    ~Codec() {
      if (c) opj_destroy_codec(c);
    }
  } codec{opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K)};
  struct Stream {
    opj_stream_t* s;
    ~Stream() {
      if (s) opj_stream_destroy(s);
    }
  } stream{opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE)};
  struct Image {
    opj_image_t* i = nullptr;
    ~Image() {
      if (i) opj_image_destroy(i);
    }
  } image;
  if (!codec.c || !stream.s) corrupt(who, kJ2k, "OpenJPEG could not start");
  opj_set_error_handler(codec.c, on_error, &src);
  opj_set_warning_handler(codec.c, quiet, nullptr);
  opj_set_info_handler(codec.c, quiet, nullptr);
  opj_stream_set_user_data(stream.s, &src, nullptr);
  opj_stream_set_user_data_length(stream.s, size);
  opj_stream_set_read_function(stream.s, read_fn);
  opj_stream_set_skip_function(stream.s, skip_fn);
  opj_stream_set_seek_function(stream.s, seek_fn);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  if (!opj_setup_decoder(codec.c, &params)) fail_with(who, src, "OpenJPEG could not start");
  // A truncated codestream is an error, not a blurred image from the layers that arrived.
  opj_decoder_set_strict_mode(codec.c, OPJ_TRUE);
  if (!opj_read_header(stream.s, codec.c, &image.i) || !image.i)
    fail_with(who, src, "the header is unreadable");
  const opj_image_t& hdr = *image.i;
  if (hdr.x1 <= hdr.x0 || hdr.y1 <= hdr.y0) corrupt(who, kJ2k, "the image area is empty");
  const int64_t width = int64_t{hdr.x1} - hdr.x0, height = int64_t{hdr.y1} - hdr.y0;
  Rgb8 img = allocate(width, height, who, kJ2k, limits);
  const uint32_t comps = hdr.numcomps;
  if (comps < 1 || comps > 4)
    corrupt(who, kJ2k, std::to_string(comps) + " components (1 to 4 are supported)");
  if (!opj_decode(codec.c, stream.s, image.i) || !opj_end_decompress(codec.c, stream.s))
    fail_with(who, src, "the image data is corrupt or truncated");

  const opj_image_t& im = *image.i;
  const int colour = comps >= 3 ? 3 : 1;
  for (int c = 0; c < colour; ++c) {
    const opj_image_comp_t& k = im.comps[c];
    if (!k.data || k.w == 0 || k.h == 0 || k.dx == 0 || k.dy == 0 || k.prec < 1 || k.prec > 31)
      corrupt(who, kJ2k, "component " + std::to_string(c) + " was not decoded");
  }
  // Component c's sample for image pixel (x, y), scaled to 8 bits.
  const auto sample = [&](int c, int64_t x, int64_t y) -> int {
    const opj_image_comp_t& k = im.comps[c];
    const int64_t cx = std::clamp<int64_t>((im.x0 + x) / k.dx - k.x0, 0, k.w - 1);
    const int64_t cy = std::clamp<int64_t>((im.y0 + y) / k.dy - k.y0, 0, k.h - 1);
    int64_t v = k.data[cy * k.w + cx];
    const int prec = static_cast<int>(k.prec);
    if (k.sgnd) v += int64_t{1} << (prec - 1);
    v = std::clamp<int64_t>(v, 0, (int64_t{1} << prec) - 1);
    return static_cast<int>(prec > 8 ? v >> (prec - 8) : v << (8 - prec));
  };
  const bool sycc = colour == 3 && im.color_space == OPJ_CLRSPC_SYCC;
  uint8_t* out = img.pixels.data();
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x, out += 3) {
      if (colour == 1) {
        out[0] = out[1] = out[2] = static_cast<uint8_t>(sample(0, x, y));
        continue;
      }
      const int a = sample(0, x, y), b = sample(1, x, y), c = sample(2, x, y);
      if (!sycc) {
        out[0] = static_cast<uint8_t>(a);
        out[1] = static_cast<uint8_t>(b);
        out[2] = static_cast<uint8_t>(c);
        continue;
      }
      const double cb = b - 128.0, cr = c - 128.0;
      const double rgb[3] = {a + 1.402 * cr, a - 0.344136 * cb - 0.714136 * cr, a + 1.772 * cb};
      for (int i = 0; i < 3; ++i)
        out[i] = static_cast<uint8_t>(std::clamp(std::lround(rgb[i]), 0L, 255L));
    }
  }
  return img;
}

}  // namespace polyinfer::image
