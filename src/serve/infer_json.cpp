#include "serve/infer_json.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

using nlohmann::json;

// The inputs' binary data after the JSON header, taken in input order.
struct Blob {
  const char* data = nullptr;
  size_t size = 0, used = 0;
  const char* take(size_t n, const std::string& input) {
    PI_CHECK(n <= size - used, InvalidArgument, "input '", input, "' gives binary_data_size ", n,
             " but only ", size - used, " bytes of binary data are left after the JSON");
    const char* p = data + used;
    used += n;
    return p;
  }
};

std::string list_names(const std::vector<ValueSpec>& specs) {
  std::string s;
  for (const auto& v : specs) s += (s.empty() ? "" : ", ") + v.name;
  return s;
}

// Appends the leaves of a nested JSON array in row-major order.
void flatten(const json& j, std::vector<const json*>* out) {
  if (j.is_array()) {
    for (const auto& e : j) flatten(e, out);
  } else {
    out->push_back(&j);
  }
}

template <class T>
void fill_numbers(Tensor& t, const std::vector<const json*>& items, const std::string& input) {
  T* out = t.data<T>();
  for (size_t i = 0; i < items.size(); ++i) {
    const json& v = *items[i];
    if constexpr (std::is_floating_point_v<T>) {
      PI_CHECK(v.is_number(), InvalidArgument, "input '", input, "': element ", i, " is ", v.dump(),
               ", not a number");
      out[i] = v.get<T>();
    } else {
      PI_CHECK(v.is_number_integer(), InvalidArgument, "input '", input, "': element ", i, " is ",
               v.dump(), ", not an integer");
      if constexpr (std::is_signed_v<T>) {
        const int64_t x = v.get<int64_t>();
        PI_CHECK(x >= int64_t(std::numeric_limits<T>::min()) &&
                     x <= int64_t(std::numeric_limits<T>::max()),
                 InvalidArgument, "input '", input, "': element ", i, " (", x,
                 ") is out of range for its datatype");
        out[i] = static_cast<T>(x);
      } else {
        PI_CHECK(v.is_number_unsigned() || v.get<int64_t>() >= 0, InvalidArgument, "input '", input,
                 "': element ", i, " is negative");
        const uint64_t x = v.get<uint64_t>();
        PI_CHECK(x <= uint64_t(std::numeric_limits<T>::max()), InvalidArgument, "input '", input,
                 "': element ", i, " (", x, ") is out of range for its datatype");
        out[i] = static_cast<T>(x);
      }
    }
  }
}

