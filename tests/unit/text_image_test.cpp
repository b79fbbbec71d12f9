// The opset-20 text operators (StringSplit, StringConcat, RegexFullMatch) and ImageDecoder with
// its decoders (src/providers/cpu/reference/image/). Expected strings are Python's str.split and
// re.fullmatch results (the ONNX reference implementation's); expected pixels are the pattern
// tests/data/images/make_images.py drew, or Pillow's decoding written out where a format is lossy
// or a file is built here byte by byte (each such file was checked once against Pillow 9.4).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/import.h"
#include "polyinfer/session.h"
#include "providers/cpu/reference/image/image.h"

namespace polyinfer {
namespace {

// ---- a one-node model ----

struct Attr {
  std::string name;
  std::string s;
  int64_t i = 0;
  bool is_int = false;
};
Attr str_attr(std::string name, std::string v) { return {std::move(name), std::move(v), 0, false}; }
Attr int_attr(std::string name, int64_t v) { return {std::move(name), "", v, true}; }

// Runs `op` (opset 20, node "the_node") on `inputs` (named in0, in1, ...) on the cpu provider.
std::vector<Value> run_op(const std::string& op, const std::vector<Tensor>& inputs, int outputs,
                          const std::vector<Attr>& attrs = {}) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(20);
  auto* g = m.mutable_graph();
  g->set_name("t");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("the_node");
  std::map<std::string, Value> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    n->add_input(name);
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(inputs[i].dtype() == DType::String ? onnx::TensorProto::STRING
                                                         : onnx::TensorProto::UINT8);
    auto* sh = tt->mutable_shape();
    for (int64_t d : inputs[i].shape()) sh->add_dim()->set_dim_value(d);
    feeds[name] = Value(inputs[i]);
  }
  for (int i = 0; i < outputs; ++i) {
    n->add_output("out" + std::to_string(i));
    g->add_output()->set_name("out" + std::to_string(i));
  }
  for (const Attr& a : attrs) {
    auto* p = n->add_attribute();
    p->set_name(a.name);
    if (a.is_int) {
      p->set_type(onnx::AttributeProto::INT);
      p->set_i(a.i);
    } else {
      p->set_type(onnx::AttributeProto::STRING);
      p->set_s(a.s);
    }
  }
  const std::string bytes = m.SerializeAsString();
  SessionOptions o;
  o.providers = {"cpu"};
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  return s.run(feeds);
}

Tensor strings(Shape shape, std::vector<std::string> v) {
  return Tensor::from_vector<std::string>(std::move(shape), v);
}

// ---- StringSplit ----

// Runs StringSplit and checks Y (shape and strings) and Z.
void expect_split(const Tensor& x, const std::vector<Attr>& attrs, const Shape& y_shape,
                  const std::vector<std::string>& y, const std::vector<int64_t>& z) {
  const auto out = run_op("StringSplit", {x}, 2, attrs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().shape(), y_shape);
  EXPECT_EQ(out[0].tensor().to_vector<std::string>(), y);
  EXPECT_EQ(out[1].tensor().shape(), x.shape());
  EXPECT_EQ(out[1].tensor().to_vector<int64_t>(), z);
}

TEST(TextOps, SplitOnWhitespaceRuns) {
  // [s.split() for s in X]: runs of whitespace separate, none at either end, "" has no pieces.
  expect_split(strings({5}, {"  a  b ", "", "c\td\ne", "x", " \x0b\x1c "}), {}, {5, 3},
               {"a", "b", "", "", "", "", "c", "d", "e", "x", "", "", "", "", ""}, {2, 0, 3, 1, 0});
}

