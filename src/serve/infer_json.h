// The Open Inference Protocol's (KServe v2) inference request and response, against one model's
// inputs and outputs: its datatype names ("FP32", "INT64", "BYTES", ...), a request's tensors
// checked before any kernel sees them (name, datatype, shape, element count), and the outputs
// written back as the protocol's tensors (row-major, flat "data").
// Tensors travel as JSON or, with the binary tensor data extension (tritonclient's default), as
// raw bytes after the JSON: the HTTP header Inference-Header-Content-Length gives the JSON's
// length, an input's parameters.binary_data_size the length of its bytes, in input order (BYTES
// elements as a 4-byte little-endian length and the bytes). FP16 and BF16 travel as bytes only.
// Specs: https://kserve.github.io/website/latest/modelserving/data_plane/v2_protocol/ and
// Triton's docs/protocol/extension_binary_data.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "polyinfer/session.h"
#include "serve/infer_request.h"

namespace polyinfer::serve {

// A model input or output as the protocol's metadata gives it: {"name", "datatype", "shape"}
// with -1 for a dynamic dimension.
nlohmann::json tensor_metadata(const ValueSpec& spec);

// Parses and checks a request body for a model with `inputs` and `outputs`: every input the
// model needs is there once, with the model's datatype, a shape of its rank whose fixed
// dimensions match, and as many elements (or bytes) as the shape holds; requested outputs
// exist. `header_length`: Inference-Header-Content-Length, or -1 without it (all JSON). Throws
// polyinfer::Error (InvalidArgument / ShapeMismatch) naming the tensor and the fix.
InferRequest parse_infer_request(const std::string& body, int64_t header_length,
                                 const std::vector<ValueSpec>& inputs,
                                 const std::vector<ValueSpec>& outputs);

// The response for `names` in order: {"model_name", "model_version", "id"?, "outputs":
// [{"name", "datatype", "shape", "data"}]}, an output the request wants as bytes with
// parameters.binary_data_size instead of data, its bytes in `binary` (FP16 and BF16 always).
struct InferReply {
  std::string header;  // the JSON text (bytes that are not UTF-8 in a BYTES output as U+FFFD)
  std::string binary;  // the outputs' bytes after it; empty when every output is JSON
};
InferReply infer_response(const std::string& model, const std::string& version,
                          const InferRequest& request, const std::vector<std::string>& names,
                          const std::vector<Value>& values);

}  // namespace polyinfer::serve
