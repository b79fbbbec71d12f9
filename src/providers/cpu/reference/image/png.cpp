// PNG through libpng's low-level reader, with the transforms that give what Pillow gives: palette
// expanded, grey of 1, 2 or 4 bits stretched to 8 (0..255), 16-bit samples cut to their high
// byte (Pillow's ";16B" raw modes), alpha and tRNS dropped (convert("RGB"), no compositing), grey
// replicated; gamma and colour profiles ignored, as Pillow ignores them. (libpng's simplified
// API is not used: it composites alpha and treats 16-bit data as linear light.)
//
// libpng reports errors by calling the error function, which must not return: it longjmps back
// to run_libpng, whose frame, like the libpng frames the longjmp skips, holds nothing with a
// destructor (see jpeg.cpp).
#include <png.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {
namespace {

struct Job {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  char message[256] = {};
  const std::string* who = nullptr;
  const Limits* limits = nullptr;
  png_structp png = nullptr;
  png_infop info = nullptr;
  Rgb8 img;
  std::vector<png_bytep> rows;
};

void on_error(png_structp png, png_const_charp msg) {
  auto* job = static_cast<Job*>(png_get_error_ptr(png));
  std::snprintf(job->message, sizeof job->message, "%s", msg ? msg : "libpng error");
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}  // recoverable (a bad ancillary chunk)

void read_bytes(png_structp png, png_bytep out, size_t count) {
  auto* job = static_cast<Job*>(png_get_io_ptr(png));
  if (count > job->size - job->pos) png_error(png, "the file is truncated");
  std::memcpy(out, job->data + job->pos, count);
  job->pos += count;
}

// Returns false with job.message set when libpng reported an error.
bool run_libpng(Job& job) {
  job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, on_error, on_warning);
  if (!job.png) {
    std::snprintf(job.message, sizeof job.message, "libpng could not start");
    return false;
  }
  job.info = png_create_info_struct(job.png);
  if (!job.info) {
    std::snprintf(job.message, sizeof job.message, "libpng could not start");
    return false;
  }
  if (setjmp(png_jmpbuf(job.png))) return false;
  png_set_read_fn(job.png, &job, read_bytes);
  png_read_info(job.png, job.info);
  png_uint_32 width = 0, height = 0;
  int depth = 0, color = 0, interlace = 0;
  png_get_IHDR(job.png, job.info, &width, &height, &depth, &color, &interlace, nullptr, nullptr);
  // Throws through this frame: fine, it holds nothing to destroy.
  job.img = allocate(width, height, *job.who, Format::Png, *job.limits);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(job.png);
  if ((color & PNG_COLOR_MASK_COLOR) == 0 && depth < 8) png_set_expand_gray_1_2_4_to_8(job.png);
  if (depth == 16) png_set_strip_16(job.png);
  png_set_strip_alpha(job.png);
  if ((color & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(job.png);
  png_set_interlace_handling(job.png);
  png_read_update_info(job.png, job.info);
  if (png_get_channels(job.png, job.info) != 3 || png_get_bit_depth(job.png, job.info) != 8 ||
      png_get_rowbytes(job.png, job.info) != static_cast<size_t>(width) * 3) {
    std::snprintf(job.message, sizeof job.message,
                  "colour type %d at %d bits did not expand to 8-bit RGB", color, depth);
    return false;
  }
  job.rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y)
    job.rows[y] = job.img.pixels.data() + static_cast<size_t>(y) * width * 3;
  png_read_image(job.png, job.rows.data());
  // The chunks after the image data (png_read_end) are not read: every row is.
  return true;
}

}  // namespace

Rgb8 decode_png(const uint8_t* data, size_t size, const std::string& who, const Limits& limits) {
  Job job;
  job.data = data;
  job.size = size;
  job.who = &who;
  job.limits = &limits;
  struct Destroy {
    Job* j;
    ~Destroy() {
      if (j->png) png_destroy_read_struct(&j->png, j->info ? &j->info : nullptr, nullptr);
    }
  } destroy{&job};
  if (!run_libpng(job)) corrupt(who, Format::Png, job.message);
  return std::move(job.img);
}

}  // namespace polyinfer::image
