// The Open Inference Protocol's inference request as both of its wire forms give it (JSON over
// HTTP, serve/infer_json.h; protobuf over gRPC, serve/grpc_server.h), and the checks they share:
// the protocol's datatype names, an input's datatype and shape against the model's before any
// kernel sees it, raw tensor bytes in and out (row-major elements; BYTES elements each a 4-byte
// little-endian length and its bytes), unknown, repeated and missing tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "polyinfer/session.h"

namespace polyinfer::serve {

struct InferRequest {
  std::string id;                       // echoed in the response ("" when not given)
  std::map<std::string, Value> inputs;  // by the model's input names
  std::vector<std::string> outputs;     // requested outputs; empty: all of them
  // Outputs to return as bytes: those whose parameters.binary_data is true, or all of them
  // with the request's parameters.binary_data_output (HTTP; gRPC returns raw bytes always).
  std::vector<std::string> binary_outputs;
  bool all_binary = false;
  size_t input_bytes = 0;  // the inputs' tensor bytes (for limits and metrics)
  int64_t timeout_us = 0;  // parameters.timeout: the longest wait for its turn (0: the server's)
};

// "FP32" for Float32, ...; nullopt for a dtype the protocol has no name for.
std::optional<std::string> datatype_name(DType d);
// The dtype a protocol datatype names; nullopt for an unknown name.
std::optional<DType> datatype_of(const std::string& name);
// Whether JSON can carry the dtype (FP16 and BF16 travel as bytes only).
bool has_json_form(DType d);

// The model's input `name` (throws InvalidArgument listing its inputs), checked to be new to
// `r` and a tensor.
const ValueSpec& new_input(const InferRequest& r, const std::vector<ValueSpec>& inputs,
                           const std::string& name);
// An empty tensor for input `spec` given as `datatype` and `shape`: throws InvalidArgument for
// another datatype, ShapeMismatch for another rank or a fixed dimension that differs.
Tensor checked_tensor(const ValueSpec& spec, const std::string& datatype, const Shape& shape);
// Fills `t` (dtype and shape set) from the `n` raw bytes at `p`; ShapeMismatch when the count
// is not what its shape holds.
void fill_raw(Tensor& t, const char* p, size_t n, const std::string& input);
// Output `name`'s value as a host tensor the protocol can carry, its datatype name in
// `datatype`; InvalidArgument for a sequence, a map or a dtype without a protocol name.
Tensor output_tensor(const std::string& name, const Value& value, std::string* datatype);
// Appends `t`'s raw bytes to `out`.
void append_raw(const Tensor& t, std::string* out);
// Adds output `name` to those `r` asks for (throws InvalidArgument for one the model lacks; a
// repeated name is asked for once).
void add_output(InferRequest& r, const std::vector<ValueSpec>& outputs, const std::string& name,
                bool binary);
// Throws InvalidArgument for a model input `r` lacks (optional ones may be left out).
void check_complete(const InferRequest& r, const std::vector<ValueSpec>& inputs);
// The outputs a response holds: those asked for, or all the model's.
std::vector<std::string> output_names(const InferRequest& r, const std::vector<ValueSpec>& outputs);

}  // namespace polyinfer::serve
