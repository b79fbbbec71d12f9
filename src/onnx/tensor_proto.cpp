#include "onnx/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/dispatch.h"
#include "core/low_precision.h"
#include "onnx/tensor_file.h"

namespace polyinfer::onnx_io {

namespace fs = std::filesystem;

namespace {

// Resolves an external-data location inside base_dir; rejects anything that escapes it.
fs::path safe_external_path(const std::string& location, const ExternalDataPolicy& ext,
                            const std::string& what) {
  PI_CHECK(!ext.base_dir.empty(), InvalidModel, what, " keeps its data in external file '",
           location, "', but the model was loaded from memory; load it from its file instead");
  PI_CHECK(!location.empty(), InvalidModel, what, " has external data with an empty location");
  const fs::path rel(location);
  PI_CHECK(!rel.is_absolute(), InvalidModel, what, ": external data location '", location,
           "' is an absolute path; only files inside the model's folder may be read");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::path(ext.base_dir), ec);
  const fs::path full = fs::weakly_canonical(base / rel, ec);
  PI_CHECK(!ec, Io, what, ": cannot resolve external data location '", location, "'");
  auto b = base.begin(), f = full.begin();
  for (; b != base.end(); ++b, ++f)
    PI_CHECK(f != full.end() && *b == *f, InvalidModel, what, ": external data location '",
             location, "' leaves the model's folder ", base.string(),
             "; move the data file next to the model");
  return full;
}

// Checks an external tensor's location and size, then reads its bytes into `out` (nullptr: only
// checks).
void read_external(const onnx::TensorProto& proto, const ExternalDataPolicy& ext,
                   const std::string& what, size_t expected, void* out) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    auto parse_num = [&](const std::string& s) -> int64_t {
      char* end = nullptr;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      PI_CHECK(!s.empty() && *end == '\0' && v >= 0, InvalidModel, what, ": bad external data ",
               kv.key(), " '", s, "'");
      return v;
    };
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset")
      offset = parse_num(kv.value());
    else if (kv.key() == "length")
      length = parse_num(kv.value());
  }
  const fs::path path = safe_external_path(location, ext, what);
  std::ifstream in(path, std::ios::binary);
  PI_CHECK(in.good(), Io, what, ": cannot open external data file ", path.string());
  in.seekg(0, std::ios::end);
  const int64_t file_size = in.tellg();
  if (length < 0) length = static_cast<int64_t>(expected);
  PI_CHECK(offset <= file_size && length <= file_size - offset, InvalidModel, what,
           ": external data [", offset, ", +", length, ") lies beyond the end of ", path.string(),
           " (", file_size, " bytes)");
  PI_CHECK(static_cast<size_t>(length) == expected, InvalidModel, what, ": external data holds ",
           length, " bytes, the tensor needs ", expected);
  if (!out || length == 0) return;
  in.seekg(offset);
  in.read(static_cast<char*>(out), length);
  PI_CHECK(in.good(), Io, what, ": short read from ", path.string());
}

