// `polyinfer serve`'s gRPC request conversion fuzzer (serve/grpc_request.h): any bytes parsed as
// an inference.ModelInferRequest (libprotobuf's parser), then checked against a model with
// float, integer, string and half inputs → a checked request or polyinfer::Error, and the
// response built from the inputs echoed back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "serve/grpc_request.h"
#include "serve_fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& inputs = polyinfer::fuzz::serve_inputs();
  const auto& outputs = polyinfer::fuzz::serve_outputs();
  inference::ModelInferRequest req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    const polyinfer::serve::InferRequest r =
        polyinfer::serve::parse_grpc_infer_request(req, inputs, outputs);
    std::vector<std::string> names;
    std::vector<polyinfer::Value> values;
    for (const auto& [name, value] : r.inputs) {
      names.push_back(name);
      values.push_back(value);
    }
    inference::ModelInferResponse res;
    polyinfer::serve::fill_infer_response("m", "1", r.id, names, values, &res);
  } catch (const polyinfer::Error&) {
  }
  return 0;
}
