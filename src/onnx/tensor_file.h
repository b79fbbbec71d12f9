// Reading and writing single values in ONNX's protobuf files (the backend test data's
// input_N.pb / output_N.pb), without exposing protobuf.
#pragma once

#include <string>

#include "ir/graph.h"
#include "polyinfer/tensor.h"

namespace polyinfer {

// Reads a .pb value file. `type` (the model's declared type of the value, when known) says
// whether the file holds a TensorProto, SequenceProto, MapProto or OptionalProto; without it a
// TensorProto is assumed. Throws Io for an unreadable file, InvalidArgument for bad content.
Value read_value_pb(const std::string& path, const ir::TypeInfo* type);
// Parses a TensorProto from memory (for fuzzing and tests).
Tensor parse_tensor_pb(const void* data, size_t size, const std::string& what);
// Writes a tensor as a TensorProto file.
void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name);
// Writes any value: a tensor as a TensorProto, a sequence (of tensors or maps) as a
// SequenceProto, a map as a MapProto, none as an empty OptionalProto.
void write_value_pb(const std::string& path, const Value& v, const std::string& name);

}  // namespace polyinfer