template <class Field>
void check_count(const Field& field, int64_t n, const std::string& what, const char* name) {
  PI_CHECK(static_cast<int64_t>(field.size()) == n, InvalidModel, what, " has ", field.size(),
           " values in ", name, " but its shape holds ", n);
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataPolicy& ext,
                         const std::string& what, const std::string_view* raw_data,
                         const std::shared_ptr<DeferredSource>& defer) {
  PI_CHECK(proto.data_type() >= 1 && proto.data_type() <= kMaxDType, InvalidModel, what,
           " has unknown data type ", proto.data_type());
  const DType dt = static_cast<DType>(proto.data_type());
  PI_CHECK(is_tensor_dtype_code(proto.data_type()), UnsupportedOp, what, " is of complex type ",
           dtype_name(dt), ", which polyinfer does not support");
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    PI_CHECK(d >= 0, InvalidModel, what, " has a negative dimension in ", shape_str(shape));
  // Every size is checked against the data actually present before anything is allocated, so a
  // hostile header cannot make us allocate what the file does not hold.
  const int64_t n = shape_numel(shape);
  // Packed types (int4, float6e2m3, ...) hold ceil(n * bits / 8) bytes, as ONNX stores them.
  const size_t bytes = dt == DType::String ? 0 : dtype_nbytes(dt, n);

  if (dt == DType::String) {
    check_count(proto.string_data(), n, what, "string_data");
    Tensor t = Tensor::empty(dt, shape);
    auto* out = t.data<std::string>();
    for (int64_t i = 0; i < n; ++i) out[i] = proto.string_data(static_cast<int>(i));
    return t;
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    // Checked before allocating, read straight into the tensor (no second copy).
    read_external(proto, ext, what, bytes, nullptr);
    Tensor t = Tensor::empty(dt, shape);
    if (ext.read && bytes) read_external(proto, ext, what, bytes, t.raw_data());
    return t;
  }
  if (proto.has_raw_data()) {
    const std::string_view raw = raw_data ? *raw_data : std::string_view(proto.raw_data());
    PI_CHECK(raw.size() == bytes, InvalidModel, what, " has ", raw.size(),
             " bytes of raw data, its shape ", shape_str(shape), " needs ", bytes);
    if (defer && raw_data) return make_deferred(dt, shape, raw.data(), defer);
    Tensor t = Tensor::empty(dt, shape);
    if (bytes) std::memcpy(t.raw_data(), raw.data(), bytes);
    return t;
  }
  switch (dt) {
    case DType::Float32: check_count(proto.float_data(), n, what, "float_data"); break;
    case DType::Float64: check_count(proto.double_data(), n, what, "double_data"); break;
    case DType::Int64: check_count(proto.int64_data(), n, what, "int64_data"); break;
    case DType::UInt32:
    case DType::UInt64: check_count(proto.uint64_data(), n, what, "uint64_data"); break;
    case DType::UInt4:
    case DType::Int4:
    case DType::Float4E2M1:
    case DType::UInt2:
    case DType::Int2:
      // One packed byte per entry.
      check_count(proto.int32_data(), static_cast<int64_t>(bytes), what, "int32_data");
      break;
    default: check_count(proto.int32_data(), n, what, "int32_data");
  }
  Tensor t = Tensor::empty(dt, shape);
  if (is_packed(dt)) {
    // 4- and 2-bit types: the packed bytes; the 6-bit floats: one element per entry (onnx.proto).
    auto* out = static_cast<unsigned char*>(t.raw_data());
    if (bytes) std::memset(out, 0, bytes);  // an empty tensor has no memory (null)
    const bool per_element = dtype_bits(dt) == 6;
    for (int i = 0; i < proto.int32_data_size(); ++i) {
      const auto v = static_cast<uint32_t>(proto.int32_data(i));
      if (per_element) lowp::set(dt, out, i, v);
      else
        out[i] = static_cast<unsigned char>(v);
    }
    return t;
  }
  switch (dt) {
    case DType::Float32:
      std::copy(proto.float_data().begin(), proto.float_data().end(), t.data<float>());
      break;
    case DType::Float64:
      std::copy(proto.double_data().begin(), proto.double_data().end(), t.data<double>());
      break;
    case DType::Int64:
      std::copy(proto.int64_data().begin(), proto.int64_data().end(), t.data<int64_t>());
      break;
    case DType::UInt32:
    case DType::UInt64:
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = proto.uint64_data(static_cast<int>(i));
        if (dt == DType::UInt32) t.data<uint32_t>()[i] = static_cast<uint32_t>(v);
        else
          t.data<uint64_t>()[i] = v;
      }
      break;
    default: {
      // int32_data carries int32 and every narrower type; 16-bit floats as their bit patterns.
      const size_t es = dtype_size(dt);
      auto* out = static_cast<unsigned char*>(t.raw_data());
      for (int64_t i = 0; i < n; ++i) {
        const int32_t v = proto.int32_data(static_cast<int>(i));
        if (dt == DType::Bool) {
          out[i] = v != 0;
        } else if (es == 4) {
          std::memcpy(out + i * 4, &v, 4);
        } else if (es == 2) {
          const uint16_t h = static_cast<uint16_t>(v);
          std::memcpy(out + i * 2, &h, 2);
        } else {
          out[i] = static_cast<unsigned char>(v);
        }
      }
    }
  }
  return t;
}