Tensor tensor_from_json(const json& in, const ValueSpec& spec, Blob& blob) {
  const std::string& name = spec.name;
  PI_CHECK(in.contains("shape") && in["shape"].is_array(), InvalidArgument, "input '", name,
           "' has no \"shape\" array");
  Shape shape;
  for (const auto& d : in["shape"]) {
    PI_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0, InvalidArgument, "input '", name,
             "': shape ", in["shape"].dump(), " must hold non-negative integers");
    shape.push_back(d.get<int64_t>());
  }
  PI_CHECK(in.contains("datatype") && in["datatype"].is_string(), InvalidArgument, "input '", name,
           "' has no \"datatype\"");
  const std::string datatype = in["datatype"].get<std::string>();
  Tensor t = checked_tensor(spec, datatype, shape);
  if (in.contains("parameters") && in["parameters"].is_object() &&
      in["parameters"].contains("binary_data_size")) {
    const json& size = in["parameters"]["binary_data_size"];
    PI_CHECK(size.is_number_unsigned(), InvalidArgument, "input '", name,
             "': binary_data_size must be a byte count");
    PI_CHECK(!in.contains("data"), InvalidArgument, "input '", name,
             "' gives both \"data\" and binary_data_size; give one");
    const size_t n = size.get<size_t>();
    fill_raw(t, blob.take(n, name), n, name);
    return t;
  }
  PI_CHECK(has_json_form(spec.dtype), InvalidArgument, "input '", name, "' is ", datatype,
           ", which travels as binary data only (parameters.binary_data_size, the binary tensor "
           "extension)");
  PI_CHECK(in.contains("data"), InvalidArgument, "input '", name, "' has no \"data\"");
  std::vector<const json*> items;
  flatten(in["data"], &items);
  const int64_t n = shape_numel(shape);
  PI_CHECK(static_cast<int64_t>(items.size()) == n, ShapeMismatch, "input '", name,
           "': ", items.size(), " elements in \"data\" for shape ", shape_str(shape), " (", n, ")");
  switch (spec.dtype) {
    case DType::Bool: {
      auto* out = t.data<bool>();
      for (size_t i = 0; i < items.size(); ++i) {
        PI_CHECK(items[i]->is_boolean(), InvalidArgument, "input '", name, "': element ", i, " is ",
                 items[i]->dump(), ", not true or false");
        out[i] = items[i]->get<bool>();
      }
      break;
    }
    case DType::String: {
      auto* out = t.data<std::string>();
      for (size_t i = 0; i < items.size(); ++i) {
        PI_CHECK(items[i]->is_string(), InvalidArgument, "input '", name, "': element ", i, " is ",
                 items[i]->dump(), ", not a string");
        out[i] = items[i]->get<std::string>();
      }
      break;
    }
    case DType::UInt8: fill_numbers<uint8_t>(t, items, name); break;
    case DType::UInt16: fill_numbers<uint16_t>(t, items, name); break;
    case DType::UInt32: fill_numbers<uint32_t>(t, items, name); break;
    case DType::UInt64: fill_numbers<uint64_t>(t, items, name); break;
    case DType::Int8: fill_numbers<int8_t>(t, items, name); break;
    case DType::Int16: fill_numbers<int16_t>(t, items, name); break;
    case DType::Int32: fill_numbers<int32_t>(t, items, name); break;
    case DType::Int64: fill_numbers<int64_t>(t, items, name); break;
    case DType::Float32: fill_numbers<float>(t, items, name); break;
    case DType::Float64: fill_numbers<double>(t, items, name); break;
    default: fail(ErrorCode::Internal, "datatype ", datatype, " has no conversion");
  }
  return t;
}

template <class T> json numbers(const Tensor& t) {
  json data = json::array();
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) data.push_back(p[i]);
  return data;
}

json data_of(const Tensor& t) {
  switch (t.dtype()) {
    case DType::Bool: return numbers<bool>(t);
    case DType::String: return numbers<std::string>(t);
    case DType::UInt8: return numbers<uint8_t>(t);
    case DType::UInt16: return numbers<uint16_t>(t);
    case DType::UInt32: return numbers<uint32_t>(t);
    case DType::UInt64: return numbers<uint64_t>(t);
    case DType::Int8: return numbers<int8_t>(t);
    case DType::Int16: return numbers<int16_t>(t);
    case DType::Int32: return numbers<int32_t>(t);
    case DType::Int64: return numbers<int64_t>(t);
    case DType::Float32: return numbers<float>(t);
    case DType::Float64: return numbers<double>(t);
    default: fail(ErrorCode::Internal, "no JSON form for ", dtype_name(t.dtype()));
  }
}

}  // namespace

json tensor_metadata(const ValueSpec& spec) {
  json shape = json::array();
  for (int64_t d : spec.shape) shape.push_back(d < 0 ? -1 : d);
  const auto dt = datatype_name(spec.dtype);
  return {{"name", spec.name},
          {"datatype", spec.kind == "tensor" && dt ? *dt : spec.type},
          {"shape", spec.has_shape ? shape : json::array({-1})}};
}

