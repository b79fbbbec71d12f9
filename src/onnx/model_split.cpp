#include "onnx/model_split.h"

#include <cstdint>

namespace polyinfer::onnx_io {

namespace {

// Field numbers from onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorDataType = 2;
constexpr uint32_t kTensorRawData = 9;

constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// TensorProto.DataType values the import keeps inline (see strip() in import.cpp).
bool integer_type(int32_t t) { return t == 6 || t == 7 || t == 12 || t == 13; }

using Byte = unsigned char;

bool read_varint(const Byte*& p, const Byte* end, uint64_t* v) {
  uint64_t r = 0;
  for (int i = 0; i < 10; ++i) {
    if (p == end) return false;
    const Byte b = *p++;
    r |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

void write_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void write_length_delimited(std::string& out, uint32_t number, std::string_view payload) {
  write_varint(out, (uint64_t{number} << 3) | kLengthDelimited);
  write_varint(out, payload.size());
  out.append(payload);
}

struct Field {
  uint32_t number = 0;
  int wire = 0;
  const Byte* start = nullptr;  // the tag's first byte
  const Byte* end = nullptr;    // one past the field's last byte
  std::string_view payload;     // length-delimited fields
  uint64_t varint = 0;          // varint fields
};

// Reads the field at p and advances past it. Groups and malformed fields end the walk.
bool next_field(const Byte*& p, const Byte* end, Field* f) {
  f->start = p;
  uint64_t tag = 0;
  if (!read_varint(p, end, &tag) || tag > UINT32_MAX || (tag >> 3) == 0) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire = static_cast<int>(tag & 7);
  switch (f->wire) {
    case kVarint:
      if (!read_varint(p, end, &f->varint)) return false;
      break;
    case kFixed64:
      if (end - p < 8) return false;
      p += 8;
      break;
    case kLengthDelimited: {
      uint64_t n = 0;
      if (!read_varint(p, end, &n) || n > static_cast<uint64_t>(end - p)) return false;
      f->payload = {reinterpret_cast<const char*>(p), static_cast<size_t>(n)};
      p += n;
      break;
    }
    case kFixed32:
      if (end - p < 4) return false;
      p += 4;
      break;
    default: return false;
  }
  f->end = p;
  return true;
}

const Byte* bytes_of(std::string_view s) { return reinterpret_cast<const Byte*>(s.data()); }

void append_field(std::string& out, const Field& f) {
  out.append(reinterpret_cast<const char*>(f.start), static_cast<size_t>(f.end - f.start));
}

// A TensorProto: verbatim, or without its raw_data (replaced by an 8-byte placeholder, which
// keeps the checker's one-value-field rule) when that is large weight data.
bool split_tensor(std::string_view in, std::string& out, std::string_view* raw) {
  const Byte* end = bytes_of(in) + in.size();
  int32_t data_type = 0;
  std::string_view last_raw;
  bool has_raw = false;
  Field f;
  for (const Byte* p = bytes_of(in); p < end;) {
    if (!next_field(p, end, &f)) return false;
    // Another wire type under a known number is an unknown field to protobuf: not the value.
    if (f.number == kTensorDataType && f.wire == kVarint)
      data_type = static_cast<int32_t>(f.varint);
    if (f.number == kTensorRawData && f.wire == kLengthDelimited) {
      last_raw = f.payload;  // protobuf keeps the last occurrence
      has_raw = true;
    }
  }
  if (!has_raw || last_raw.size() <= kSplitMinBytes || integer_type(data_type)) {
    out.append(in);
    *raw = {};
    return true;
  }
  for (const Byte* p = bytes_of(in); p < end;) {
    next_field(p, end, &f);  // walked once already
    if (!(f.number == kTensorRawData && f.wire == kLengthDelimited)) append_field(out, f);
  }
  write_length_delimited(out, kTensorRawData, std::string_view("\0\0\0\0\0\0\0\0", 8));
  *raw = last_raw;
  return true;
}

bool split_graph(std::string_view in, std::string& out, std::vector<std::string_view>& raws) {
  const Byte* end = bytes_of(in) + in.size();
  Field f;
  std::string tensor;
  for (const Byte* p = bytes_of(in); p < end;) {
    if (!next_field(p, end, &f)) return false;
    if (f.number != kGraphInitializer || f.wire != kLengthDelimited) {
      append_field(out, f);
      continue;
    }
    tensor.clear();
    std::string_view raw;
    if (!split_tensor(f.payload, tensor, &raw)) return false;
    write_length_delimited(out, kGraphInitializer, tensor);
    raws.push_back(raw);
  }
  return true;
}

}  // namespace

bool split_model(const void* data, size_t size, SplitModel* out) {
  out->skeleton.clear();
  out->raw_data.clear();
  const Byte* p = static_cast<const Byte*>(data);
  const Byte* end = p + size;
  Field f;
  std::string graph;
  while (p < end) {
    if (!next_field(p, end, &f)) return false;
    if (f.number != kModelGraph || f.wire != kLengthDelimited) {
      append_field(out->skeleton, f);
      continue;
    }
    // Occurrences of a singular message field merge: their initializers concatenate, so the
    // views stay in protobuf's order.
    graph.clear();
    if (!split_graph(f.payload, graph, out->raw_data)) return false;
    write_length_delimited(out->skeleton, kModelGraph, graph);
  }
  return true;
}

}  // namespace polyinfer::onnx_io
