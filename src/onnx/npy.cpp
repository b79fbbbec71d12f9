#include "onnx/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

namespace polyinfer {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy.cpp assumes a little-endian host (it byte-swaps only '>' data)");

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMaxHeaderLen = size_t{1} << 20;   // numpy itself refuses more than 10000
constexpr size_t kMaxRank = 64;                     // numpy's NPY_MAXDIMS
constexpr int64_t kMaxElements = int64_t{1} << 40;  // Tensor's limit (see shape_numel)
constexpr int64_t kMaxStringChars = int64_t{1} << 28;
constexpr const char* kResave = "re-save the array with numpy.save(path, array)";

// What a .npy header says, checked against the bytes present.
struct NpyHeader {
  DType dtype = DType::Undefined;
  char kind = 0;         // 'f' 'i' 'u' 'b' 'U' 'S'
  size_t itemsize = 0;   // bytes per element in the file
  bool swap = false;     // big-endian data to byte-swap
  bool fortran = false;  // column-major data to transpose
  Shape shape;
  int64_t numel = 0;
  size_t data_offset = 0;  // where the array data starts
  size_t data_bytes = 0;   // numel * itemsize
};

// The numeric dtypes of .npy files; one list for the reader and the writer.
struct NumericType {
  char kind;     // numpy type code
  int64_t size;  // bytes
  DType dtype;
};
constexpr NumericType kNumericTypes[] = {
    {'f', 2, DType::Float16}, {'f', 4, DType::Float32}, {'f', 8, DType::Float64},
    {'i', 1, DType::Int8},    {'i', 2, DType::Int16},   {'i', 4, DType::Int32},
    {'i', 8, DType::Int64},   {'u', 1, DType::UInt8},   {'u', 2, DType::UInt16},
    {'u', 4, DType::UInt32},  {'u', 8, DType::UInt64},  {'b', 1, DType::Bool},
};

const NumericType* find_numeric(char kind, int64_t size) {
  for (const auto& t : kNumericTypes)
    if (t.kind == kind && t.size == size) return &t;
  return nullptr;
}

// Printable excerpt of header text for error messages.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 96)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 96) out += "...";
  return out;
}

// Parses the Python dict literal of a .npy header:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  void parse(std::string* descr, bool* fortran, Shape* shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_ws();
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = parse_string();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') bad("structured arrays (a list 'descr') are not supported");
        *descr = parse_string();
        seen_descr = mark(seen_descr, key);
      } else if (key == "fortran_order") {
        *fortran = parse_bool();
        seen_fortran = mark(seen_fortran, key);
      } else if (key == "shape") {
        *shape = parse_shape();
        seen_shape = mark(seen_shape, key);
      } else {
        bad("unknown key '" + excerpt(key) + "' (a .npy header has descr, fortran_order, shape)");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') bad("expected ',' or '}'");
    }
    ++pos_;  // '}'
    skip_ws();
    if (pos_ != s_.size()) bad("unexpected text after the closing '}'");
    if (!seen_descr || !seen_fortran || !seen_shape)
      bad("missing key(s): a .npy header needs descr, fortran_order and shape");
  }

 private:
  [[noreturn]] void bad(const std::string& why) const {
    fail(ErrorCode::InvalidArgument, what_, ": malformed .npy header: ", why, " at offset ", pos_,
         " of \"", excerpt(s_), "\"; ", kResave);
  }
  bool mark(bool seen, const std::string& key) const {
    if (seen) bad("duplicate key '" + key + "'");
    return true;
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string");
    const size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') bad("escape sequences in strings are not supported");
      ++pos_;
    }
    if (pos_ >= s_.size()) bad("unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }
  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") return pos_ += 4, true;
    if (s_.substr(pos_, 5) == "False") return pos_ += 5, false;
    bad("expected True or False");
  }
  int64_t parse_dim() {
    if (peek() == '-') bad("negative dimension");
    if (peek() < '0' || peek() > '9') bad("expected a dimension (a non-negative integer)");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int digit = peek() - '0';
      if (v > (INT64_MAX - digit) / 10) bad("dimension does not fit in 64 bits");
      v = v * 10 + digit;
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2 long, as old numpy wrote it
    return v;
  }
  Shape parse_shape() {
    Shape shape;
    expect('(');
    skip_ws();
    while (peek() != ')') {
      if (shape.size() == kMaxRank) bad("more than 64 dimensions");
      shape.push_back(parse_dim());
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != ')') {
        bad("expected ',' or ')' in shape");
      }
    }
    ++pos_;
    return shape;
  }

  std::string_view s_;
  const std::string& what_;
  size_t pos_ = 0;
};