TEST(TextOps, SplitOnUnicodeWhitespace) {
  // "a\u00a0b\u3000c\u2009d".split(): no-break, ideographic and thin spaces separate.
  expect_split(strings({1}, {"a\xc2\xa0"
                             "b\xe3\x80\x80"
                             "c\xe2\x80\x89"
                             "d"}),
               {}, {1, 4}, {"a", "b", "c", "d"}, {4});
  // "x\u200b\u00e9 y".split(): a zero-width space (U+200B, E2 80 8B, beside the spaces
  // E2 80 80..8A) and "é" are not whitespace.
  expect_split(strings({1}, {"x\xe2\x80\x8b\xc3\xa9 y"}), {}, {1, 2},
               {"x\xe2\x80\x8b\xc3\xa9", "y"}, {2});
}

TEST(TextOps, SplitOnDelimiterKeepsEmptyPieces) {
  // [s.split(",") for s in X]
  expect_split(strings({2, 2}, {"a,,b", ",", "", "xyz"}), {str_attr("delimiter", ",")}, {2, 2, 3},
               {"a", "", "b", "", "", "", "", "", "", "xyz", "", ""}, {3, 2, 1, 1});
  // "xabyabz".split("ab"): a delimiter of several bytes.
  expect_split(strings({1}, {"xabyabzab"}), {str_attr("delimiter", "ab")}, {1, 4},
               {"x", "y", "z", ""}, {4});
}

TEST(TextOps, SplitMaxsplit) {
  // "a-b-c".split("-", 1), "a".split("-", 1)
  expect_split(strings({2}, {"a-b-c", "a"}), {str_attr("delimiter", "-"), int_attr("maxsplit", 1)},
               {2, 2}, {"a", "b-c", "a", ""}, {2, 1});
  // "  a b  c  ".split(None, 1): the rest keeps its trailing whitespace, not its leading.
  expect_split(strings({1}, {"  a b  c  "}), {int_attr("maxsplit", 1)}, {1, 2}, {"a", "b  c  "},
               {2});
  // maxsplit 0: no split; whitespace mode still drops the leading run.
  expect_split(strings({2}, {"  a b ", "x,y"}), {int_attr("maxsplit", 0)}, {2, 1}, {"a b ", "x,y"},
               {1, 1});
}

TEST(TextOps, SplitEmptyTensor) {
  expect_split(strings({0}, {}), {}, {0, 0}, {}, {});
  expect_split(strings({2, 0}, {}), {str_attr("delimiter", ",")}, {2, 0, 0}, {}, {});
}

// ---- StringConcat ----

TEST(TextOps, ConcatBroadcasts) {
  const auto out = run_op("StringConcat",
                          {strings({2, 1}, {"a", "\xc3\xa9"}), strings({3}, {"x", "", "yz"})}, 1);
  EXPECT_EQ(out[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(out[0].tensor().to_vector<std::string>(),
            (std::vector<std::string>{"ax", "a", "ayz", "\xc3\xa9x", "\xc3\xa9", "\xc3\xa9yz"}));
  const auto scalar = run_op("StringConcat", {strings({}, {"p"}), strings({}, {"q"})}, 1);
  EXPECT_EQ(scalar[0].tensor().shape(), Shape{});
  EXPECT_EQ(scalar[0].tensor().to_vector<std::string>(), std::vector<std::string>{"pq"});
}

TEST(TextOps, ConcatRejectsShapesThatDoNotBroadcast) {
  EXPECT_THROW(run_op("StringConcat", {strings({2}, {"a", "b"}), strings({3}, {"x", "y", "z"})}, 1),
               Error);
}

// ---- RegexFullMatch ----

std::vector<bool> full_match(const std::string& pattern, const std::vector<std::string>& x) {
  const auto out = run_op("RegexFullMatch", {strings({static_cast<int64_t>(x.size())}, x)}, 1,
                          {str_attr("pattern", pattern)});
  EXPECT_EQ(out[0].tensor().dtype(), DType::Bool);
  std::vector<bool> r;
  for (bool b : out[0].tensor().to_vector<bool>()) r.push_back(b);
  return r;
}

TEST(TextOps, RegexFullMatch) {
  // re.fullmatch(p, s) is not None, for each s.
  EXPECT_EQ(full_match(R"([a-z.]+@[a-z]+\.com)",
                       {"ab@cd.com", "ab@cd.comx", "AB@cd.com", "", "x.y@z.com"}),
            (std::vector<bool>{true, false, false, false, true}));
  // A full match, not a search; "" matches an empty-matching pattern.
  EXPECT_EQ(full_match("b*", {"", "bbb", "abb"}), (std::vector<bool>{true, true, false}));
  // UTF-8: "." is one character, not one byte.
  EXPECT_EQ(full_match("h.llo", {"h\xc3\xa9llo", "hello", "h\xc3\xa9\xc3\xa9llo"}),
            (std::vector<bool>{true, true, false}));
}

TEST(TextOps, RegexInvalidPatternIsAClearError) {
  try {
    full_match("(unclosed", {"x"});
    FAIL() << "an invalid pattern was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("the_node"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(unclosed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a valid RE2"), std::string::npos) << msg;
  }
}

