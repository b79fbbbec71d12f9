// Splits a serialized ModelProto into a small skeleton and the main graph's weight bytes, so a
// large model is never copied whole into protobuf strings.
//
// Parsing a ResNet-50 (100 MB) with protobuf took ~100 ms here, nearly all of it copying the
// initializers' raw_data into freshly faulted string pages that the import then copied again
// into tensors and freed. Instead, the serialized bytes (a read-only mapping of the file) are
// walked at the wire-format level: each top-level initializer whose raw_data is large and not an
// integer type (the same rule as the import's weight stripping: integer tensors may be shapes
// that shape inference reads) gets an 8-byte placeholder in the skeleton, and its payload is
// returned as a view into the original bytes. The import copies each view once, straight into
// the tensor.
//
// The walk follows protobuf's own rules where they matter: repeated occurrences of the graph
// field merge, the last raw_data of a tensor wins, and a field whose wire type does not match
// its declaration is an unknown field, left as it is. Anything the walk does not understand
// (groups, truncation, a varint past 10 bytes) makes split_model return false, and the caller
// parses the original bytes as before, so malformed models get protobuf's verdict unchanged.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace polyinfer::onnx_io {

struct SplitModel {
  // The ModelProto without the moved payloads; parse this instead of the original bytes.
  std::string skeleton;
  // One entry per initializer of the main graph, in protobuf's (merged) order: the raw_data
  // bytes in the original buffer, or an empty view with a null data() where the skeleton
  // keeps the tensor's data itself.
  std::vector<std::string_view> raw_data;
};

// Payloads of at most this many bytes stay in the skeleton (as the import's stripping keeps
// small tensors).
inline constexpr size_t kSplitMinBytes = 4096;

// Returns false (and leaves `out` unspecified) when the bytes cannot be walked; the caller then
// parses them as they are.
bool split_model(const void* data, size_t size, SplitModel* out);

}  // namespace polyinfer::onnx_io