[[noreturn]] void unsupported_dtype(const std::string& descr, const std::string& what,
                                    const char* why) {
  fail(ErrorCode::InvalidArgument, what, ": .npy dtype '", excerpt(descr),
       "' is not supported: ", why);
}

// Sets dtype, kind, itemsize and swap from a descr such as '<f4', '|b1', '<U5'.
void parse_descr(const std::string& descr, const std::string& what, NpyHeader* h) {
  size_t i = 0;
  char order = '=';
  if (!descr.empty() && std::strchr("<>|=", descr[0])) order = descr[i++];
  if (i >= descr.size()) unsupported_dtype(descr, what, "empty dtype");
  const char kind = descr[i++];
  int64_t n = -1;
  if (i < descr.size()) {
    n = 0;
    for (; i < descr.size(); ++i) {
      if (descr[i] < '0' || descr[i] > '9' || n > kMaxStringChars) {
        n = -1;
        break;
      }
      n = n * 10 + (descr[i] - '0');
    }
  }
  switch (kind) {
    case 'c':
      unsupported_dtype(
          descr, what,
          "complex arrays have no polyinfer dtype; save the real and imaginary parts as "
          "two float arrays (x.real, x.imag)");
    case 'O':
      unsupported_dtype(
          descr, what,
          "object arrays hold pickled Python objects, which polyinfer never unpickles; "
          "save a numeric or str array");
    case 'V':
      unsupported_dtype(
          descr, what,
          "opaque 'V' data (also how ml_dtypes' bfloat16 saves) has no numpy dtype to "
          "read; save bfloat16 data as float32 with x.astype(numpy.float32)");
    case 'M':
    case 'm':
      unsupported_dtype(descr, what,
                        "datetime arrays are not supported; convert with x.astype(numpy.int64)");
    default: break;
  }
  if (n < 0)
    unsupported_dtype(descr, what,
                      "expected a type code and a size such as '<f4', '<i8', '|b1' or '<U5'");
  // Zero-width strings would let a tiny file ask for 2^40 empty strings.
  if (n == 0) unsupported_dtype(descr, what, "zero-width element type");
  const bool wide = order == '>';
  if (kind == 'U') {
    h->dtype = DType::String;
    h->kind = 'U';
    h->itemsize = static_cast<size_t>(n) * 4;
    h->swap = wide;
    return;
  }
  if (kind == 'S' || kind == 'a') {
    h->dtype = DType::String;
    h->kind = 'S';
    h->itemsize = static_cast<size_t>(n);
    return;
  }
  const NumericType* type = find_numeric(kind == '?' ? 'b' : kind, n);
  if (!type)
    unsupported_dtype(descr, what,
                      "polyinfer reads f2 f4 f8 (float16/32/64), i1 i2 i4 i8, u1 u2 u4 u8, b1 "
                      "(bool), U and S (strings); convert the array, e.g. x.astype(numpy.float32)");
  h->dtype = type->dtype;
  h->kind = type->kind;
  h->itemsize = static_cast<size_t>(n);
  h->swap = wide && n > 1;
}

// Checks the magic, version and header length in the first bytes of a .npy file of
// `total` bytes, of which `avail` (at least min(total, 12)) are at `p`. Returns the offset of
// the array data.
size_t parse_preamble(const unsigned char* p, size_t avail, size_t total, const std::string& what) {
  PI_CHECK(total >= 10, InvalidArgument, what, ": not a .npy file: only ", total,
           " bytes, fewer than a .npy preamble; ", kResave);
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    const bool zip = p[0] == 'P' && p[1] == 'K';
    fail(ErrorCode::InvalidArgument, what, ": not a .npy file (it does not start with \\x93NUMPY)",
         zip ? "; it looks like a .npz archive: load it with numpy.load and save each array "
               "with numpy.save"
             : "; save the array with numpy.save(path, array)");
  }
  const unsigned major = p[6], minor = p[7];
  PI_CHECK((major == 1 || major == 2 || major == 3) && minor == 0, InvalidArgument, what,
           ": unsupported .npy format version ", major, ".", minor,
           " (polyinfer reads 1.0, 2.0 and 3.0); ", kResave);
  size_t preamble = 10, header_len = size_t{p[8]} | size_t{p[9]} << 8;
  if (major >= 2) {
    preamble = 12;
    PI_CHECK(total >= preamble && avail >= preamble, InvalidArgument, what,
             ": truncated .npy file: ", total, " bytes end inside the preamble; ", kResave);
    header_len |= size_t{p[10]} << 16 | size_t{p[11]} << 24;
  }
  PI_CHECK(header_len <= kMaxHeaderLen, InvalidArgument, what, ": .npy header length ", header_len,
           " is over the 1 MiB limit, so the file is corrupt; ", kResave);
  PI_CHECK(header_len <= total - preamble, InvalidArgument, what,
           ": truncated .npy file: the header is ", header_len, " bytes but only ",
           total - preamble, " follow the preamble; ", kResave);
  return preamble + header_len;
}

