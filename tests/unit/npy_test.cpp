// Tests of the .npy reader and writer (src/onnx/npy.cpp): round trips of every dtype, files that
// numpy itself wrote, and malformed or hostile files, which must give polyinfer::Error and never
// crash or allocate by an unchecked size.
#include "onnx/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace polyinfer {
namespace {

// Byte-exact output of numpy 1.24 (Debian 12); made by printing np.save into a BytesIO.
// numpy.save of <f4 [2, 3]
const std::string kNumpyF4 =
    std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') + "\n" +
    std::string(
        "\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40"
        "\x00\x00\xa0\x40",
        24);
// numpy.save of <i4 [2, 3]
const std::string kNumpyFortranI4 =
    std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
    "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }" + std::string(59, ' ') + "\n" +
    std::string(
        "\x00\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00\x00\x02\x00\x00\x00"
        "\x05\x00\x00\x00",
        24);
// numpy.save of >i2 [3]
const std::string kNumpyBigEndianI2 = std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
                                      "{'descr': '>i2', 'fortran_order': False, 'shape': (3,), }" +
                                      std::string(60, ' ') + "\n" +
                                      std::string("\x00\x01\xff\xfe\x01\x2c", 6);
// numpy.save of <U5 [2, 2]
const std::string kNumpyUnicode =
    std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
    "{'descr': '<U5', 'fortran_order': False, 'shape': (2, 2), }" + std::string(58, ' ') + "\n" +
    std::string(
        "\x61\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
        "\x68\x00\x00\x00\xe9\x00\x00\x00\x6c\x00\x00\x00\x6c\x00\x00\x00\x6f\x00\x00\x00"
        "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
        "\xac\x20\x00\x00\x78\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
        80);
// numpy.save of <U2 [2, 3]
const std::string kNumpyFortranUnicode =
    std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
    "{'descr': '<U2', 'fortran_order': True, 'shape': (2, 3), }" + std::string(59, ' ') + "\n" +
    std::string(
        "\x61\x00\x00\x00\x00\x00\x00\x00\x64\x00\x00\x00\x64\x00\x00\x00\x62\x00\x00\x00"
        "\x62\x00\x00\x00\x65\x00\x00\x00\x00\x00\x00\x00\x63\x00\x00\x00\x00\x00\x00\x00"
        "\x66\x00\x00\x00\x66\x00\x00\x00",
        48);
// numpy.save of |S2 [2]
const std::string kNumpyBytes = std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
                                "{'descr': '|S2', 'fortran_order': False, 'shape': (2,), }" +
                                std::string(60, ' ') + "\n" + std::string("\x61\x62\x63\x00", 4);
// numpy.save of |b1 [3]
const std::string kNumpyBool = std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
                               "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }" +
                               std::string(60, ' ') + "\n" + std::string("\x01\x00\x01", 3);
// numpy.save of <f8 []
const std::string kNumpyScalarF8 = std::string("\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00", 10) +
                                   "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" +
                                   std::string(62, ' ') + "\n" +
                                   std::string("\x00\x00\x00\x00\x00\x00\x04\x40", 8);
// numpy.save of <u2 [3] format 2.0
const std::string kNumpyV2U2 = std::string("\x93\x4e\x55\x4d\x50\x59\x02\x00\x74\x00\x00\x00", 12) +
                               "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }" +
                               std::string(58, ' ') + "\n" +
                               std::string("\x00\x00\x01\x00\x02\x00", 6);
// numpy.save of <f2 [2] format 3.0
const std::string kNumpyV3F2 = std::string("\x93\x4e\x55\x4d\x50\x59\x03\x00\x74\x00\x00\x00", 12) +
                               "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }" +
                               std::string(58, ' ') + "\n" + std::string("\x00\x3e\x00\xc0", 4);

// A .npy file with the given header dict (padded as numpy pads it) and data.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  const size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>(header.size() >> (8 * i));
  return out + header + data;
}

Tensor parse(const std::string& bytes) { return parse_npy(bytes.data(), bytes.size(), "t.npy"); }

// Expects parse_npy to fail with `code` and a message that contains each of `parts`.
void expect_error(const std::string& bytes, const std::vector<std::string>& parts,
                  ErrorCode code = ErrorCode::InvalidArgument) {
  try {
    parse(bytes);
    ADD_FAILURE() << "no error; expected one mentioning " << parts.at(0);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "'" << p << "' not in: " << e.what();
  }
}

