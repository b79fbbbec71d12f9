#include "serve/grpc_request.h"

#include <cstdint>

#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

template <class Elem, class Field>
void fill_from(Tensor& t, const Field& items, const std::string& input, const char* field) {
  PI_CHECK(static_cast<int64_t>(items.size()) == t.numel(), ShapeMismatch, "input '", input,
           "': ", items.size(), " elements in contents.", field, " for shape ",
           shape_str(t.shape()), " (", t.numel(), ")");
  Elem* out = t.data<Elem>();
  for (int i = 0; i < items.size(); ++i) out[i] = static_cast<Elem>(items[i]);
}

// Input `in`'s elements from its typed contents: the field its datatype names (INT8/16/32 in
// int_contents, UINT8/16/32 in uint_contents, ...), as many as its shape holds.
void fill_contents(Tensor& t, const inference::InferTensorContents& c, const std::string& input) {
  switch (t.dtype()) {
    case DType::Bool: return fill_from<bool>(t, c.bool_contents(), input, "bool_contents");
    case DType::Int8: return fill_from<int8_t>(t, c.int_contents(), input, "int_contents");
    case DType::Int16: return fill_from<int16_t>(t, c.int_contents(), input, "int_contents");
    case DType::Int32: return fill_from<int32_t>(t, c.int_contents(), input, "int_contents");
    case DType::Int64: return fill_from<int64_t>(t, c.int64_contents(), input, "int64_contents");
    case DType::UInt8: return fill_from<uint8_t>(t, c.uint_contents(), input, "uint_contents");
    case DType::UInt16: return fill_from<uint16_t>(t, c.uint_contents(), input, "uint_contents");
    case DType::UInt32: return fill_from<uint32_t>(t, c.uint_contents(), input, "uint_contents");
    case DType::UInt64:
      return fill_from<uint64_t>(t, c.uint64_contents(), input, "uint64_contents");
    case DType::Float32: return fill_from<float>(t, c.fp32_contents(), input, "fp32_contents");
    case DType::Float64: return fill_from<double>(t, c.fp64_contents(), input, "fp64_contents");
    case DType::String: {
      PI_CHECK(static_cast<int64_t>(c.bytes_contents_size()) == t.numel(), ShapeMismatch, "input '",
               input, "': ", c.bytes_contents_size(),
               " elements in contents.bytes_contents for shape ", shape_str(t.shape()), " (",
               t.numel(), ")");
      auto* out = t.data<std::string>();
      for (int i = 0; i < c.bytes_contents_size(); ++i) out[i] = c.bytes_contents(i);
      return;
    }
    default:
      fail(ErrorCode::InvalidArgument, "input '", input, "' is ", dtype_name(t.dtype()),
           ", which travels in raw_input_contents only");
  }
}

}  // namespace

InferRequest parse_grpc_infer_request(const inference::ModelInferRequest& req,
                                      const std::vector<ValueSpec>& inputs,
                                      const std::vector<ValueSpec>& outputs) {
  InferRequest r;
  r.id = req.id();
  const bool raw = req.raw_input_contents_size() > 0;
  PI_CHECK(!raw || req.raw_input_contents_size() == req.inputs_size(), InvalidArgument,
           "the request has ", req.raw_input_contents_size(), " raw_input_contents for ",
           req.inputs_size(), " inputs; give one per input, or none and contents in each");
  for (int i = 0; i < req.inputs_size(); ++i) {
    const auto& in = req.inputs(i);
    const ValueSpec& spec = new_input(r, inputs, in.name());
    Shape shape(in.shape().begin(), in.shape().end());
    Tensor t = checked_tensor(spec, in.datatype(), shape);
    if (raw) {
      PI_CHECK(!in.has_contents(), InvalidArgument, "input '", in.name(),
               "' has contents and raw_input_contents; give one");
      const std::string& bytes = req.raw_input_contents(i);
      fill_raw(t, bytes.data(), bytes.size(), in.name());
    } else {
      fill_contents(t, in.contents(), in.name());
    }
    r.input_bytes += t.nbytes();
    r.inputs.emplace(in.name(), Value(std::move(t)));
  }
  check_complete(r, inputs);
  for (const auto& o : req.outputs()) add_output(r, outputs, o.name(), false);
  if (auto it = req.parameters().find("timeout"); it != req.parameters().end()) {
    const auto& p = it->second;
    const bool ok = (p.has_int64_param() && p.int64_param() >= 0) ||
                    (p.has_uint64_param() && p.uint64_param() <= uint64_t(INT64_MAX));
    PI_CHECK(ok, InvalidArgument, "parameters.timeout must be microseconds, a whole number >= 0");
    r.timeout_us = p.has_int64_param() ? p.int64_param() : static_cast<int64_t>(p.uint64_param());
  }
  return r;
}

void fill_infer_response(const std::string& model, const std::string& version,
                         const std::string& id, const std::vector<std::string>& names,
                         const std::vector<Value>& values, inference::ModelInferResponse* res) {
  res->set_model_name(model);
  res->set_model_version(version);
  res->set_id(id);
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    std::string dt;
    const Tensor t = output_tensor(names[i], values[i], &dt);
    auto* out = res->add_outputs();
    out->set_name(names[i]);
    out->set_datatype(dt);
    for (int64_t d : t.shape()) out->add_shape(d);
    append_raw(t, res->add_raw_output_contents());
  }
}

}  // namespace polyinfer::serve