// ---- the image decoders ----

std::vector<uint8_t> read_image(const std::string& name) {
  std::ifstream f(std::string(POLYINFER_SOURCE_DIR) + "/tests/data/images/" + name,
                  std::ios::binary);
  EXPECT_TRUE(f.good()) << name;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

image::Rgb8 decode(const std::vector<uint8_t>& bytes) {
  return image::decode(bytes.data(), bytes.size(), "test");
}

// make_images.py's 7 x 5 pattern, RGB per pixel, rows top first.
std::vector<uint8_t> pattern() {
  std::vector<uint8_t> p;
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      p.push_back(static_cast<uint8_t>(30 * x + 11 * y));
      p.push_back(static_cast<uint8_t>(250 - 40 * y - 5 * x));
      p.push_back(static_cast<uint8_t>((x * y * 13 + 7) % 256));
    }
  return p;
}

// The pattern's red channel as grey, replicated into RGB.
std::vector<uint8_t> grey_pattern() {
  std::vector<uint8_t> p = pattern();
  for (size_t i = 0; i < p.size(); i += 3) p[i + 1] = p[i + 2] = p[i];
  return p;
}

void expect_image(const image::Rgb8& img, int64_t h, int64_t w, const std::vector<uint8_t>& want,
                  const std::string& what) {
  EXPECT_EQ(img.height, h) << what;
  EXPECT_EQ(img.width, w) << what;
  EXPECT_EQ(img.pixels, want) << what;
}

TEST(ImageDecode, LosslessFilesGiveThePatternBack) {
  for (const char* f : {"rgb.png", "rgba.png", "palette.png", "rgb.bmp", "palette.bmp", "rgb.tif",
                        "rgb_lzw.tif", "palette.tif", "rgb.webp", "rgb.jp2", "rgb.j2k", "rgb.ppm"})
    expect_image(decode(read_image(f)), 5, 7, pattern(), f);
  // 16-bit grey: the high byte of each sample.
  expect_image(decode(read_image("grey16.png")), 5, 7, grey_pattern(), "grey16.png");
}

