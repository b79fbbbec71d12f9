#include "cli/inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/dispatch.h"
#include "core/low_precision.h"
#include "onnx/npy.h"
#include "onnx/tensor_file.h"

namespace polyinfer::cli {

namespace {

namespace fs = std::filesystem;

// "1x3x224x224" or "1,3,224,224".
Shape parse_dims(const std::string& text, const std::string& what) {
  Shape s;
  std::string cur;
  for (char c : text + "x") {
    if (c == 'x' || c == ',') {
      char* end = nullptr;
      const long long v = std::strtoll(cur.c_str(), &end, 10);
      PI_CHECK(!cur.empty() && *end == '\0' && v >= 0, InvalidArgument, "bad dimension '", cur,
               "' in ", what, "; write e.g. --shape input=1x3x224x224");
      s.push_back(v);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return s;
}

Tensor random_tensor(const ValueSpec& spec, const Shape& shape, std::mt19937& rng) {
  Tensor t = Tensor::empty(spec.dtype, shape);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 3);
  if (is_low_precision_float(spec.dtype) || is_low_precision_integer(spec.dtype)) {
    if (t.nbytes()) std::memset(t.raw_data(), 0, t.nbytes());  // a packed tensor's padding
    for (int64_t i = 0; i < t.numel(); ++i) {
      const uint32_t code =
          is_low_precision_integer(spec.dtype) ? lowp::int_code_wrapped(spec.dtype, small(rng))
          : spec.dtype == DType::Float8E8M0
              ? lowp::e8m0_from_float(std::fabs(real(rng)), true, lowp::E8M0Rounding::Nearest)
              : lowp::from_double(spec.dtype, real(rng), true);
      lowp::set(spec.dtype, t.raw_data(), i, code);
    }
    return t;
  }
  dispatch(AllTypes{}, spec.dtype, "random input", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, std::string>) p[i] = "s" + std::to_string(small(rng));
      else if constexpr (std::is_same_v<T, bool>)
        p[i] = small(rng) & 1;
      else if constexpr (std::is_integral_v<T>)
        p[i] = static_cast<T>(small(rng));
      else
        p[i] = static_cast<T>(real(rng));
    }
  });
  return t;
}

Value load_input(const std::string& path, const ValueSpec& spec) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".npy") {
    PI_CHECK(spec.kind != "map" && spec.kind != "sequence", InvalidArgument, "input '", spec.name,
             "' is a ", spec.type, " and a .npy file holds a tensor; give it as an ONNX .pb file (",
             spec.kind == "map" ? "a MapProto: onnx.numpy_helper.from_dict"
                                : "a SequenceProto: onnx.numpy_helper.from_list",
             ")");
    return Value(read_npy(path));
  }
  if (ext == ".pb") {
    ir::TypeInfo t;
    if (spec.kind == "sequence") t.kind = ir::TypeInfo::Kind::Sequence;
    if (spec.kind == "optional") t.kind = ir::TypeInfo::Kind::Optional;
    if (spec.kind == "map") t.kind = ir::TypeInfo::Kind::Map;
    t.elem = spec.dtype;  // the value type of empty maps
    return read_value_pb(path, &t);
  }
  fail(ErrorCode::InvalidArgument, "input file '", path,
       "' must be a .npy (numpy.save) or .pb (ONNX TensorProto) file");
}

}  // namespace

std::map<std::string, Value> make_inputs(const Session& session, const Args& args,
                                         std::vector<std::string>* notes) {
  std::map<std::string, std::string> files, shapes;
  auto split_kv = [](const std::string& kv, const char* opt) {
    const auto eq = kv.find('=');
    PI_CHECK(eq != std::string::npos && eq > 0, InvalidArgument, "--", opt,
             " takes NAME=VALUE, got '", kv, "'");
    return std::make_pair(kv.substr(0, eq), kv.substr(eq + 1));
  };
  auto add = [&](std::map<std::string, std::string>& to, const std::string& kv, const char* opt) {
    auto [it, fresh] = to.insert(split_kv(kv, opt));
    PI_CHECK(fresh, InvalidArgument, "--", opt, " gives '", it->first,
             "' twice; give each input once");
  };
  for (const auto& kv : args.all("input")) add(files, kv, "input");
  for (const auto& kv : args.all("shape")) add(shapes, kv, "shape");
  auto known = [&](const std::string& name) {
    for (const auto& s : session.inputs())
      if (s.name == name) return true;
    return false;
  };
  for (const auto& [n, f] : files)
    PI_CHECK(known(n), InvalidArgument, "-i ", n, "=...: the model has no input named '", n, "'");
  for (const auto& [n, f] : shapes)
    PI_CHECK(known(n), InvalidArgument, "--shape ", n, "=...: the model has no input named '", n,
             "'");

  std::mt19937 rng(static_cast<unsigned>(args.get_int("seed", 0)));
  std::map<std::string, Value> feeds;
  for (const auto& spec : session.inputs()) {
    if (auto f = files.find(spec.name); f != files.end()) {
      feeds[spec.name] = load_input(f->second, spec);
      continue;
    }
    PI_CHECK(spec.kind == "tensor", InvalidArgument, "input '", spec.name, "' is a ", spec.kind,
             "; give it with -i ", spec.name, "=FILE.pb");
    Shape shape;
    if (auto s = shapes.find(spec.name); s != shapes.end()) {
      shape = parse_dims(s->second, "--shape " + spec.name);
    } else {
      PI_CHECK(spec.has_shape, InvalidArgument, "input '", spec.name,
               "' has no declared shape; give one with --shape ", spec.name, "=DIMS");
      shape = spec.shape;
      for (auto& d : shape) d = d < 0 ? 1 : d;
      if (std::find(spec.shape.begin(), spec.shape.end(), -1) != spec.shape.end())
        notes->push_back("input '" + spec.name + "': dynamic dimensions set to 1 (use --shape)");
    }
    feeds[spec.name] = Value(random_tensor(spec, shape, rng));
  }
  return feeds;
}

std::vector<Sample> read_samples(const std::string& flag, const std::string& path,
                                 const ValueSpec& input, SplitRows split) {
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.path().extension() == ".npy") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    PI_CHECK(!files.empty(), InvalidArgument, flag, ": folder '", path, "' holds no .npy files");
  } else {
    PI_CHECK(fs::is_regular_file(path, ec), Io, flag, ": '", path,
             "' is neither a file nor a folder");
    files.push_back(path);
  }
  const bool dynamic = !input.shape.empty() && input.shape[0] < 0;
  const bool splits =
      !input.shape.empty() &&
      (input.shape[0] == 1 || (dynamic && split == SplitRows::WhenBatchIsOneOrDynamic));
  std::vector<Sample> out;
  for (const auto& f : files) {
    Tensor t = read_npy(f);
    if (splits && t.shape().size() == input.shape.size() && t.shape()[0] > 1) {
      // A batched file for a model that takes one sample at a time: split along dimension 0.
      Shape one = t.shape();
      one[0] = 1;
      const size_t bytes = t.nbytes() / static_cast<size_t>(t.shape()[0]);
      for (int64_t i = 0; i < t.shape()[0]; ++i)
        out.push_back({Tensor::from_host(t.dtype(), one,
                                         static_cast<const char*>(t.raw_data()) + i * bytes, bytes),
                       f + " row " + std::to_string(i)});
    } else {
      out.push_back({t, f});
    }
  }
  return out;
}

}  // namespace polyinfer::cli