template <class T> void expect_round_trip(const Shape& shape, const std::vector<T>& values) {
  const Tensor t = Tensor::from_vector<T>(shape, values);
  const Tensor back = parse(to_npy_bytes(t));
  EXPECT_EQ(back.dtype(), t.dtype());
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.to_vector<T>(), values) << dtype_name(t.dtype());
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("polyinfer_npy_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Npy, RoundTripsEveryDtype) {
  expect_round_trip<float>({2, 3}, {0.f, -1.5f, 3.25f, 1e30f, -0.f, INFINITY});
  expect_round_trip<double>({3}, {1.0, -2.5e300, 1e-300});
  expect_round_trip<int8_t>({4}, {-128, -1, 0, 127});
  expect_round_trip<int16_t>({2, 2}, {-32768, -1, 2, 32767});
  expect_round_trip<int32_t>({2}, {INT32_MIN, INT32_MAX});
  expect_round_trip<int64_t>({1, 2, 1}, {INT64_MIN, INT64_MAX});
  expect_round_trip<uint8_t>({3}, {0, 1, 255});
  expect_round_trip<uint16_t>({2}, {0, 65535});
  expect_round_trip<uint32_t>({2}, {0, UINT32_MAX});
  expect_round_trip<uint64_t>({2}, {0, UINT64_MAX});
  expect_round_trip<bool>({2, 2}, {true, false, false, true});
  expect_round_trip<std::string>({2, 2}, {"a", "h\xc3\xa9llo", "", "\xf0\x9f\x98\x80 emoji"});

  const Tensor h =
      Tensor::from_vector<Float16>({3}, {Float16(1.5f), Float16(-2.f), Float16(65504.f)});
  const Tensor back = parse(to_npy_bytes(h));
  ASSERT_EQ(back.dtype(), DType::Float16);
  EXPECT_EQ(back.shape(), (Shape{3}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back.data<Float16>()[i].bits, h.data<Float16>()[i].bits);
}

TEST(Npy, RoundTripsScalarsAndEmptyTensors) {
  expect_round_trip<float>({}, {42.f});
  expect_round_trip<int64_t>({0}, {});
  expect_round_trip<float>({0, 3}, {});
  expect_round_trip<float>({3, 0, 2}, {});
  expect_round_trip<std::string>({0}, {});
  expect_round_trip<std::string>({2}, {"", ""});  // numpy's minimum width, <U1
}

TEST(Npy, RoundTripsThroughFiles) {
  TempDir dir;
  const Tensor t = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  write_npy(dir.file("a.npy"), t);
  const Tensor back = read_npy(dir.file("a.npy"));
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.to_vector<int32_t>(), t.to_vector<int32_t>());

  // The converting path of read_npy (strings, Fortran order, big-endian, bool).
  for (const std::string* bytes :
       {&kNumpyUnicode, &kNumpyFortranI4, &kNumpyBigEndianI2, &kNumpyBool, &kNumpyV3F2}) {
    write_file(dir.file("b.npy"), *bytes);
    const Tensor a = read_npy(dir.file("b.npy")), b = parse(*bytes);
    EXPECT_EQ(a.describe(), b.describe());
    EXPECT_EQ(to_npy_bytes(a), to_npy_bytes(b));
  }
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  std::vector<float> f(6);
  for (int i = 0; i < 6; ++i) f[i] = static_cast<float>(i);
  EXPECT_EQ(to_npy_bytes(Tensor::from_vector<float>({2, 3}, f)), kNumpyF4);
  EXPECT_EQ(to_npy_bytes(Tensor::from_vector<bool>({3}, {true, false, true})), kNumpyBool);
  EXPECT_EQ(to_npy_bytes(Tensor::scalar<double>(2.5)), kNumpyScalarF8);
  EXPECT_EQ(to_npy_bytes(Tensor::from_vector<std::string>({2, 2}, {"a", "h\xc3\xa9llo", "",
                                                                   "\xe2\x82\xac"
                                                                   "x"})),
            kNumpyUnicode);
}

TEST(Npy, ReadsWhatNumpyWrites) {
  const Tensor f4 = parse(kNumpyF4);
  EXPECT_EQ(f4.describe(), "float32[2,3]");
  EXPECT_EQ(f4.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));

  const Tensor fortran = parse(kNumpyFortranI4);  // transposed into C order
  EXPECT_EQ(fortran.shape(), (Shape{2, 3}));
  EXPECT_EQ(fortran.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));

  EXPECT_EQ(parse(kNumpyBigEndianI2).to_vector<int16_t>(), (std::vector<int16_t>{1, -2, 300}));
  EXPECT_EQ(parse(kNumpyUnicode).to_vector<std::string>(),
            (std::vector<std::string>{"a", "h\xc3\xa9llo", "",
                                      "\xe2\x82\xac"
                                      "x"}));
  EXPECT_EQ(parse(kNumpyFortranUnicode).to_vector<std::string>(),
            (std::vector<std::string>{"a", "bb", "c", "dd", "e", "ff"}));
  EXPECT_EQ(parse(kNumpyBytes).to_vector<std::string>(), (std::vector<std::string>{"ab", "c"}));
  EXPECT_EQ(parse(kNumpyBool).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  const Tensor scalar = parse(kNumpyScalarF8);
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.to_vector<double>(), std::vector<double>{2.5});
  EXPECT_EQ(parse(kNumpyV2U2).to_vector<uint16_t>(), (std::vector<uint16_t>{0, 1, 2}));
  const Tensor f2 = parse(kNumpyV3F2);
  ASSERT_EQ(f2.dtype(), DType::Float16);
  EXPECT_EQ(static_cast<float>(f2.data<Float16>()[0]), 1.5f);
  EXPECT_EQ(static_cast<float>(f2.data<Float16>()[1]), -2.f);
}