// Parses the header at p[0, data_offset) of a file of `total` bytes, and checks that exactly
// numel * itemsize bytes follow it.
NpyHeader parse_header(const unsigned char* p, size_t data_offset, size_t total,
                       const std::string& what) {
  NpyHeader h;
  h.data_offset = data_offset;
  const size_t preamble = p[6] == 1 ? 10 : 12;
  std::string descr;
  HeaderParser(
      std::string_view(reinterpret_cast<const char*>(p) + preamble, data_offset - preamble), what)
      .parse(&descr, &h.fortran, &h.shape);
  parse_descr(descr, what, &h);

  // The same limits as shape_numel, reported as bad content rather than out of memory.
  h.numel = 1;
  for (int64_t d : h.shape) {
    PI_CHECK(d <= kMaxElements, InvalidArgument, what, ": .npy shape ", shape_str(h.shape),
             " has a dimension over 2^40, so the header is corrupt; ", kResave);
    if (d == 0) {
      h.numel = 0;
    } else if (h.numel != 0) {
      PI_CHECK(h.numel <= kMaxElements / d, InvalidArgument, what, ": .npy shape ",
               shape_str(h.shape), " has more than 2^40 elements, so the header is corrupt; ",
               kResave);
      h.numel *= d;
    }
  }
  size_t bytes = 0;
  PI_CHECK(!__builtin_mul_overflow(static_cast<size_t>(h.numel), h.itemsize, &bytes),
           InvalidArgument, what, ": .npy shape ", shape_str(h.shape), " of dtype '",
           excerpt(descr), "' needs more bytes than fit in memory; ", kResave);
  h.data_bytes = bytes;
  const size_t present = total - data_offset;
  PI_CHECK(present >= bytes, InvalidArgument, what, ": truncated .npy file: shape ",
           shape_str(h.shape), " of dtype '", excerpt(descr), "' needs ", bytes,
           " bytes of data but only ", present,
           " follow the header (an incomplete copy, or a header that does not match the data); ",
           kResave);
  PI_CHECK(present == bytes, InvalidArgument, what, ": .npy file has ", present - bytes,
           " bytes after the data of its shape ", shape_str(h.shape), " of dtype '", excerpt(descr),
           "' (several arrays saved into one file, or a wrong header); save one "
           "array per file with numpy.save");
  return h;
}

// Calls f(c_index, fortran_index) for every element of `shape` in row-major order, where
// fortran_index is the element's position in column-major data. numel must be > 0.
template <class F> void for_each_fortran(const Shape& shape, int64_t numel, F&& f) {
  const size_t rank = shape.size();
  if (rank <= 1) {
    for (int64_t i = 0; i < numel; ++i) f(i, i);
    return;
  }
  std::vector<int64_t> fstride(rank), idx(rank, 0);
  int64_t s = 1;
  for (size_t k = 0; k < rank; ++k) fstride[k] = s, s *= shape[k];
  int64_t off = 0;
  for (int64_t i = 0; i < numel; ++i) {
    f(i, off);
    size_t k = rank - 1;
    ++idx[k];
    off += fstride[k];
    while (idx[k] == shape[k] && k > 0) {
      off -= shape[k] * fstride[k];
      idx[k] = 0;
      --k;
      ++idx[k];
      off += fstride[k];
    }
  }
}

void append_utf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | cp >> 6);
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | cp >> 12);
    *out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | cp >> 18);
    *out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    *out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes UTF-8 into code points; false on invalid input (overlong, surrogate, truncated).
bool decode_utf8(const std::string& s, std::vector<uint32_t>* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int len = b0 < 0x80           ? 1
              : (b0 >> 5) == 0x6  ? 2
              : (b0 >> 4) == 0xE  ? 3
              : (b0 >> 3) == 0x1E ? 4
                                  : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b >> 6) != 0x2) return false;
      cp = cp << 6 | (b & 0x3F);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    out->push_back(cp);
    i += static_cast<size_t>(len);
  }
  return true;
}

