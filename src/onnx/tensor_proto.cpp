#include "onnx/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

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
  PI_CHECK(proto.data_type() >= 1 && proto.data_type() <= 16, InvalidModel, what,
           " has unknown data type ", proto.data_type());
  const DType dt = static_cast<DType>(proto.data_type());
  PI_CHECK(dt != DType::Complex64 && dt != DType::Complex128, UnsupportedOp, what,
           " is of complex type ", dtype_name(dt), ", which polyinfer does not support");
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    PI_CHECK(d >= 0, InvalidModel, what, " has a negative dimension in ", shape_str(shape));
  // Every size is checked against the data actually present before anything is allocated, so a
  // hostile header cannot make us allocate what the file does not hold.
  const int64_t n = shape_numel(shape);
  const size_t bytes = dt == DType::String ? 0 : static_cast<size_t>(n) * dtype_size(dt);

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
    default: check_count(proto.int32_data(), n, what, "int32_data");
  }
  Tensor t = Tensor::empty(dt, shape);
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

Value value_from_proto(const onnx::SequenceProto& proto, const std::string& what) {
  const ExternalDataPolicy none;
  std::vector<Tensor> items;
  DType elem = DType::Undefined;
  if (proto.elem_type() == onnx::SequenceProto::TENSOR) {
    for (const auto& tp : proto.tensor_values()) {
      items.push_back(tensor_from_proto(tp, none, what));
      elem = items.back().dtype();
    }
  } else {
    fail(ErrorCode::UnsupportedOp, what,
         ": only sequences of tensors are supported (this one holds element type ",
         proto.elem_type(), ")");
  }
  return Value::sequence(std::move(items), elem);
}

Value value_from_proto(const onnx::OptionalProto& proto, const std::string& what) {
  const ExternalDataPolicy none;
  switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED: return Value();
    case onnx::OptionalProto::TENSOR:
      if (!proto.has_tensor_value()) return Value();
      return Value(tensor_from_proto(proto.tensor_value(), none, what));
    case onnx::OptionalProto::SEQUENCE:
      if (!proto.has_sequence_value()) return Value();
      return value_from_proto(proto.sequence_value(), what);
    default:
      fail(ErrorCode::UnsupportedOp, what, ": optional of element type ", proto.elem_type(),
           " is not supported");
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
  if (kind == ir::TypeInfo::Kind::Sequence) {
    onnx::SequenceProto p;
    parse_or_fail(p, data, path);
    return onnx_io::value_from_proto(p, path);
  }
  if (kind == ir::TypeInfo::Kind::Optional) {
    onnx::OptionalProto p;
    parse_or_fail(p, data, path);
    return onnx_io::value_from_proto(p, path);
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

}  // namespace polyinfer
