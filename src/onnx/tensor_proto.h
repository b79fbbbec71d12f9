// TensorProto / SequenceProto / MapProto / OptionalProto ↔ polyinfer values. Internal to src/onnx:
// the rest of polyinfer never sees protobuf types (see tensor_file.h for the protobuf-free entry
// points).
#pragma once

#include <string>
#include <string_view>

// onnx_pb.h defines ONNX_API, which the other generated headers use.
#include <onnx/onnx_pb.h>

#include <onnx/onnx-data.pb.h>

#include "core/deferred.h"
#include "polyinfer/tensor.h"

namespace polyinfer::onnx_io {

// Where a tensor's external data may be read from: files inside `base_dir` only. An empty
// base_dir forbids external data (a model loaded from bytes without a folder).
struct ExternalDataPolicy {
  std::string base_dir;
  // false: an external tensor's location and size are checked but its bytes are not read; the
  // tensor is allocated and left untouched (no memory is committed until written). For tools
  // that look only at shapes (`plan` on a 7B model).
  bool read = true;
};

// Converts a TensorProto; `what` names it in errors ("initializer 'conv1.weight'"). `raw_data`,
// when given, holds the tensor's raw bytes in place of proto.raw_data() (a view into the model's
// serialized bytes, see model_split.h). With `defer` too, those bytes are not copied: the tensor
// reads them where they lie until first used (core/deferred.h), so `defer` must keep them
// readable.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataPolicy& ext,
                         const std::string& what, const std::string_view* raw_data = nullptr,
                         const std::shared_ptr<DeferredSource>& defer = nullptr);
void tensor_to_proto(const Tensor& t, onnx::TensorProto* proto);

// Sequences, maps and optionals. `map_value` is the value dtype of maps (the map's, or those in
// the sequence or optional) where the file cannot tell it, in an empty map; Undefined: float32.
// A map's values must be single elements (the file holds each as its own tensor).
Value value_from_proto(const onnx::SequenceProto& proto, const std::string& what,
                       DType map_value = DType::Undefined);
Value value_from_proto(const onnx::MapProto& proto, const std::string& what,
                       DType map_value = DType::Undefined);
Value value_from_proto(const onnx::OptionalProto& proto, const std::string& what,
                       DType map_value = DType::Undefined);
// A sequence (of tensors or of maps) and a map.
void sequence_to_proto(const Value& v, onnx::SequenceProto* proto);
void map_to_proto(const Value& v, onnx::MapProto* proto);

}  // namespace polyinfer::onnx_io