TEST(ImageDecode, JpegMatchesPillow) {
  // numpy.array(Image.open(f).convert("RGB")).ravel() with Debian's Pillow 9.4 (libjpeg-turbo
  // 2.1.5): the baseline and progressive files decode to the same pixels.
  const std::vector<uint8_t> rgb = {
      34,  231, 19,  49,  233, 23,  74,  229, 27,  100, 225, 33,  130, 217, 42, 156, 211, 48,
      184, 210, 57,  26,  200, 7,   45,  205, 19,  69,  201, 30,  100, 199, 46, 129, 190, 60,
      159, 187, 76,  184, 184, 86,  33,  162, 10,  54,  168, 31,  74,  160, 51, 107, 158, 83,
      139, 150, 110, 171, 147, 135, 198, 145, 155, 37,  125, 12,  57,  130, 38, 85,  125, 75,
      119, 122, 111, 154, 120, 137, 180, 112, 151, 212, 115, 166, 40,  92,  17, 61,  95,  45,
      92,  91,  97,  122, 86,  122, 159, 86,  131, 168, 63,  104, 197, 67,  93};
  expect_image(decode(read_image("rgb.jpg")), 5, 7, rgb, "rgb.jpg");
  expect_image(decode(read_image("rgb_progressive.jpg")), 5, 7, rgb, "rgb_progressive.jpg");
  const std::vector<uint8_t> cmyk = {
      0,   250, 9,   29,  244, 5,   60,  240, 8,   89,  235, 7,   120, 230, 7,  150, 225, 5,
      180, 220, 11,  12,  210, 9,   41,  204, 20,  72,  200, 34,  101, 195, 46, 132, 190, 58,
      161, 185, 74,  192, 180, 85,  22,  170, 6,   51,  164, 33,  82,  160, 59, 111, 155, 84,
      141, 150, 112, 171, 145, 137, 202, 140, 162, 34,  131, 5,   63,  124, 48, 94,  120, 82,
      123, 115, 128, 154, 110, 162, 183, 105, 200, 214, 100, 242, 44,  90,  9,  73,  84,  60,
      104, 80,  113, 133, 74,  160, 164, 69,  216, 193, 65,  12,  224, 59,  63};
  expect_image(decode(read_image("cmyk.jpg")), 5, 7, cmyk, "cmyk.jpg");
  const std::vector<uint8_t> grey = {0,   29,  60,  89,  120, 150, 180, 12,  41,  72,  101, 132,
                                     161, 192, 22,  51,  82,  111, 141, 171, 202, 34,  63,  94,
                                     123, 154, 183, 214, 44,  73,  104, 133, 164, 193, 224};
  std::vector<uint8_t> grey_rgb;
  for (uint8_t g : grey) grey_rgb.insert(grey_rgb.end(), {g, g, g});
  expect_image(decode(read_image("grey.jpg")), 5, 7, grey_rgb, "grey.jpg");
}

// A BMP with a 40-byte header: `masks` (bit fields) and `palette` (B, G, R, 0 each) between the
// header and `pixels`.
std::vector<uint8_t> bmp(int32_t w, int32_t h, uint16_t bits, uint32_t compression,
                         const std::vector<uint32_t>& masks, const std::vector<uint8_t>& palette,
                         const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t> b;
  const auto u16 = [&](uint32_t v) { b.insert(b.end(), {uint8_t(v), uint8_t(v >> 8)}); };
  const auto u32 = [&](uint32_t v) {
    b.insert(b.end(), {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)});
  };
  const uint32_t offset =
      14 + 40 + 4 * static_cast<uint32_t>(masks.size()) + static_cast<uint32_t>(palette.size());
  b.insert(b.end(), {'B', 'M'});
  u32(offset + static_cast<uint32_t>(pixels.size()));
  u32(0);
  u32(offset);
  u32(40);
  u32(static_cast<uint32_t>(w));
  u32(static_cast<uint32_t>(h));
  u16(1);
  u16(bits);
  u32(compression);
  u32(static_cast<uint32_t>(pixels.size()));
  u32(2835);
  u32(2835);
  u32(static_cast<uint32_t>(palette.size() / 4));
  u32(0);
  for (uint32_t m : masks) u32(m);
  b.insert(b.end(), palette.begin(), palette.end());
  b.insert(b.end(), pixels.begin(), pixels.end());
  return b;
}

