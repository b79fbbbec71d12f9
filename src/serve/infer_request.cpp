#include "serve/infer_request.h"

#include <algorithm>
#include <cstring>

#include "core/shape_util.h"
#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

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

std::string list_names(const std::vector<ValueSpec>& specs) {
  std::string s;
  for (const auto& v : specs) s += (s.empty() ? "" : ", ") + v.name;
  return s;
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

bool has_json_form(DType d) {
  for (const auto& n : kDatatypes)
    if (n.dtype == d) return n.json;
  return false;
}

const ValueSpec& new_input(const InferRequest& r, const std::vector<ValueSpec>& inputs,
                           const std::string& name) {
  const ValueSpec* spec = nullptr;
  for (const auto& s : inputs)
    if (s.name == name) spec = &s;
  PI_CHECK(spec, InvalidArgument, "the model has no input named '", name,
           "'; its inputs are: ", list_names(inputs));
  PI_CHECK(!r.inputs.count(name), InvalidArgument, "input '", name, "' is given twice");
  PI_CHECK(spec->kind == "tensor" || spec->kind == "optional", InvalidArgument, "input '", name,
           "' is ", spec->type, ": the protocol carries tensors only");
  return *spec;
}

Tensor checked_tensor(const ValueSpec& spec, const std::string& datatype, const Shape& shape) {
  const std::string& name = spec.name;
  const std::optional<std::string> want = datatype_name(spec.dtype);
  PI_CHECK(want, InvalidArgument, "input '", name, "' is ", spec.type,
           ", which the protocol's tensors cannot carry");
  PI_CHECK(datatype == *want, InvalidArgument, "input '", name, "' is ", datatype,
           " but the model takes ", *want, " (", spec.type, ")");
  for (int64_t d : shape)
    PI_CHECK(d >= 0, InvalidArgument, "input '", name, "': shape ", shape_str(shape),
             " must hold non-negative integers");
  if (spec.has_shape) {
    PI_CHECK(shape.size() == spec.shape.size(), ShapeMismatch, "input '", name, "' has shape ",
             shape_str(shape), " but the model takes rank ", spec.shape.size(), " (", spec.type,
             ")");
    for (size_t i = 0; i < shape.size(); ++i)
      PI_CHECK(spec.shape[i] < 0 || spec.shape[i] == shape[i], ShapeMismatch, "input '", name,
               "' has shape ", shape_str(shape), " but the model takes ", spec.type, " (dimension ",
               i, " must be ", spec.shape[i], ")");
  }
  return Tensor::empty(spec.dtype, shape);
}

void fill_raw(Tensor& t, const char* p, size_t n, const std::string& input) {
  if (t.dtype() != DType::String) {
    PI_CHECK(n == t.nbytes(), ShapeMismatch, "input '", input, "': ", n, " bytes of data for ",
             t.describe(), " (", t.nbytes(), " bytes)");
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

Tensor output_tensor(const std::string& name, const Value& value, std::string* datatype) {
  PI_CHECK(value.is_tensor(), InvalidArgument, "output '", name, "' is ", value.describe(),
           ": the protocol carries tensors only");
  Tensor t = value.tensor().to(Device::cpu());
  const auto dt = datatype_name(t.dtype());
  PI_CHECK(dt, InvalidArgument, "output '", name, "' is ", t.describe(),
           ", which the protocol cannot carry");
  *datatype = *dt;
  return t;
}

void append_raw(const Tensor& t, std::string* out) {
  if (t.dtype() != DType::String) {
    out->append(static_cast<const char*>(t.raw_data()), t.nbytes());
    return;
  }
  const auto* p = t.data<std::string>();
  for (int64_t k = 0; k < t.numel(); ++k) {
    const uint32_t len = static_cast<uint32_t>(p[k].size());
    out->append(reinterpret_cast<const char*>(&len), 4);
    out->append(p[k]);
  }
}

void add_output(InferRequest& r, const std::vector<ValueSpec>& outputs, const std::string& name,
                bool binary) {
  bool known = false;
  for (const auto& s : outputs) known = known || s.name == name;
  PI_CHECK(known, InvalidArgument, "the model has no output named '", name,
           "'; its outputs are: ", list_names(outputs));
  if (std::find(r.outputs.begin(), r.outputs.end(), name) != r.outputs.end()) return;
  r.outputs.push_back(name);
  if (binary) r.binary_outputs.push_back(name);
}

void check_complete(const InferRequest& r, const std::vector<ValueSpec>& inputs) {
  for (const auto& s : inputs)
    PI_CHECK(r.inputs.count(s.name) || s.kind == "optional", InvalidArgument, "input '", s.name,
             "' (", s.type, ") is missing; the model takes: ", list_names(inputs));
}

std::vector<std::string> output_names(const InferRequest& r,
                                      const std::vector<ValueSpec>& outputs) {
  std::vector<std::string> names = r.outputs;
  if (names.empty())
    for (const auto& spec : outputs) names.push_back(spec.name);
  return names;
}

}  // namespace polyinfer::serve
