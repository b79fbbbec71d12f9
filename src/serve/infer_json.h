// The Open Inference Protocol's (KServe v2) JSON inference request and response, against one
// model's inputs and outputs: its datatype names ("FP32", "INT64", "BYTES", ...), a request's
// tensors checked before any kernel sees them (name, datatype, shape, element count), and the
// outputs written back as the protocol's tensors (row-major, flat "data").
// Spec: https://kserve.github.io/website/latest/modelserving/data_plane/v2_protocol/
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "polyinfer/session.h"

namespace polyinfer::serve {

// "FP32" for Float32, ...; nullopt for a dtype the protocol has no name for.
std::optional<std::string> datatype_name(DType d);
// The dtype a protocol datatype names; nullopt for an unknown name.
std::optional<DType> datatype_of(const std::string& name);

// A model input or output as the protocol's metadata gives it: {"name", "datatype", "shape"}
// with -1 for a dynamic dimension.
nlohmann::json tensor_metadata(const ValueSpec& spec);

struct InferRequest {
  std::string id;                       // echoed in the response ("" when not given)
  std::map<std::string, Value> inputs;  // by the model's input names
  std::vector<std::string> outputs;     // requested outputs; empty: all of them
  size_t input_bytes = 0;               // the inputs' tensor bytes (for limits and metrics)
};

// Parses and checks a request body for a model with `inputs` and `outputs`: every input the
// model needs is there once, with the model's datatype, a shape of its rank whose fixed
// dimensions match, and as many elements as the shape holds; requested outputs exist. Throws
// polyinfer::Error (InvalidArgument / ShapeMismatch) naming the tensor and the fix.
InferRequest parse_infer_request(const std::string& body, const std::vector<ValueSpec>& inputs,
                                 const std::vector<ValueSpec>& outputs);

// The response: {"model_name", "model_version", "id"?, "outputs": [{"name", "datatype",
// "shape", "data"}]} for `names` in order.
nlohmann::json infer_response(const std::string& model, const std::string& version,
                              const std::string& id, const std::vector<std::string>& names,
                              const std::vector<Value>& values);

}  // namespace polyinfer::serve