TEST(ImageDecode, BmpVariants) {
  // 1 bit, 10 x 2, bottom-up: rows of 2 bytes padded to 4. Bottom row 1010101010, top 0110...
  const std::vector<uint8_t> two = {0, 0, 0, 0, 30, 20, 10, 0};  // black, (10, 20, 30)
  auto img = decode(bmp(10, 2, 1, 0, {}, two,
                        {0xaa, 0x80, 0, 0,  // bottom: 1010101010
                         0x66, 0x40, 0, 0}));
  std::vector<uint8_t> want;
  for (const char* row : {"0110011001", "1010101010"})
    for (int x = 0; x < 10; ++x) {
      if (row[x] == '1') want.insert(want.end(), {10, 20, 30});
      else
        want.insert(want.end(), {0, 0, 0});
    }
  expect_image(img, 2, 10, want, "1-bit");

  // RLE8, 4 x 3: bottom row a run of four 1s; middle row a literal run 2 0 1 (padded) and a
  // run of one 2; top row a delta of two pixels right, then a run of two 1s; end of bitmap.
  // (Pillow 9.4 reads two bytes too many after a delta code and leaves the top row black.)
  const std::vector<uint8_t> three = {0, 0, 0, 0, 0, 0, 255, 0, 255, 0, 0, 0};
  img = decode(bmp(4, 3, 8, 1, {}, three, {4, 1, 0, 0,                    // row 0
                                           0, 3, 2, 0, 1, 0, 1, 2, 0, 0,  // row 1
                                           0, 2, 2, 0, 2, 1, 0, 1}));     // row 2
  const uint8_t k[3] = {0, 0, 0}, r[3] = {255, 0, 0}, bl[3] = {0, 0, 255};
  want.clear();
  for (const uint8_t* c : {k, k, r, r, bl, k, r, bl, r, r, r, r}) want.insert(want.end(), c, c + 3);
  expect_image(img, 3, 4, want, "RLE8");

  // 16 bits, 5-6-5 bit fields, 3 x 2 top-down (negative height); rows of 6 bytes padded to 8.
  // Channels widen as v * 255 / max, truncated: 5 bits 17 -> 139, 6 bits 40 -> 161.
  const auto px = [](int r5, int g6, int b5) { return uint16_t(r5 << 11 | g6 << 5 | b5); };
  std::vector<uint8_t> data;
  for (uint16_t v : {px(31, 0, 0), px(0, 63, 0), px(0, 0, 31), uint16_t(0),  // 0: padding
                     px(17, 40, 3), px(1, 1, 1), px(31, 63, 31), uint16_t(0)})
    data.insert(data.end(), {uint8_t(v), uint8_t(v >> 8)});
  img = decode(bmp(3, -2, 16, 3, {0xf800, 0x7e0, 0x1f}, {}, data));
  expect_image(img, 2, 3, {255, 0, 0, 0, 255, 0, 0, 0, 255, 139, 161, 24, 8, 4, 8, 255, 255, 255},
               "16-bit 5-6-5");

  // 32 bits, no compression (B, G, R, unused), top-down.
  img = decode(bmp(2, -1, 32, 0, {}, {}, {1, 2, 3, 99, 4, 5, 6, 99}));
  expect_image(img, 1, 2, {3, 2, 1, 6, 5, 4}, "32-bit");
}

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

TEST(ImageDecode, PnmVariants) {
  // Plain PBM: 1 is black; comments and optional whitespace between pixels.
  expect_image(decode(bytes_of("P1\n# a comment\n3 2\n010\n1 0 1\n")), 2, 3,
               {255, 255, 255, 0, 0, 0, 255, 255, 255, 0, 0, 0, 255, 255, 255, 0, 0, 0}, "P1");
  // Raw PBM, 10 x 1: one row of two bytes.
  const std::string p4 = std::string("P4 10 1\n") + char(0xc0) + char(0x40);
  std::vector<uint8_t> want;
  for (const char c : std::string("1100000001")) want.insert(want.end(), 3, c == '1' ? 0 : 255);
  expect_image(decode(bytes_of(p4)), 1, 10, want, "P4");
  // Plain PGM, maxval 15: round(v / 15 * 255).
  expect_image(decode(bytes_of("P2 3 1 15 0 7 15\n")), 1, 3,
               {0, 0, 0, 119, 119, 119, 255, 255, 255}, "P2");
  // Plain PPM, maxval 1000: round(v / 1000 * 255), ties to even (500 -> 127.5 -> 128).
  expect_image(decode(bytes_of("P3\n2 1\n1000\n0 2 500 998 1000 1\n")), 1, 2,
               {0, 1, 128, 254, 255, 0}, "P3");
  // Raw PGM, 16-bit (maxval 65535, big-endian samples), scaled: 32768 -> 127.5019 -> 128.
  // (Pillow keeps such a file as 32-bit integers; see pnm.cpp.)
  expect_image(decode(bytes_of(std::string("P5 2 1 65535\n") + char(0x80) + char(0x00) +
                               char(0xff) + char(0xff))),
               1, 2, {128, 128, 128, 255, 255, 255}, "P5 16-bit");
}

