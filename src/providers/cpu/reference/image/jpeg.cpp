// JPEG through libjpeg-turbo with its defaults (accurate integer IDCT, "fancy" chroma
// upsampling), as Pillow decodes: YCbCr and RGB to RGB, grey replicated, CMYK and YCCK through
// Pillow's CMYK-to-RGB formula (Adobe's inverted CMYK undone first, as Pillow's "CMYK;I").
//
// libjpeg reports errors by calling error_exit, which must not return: it longjmps back to
// run_libjpeg. Nothing with a destructor lives in run_libjpeg's frame or in the libjpeg frames
// the longjmp skips (C++ allows a longjmp only where a throw would destroy nothing): the output
// and the library's state belong to the caller, which throws once run_libjpeg has returned.
// Running out of data is an error, not libjpeg's grey fill of the missing rows: a truncated file
// is refused, as Pillow refuses it.
#include <csetjmp>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstring>
#include <string>

// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include "providers/cpu/reference/image/image.h"

namespace polyinfer::image {
namespace {

// A progressive file may repeat scans without end, each one a pass over every coefficient; real
// encoders write about ten.
constexpr int kMaxScans = 1000;

struct ErrorManager {
  jpeg_error_mgr mgr;  // first: libjpeg sees a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}
void no_output(j_common_ptr) {}  // warnings (recoverable corruption) are not printed

void init_source(j_decompress_ptr) {}
void term_source(j_decompress_ptr) {}
// Called only once every byte has been handed over: the file is truncated.
boolean fill_input_buffer(j_decompress_ptr cinfo) {
  ERREXIT(cinfo, JERR_INPUT_EOF);
  return FALSE;
}
void skip_input_data(j_decompress_ptr cinfo, long count) {
  if (count <= 0) return;
  jpeg_source_mgr* src = cinfo->src;
  if (static_cast<unsigned long>(count) > src->bytes_in_buffer) ERREXIT(cinfo, JERR_INPUT_EOF);
  src->next_input_byte += count;
  src->bytes_in_buffer -= static_cast<size_t>(count);
}

void count_scans(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->is_decompressor && d->input_scan_number > kMaxScans) {
    std::snprintf(reinterpret_cast<ErrorManager*>(cinfo->err)->message, JMSG_LENGTH_MAX,
                  "more than %d progressive scans", kMaxScans);
    std::longjmp(reinterpret_cast<ErrorManager*>(cinfo->err)->jump, 1);
  }
}

// What decode_jpeg owns and run_libjpeg fills.
struct Job {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  jpeg_source_mgr src;
  jpeg_progress_mgr progress;
  const std::string* who;
  const Limits* limits;
  Rgb8 img;
};

void cmyk_to_rgb(const uint8_t* in, uint8_t* out, bool inverted) {
  // Pillow's cmyk2rgb: each channel (255 - K) - C * (255 - K) / 255, rounded as MULDIV255.
  const auto muldiv255 = [](int a, int b) {
    const int t = a * b + 128;
    return ((t >> 8) + t) >> 8;
  };
  const int k = inverted ? in[3] : 255 - in[3];  // 255 - K
  for (int c = 0; c < 3; ++c) {
    const int v = inverted ? 255 - in[c] : in[c];
    const int o = k - muldiv255(v, k);
    out[c] = static_cast<uint8_t>(o < 0 ? 0 : o > 255 ? 255 : o);
  }
}

// Returns false with err.message set when libjpeg reported an error.
bool run_libjpeg(Job& job, const uint8_t* data, size_t size) {
  jpeg_decompress_struct& cinfo = job.cinfo;
  cinfo.err = jpeg_std_error(&job.err.mgr);
  job.err.mgr.error_exit = on_error;
  job.err.mgr.output_message = no_output;
  if (setjmp(job.err.jump)) return false;
  jpeg_create_decompress(&cinfo);
  job.src.next_input_byte = data;
  job.src.bytes_in_buffer = size;
  job.src.init_source = init_source;
  job.src.fill_input_buffer = fill_input_buffer;
  job.src.skip_input_data = skip_input_data;
  job.src.resync_to_restart = jpeg_resync_to_restart;
  job.src.term_source = term_source;
  cinfo.src = &job.src;
  job.progress.progress_monitor = count_scans;
  cinfo.progress = &job.progress;
  jpeg_read_header(&cinfo, TRUE);
  bool cmyk = false;
  switch (cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE: cinfo.out_color_space = JCS_GRAYSCALE; break;
    case JCS_CMYK:
    case JCS_YCCK:
      cinfo.out_color_space = JCS_CMYK;
      cmyk = true;
      break;
    default: cinfo.out_color_space = JCS_RGB; break;
  }
  // Throws (OutOfMemory, InvalidArgument) through this frame: fine, it holds nothing to destroy.
  job.img = allocate(cinfo.image_width, cinfo.image_height, *job.who, Format::Jpeg, *job.limits);
  jpeg_start_decompress(&cinfo);
  const int comps = cinfo.output_components;
  if (cinfo.output_width != cinfo.image_width || cinfo.output_height != cinfo.image_height ||
      comps != (cmyk                                     ? 4
                : cinfo.out_color_space == JCS_GRAYSCALE ? 1
                                                         : 3)) {
    std::snprintf(job.err.message, JMSG_LENGTH_MAX, "unexpected output layout");
    return false;
  }
  const JDIMENSION width = cinfo.output_width;
  JSAMPARRAY row = (*cinfo.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&cinfo), JPOOL_IMAGE,
                                              width * static_cast<JDIMENSION>(comps), 1);
  const bool inverted = cmyk && cinfo.saw_Adobe_marker;
  while (cinfo.output_scanline < cinfo.output_height) {
    const JDIMENSION y = cinfo.output_scanline;
    if (jpeg_read_scanlines(&cinfo, row, 1) != 1) {
      std::snprintf(job.err.message, JMSG_LENGTH_MAX, "no progress at row %u", y);
      return false;
    }
    uint8_t* out = job.img.pixels.data() + static_cast<size_t>(y) * width * 3;
    const uint8_t* in = row[0];
    for (JDIMENSION x = 0; x < width; ++x, out += 3) {
      if (comps == 3) {
        std::memcpy(out, in + 3 * x, 3);
      } else if (comps == 1) {
        out[0] = out[1] = out[2] = in[x];
      } else {
        cmyk_to_rgb(in + 4 * x, out, inverted);
      }
    }
  }
  // The end of the image (jpeg_finish_decompress, the EOI marker) is not read: every row is.
  return true;
}

}  // namespace

Rgb8 decode_jpeg(const uint8_t* data, size_t size, const std::string& who, const Limits& limits) {
  Job job;
  std::memset(&job.cinfo, 0, sizeof job.cinfo);  // jpeg_destroy is then safe before create
  std::memset(&job.err, 0, sizeof job.err);
  std::memset(&job.src, 0, sizeof job.src);
  std::memset(&job.progress, 0, sizeof job.progress);
  job.who = &who;
  job.limits = &limits;
  struct Destroy {
    jpeg_decompress_struct* c;
    ~Destroy() { jpeg_destroy_decompress(c); }
  } destroy{&job.cinfo};
  if (!run_libjpeg(job, data, size)) corrupt(who, Format::Jpeg, job.err.message);
  return std::move(job.img);
}

}  // namespace polyinfer::image
