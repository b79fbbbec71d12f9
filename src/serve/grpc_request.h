// The Open Inference Protocol's gRPC inference messages against one model (the gRPC twin of
// serve/infer_json.h): a ModelInferRequest checked before any kernel sees it (names, datatypes,
// shapes, raw_input_contents byte counts or typed contents' element counts, outputs asked
// for, parameters["timeout"]), and a ModelInferResponse with the outputs as
// raw_output_contents. Errors are polyinfer::Error (InvalidArgument / ShapeMismatch) naming the
// tensor and the fix.
#pragma once

#include <string>
#include <vector>

#include "grpc_service.pb.h"
#include "polyinfer/session.h"
#include "serve/infer_request.h"

namespace polyinfer::serve {

InferRequest parse_grpc_infer_request(const inference::ModelInferRequest& req,
                                      const std::vector<ValueSpec>& inputs,
                                      const std::vector<ValueSpec>& outputs);

// `values` (tensors on any device) as the outputs `names`, in order.
void fill_infer_response(const std::string& model, const std::string& version,
                         const std::string& id, const std::vector<std::string>& names,
                         const std::vector<Value>& values, inference::ModelInferResponse* res);

}  // namespace polyinfer::serve