TEST(Npy, ReadsLenientHeaderSpellings) {
  // Double quotes, no trailing comma, other key order, Python 2 longs, a 3-D Fortran array.
  const Tensor t = parse(make_npy(
      "{\"shape\": (2L, 1L, 2L), \"fortran_order\": True, \"descr\": \"<i8\"}",
      std::string("\x01\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0\x04\0\0\0\0\0\0\0", 32)));
  EXPECT_EQ(t.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 2, 4}));
}

TEST(Npy, NormalizesBoolBytes) {
  const Tensor t = parse(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                  std::string("\x00\x02\xff", 3)));
  const auto* raw = static_cast<const uint8_t*>(t.raw_data());
  EXPECT_EQ(raw[0], 0);
  EXPECT_EQ(raw[1], 1);
  EXPECT_EQ(raw[2], 1);
}

TEST(Npy, RejectsFilesItCannotRead) {
  TempDir dir;
  try {
    read_npy(dir.file("missing.npy"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find("missing.npy"), std::string::npos) << e.what();
  }
  try {
    read_npy(dir.file(""));
    ADD_FAILURE() << "no error for a folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io) << e.what();
  }
  try {
    write_npy(dir.file("no/such/folder/x.npy"), Tensor::scalar<float>(1));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find("x.npy"), std::string::npos) << e.what();
  }
  // Bad content in a file is InvalidArgument and names the file.
  write_file(dir.file("bad.npy"), "hello, world");
  try {
    read_npy(dir.file("bad.npy"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("bad.npy: not a .npy file"), std::string::npos)
        << e.what();
  }
  write_file(dir.file("short.npy"), kNumpyF4.substr(0, kNumpyF4.size() - 1));
  EXPECT_THROW(read_npy(dir.file("short.npy")), Error);
  write_file(dir.file("tiny.npy"), "\x93NUM");
  EXPECT_THROW(read_npy(dir.file("tiny.npy")), Error);
}

TEST(Npy, RejectsBadMagicAndVersions) {
  expect_error("", {"t.npy", "not a .npy file"});
  expect_error("PK\x03\x04 this is a zip archive", {"t.npy", ".npz"});
  expect_error(std::string("\x93NUMPZ\x01\x00\x76\x00", 10) + std::string(118, ' '),
               {"not a .npy file"});
  std::string v4 = kNumpyF4, v11 = kNumpyF4;
  v4[6] = 4;
  v11[7] = 1;
  expect_error(v4, {"version 4.0"});
  expect_error(v11, {"version 1.1"});
}

TEST(Npy, RejectsTruncatedFiles) {
  for (size_t n = 0; n < kNumpyF4.size(); ++n) {
    SCOPED_TRACE(n);
    EXPECT_THROW(parse(kNumpyF4.substr(0, n)), Error);
  }
  expect_error(kNumpyF4.substr(0, kNumpyF4.size() - 4), {"truncated", "needs 24 bytes", "only 20"});
  expect_error(kNumpyF4.substr(0, 100), {"truncated", "header"});
}

TEST(Npy, RejectsShapesThatDoNotMatchTheData) {
  const std::string data(24, '\0');
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", data),
               {"t.npy", "[2,4]", "needs 32 bytes", "only 24"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", data),
               {"8 bytes after the data"});
  // Sizes whose products overflow, or exceed what a tensor may hold: rejected before allocating.
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (4611686018427387904, 4611686018427387904), }",
                        data),
               {"t.npy", "2^40"});
  expect_error(
      make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1), }", data),
      {"needs 8796093022208 bytes"});
  expect_error(make_npy("{'descr': '<U268435456', 'fortran_order': False, "
                        "'shape': (1099511627776,), }",
                        data),
               {"t.npy"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (99999999999999999999,), }",
                        data),
               {"64 bits"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 6), }", data),
               {"negative"});
  expect_error(
      make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 99999999999999), }", ""),
      {"2^40"});
  std::string deep = "(";
  for (int i = 0; i < 65; ++i) deep += "1,";
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + deep + "), }",
                        std::string(4, '\0')),
               {"64 dimensions"});
}

