#include "convert.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>

#include "core/low_precision.h"
#include "polyinfer/status.h"

namespace nb = nanobind;

namespace polyinfer::python {
namespace {

using Code = nb::dlpack::dtype_code;

std::optional<DType> from_dlpack(nb::dlpack::dtype t) {
  if (t.lanes != 1) return std::nullopt;
  auto by_bits = [&](DType b8, DType b16, DType b32, DType b64) -> std::optional<DType> {
    switch (t.bits) {
      case 8: return b8;
      case 16: return b16;
      case 32: return b32;
      case 64: return b64;
      default: return std::nullopt;
    }
  };
  switch (static_cast<Code>(t.code)) {
    case Code::Int: return by_bits(DType::Int8, DType::Int16, DType::Int32, DType::Int64);
    case Code::UInt: return by_bits(DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64);
    case Code::Float:
      if (t.bits == 8) return std::nullopt;
      return by_bits(DType::Undefined, DType::Float16, DType::Float32, DType::Float64);
    case Code::Bfloat:
      if (t.bits == 16) return DType::BFloat16;
      return std::nullopt;
    case Code::Bool:
      if (t.bits == 8) return DType::Bool;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// The numpy dtypes: those of polyinfer's types numpy itself has.
std::optional<nb::dlpack::dtype> to_numpy(DType d) {
  auto make = [](Code c, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1};
  };
  switch (d) {
    case DType::Float32: return make(Code::Float, 32);
    case DType::Float64: return make(Code::Float, 64);
    case DType::Float16: return make(Code::Float, 16);
    case DType::Int8: return make(Code::Int, 8);
    case DType::Int16: return make(Code::Int, 16);
    case DType::Int32: return make(Code::Int, 32);
    case DType::Int64: return make(Code::Int, 64);
    case DType::UInt8: return make(Code::UInt, 8);
    case DType::UInt16: return make(Code::UInt, 16);
    case DType::UInt32: return make(Code::UInt, 32);
    case DType::UInt64: return make(Code::UInt, 64);
    case DType::Bool: return make(Code::Bool, 8);
    default: return std::nullopt;
  }
}

nb::object tensor_to_python(Tensor t);
nb::object codes_to_python(const Tensor& t);

nb::object numpy_attr(const char* name) { return nb::module_::import_("numpy").attr(name); }

nb::object tensor_to_python(Tensor t) {
  nb::list shape;
  for (int64_t d : t.shape()) shape.append(d);
  if (t.dtype() == DType::String) {
    const std::string* s = t.data<std::string>();
    nb::list items;
    for (int64_t i = 0; i < t.numel(); ++i) items.append(nb::str(s[i].data(), s[i].size()));
    nb::object a = numpy_attr("array")(items, nb::arg("dtype") = "object");
    return a.attr("reshape")(nb::tuple(shape));
  }
  const std::optional<nb::dlpack::dtype> dt = to_numpy(t.dtype());
  if (!dt) return codes_to_python(t);
  if (t.numel() == 0) return numpy_attr("empty")(nb::tuple(shape), dtype_name(t.dtype()));
  std::vector<size_t> dims(t.shape().begin(), t.shape().end());
  auto* held = new Tensor(std::move(t));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  return nb::ndarray<nb::numpy>(held->raw_data(), dims.size(), dims.data(), owner, nullptr, *dt)
      .cast();
}

// A tensor of a type numpy lacks, as (dtype, its codes one per byte, or bfloat16's 16 bits):
// what ml_dtypes holds, for the Python layer to view as such.
nb::object codes_to_python(const Tensor& t) {
  const DType d = t.dtype();
  PI_CHECK(d == DType::BFloat16 || is_low_precision_float(d) || is_low_precision_integer(d),
           InvalidArgument, "an output is ", t.describe(),
           ", which the Python API cannot pass yet; Cast it in the model");
  Tensor codes = Tensor::empty(d == DType::BFloat16 ? DType::UInt16 : DType::UInt8, t.shape());
  if (!is_packed(d)) {
    std::memcpy(codes.raw_data(), t.raw_data(), codes.nbytes());
  } else {
    auto* out = codes.data<uint8_t>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const uint32_t c = lowp::get(d, t.raw_data(), i);
      // ml_dtypes keeps a signed sub-byte integer as the int8 of its value.
      out[i] = is_low_precision_integer(d) ? static_cast<uint8_t>(lowp::int_value(d, c))
                                           : static_cast<uint8_t>(c);
    }
  }
  return nb::make_tuple(static_cast<int>(d), tensor_to_python(std::move(codes)));
}

nb::object scalar(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::String: return nb::str(t.data<std::string>()[i].c_str());
    case DType::Int64: return nb::int_(t.data<int64_t>()[i]);
    case DType::Int32: return nb::int_(t.data<int32_t>()[i]);
    case DType::Float32: return nb::float_(t.data<float>()[i]);
    case DType::Float64: return nb::float_(t.data<double>()[i]);
    default:
      fail(ErrorCode::InvalidArgument, "a map holds ", dtype_name(t.dtype()),
           " entries, which the Python API cannot pass yet (int64, int32, float, double, "
           "string)");
  }
}

nb::object map_to_python(const Value& m) {
  nb::dict d;
  const Tensor& k = m.map_keys();
  const Tensor& v = m.map_values();
  for (int64_t i = 0; i < k.numel(); ++i) d[scalar(k, i)] = scalar(v, i);
  return d;
}

void own_tensor(Tensor& t) {
  if (!t.device().is_cpu()) t = t.to(Device::cpu());
  if (t.dtype() != DType::String && !t.sole_owner()) t = t.clone();
}

}  // namespace