InferRequest parse_infer_request(const std::string& body, int64_t header_length,
                                 const std::vector<ValueSpec>& inputs,
                                 const std::vector<ValueSpec>& outputs) {
  PI_CHECK(header_length <= static_cast<int64_t>(body.size()), InvalidArgument,
           "Inference-Header-Content-Length is ", header_length, " but the body has ", body.size(),
           " bytes");
  const size_t json_length = header_length < 0 ? body.size() : static_cast<size_t>(header_length);
  Blob blob{body.data() + json_length, body.size() - json_length, 0};
  json req;
  try {
    req = json::parse(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(json_length));
  } catch (const json::exception& e) {
    fail(ErrorCode::InvalidArgument, "the request body is not JSON: ", e.what());
  }
  PI_CHECK(req.is_object(), InvalidArgument, "the request body must be a JSON object");
  InferRequest r;
  if (req.contains("id")) {
    PI_CHECK(req["id"].is_string(), InvalidArgument, "\"id\" must be a string");
    r.id = req["id"].get<std::string>();
  }
  PI_CHECK(req.contains("inputs") && req["inputs"].is_array(), InvalidArgument,
           "the request has no \"inputs\" array; the model takes: ", list_names(inputs));
  for (const auto& in : req["inputs"]) {
    PI_CHECK(in.is_object() && in.contains("name") && in["name"].is_string(), InvalidArgument,
             "each of \"inputs\" needs a \"name\"");
    const std::string name = in["name"].get<std::string>();
    Tensor t = tensor_from_json(in, new_input(r, inputs, name), blob);
    r.input_bytes += t.nbytes();
    r.inputs.emplace(name, Value(std::move(t)));
  }
  check_complete(r, inputs);
  if (req.contains("outputs")) {
    PI_CHECK(req["outputs"].is_array(), InvalidArgument, "\"outputs\" must be an array");
    for (const auto& o : req["outputs"]) {
      PI_CHECK(o.is_object() && o.contains("name") && o["name"].is_string(), InvalidArgument,
               "each of \"outputs\" needs a \"name\"");
      add_output(r, outputs, o["name"].get<std::string>(),
                 o.contains("parameters") && o["parameters"].is_object() &&
                     o["parameters"].value("binary_data", false));
    }
  }
  if (req.contains("parameters") && req["parameters"].is_object()) {
    const json& p = req["parameters"];
    r.all_binary = p.value("binary_data_output", false);
    if (p.contains("timeout")) {
      PI_CHECK(p["timeout"].is_number_unsigned(), InvalidArgument,
               "parameters.timeout must be microseconds, a whole number >= 0");
      r.timeout_us = p["timeout"].get<int64_t>();
    }
  }
  PI_CHECK(blob.used == blob.size, InvalidArgument, blob.size - blob.used,
           " bytes of binary data after the JSON are not claimed by any input's "
           "binary_data_size");
  return r;
}

InferReply infer_response(const std::string& model, const std::string& version,
                          const InferRequest& request, const std::vector<std::string>& names,
                          const std::vector<Value>& values) {
  InferReply reply;
  json out = json::array();
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    std::string dt;
    const Tensor t = output_tensor(names[i], values[i], &dt);
    json shape = json::array();
    for (int64_t d : t.shape()) shape.push_back(d);
    json o = {{"name", names[i]}, {"datatype", dt}, {"shape", shape}};
    const bool binary = request.all_binary || !has_json_form(t.dtype()) ||
                        std::find(request.binary_outputs.begin(), request.binary_outputs.end(),
                                  names[i]) != request.binary_outputs.end();
    if (!binary) {
      o["data"] = data_of(t);
    } else {
      const size_t before = reply.binary.size();
      append_raw(t, &reply.binary);
      o["parameters"] = {{"binary_data_size", reply.binary.size() - before}};
    }
    out.push_back(std::move(o));
  }
  json r = {{"model_name", model}, {"model_version", version}, {"outputs", out}};
  if (!request.id.empty()) r["id"] = request.id;
  reply.header = r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return reply;
}

}  // namespace polyinfer::serve