// Every prefix and some corruptions of every test image: an error or an image, never a crash
// (the sanitizer build checks the reads and writes).
TEST(ImageDecode, TruncatedAndCorruptFilesNeverCrash) {
  for (const char* f : {"rgb.png", "palette.png", "grey16.png", "rgb.bmp", "palette.bmp", "rgb.tif",
                        "rgb_lzw.tif", "palette.tif", "rgb.webp", "rgb.jp2", "rgb.j2k", "rgb.jpg",
                        "rgb_progressive.jpg", "cmyk.jpg", "rgb.ppm"}) {
    const std::vector<uint8_t> full = read_image(f);
    for (size_t n = 0; n < full.size(); n += n < 64 ? 1 : 7) {
      const std::vector<uint8_t> part(full.begin(), full.begin() + static_cast<long>(n));
      try {
        const image::Rgb8 img = decode(part);
        EXPECT_EQ(img.pixels.size(), static_cast<size_t>(img.height * img.width * 3)) << f;
      } catch (const Error&) {
      }
    }
    for (size_t at = 0; at < full.size(); at += 5) {
      std::vector<uint8_t> bad = full;
      bad[at] ^= 0x5a;
      try {
        decode(bad);
      } catch (const Error&) {
      }
    }
  }
}

// Runs ImageDecoder on `bytes`.
Tensor image_decoder(const std::vector<uint8_t>& bytes, const std::string& pixel_format) {
  const auto out = run_op(
      "ImageDecoder", {Tensor::from_vector<uint8_t>({static_cast<int64_t>(bytes.size())}, bytes)},
      1, {str_attr("pixel_format", pixel_format)});
  return out[0].tensor();
}

TEST(ImageDecoderOp, PixelFormats) {
  const std::vector<uint8_t> png = read_image("rgb.png");
  const Tensor rgb = image_decoder(png, "RGB");
  EXPECT_EQ(rgb.shape(), (Shape{5, 7, 3}));
  EXPECT_EQ(rgb.to_vector<uint8_t>(), pattern());
  const Tensor bgr = image_decoder(png, "BGR");
  std::vector<uint8_t> want = pattern();
  for (size_t i = 0; i < want.size(); i += 3) std::swap(want[i], want[i + 2]);
  EXPECT_EQ(bgr.to_vector<uint8_t>(), want);
  // numpy.array(Image.open("rgb.png").convert("L")).ravel() (Pillow 9.4).
  const Tensor grey = image_decoder(png, "Grayscale");
  EXPECT_EQ(grey.shape(), (Shape{5, 7, 1}));
  EXPECT_EQ(grey.to_vector<uint8_t>(),
            (std::vector<uint8_t>{148, 154, 160, 166, 172, 178, 184, 127, 135, 142, 150, 157,
                                  165, 172, 107, 116, 125, 134, 143, 152, 161, 87,  97,  108,
                                  118, 129, 139, 150, 67,  79,  91,  103, 115, 97,  109}));
}

// The error a test expects: polyinfer::Error whose message names the node and `format`.
void expect_decode_error(const std::vector<uint8_t>& bytes, const std::string& format) {
  try {
    image_decoder(bytes, "RGB");
    FAIL() << "decoded a bad " << format << " image";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("the_node"), std::string::npos) << msg;
    EXPECT_NE(msg.find(format), std::string::npos) << msg;
  }
}

