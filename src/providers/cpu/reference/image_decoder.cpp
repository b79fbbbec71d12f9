// ImageDecoder (opset 20): encoded image bytes (uint8 [N]) to uint8 [height, width, C] in RGB,
// BGR (C = 3) or Grayscale (C = 1, Pillow's convert("L") luma). The decoders are in image/.
//
// An image that cannot be decoded is an error naming the node and the format. (The
// specification's text says "an empty matrix"; its reference implementation raises, and an
// error that says why beats an empty output that a later node fails on.)
#include <cstdint>
#include <string>

#include "providers/cpu/reference/image/image.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

class ImageDecoderKernel final : public Kernel {
 public:
  enum class Pixels { Rgb, Bgr, Grey };

  explicit ImageDecoderKernel(const KernelInfo& info) {
    const std::string format = info.attr_string("pixel_format", "RGB");
    if (format == "RGB") pixels_ = Pixels::Rgb;
    else if (format == "BGR")
      pixels_ = Pixels::Bgr;
    else if (format == "Grayscale")
      pixels_ = Pixels::Grey;
    else
      fail(ErrorCode::InvalidModel, info.node().label(), ": pixel_format '", format,
           "' is not one of RGB, BGR, Grayscale");
  }

  void run(KernelContext& ctx) override {
    const std::string label = ctx.node().label();
    const Tensor& x = ctx.input(0);
    PI_CHECK(x.dtype() == DType::UInt8 && x.rank() == 1, InvalidArgument, label,
             ": encoded_stream must be a 1-D uint8 tensor of the file's bytes, got ", x.describe());
    const image::Rgb8 img = image::decode(x.data<uint8_t>(), static_cast<size_t>(x.numel()), label);
    const int64_t c = pixels_ == Pixels::Grey ? 1 : 3;
    Tensor& y = ctx.output(0, DType::UInt8, {img.height, img.width, c});
    uint8_t* out = y.data<uint8_t>();
    const uint8_t* in = img.pixels.data();
    const int64_t n = img.height * img.width;
    for (int64_t i = 0; i < n; ++i, in += 3) {
      switch (pixels_) {
        case Pixels::Rgb:
          out[3 * i] = in[0];
          out[3 * i + 1] = in[1];
          out[3 * i + 2] = in[2];
          break;
        case Pixels::Bgr:
          out[3 * i] = in[2];
          out[3 * i + 1] = in[1];
          out[3 * i + 2] = in[0];
          break;
        case Pixels::Grey: out[i] = image::luma(in[0], in[1], in[2]); break;
      }
    }
  }

 private:
  Pixels pixels_ = Pixels::Rgb;
};

}  // namespace

PI_CPU_KERNEL(ImageDecoder, 20, 28, ImageDecoderKernel);

}  // namespace polyinfer
