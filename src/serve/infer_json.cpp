#include "serve/infer_json.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

using nlohmann::json;

struct Named {
  DType dtype;
  const char* name;
  bool json;  // has a JSON form (FP16 and BF16 travel as bytes only)
};
constexpr Named kDatatypes[] = {{DType::Bool, "BOOL", true},      {DType::UInt8, "UINT8", true},
                                {DType::UInt16, "UINT16", true},  {DType::UInt32, "UINT32", true},
                                {DType::UInt64, "UINT64", true},  {DType::Int8, "INT8", true},
                                {DType::Int16, "INT16", true},    {DType::Int32, "INT32", true},
                                {DType::Int64, "INT64", true},    {DType::Float16, "FP16", false},
                                {DType::BFloat16, "BF16", false}, {DType::Float32, "FP32", true},
                                {DType::Float64, "FP64", true},   {DType::String, "BYTES", true}};

bool has_json_form(DType d) {
  for (const auto& n : kDatatypes)
    if (n.dtype == d) return n.json;
  return false;
}

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

// Tensor `t` (shape and dtype set) filled from `n` bytes at `p`: raw elements, or for strings
// each a 4-byte little-endian length and its bytes.
void fill_binary(Tensor& t, const char* p, size_t n, const std::string& input) {
  if (t.dtype() != DType::String) {
    PI_CHECK(n == t.nbytes(), ShapeMismatch, "input '", input, "': binary_data_size ", n,
             " bytes for ", t.describe(), " (", t.nbytes(), " bytes)");
    if (n) std::memcpy(t.raw_data(), p, n);
    return;
  }
  auto* out = t.data<std::string>();
  size_t at = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    PI_CHECK(n - at >= 4, ShapeMismatch, "input '", input, "': binary data ends before element ", i,
             "'s length");
    uint32_t len = 0;
    std::memcpy(&len, p + at, 4);  // little-endian, as x86 and arm64 hold it
    at += 4;
    PI_CHECK(n - at >= len, ShapeMismatch, "input '", input, "': element ", i, "'s ", len,
             " bytes run past the binary data");
    out[i].assign(p + at, len);
    at += len;
  }
  PI_CHECK(at == n, ShapeMismatch, "input '", input, "': ", n - at,
           " bytes of binary data left after its ", t.numel(), " elements");
}

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
  const std::optional<std::string> want = datatype_name(spec.dtype);
  PI_CHECK(want, InvalidArgument, "input '", name, "' is ", spec.type,
           ", which the protocol's JSON tensors cannot carry");
  PI_CHECK(datatype == *want, InvalidArgument, "input '", name, "' is ", datatype,
           " but the model takes ", *want, " (", spec.type, ")");
  if (spec.has_shape) {
    PI_CHECK(shape.size() == spec.shape.size(), ShapeMismatch, "input '", name, "' has shape ",
             shape_str(shape), " but the model takes rank ", spec.shape.size(), " (", spec.type,
             ")");
    for (size_t i = 0; i < shape.size(); ++i)
      PI_CHECK(spec.shape[i] < 0 || spec.shape[i] == shape[i], ShapeMismatch, "input '", name,
               "' has shape ", shape_str(shape), " but the model takes ", spec.type, " (dimension ",
               i, " must be ", spec.shape[i], ")");
  }
  Tensor t = Tensor::empty(spec.dtype, shape);
  if (in.contains("parameters") && in["parameters"].is_object() &&
      in["parameters"].contains("binary_data_size")) {
    const json& size = in["parameters"]["binary_data_size"];
    PI_CHECK(size.is_number_unsigned(), InvalidArgument, "input '", name,
             "': binary_data_size must be a byte count");
    PI_CHECK(!in.contains("data"), InvalidArgument, "input '", name,
             "' gives both \"data\" and binary_data_size; give one");
    const size_t n = size.get<size_t>();
    fill_binary(t, blob.take(n, name), n, name);
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

std::optional<std::string> datatype_name(DType d) {
  for (const auto& n : kDatatypes)
    if (n.dtype == d) return std::string(n.name);
  return std::nullopt;
}

std::optional<DType> datatype_of(const std::string& name) {
  for (const auto& n : kDatatypes)
    if (name == n.name) return n.dtype;
  return std::nullopt;
}

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
    const ValueSpec* spec = nullptr;
    for (const auto& s : inputs)
      if (s.name == name) spec = &s;
    PI_CHECK(spec, InvalidArgument, "the model has no input named '", name,
             "'; its inputs are: ", list_names(inputs));
    PI_CHECK(!r.inputs.count(name), InvalidArgument, "input '", name, "' is given twice");
    PI_CHECK(spec->kind == "tensor" || spec->kind == "optional", InvalidArgument, "input '", name,
             "' is ", spec->type, ": the protocol carries tensors only");
    Tensor t = tensor_from_json(in, *spec, blob);
    r.input_bytes += t.nbytes();
    r.inputs.emplace(name, Value(std::move(t)));
  }
  for (const auto& s : inputs)
    PI_CHECK(r.inputs.count(s.name) || s.kind == "optional", InvalidArgument, "input '", s.name,
             "' (", s.type, ") is missing; the model takes: ", list_names(inputs));
  if (req.contains("outputs")) {
    PI_CHECK(req["outputs"].is_array(), InvalidArgument, "\"outputs\" must be an array");
    std::set<std::string> seen;
    for (const auto& o : req["outputs"]) {
      PI_CHECK(o.is_object() && o.contains("name") && o["name"].is_string(), InvalidArgument,
               "each of \"outputs\" needs a \"name\"");
      const std::string name = o["name"].get<std::string>();
      bool known = false;
      for (const auto& s : outputs) known = known || s.name == name;
      PI_CHECK(known, InvalidArgument, "the model has no output named '", name,
               "'; its outputs are: ", list_names(outputs));
      if (!seen.insert(name).second) continue;
      r.outputs.push_back(name);
      if (o.contains("parameters") && o["parameters"].is_object() &&
          o["parameters"].value("binary_data", false))
        r.binary_outputs.push_back(name);
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
    PI_CHECK(values[i].is_tensor(), InvalidArgument, "output '", names[i], "' is ",
             values[i].describe(), ": the protocol carries tensors only");
    const Tensor t = values[i].tensor().to(Device::cpu());
    const auto dt = datatype_name(t.dtype());
    PI_CHECK(dt, InvalidArgument, "output '", names[i], "' is ", t.describe(),
             ", which the protocol cannot carry");
    json shape = json::array();
    for (int64_t d : t.shape()) shape.push_back(d);
    json o = {{"name", names[i]}, {"datatype", *dt}, {"shape", shape}};
    const bool binary = request.all_binary || !has_json_form(t.dtype()) ||
                        std::find(request.binary_outputs.begin(), request.binary_outputs.end(),
                                  names[i]) != request.binary_outputs.end();
    if (!binary) {
      o["data"] = data_of(t);
    } else {
      const size_t before = reply.binary.size();
      if (t.dtype() == DType::String) {
        const auto* p = t.data<std::string>();
        for (int64_t k = 0; k < t.numel(); ++k) {
          const uint32_t len = static_cast<uint32_t>(p[k].size());
          reply.binary.append(reinterpret_cast<const char*>(&len), 4);
          reply.binary.append(p[k]);
        }
      } else {
        reply.binary.append(static_cast<const char*>(t.raw_data()), t.nbytes());
      }
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
