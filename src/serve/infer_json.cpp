#include "serve/infer_json.h"

#include <cstdint>
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
};
// The protocol's tensor datatypes polyinfer has (FP16 and BF16 travel as bits in the binary
// extension only, which this JSON form does not carry yet).
constexpr Named kDatatypes[] = {
    {DType::Bool, "BOOL"},     {DType::UInt8, "UINT8"},   {DType::UInt16, "UINT16"},
    {DType::UInt32, "UINT32"}, {DType::UInt64, "UINT64"}, {DType::Int8, "INT8"},
    {DType::Int16, "INT16"},   {DType::Int32, "INT32"},   {DType::Int64, "INT64"},
    {DType::Float32, "FP32"},  {DType::Float64, "FP64"},  {DType::String, "BYTES"}};

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

Tensor tensor_from_json(const json& in, const ValueSpec& spec) {
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
  PI_CHECK(in.contains("data"), InvalidArgument, "input '", name, "' has no \"data\"");
  std::vector<const json*> items;
  flatten(in["data"], &items);
  const int64_t n = shape_numel(shape);
  PI_CHECK(static_cast<int64_t>(items.size()) == n, ShapeMismatch, "input '", name,
           "': ", items.size(), " elements in \"data\" for shape ", shape_str(shape), " (", n, ")");
  Tensor t = Tensor::empty(spec.dtype, shape);
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

InferRequest parse_infer_request(const std::string& body, const std::vector<ValueSpec>& inputs,
                                 const std::vector<ValueSpec>& outputs) {
  json req;
  try {
    req = json::parse(body);
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
    Tensor t = tensor_from_json(in, *spec);
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
      if (seen.insert(name).second) r.outputs.push_back(name);
    }
  }
  return r;
}

json infer_response(const std::string& model, const std::string& version, const std::string& id,
                    const std::vector<std::string>& names, const std::vector<Value>& values) {
  json out = json::array();
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    PI_CHECK(values[i].is_tensor(), InvalidArgument, "output '", names[i], "' is ",
             values[i].describe(), ": the protocol carries tensors only");
    const Tensor t = values[i].tensor().to(Device::cpu());
    const auto dt = datatype_name(t.dtype());
    PI_CHECK(dt, InvalidArgument, "output '", names[i], "' is ", t.describe(),
             ", which the protocol's JSON tensors cannot carry");
    json shape = json::array();
    for (int64_t d : t.shape()) shape.push_back(d);
    out.push_back({{"name", names[i]}, {"datatype", *dt}, {"shape", shape}, {"data", data_of(t)}});
  }
  json r = {{"model_name", model}, {"model_version", version}, {"outputs", out}};
  if (!id.empty()) r["id"] = id;
  return r;
}

}  // namespace polyinfer::serve