void byteswap_inplace(unsigned char* p, size_t count, size_t width) {
  for (size_t i = 0; i < count; ++i, p += width) std::reverse(p, p + width);
}

// Builds the tensor from the array data at `src` (h.data_bytes bytes).
Tensor decode_data(const NpyHeader& h, const unsigned char* src, const std::string& what) {
  Tensor t = Tensor::empty(h.dtype, h.shape);
  if (h.numel == 0) return t;
  if (h.dtype == DType::String) {
    auto* out = t.data<std::string>();
    const size_t unit = h.kind == 'U' ? 4 : 1;
    const size_t units = h.itemsize / unit;
    auto element = [&](int64_t dst, int64_t from) {
      const unsigned char* e = src + static_cast<size_t>(from) * h.itemsize;
      std::string& s = out[dst];
      if (unit == 1) {
        size_t n = units;
        while (n > 0 && e[n - 1] == 0) --n;  // numpy strips trailing NULs
        s.assign(reinterpret_cast<const char*>(e), n);
        return;
      }
      std::vector<uint32_t> cps(units);
      for (size_t k = 0; k < units; ++k) {
        const unsigned char* q = e + 4 * k;
        cps[k] = h.swap
                     ? (uint32_t{q[0]} << 24 | uint32_t{q[1]} << 16 | uint32_t{q[2]} << 8 | q[3])
                     : (uint32_t{q[3]} << 24 | uint32_t{q[2]} << 16 | uint32_t{q[1]} << 8 | q[0]);
      }
      while (!cps.empty() && cps.back() == 0) cps.pop_back();
      for (uint32_t cp : cps) {
        PI_CHECK(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF), InvalidArgument, what,
                 ": .npy string element ", dst, " holds 0x", std::hex, cp, std::dec,
                 ", which is not a Unicode character; ", kResave);
        append_utf8(&s, cp);
      }
    };
    if (h.fortran) for_each_fortran(h.shape, h.numel, element);
    else
      for (int64_t i = 0; i < h.numel; ++i) element(i, i);
    return t;
  }
  auto* dst = static_cast<unsigned char*>(t.raw_data());
  const size_t es = h.itemsize;
  if (h.fortran) {
    for_each_fortran(h.shape, h.numel, [&](int64_t i, int64_t from) {
      std::memcpy(dst + static_cast<size_t>(i) * es, src + static_cast<size_t>(from) * es, es);
    });
  } else {
    std::memcpy(dst, src, h.data_bytes);
  }
  if (h.swap) byteswap_inplace(dst, static_cast<size_t>(h.numel), es);
  if (h.dtype == DType::Bool)  // a bool byte other than 0/1 would be undefined behaviour
    for (size_t i = 0; i < h.data_bytes; ++i) dst[i] = dst[i] != 0;
  return t;
}

// "<f4", "|u1", ...; empty for a dtype numpy has no numeric type for.
std::string numeric_descr(DType dtype) {
  for (const auto& t : kNumericTypes)
    if (t.dtype == dtype) return (t.size == 1 ? "|" : "<") + (t.kind + std::to_string(t.size));
  return {};
}

}  // namespace

Tensor parse_npy(const void* data, size_t size, const std::string& what) {
  PI_CHECK(data != nullptr || size == 0, InvalidArgument, what, ": no data");
  const auto* p = static_cast<const unsigned char*>(data);
  const size_t offset = parse_preamble(p, size, size, what);
  const NpyHeader h = parse_header(p, offset, size, what);
  return decode_data(h, p + offset, what);
}

