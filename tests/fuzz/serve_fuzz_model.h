// The model both request fuzzers check requests against (fuzz_infer_request.cpp,
// fuzz_grpc_request.cpp): float, integer, string and half inputs, dynamic and fixed dimensions.
#pragma once

#include <vector>

#include "polyinfer/session.h"

namespace polyinfer::fuzz {

inline ValueSpec spec(const char* name, DType dtype, Shape shape) {
  ValueSpec s;
  s.name = name;
  s.dtype = dtype;
  s.shape = shape;
  s.has_shape = true;
  s.type = name;
  return s;
}

inline const std::vector<ValueSpec>& serve_inputs() {
  static const std::vector<ValueSpec> inputs = {
      spec("x", DType::Float32, {-1, 3}), spec("ids", DType::Int64, {2}),
      spec("s", DType::String, {-1}), spec("h", DType::Float16, {1, 2})};
  return inputs;
}

inline const std::vector<ValueSpec>& serve_outputs() {
  static const std::vector<ValueSpec> outputs = {spec("y", DType::Float32, {-1, 3})};
  return outputs;
}

}  // namespace polyinfer::fuzz