TEST(ImageDecoderOp, TruncatedJpegAndPngAreErrors) {
  for (const char* f : {"rgb.jpg", "rgb_progressive.jpg"}) {
    std::vector<uint8_t> jpeg = read_image(f);
    jpeg.resize(jpeg.size() / 2);
    expect_decode_error(jpeg, "JPEG");
  }
  std::vector<uint8_t> png = read_image("rgb.png");
  png.resize(png.size() - 30);  // inside the image data
  expect_decode_error(png, "PNG");
  std::vector<uint8_t> webp = read_image("rgb.webp");
  webp.resize(webp.size() - 10);
  expect_decode_error(webp, "WebP");
  std::vector<uint8_t> jp2 = read_image("rgb.jp2");
  jp2.resize(jp2.size() - 40);
  expect_decode_error(jp2, "JPEG 2000");
  std::vector<uint8_t> ppm = read_image("rgb.ppm");
  ppm.pop_back();
  expect_decode_error(ppm, "PNM");
  std::vector<uint8_t> bmp_file = read_image("rgb.bmp");
  bmp_file.resize(bmp_file.size() - 20);
  expect_decode_error(bmp_file, "BMP");
}

TEST(ImageDecoderOp, CorruptPngCrcIsAnError) {
  std::vector<uint8_t> png = read_image("rgb.png");
  png[40] ^= 0xff;  // inside IDAT: its CRC no longer matches
  expect_decode_error(png, "PNG");
}

TEST(ImageDecoderOp, UnknownAndEmptyStreamsAreErrors) {
  expect_decode_error(bytes_of("GIF89a......"), "not a BMP, JPEG");
  expect_decode_error({}, "empty");
}

TEST(ImageDecoderOp, HugeImageIsRefusedBeforeAllocating) {
  // A 24-bit BMP header claiming 100000 x 100000 pixels, with no data behind it.
  try {
    image_decoder(bmp(100000, 100000, 24, 0, {}, {}, {}), "RGB");
    FAIL() << "a 10^10-pixel image was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.what();
  }
  image::Limits small;
  small.max_pixels = 34;
  const std::vector<uint8_t> png = read_image("rgb.png");
  EXPECT_THROW(image::decode(png.data(), png.size(), "test", small), Error);
}

TEST(ImageDecoderOp, BadPixelFormatIsAModelError) {
  try {
    image_decoder(read_image("rgb.png"), "RGBA");
    FAIL() << "pixel_format RGBA was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pixel_format"), std::string::npos) << e.what();
  }
}

// ---- inference (src/infer/rules_text_image.cpp) ----

TEST(TextImageInfer, OutputTypes) {
  test::ModelBuilder m(20);
  m.proto().set_ir_version(9);
  m.input("s", {-1, 3}, 8).input("t", {3}, 8).input("bytes", {-1}, 2);
  m.node("StringSplit", {"s"}, {"pieces", "counts"});
  m.node("StringConcat", {"s", "t"}, {"joined"});
  m.node("RegexFullMatch", {"s"}, {"matches"});
  test::set_string(test::last_node(m), "pattern", "a+");
  m.node("ImageDecoder", {"bytes"}, {"grey"});
  test::set_string(test::last_node(m), "pixel_format", "Grayscale");
  m.node("ImageDecoder", {"bytes"}, {"colour"});
  for (const char* o : {"pieces", "counts", "joined", "matches", "grey", "colour"})
    m.proto().mutable_graph()->add_output()->set_name(o);
  const std::string bytes = m.bytes();
  Model model = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(*model.graph);
  const auto type = [&](const char* v) {
    const ir::TypeInfo* t = model.graph->type_of(v);
    return t ? t->str() : std::string("(none)");
  };
  EXPECT_EQ(type("pieces"), "string[N,3,?]");
  EXPECT_EQ(type("counts"), "int64[N,3]");
  EXPECT_EQ(type("joined"), "string[N,3]");
  EXPECT_EQ(type("matches"), "bool[N,3]");
  EXPECT_EQ(type("grey"), "uint8[?,?,1]");
  EXPECT_EQ(type("colour"), "uint8[?,?,3]");
}

}  // namespace
}  // namespace polyinfer