Tensor read_npy(const std::string& path) {
  std::error_code ec;
  PI_CHECK(!std::filesystem::is_directory(path, ec), Io, "cannot read ", path,
           ": it is a folder, not a .npy file");
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    fail(ErrorCode::Io, "cannot open ", path, ": ", std::strerror(errno),
         "; check the path and its permissions");
  }
  f.seekg(0, std::ios::end);
  const std::streamoff end = f.tellg();
  f.seekg(0, std::ios::beg);
  PI_CHECK(end >= 0 && f, Io, "cannot read ", path, ": its size cannot be determined");
  const auto total = static_cast<size_t>(end);
  auto read_exactly = [&](void* dst, size_t n) {
    f.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    PI_CHECK(f && static_cast<size_t>(f.gcount()) == n, Io, "cannot read ", path,
             ": the read stopped early (did the file change while it was read?)");
  };

  std::vector<unsigned char> head(std::min<size_t>(total, 12));
  read_exactly(head.data(), head.size());
  const size_t offset = parse_preamble(head.data(), head.size(), total, path);
  head.resize(offset);
  if (offset > 12) read_exactly(head.data() + 12, offset - 12);
  const NpyHeader h = parse_header(head.data(), offset, total, path);

  // Plain little-endian C-order numbers go straight into the tensor; the rest is converted.
  if (h.dtype != DType::String && !h.fortran && !h.swap && h.dtype != DType::Bool) {
    Tensor t = Tensor::empty(h.dtype, h.shape);
    if (h.data_bytes) read_exactly(t.raw_data(), h.data_bytes);
    return t;
  }
  std::vector<unsigned char> body(h.data_bytes);
  if (h.data_bytes) read_exactly(body.data(), h.data_bytes);
  return decode_data(h, body.data(), path);
}

std::string to_npy_bytes(const Tensor& tensor) {
  PI_CHECK(tensor.defined(), InvalidArgument, "cannot write an undefined tensor as .npy");
  PI_CHECK(tensor.dtype() != DType::BFloat16, InvalidArgument, "cannot write ", tensor.describe(),
           " as .npy: numpy has no bfloat16 dtype; convert the tensor to "
           "float32 first");
  PI_CHECK(tensor.shape().size() <= kMaxRank, InvalidArgument, "cannot write ", tensor.describe(),
           " as .npy: numpy arrays have at most 64 dimensions");
  const Tensor t = tensor.to(Device::cpu());
  const int64_t n = t.numel();

  std::string descr;
  std::vector<std::vector<uint32_t>> chars;  // string tensors, as code points
  size_t width = 1;                          // characters per string element (numpy's <U1 min)
  if (t.dtype() == DType::String) {
    const auto* s = t.data<std::string>();
    chars.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      PI_CHECK(decode_utf8(s[i], &chars[static_cast<size_t>(i)]), InvalidArgument, "cannot write ",
               t.describe(), " as .npy: element ", i,
               " is not valid UTF-8, and numpy strings hold Unicode text");
      width = std::max(width, chars[static_cast<size_t>(i)].size());
    }
    descr = "<U" + std::to_string(width);
  } else {
    descr = numeric_descr(t.dtype());
    PI_CHECK(!descr.empty(), InvalidArgument, "cannot write ", t.describe(),
             " as .npy: numpy has no such dtype");
  }

  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) {
    if (i) shape += ", ";
    shape += std::to_string(t.shape()[i]);
  }
  shape += t.shape().size() == 1 ? ",)" : ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and end with '\n' so that the data starts at a multiple of 64 bytes. With at
  // most 64 dimensions the header stays far below format 1.0's 64 KiB limit.
  const size_t total_header = (10 + header.size() + 1 + 63) / 64 * 64 - 10;
  header.append(total_header - header.size() - 1, ' ');
  header += '\n';

  size_t data_bytes = 0;
  const size_t itemsize = t.dtype() == DType::String ? width * 4 : dtype_size(t.dtype());
  PI_CHECK(!__builtin_mul_overflow(static_cast<size_t>(n), itemsize, &data_bytes), InvalidArgument,
           "cannot write ", t.describe(), " as .npy: its strings are too long");

  std::string out;
  out.reserve(10 + header.size() + data_bytes);
  out.append(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  out += '\x01';  // format 1.0
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (t.dtype() == DType::String) {
    for (const auto& cps : chars) {
      for (size_t k = 0; k < width; ++k) {
        const uint32_t cp = k < cps.size() ? cps[k] : 0;
        for (int b = 0; b < 4; ++b) out += static_cast<char>(cp >> (8 * b) & 0xFF);
      }
    }
  } else if (data_bytes) {
    const size_t at = out.size();
    out.append(static_cast<const char*>(t.raw_data()), data_bytes);
    if (t.dtype() == DType::Bool)
      for (size_t i = at; i < out.size(); ++i) out[i] = out[i] != 0;
  }
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  const std::string bytes = to_npy_bytes(t);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    fail(ErrorCode::Io, "cannot write ", path, ": ", std::strerror(errno),
         "; check that its folder exists and is writable");
  }
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  PI_CHECK(!f.fail(), Io, "cannot write ", path, ": writing ", bytes.size(),
           " bytes failed (is the disk full?)");
}

}  // namespace polyinfer