void tensor_to_proto(const Tensor& t, onnx::TensorProto* proto) {
  Tensor h = t.to(Device::cpu());
  proto->set_data_type(static_cast<int>(h.dtype()));
  for (int64_t d : h.shape()) proto->add_dims(d);
  if (h.dtype() == DType::String) {
    const auto* s = h.data<std::string>();
    for (int64_t i = 0; i < h.numel(); ++i) proto->add_string_data(s[i]);
  } else {
    proto->set_raw_data(h.raw_data(), h.nbytes());
  }
}

namespace {

bool is_key_type(DType t) { return t == DType::String || is_integer(t); }

// Key i of an integer-keyed map, as MapProto stores it (int64; uint64 by its bit pattern).
int64_t key_as_int64(const Tensor& keys, int64_t i) {
  return dispatch(IntTypes{}, keys.dtype(), "map key", [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    return static_cast<int64_t>(keys.data<T>()[i]);
  });
}

// Writes an int64 from a MapProto into key i, refusing one the key type cannot hold.
void set_int_key(Tensor& keys, int64_t i, int64_t v, const std::string& what) {
  dispatch(IntTypes{}, keys.dtype(), "map key", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T k = static_cast<T>(v);
    PI_CHECK(static_cast<int64_t>(k) == v, InvalidArgument, what, ": key ", v,
             " does not fit the map's key type ", dtype_name(keys.dtype()));
    keys.data<T>()[i] = k;
  });
}

}  // namespace

Value value_from_proto(const onnx::SequenceProto& proto, const std::string& what, DType map_value) {
  const ExternalDataPolicy none;
  switch (proto.elem_type()) {
    case onnx::SequenceProto::TENSOR: {
      std::vector<Tensor> items;
      DType elem = DType::Undefined;
      for (const auto& tp : proto.tensor_values()) {
        items.push_back(tensor_from_proto(tp, none, what));
        elem = items.back().dtype();
      }
      return Value::sequence(std::move(items), elem);
    }
    case onnx::SequenceProto::MAP: {
      std::vector<Value> maps;
      for (int i = 0; i < proto.map_values_size(); ++i)
        maps.push_back(
            value_from_proto(proto.map_values(i), what + " item " + std::to_string(i), map_value));
      const DType key = maps.empty() ? DType::Undefined : maps[0].key_type();
      const DType value = maps.empty() ? map_value : maps[0].elem_type();
      for (size_t i = 1; i < maps.size(); ++i)
        PI_CHECK(maps[i].key_type() == key && maps[i].elem_type() == value, InvalidArgument, what,
                 ": item ", i, " is a ", maps[i].describe(), ", item 0 a ", maps[0].describe(),
                 "; a sequence holds one type");
      return Value::map_sequence(std::move(maps), key, value);
    }
    default:
      fail(ErrorCode::UnsupportedOp, what,
           ": only sequences of tensors or of maps are supported (this one holds element type ",
           proto.elem_type(), ")");
  }
}