Tensor Feeds::tensor(const std::string& name, const InputArray& a, int dtype) {
  Shape shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = static_cast<int64_t>(a.shape(i));
  void* data = const_cast<void*>(a.data());
  const size_t nbytes = a.nbytes();
  held_.push_back(a);
  if (dtype != 0) {
    PI_CHECK(dtype > 0 && dtype <= kMaxDType, InvalidArgument, "input '", name, "': dtype code ",
             dtype, " is not a polyinfer dtype");
    const DType d = static_cast<DType>(dtype);
    if (is_packed(d)) {
      // One code per byte (ml_dtypes) into ONNX's packed storage.
      PI_CHECK(nbytes == static_cast<size_t>(shape_numel(shape)), InvalidArgument, "input '", name,
               "': ", nbytes, " bytes for ", shape_numel(shape), " ", dtype_name(d),
               " elements (one byte each, as ml_dtypes holds them)");
      Tensor t = Tensor::zeros(d, std::move(shape));
      const auto* codes = static_cast<const uint8_t*>(data);
      const uint32_t mask = (1u << dtype_bits(d)) - 1;
      for (int64_t i = 0; i < t.numel(); ++i) lowp::set(d, t.raw_data(), i, codes[i] & mask);
      return t;
    }
    PI_CHECK(nbytes == dtype_nbytes(d, shape_numel(shape)), InvalidArgument, "input '", name,
             "': ", nbytes, " bytes for ", dtype_name(d), shape_str(shape));
    return Tensor::borrow(d, std::move(shape), data, nbytes);
  }
  const std::optional<DType> dt = from_dlpack(a.dtype());
  PI_CHECK(dt, InvalidArgument, "input '", name, "' is an array of ", int(a.dtype().bits),
           "-bit elements of a kind polyinfer has no dtype for (complex?); give it in the dtype "
           "the model declares");
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(*dt) != 0)
    return Tensor::from_host(*dt, std::move(shape), data, nbytes);  // misaligned: a copy
  return Tensor::borrow(*dt, std::move(shape), data, nbytes);
}

void Feeds::add_array(const std::string& name, const InputArray& a, int dtype) {
  values_.insert_or_assign(name, Value(tensor(name, a, dtype)));
}

void Feeds::add_strings(const std::string& name, const Shape& shape,
                        const std::vector<std::string>& items) {
  Tensor t = Tensor::empty(DType::String, shape);
  PI_CHECK(static_cast<size_t>(t.numel()) == items.size(), InvalidArgument, "input '", name,
           "': ", items.size(), " strings for shape ", shape_str(shape));
  std::string* out = t.data<std::string>();
  for (size_t i = 0; i < items.size(); ++i) out[i] = items[i];
  values_.insert_or_assign(name, Value(std::move(t)));
}

void Feeds::add_sequence(const std::string& name, const std::vector<InputArray>& items,
                         const std::vector<int>& dtypes, int elem) {
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < items.size(); ++i)
    tensors.push_back(tensor(name, items[i], i < dtypes.size() ? dtypes[i] : 0));
  DType e = elem > 0 && elem <= kMaxDType ? static_cast<DType>(elem) : DType::Undefined;
  if (!tensors.empty()) e = tensors[0].dtype();
  values_.insert_or_assign(name, Value::sequence(std::move(tensors), e));
}

void Feeds::add_none(const std::string& name) { values_.insert_or_assign(name, Value()); }

Value Feeds::map(const std::string& name, const Items& keys, const Items& values) {
  const auto side = [&](const Items& items) {
    if (const auto* a = std::get_if<InputArray>(&items)) return tensor(name, *a, 0);
    const auto& strings = std::get<std::vector<std::string>>(items);
    Tensor t = Tensor::empty(DType::String, {static_cast<int64_t>(strings.size())});
    std::string* out = t.data<std::string>();
    for (size_t i = 0; i < strings.size(); ++i) out[i] = strings[i];
    return t;
  };
  try {
    return Value::map(side(keys), side(values));
  } catch (const Error& e) {
    fail(e.code(), "input '", name, "': ", e.what());
  }
}

void Feeds::add_map(const std::string& name, const Items& keys, const Items& values) {
  values_.insert_or_assign(name, map(name, keys, values));
}

void Feeds::add_map_sequence(const std::string& name, const std::vector<Items>& keys,
                             const std::vector<Items>& values, int key, int value) {
  PI_CHECK(keys.size() == values.size(), InvalidArgument, "input '", name, "': ", keys.size(),
           " key lists for ", values.size(), " value lists");
  std::vector<Value> maps;
  for (size_t i = 0; i < keys.size(); ++i) maps.push_back(map(name, keys[i], values[i]));
  const auto dtype = [](int code) {
    return code > 0 && code <= kMaxDType ? static_cast<DType>(code) : DType::Undefined;
  };
  values_.insert_or_assign(name, Value::map_sequence(std::move(maps), dtype(key), dtype(value)));
}

void own_memory(Value& v) {
  if (v.is_tensor()) own_tensor(v.tensor());
  else if (v.is_sequence() && !v.holds_maps())
    for (Tensor& t : v.items()) own_tensor(t);
}

nb::object to_python(Value v) {
  switch (v.kind()) {
    case Value::Kind::None: return nb::none();
    case Value::Kind::Tensor: return tensor_to_python(std::move(v.tensor()));
    case Value::Kind::Map: return map_to_python(v);
    case Value::Kind::Sequence: {
      nb::list out;
      if (v.holds_maps())
        for (const Value& m : v.maps()) out.append(map_to_python(m));
      else
        for (Tensor& t : v.items()) out.append(tensor_to_python(std::move(t)));
      return out;
    }
  }
  return nb::none();
}

}  // namespace polyinfer::python
