// TIFF through libtiff, first directory only (Pillow's default). 8-bit contiguous RGB(A) and grey
// strips are read row by row, so alpha is dropped as Pillow's convert("RGB") drops it; every
// other layout (palette, YCbCr, CMYK, 1..16-bit, tiles, separate planes) goes through libtiff's
// RGBA reader, which premultiplies unassociated alpha and rounds 16-bit samples where Pillow
// truncates them: there the two may differ by a few levels. The Orientation tag is not applied
// (Pillow does not apply it either).
//
// libtiff's errors and warnings go to this file's handlers for this file only (TIFFOpenOptions),
// never to stderr or to the process-wide handlers.
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {
namespace {

constexpr Format kTiff = Format::Tiff;

struct Source {
  const uint8_t* data;
  uint64_t size;
  uint64_t pos;
  char message[512];
};

int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* s = static_cast<Source*>(user);
  if (s->message[0] == 0) std::vsnprintf(s->message, sizeof s->message, fmt, ap);
  return 1;  // handled: the process-wide handler is not called
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

tmsize_t read_proc(thandle_t h, void* buf, tmsize_t count) {
  auto* s = static_cast<Source*>(h);
  if (count <= 0 || s->pos >= s->size) return 0;
  const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(count), s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, n);
  s->pos += n;
  return static_cast<tmsize_t>(n);
}
tmsize_t write_proc(thandle_t, void*, tmsize_t) { return -1; }
toff_t seek_proc(thandle_t h, toff_t off, int whence) {
  auto* s = static_cast<Source*>(h);
  uint64_t base = 0;
  if (whence == SEEK_CUR) base = s->pos;
  else if (whence == SEEK_END)
    base = s->size;
  else if (whence != SEEK_SET)
    return static_cast<toff_t>(-1);
  // toff_t is unsigned: a negative SEEK_CUR/SEEK_END offset wraps, and the sum wraps back.
  const uint64_t to = base + off;
  if (whence == SEEK_SET ? off > s->size : to > s->size) return static_cast<toff_t>(-1);
  s->pos = to;
  return to;
}
int close_proc(thandle_t) { return 0; }
toff_t size_proc(thandle_t h) { return static_cast<Source*>(h)->size; }
int map_proc(thandle_t, void**, toff_t*) { return 0; }  // no mapping: libtiff reads
void unmap_proc(thandle_t, void*, toff_t) {}

// `what`, then libtiff's first error message if it gave one.
[[noreturn]] void fail_with(const std::string& who, const Source& src, const char* what) {
  corrupt(who, kTiff, src.message[0] ? std::string(what) + ": " + src.message : what);
}

}  // namespace

Rgb8 decode_tiff(const uint8_t* data, size_t size, const std::string& who, const Limits& limits) {
  Source src{data, size, 0, {}};
  struct Options {
    TIFFOpenOptions* o = TIFFOpenOptionsAlloc();
    ~Options() { TIFFOpenOptionsFree(o); }
  } opts;
  if (!opts.o) corrupt(who, kTiff, "libtiff could not start");
  TIFFOpenOptionsSetErrorHandlerExtR(opts.o, on_error, &src);
  TIFFOpenOptionsSetWarningHandlerExtR(opts.o, on_warning, &src);
  // No single allocation beyond the largest image's 16-bit RGBA strip.
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts.o, static_cast<tmsize_t>(limits.max_pixels * 8));
  // "m": no memory mapping (the procs read from the buffer).
  struct File {
    TIFF* t;
    ~File() {
      if (t) TIFFClose(t);
    }
  } file{TIFFClientOpenExt("encoded stream", "rm", &src, read_proc, write_proc, seek_proc,
                           close_proc, size_proc, map_proc, unmap_proc, opts.o)};
  if (!file.t) fail_with(who, src, "not a readable TIFF file");
  TIFF* tif = file.t;
  uint32_t width = 0, height = 0;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) ||
      !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height))
    fail_with(who, src, "no image size");
  Rgb8 img = allocate(width, height, who, kTiff, limits);
  uint16_t bits = 1, spp = 1, planar = PLANARCONFIG_CONTIG, photometric = 0;
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  const bool has_photometric = TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric) != 0;
  uint8_t* out = img.pixels.data();

  const bool rgb = photometric == PHOTOMETRIC_RGB && spp >= 3;
  const bool grey = photometric == PHOTOMETRIC_MINISBLACK && spp >= 1;
  if (has_photometric && bits == 8 && planar == PLANARCONFIG_CONTIG && spp <= 8 &&
      !TIFFIsTiled(tif) && (rgb || grey)) {
    const tmsize_t line = TIFFScanlineSize(tif);
    if (line < static_cast<tmsize_t>(width) * spp)
      fail_with(who, src, "its scanlines are too short");
    std::vector<uint8_t> buf(static_cast<size_t>(line));
    for (uint32_t y = 0; y < height; ++y) {
      if (TIFFReadScanline(tif, buf.data(), y, 0) < 0)
        fail_with(who, src, "a scanline is unreadable");
      uint8_t* o = out + static_cast<size_t>(y) * width * 3;
      for (uint32_t x = 0; x < width; ++x, o += 3) {
        const uint8_t* p = buf.data() + static_cast<size_t>(x) * spp;
        if (rgb) {
          o[0] = p[0];
          o[1] = p[1];
          o[2] = p[2];
        } else {
          o[0] = o[1] = o[2] = p[0];
        }
      }
    }
    return img;
  }

  char why[1024] = {};
  if (!TIFFRGBAImageOK(tif, why)) corrupt(who, kTiff, std::string("unsupported layout: ") + why);
  TIFFRGBAImage reader;
  std::memset(&reader, 0, sizeof reader);
  if (!TIFFRGBAImageBegin(&reader, tif, 1, why))
    corrupt(who, kTiff, std::string("unsupported layout: ") + why);
  // Rows in the file's order, like the fast path: ask for the orientation the file has.
  reader.req_orientation = reader.orientation;
  std::vector<uint32_t> raster(static_cast<size_t>(width) * height);
  const int ok = TIFFRGBAImageGet(&reader, raster.data(), width, height);
  TIFFRGBAImageEnd(&reader);
  if (!ok) fail_with(who, src, "the image data is unreadable");
  for (size_t i = 0; i < raster.size(); ++i) {
    out[3 * i] = static_cast<uint8_t>(TIFFGetR(raster[i]));
    out[3 * i + 1] = static_cast<uint8_t>(TIFFGetG(raster[i]));
    out[3 * i + 2] = static_cast<uint8_t>(TIFFGetB(raster[i]));
  }
  return img;
}

}  // namespace polyinfer::image