Value value_from_proto(const onnx::MapProto& proto, const std::string& what, DType map_value) {
  const int kt = proto.key_type();
  const DType key = kt >= 1 && kt <= kMaxDType ? static_cast<DType>(kt) : DType::Undefined;
  PI_CHECK(is_key_type(key), InvalidArgument, what, ": map key type ", kt,
           " is not an integer type or string");
  const bool strings = key == DType::String;
  const int64_t n = strings ? proto.string_keys_size() : proto.keys_size();
  PI_CHECK((strings ? proto.keys_size() : proto.string_keys_size()) == 0, InvalidArgument, what,
           ": a map with ", dtype_name(key), " keys holds keys of the other kind too");
  const onnx::SequenceProto& vals = proto.values();
  PI_CHECK(n == 0 || vals.elem_type() == onnx::SequenceProto::TENSOR, UnsupportedOp, what,
           ": only maps to tensor values are supported (this one's values have element type ",
           vals.elem_type(), ")");
  PI_CHECK(vals.tensor_values_size() == n, InvalidArgument, what, " has ", n, " keys and ",
           vals.tensor_values_size(), " values");
  Tensor keys = Tensor::empty(key, {n});
  for (int i = 0; i < n; ++i) {
    if (strings) keys.data<std::string>()[i] = proto.string_keys(i);
    else
      set_int_key(keys, i, proto.keys(i), what);
  }
  // An empty map's values say nothing of their type: the caller's, else ZipMap's float.
  DType value = n ? static_cast<DType>(vals.tensor_values(0).data_type()) : map_value;
  if (value == DType::Undefined) value = DType::Float32;
  Tensor values;
  const ExternalDataPolicy none;
  for (int i = 0; i < n; ++i) {
    const Tensor t = tensor_from_proto(vals.tensor_values(i), none, what);
    PI_CHECK(t.numel() == 1, UnsupportedOp, what, ": value ", i, " is a ", t.describe(),
             "; only maps to single values are supported");
    PI_CHECK(t.dtype() == value, InvalidArgument, what, ": value ", i, " is ",
             dtype_name(t.dtype()), ", value 0 ", dtype_name(value), "; a map holds one type");
    PI_CHECK(!is_packed(value), UnsupportedOp, what, ": map values of packed type ",
             dtype_name(value), " are not supported");
    if (!values.defined()) values = Tensor::empty(value, {n});
    if (value == DType::String) {
      values.data<std::string>()[i] = t.data<std::string>()[0];
    } else {
      const size_t es = dtype_size(value);
      std::memcpy(static_cast<char*>(values.raw_data()) + i * es, t.raw_data(), es);
    }
  }
  if (!values.defined()) values = Tensor::empty(value, {0});
  return Value::map(std::move(keys), std::move(values));
}

Value value_from_proto(const onnx::OptionalProto& proto, const std::string& what, DType map_value) {
  const ExternalDataPolicy none;
  switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED: return Value();
    case onnx::OptionalProto::TENSOR:
      if (!proto.has_tensor_value()) return Value();
      return Value(tensor_from_proto(proto.tensor_value(), none, what));
    case onnx::OptionalProto::SEQUENCE:
      if (!proto.has_sequence_value()) return Value();
      return value_from_proto(proto.sequence_value(), what, map_value);
    case onnx::OptionalProto::MAP:
      if (!proto.has_map_value()) return Value();
      return value_from_proto(proto.map_value(), what, map_value);
    default:
      fail(ErrorCode::UnsupportedOp, what, ": optional of element type ", proto.elem_type(),
           " is not supported");
  }
}

void map_to_proto(const Value& v, onnx::MapProto* proto) {
  const Tensor& keys = v.map_keys();
  const Tensor& values = v.map_values();
  proto->set_key_type(static_cast<int>(keys.dtype()));
  for (int64_t i = 0; i < keys.numel(); ++i) {
    if (keys.dtype() == DType::String) proto->add_string_keys(keys.data<std::string>()[i]);
    else
      proto->add_keys(key_as_int64(keys, i));
  }
  // Each value a 0-d tensor, as onnx.numpy_helper.from_dict writes a dict of numpy scalars.
  onnx::SequenceProto* seq = proto->mutable_values();
  seq->set_elem_type(onnx::SequenceProto::TENSOR);
  for (int64_t i = 0; i < values.numel(); ++i) {
    onnx::TensorProto* t = seq->add_tensor_values();
    t->set_data_type(static_cast<int>(values.dtype()));
    if (values.dtype() == DType::String) {
      t->add_string_data(values.data<std::string>()[i]);
    } else {
      const size_t es = dtype_size(values.dtype());
      t->set_raw_data(static_cast<const char*>(values.raw_data()) + i * es, es);
    }
  }
}