TEST(Npy, RejectsHugeHeaderLengths) {
  std::string v1 = kNumpyF4;
  v1[8] = '\xff';
  v1[9] = '\xff';  // 65535 bytes of header in a 152-byte file
  expect_error(v1, {"t.npy", "truncated", "65535"});
  std::string v2("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
  expect_error(v2 + std::string(100, ' '), {"4294967295", "1 MiB"});
  std::string v3("\x93NUMPY\x03\x00\x00\x00\x20\x00", 12);  // 2 MiB
  expect_error(v3, {"1 MiB"});
}

TEST(Npy, RejectsMalformedHeaders) {
  const std::string d(4, '\0');
  expect_error(make_npy("{'descr': '<f4', 'shape': (1,), }", d), {"missing"});
  expect_error(
      make_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", d),
      {"duplicate key 'descr'"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", d),
               {"unknown key 'x'"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", d),
               {"True or False"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", d),
               {"expected '('"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", d),
               {"after the closing"});
  expect_error(make_npy("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", d),
               {"malformed .npy header"});
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", d),
               {"malformed .npy header"});
  expect_error(make_npy("not a dict", d), {"expected '{'"});
}

TEST(Npy, RejectsUnsupportedDtypesWithAFix) {
  auto with = [](const std::string& descr, size_t bytes) {
    return make_npy("{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }",
                    std::string(bytes, '\0'));
  };
  expect_error(with("'|V2'", 2), {"t.npy", "bfloat16", "float32"});
  expect_error(with("'<c8'", 8), {"complex"});
  expect_error(with("'|O'", 8), {"pickled"});
  expect_error(with("'<M8[s]'", 8), {"datetime"});
  expect_error(with("'<f16'", 16), {"f2 f4 f8"});
  expect_error(with("'<i3'", 3), {"i1 i2 i4 i8"});
  expect_error(with("[('a', '<f4')]", 4), {"structured"});
  expect_error(with("'<x4'", 4), {"'<x4'"});
  expect_error(with("''", 4), {"empty dtype"});
  expect_error(
      make_npy("{'descr': '<U0', 'fortran_order': False, 'shape': (1099511627776,), }", ""),
      {"zero-width"});
  // A code point that is not Unicode text in a <U array.
  expect_error(make_npy("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }",
                        std::string("\x00\xd8\x00\x00", 4)),
               {"not a Unicode character"});
}

TEST(Npy, WriterRejectsWhatNumpyCannotHold) {
  const Tensor bf = Tensor::from_vector<BFloat16>({2}, {BFloat16(1.f), BFloat16(2.f)});
  try {
    to_npy_bytes(bf);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(to_npy_bytes(Tensor()), Error);
  EXPECT_THROW(to_npy_bytes(Tensor::from_vector<std::string>({1}, {"\xff\xfe"})), Error);
}

TEST(Npy, WritesAlignedFormat1Headers) {
  for (const Tensor& t :
       {Tensor::from_vector<float>({1}, {1.f}), Tensor::zeros(DType::Int8, Shape(64, 1)),
        Tensor::from_vector<std::string>({1}, {std::string(1000, 'x')})}) {
    const std::string b = to_npy_bytes(t);
    EXPECT_EQ(b[6], 1);
    const size_t header_len = static_cast<uint8_t>(b[8]) | static_cast<uint8_t>(b[9]) << 8;
    EXPECT_EQ((10 + header_len) % 64, 0u);
    EXPECT_EQ(b[10 + header_len - 1], '\n');
  }
  // numpy cannot hold more than 64 dimensions, so neither does a .npy file.
  EXPECT_THROW(to_npy_bytes(Tensor::zeros(DType::Int8, Shape(65, 1))), Error);
}

// Every one-byte change and every truncation of valid files gives a value or an Error: no
// crash, no other exception (run under POLYINFER_SANITIZE to check memory safety too).
TEST(Npy, SurvivesCorruption) {
  for (const std::string* file : {&kNumpyUnicode, &kNumpyFortranI4, &kNumpyV2U2, &kNumpyBytes}) {
    for (size_t i = 0; i < file->size(); ++i) {
      for (char v : {'\0', '\xff', '\x7f', '9', ')', ',', '\'', '(', ' ', 'U', '>'}) {
        std::string bad = *file;
        bad[i] = v;
        try {
          parse(bad);
        } catch (const Error&) {
        }
      }
      try {
        parse(file->substr(0, i));
      } catch (const Error&) {
      }
    }
  }
}

}  // namespace
}  // namespace polyinfer