void sequence_to_proto(const Value& v, onnx::SequenceProto* proto) {
  if (v.holds_maps()) {
    proto->set_elem_type(onnx::SequenceProto::MAP);
    for (const Value& m : v.maps()) map_to_proto(m, proto->add_map_values());
  } else {
    proto->set_elem_type(onnx::SequenceProto::TENSOR);
    for (const Tensor& t : v.items()) tensor_to_proto(t, proto->add_tensor_values());
  }
}

}  // namespace polyinfer::onnx_io

namespace polyinfer {

namespace {

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  PI_CHECK(in.good(), Io, "cannot open '", path, "': check the path");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return data;
}

template <class Proto>
void parse_or_fail(Proto& proto, const std::string& data, const std::string& what) {
  PI_CHECK(data.size() < (size_t{1} << 31), InvalidArgument, what,
           " is larger than protobuf's 2 GiB limit");
  PI_CHECK(proto.ParseFromArray(data.data(), static_cast<int>(data.size())), InvalidArgument, what,
           " is not a valid ONNX ", Proto::descriptor()->name(), " file");
}

}  // namespace

Value read_value_pb(const std::string& path, const ir::TypeInfo* type) {
  const std::string data = read_file_bytes(path);
  const auto kind = type ? type->kind : ir::TypeInfo::Kind::Tensor;
  // A map's value type (of the map, or of the maps in a sequence or optional), for empty maps.
  const DType map_value = type ? type->elem : DType::Undefined;
  if (kind == ir::TypeInfo::Kind::Sequence) {
    onnx::SequenceProto p;
    parse_or_fail(p, data, path);
    return onnx_io::value_from_proto(p, path, map_value);
  }
  if (kind == ir::TypeInfo::Kind::Optional) {
    onnx::OptionalProto p;
    parse_or_fail(p, data, path);
    return onnx_io::value_from_proto(p, path, map_value);
  }
  if (kind == ir::TypeInfo::Kind::Map) {
    onnx::MapProto p;
    parse_or_fail(p, data, path);
    return onnx_io::value_from_proto(p, path, map_value);
  }
  onnx::TensorProto p;
  parse_or_fail(p, data, path);
  return Value(onnx_io::tensor_from_proto(p, {}, path));
}

Tensor parse_tensor_pb(const void* data, size_t size, const std::string& what) {
  onnx::TensorProto p;
  PI_CHECK(size < (size_t{1} << 31), InvalidArgument, what, " is too large");
  PI_CHECK(p.ParseFromArray(data, static_cast<int>(size)), InvalidArgument, what,
           " is not a valid ONNX TensorProto");
  return onnx_io::tensor_from_proto(p, {}, what);
}

void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  onnx_io::tensor_to_proto(t, &p);
  p.set_name(name);
  std::ofstream out(path, std::ios::binary);
  PI_CHECK(out.good() && p.SerializeToOstream(&out), Io, "cannot write '", path, "'");
}

void write_value_pb(const std::string& path, const Value& v, const std::string& name) {
  std::string bytes;
  switch (v.kind()) {
    case Value::Kind::Tensor: return write_tensor_pb(path, v.tensor(), name);
    case Value::Kind::Sequence: {
      onnx::SequenceProto p;
      onnx_io::sequence_to_proto(v, &p);
      p.set_name(name);
      bytes = p.SerializeAsString();
      break;
    }
    case Value::Kind::Map: {
      onnx::MapProto p;
      onnx_io::map_to_proto(v, &p);
      p.set_name(name);
      bytes = p.SerializeAsString();
      break;
    }
    case Value::Kind::None: {
      onnx::OptionalProto p;  // an empty optional
      p.set_name(name);
      bytes = p.SerializeAsString();
      break;
    }
  }
  std::ofstream out(path, std::ios::binary);
  PI_CHECK(out.good() && out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())), Io,
           "cannot write '", path, "'");
}

}  // namespace polyinfer
