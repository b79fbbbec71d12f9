#include "onnx/import.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>
#include <algorithm>
#include <filesystem>

#include <set>
#include <system_error>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include "onnx/inline_functions.h"
#include "onnx/mapped_file.h"
#include "onnx/model_split.h"
#include "onnx/schemas.h"
#include "onnx/tensor_proto.h"

namespace polyinfer {

namespace {

using onnx_io::ExternalDataPolicy;

ir::TypeInfo convert_type(const onnx::TypeProto& tp) {
  ir::TypeInfo t;
  switch (tp.value_case()) {
    case onnx::TypeProto::kTensorType: {
      t.kind = ir::TypeInfo::Kind::Tensor;
      const int et = tp.tensor_type().elem_type();
      t.elem = et >= 0 && et <= kMaxDType ? static_cast<DType>(et) : DType::Undefined;
      if (tp.tensor_type().has_shape()) {
        t.has_shape = true;
        for (const auto& d : tp.tensor_type().shape().dim()) {
          t.dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
          t.dim_params.push_back(d.has_dim_param() ? d.dim_param() : std::string());
        }
      }
      break;
    }
    case onnx::TypeProto::kSequenceType:
      t.kind = ir::TypeInfo::Kind::Sequence;
      t.inner = std::make_shared<ir::TypeInfo>(convert_type(tp.sequence_type().elem_type()));
      t.elem = t.inner->elem;
      break;
    case onnx::TypeProto::kOptionalType:
      t.kind = ir::TypeInfo::Kind::Optional;
      t.inner = std::make_shared<ir::TypeInfo>(convert_type(tp.optional_type().elem_type()));
      t.elem = t.inner->elem;
      break;
    case onnx::TypeProto::kMapType: {
      t.kind = ir::TypeInfo::Kind::Map;
      const int kt = tp.map_type().key_type();
      t.key = kt >= 0 && kt <= kMaxDType ? static_cast<DType>(kt) : DType::Undefined;
      t.inner = std::make_shared<ir::TypeInfo>(convert_type(tp.map_type().value_type()));
      t.elem = t.inner->elem;
      break;
    }
    default: t.kind = ir::TypeInfo::Kind::Unknown; break;
  }
  return t;
}

class GraphImporter {
 public:
  // With strip_weights, each large floating-point initializer's data is dropped from the
  // (caller-owned, mutable) proto as soon as it is converted, so a model's weights are never
  // held twice (the proto is not read again for them).
  // `split_raw`: the main graph's initializer bytes that model_split.h moved out of the proto,
  // one entry per initializer (null where the proto kept them).
  // `mapped`, when the split views point into a mapped file: each view's pages are released once
  // copied. `defer`, with `mapped`: the weights those views hold are not copied but read from
  // the mapping (core/deferred.h).
  GraphImporter(const std::map<std::string, int>& opsets, ExternalDataPolicy ext,
                bool strip_weights = false,
                const std::vector<std::string_view>* split_raw = nullptr,
                const onnx_io::MappedFile* mapped = nullptr,
                std::shared_ptr<DeferredSource> defer = nullptr)
      : opsets_(opsets),
        ext_(std::move(ext)),
        strip_weights_(strip_weights),
        split_raw_(split_raw),
        mapped_(mapped),
        defer_(mapped ? std::move(defer) : nullptr) {}

  // Whether convert() left any weight in the mapping.
  bool deferred_any() const { return deferred_any_; }

  std::shared_ptr<ir::Graph> convert(const onnx::GraphProto& gp, int depth) {
    PI_CHECK(depth < 64, InvalidModel, "subgraphs are nested more than 64 levels deep");
    auto g = std::make_shared<ir::Graph>();
    g->name = gp.name().empty() ? "main" : gp.name();
    g->opsets = opsets_;
    const bool split = depth == 0 && split_raw_;
    PI_CHECK(!split || split_raw_->size() == static_cast<size_t>(gp.initializer_size()), Internal,
             "the model's split weights (", split_raw_->size(), ") do not match its ",
             gp.initializer_size(), " initializers");
    for (int i = 0; i < gp.initializer_size(); ++i) {
      const auto& tp = gp.initializer(i);
      PI_CHECK(!tp.name().empty(), InvalidModel, "graph '", g->name,
               "' has an unnamed initializer");
      const std::string_view* raw = split && (*split_raw_)[i].data() ? &(*split_raw_)[i] : nullptr;
      Tensor& t = g->initializers[tp.name()] = onnx_io::tensor_from_proto(
          tp, ext_, "initializer '" + tp.name() + "'", raw, raw ? defer_ : nullptr);
      if (is_deferred(t)) deferred_any_ = true;
      else if (raw && mapped_)
        mapped_->release(raw->data(), raw->size());
      if (depth == 0 && strip_weights_)
        strip(const_cast<onnx::TensorProto&>(tp), g->initializers[tp.name()], ext_.read);
    }
    for (const auto& sp : gp.sparse_initializer()) {
      const std::string name = sp.values().name();
      g->initializers[name] = densify(sp, "sparse initializer '" + name + "'");
    }
    std::set<std::string> init_names;
    for (const auto& [n, t] : g->initializers) init_names.insert(n);
    for (const auto& vi : gp.input()) {
      // Old models (IR < 4) list initializers among the inputs too; they are weights, not feeds.
      if (init_names.count(vi.name())) {
        g->value_types[vi.name()] = convert_type(vi.type());
        continue;
      }
      g->inputs.push_back({vi.name(), convert_type(vi.type())});
    }
    for (const auto& vi : gp.output()) g->outputs.push_back({vi.name(), convert_type(vi.type())});
    for (const auto& vi : gp.value_info()) g->value_types[vi.name()] = convert_type(vi.type());

    std::set<std::string> names;
    for (int i = 0; i < gp.node_size(); ++i) {
      const auto& np = gp.node(i);
      ir::Node n;
      n.op_type = np.op_type();
      PI_CHECK(!n.op_type.empty(), InvalidModel, "node ", i, " of graph '", g->name,
               "' has no op_type");
      n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
      n.name = np.name().empty() ? n.op_type + "_" + std::to_string(i) : np.name();
      if (!names.insert(n.name).second) n.name += "_" + std::to_string(i);
      auto op = opsets_.find(n.domain);
      PI_CHECK(op != opsets_.end(), InvalidModel, n.label(), " uses domain '", n.domain,
               "', which the model does not import (add it to opset_import)");
      n.opset = op->second;
      n.inputs.assign(np.input().begin(), np.input().end());
      n.outputs.assign(np.output().begin(), np.output().end());
      check_arity(n);
      for (const auto& ap : np.attribute()) n.attrs[ap.name()] = convert_attr(ap, n, depth);
      g->nodes.push_back(std::move(n));
    }
    // Outer-scope references of subgraphs become implicit inputs of the node that owns them.
    for (auto& n : g->nodes) {
      std::set<std::string> seen;
      for (const auto& [key, a] : n.attrs) {
        auto add = [&](const ir::Graph& sub) {
          for (const auto& v : sub.free_values())
            if (seen.insert(v).second) n.implicit_inputs.push_back(v);
        };
        if (a.g) add(*a.g);
        for (const auto& sg : a.graphs) add(*sg);
      }
    }
    return g;
  }

 private:
  Tensor densify(const onnx::SparseTensorProto& sp, const std::string& what) {
    Tensor values = onnx_io::tensor_from_proto(sp.values(), ext_, what);
    Tensor indices = onnx_io::tensor_from_proto(sp.indices(), ext_, what + " indices");
    Shape shape(sp.dims().begin(), sp.dims().end());
    Tensor out = Tensor::zeros(values.dtype(), shape);
    PI_CHECK(values.dtype() != DType::String, UnsupportedOp, what, ": sparse strings");
    PI_CHECK(!is_packed(values.dtype()), UnsupportedOp, what, ": sparse tensors of packed type ",
             dtype_name(values.dtype()));
    PI_CHECK(indices.dtype() == DType::Int64, InvalidModel, what, ": indices must be int64");
    const int64_t nnz = values.numel();
    const int64_t total = out.numel();
    const auto* idx = indices.data<int64_t>();
    const size_t es = dtype_size(values.dtype());
    const int rank = static_cast<int>(shape.size());
    const bool linear = indices.rank() == 1;
    PI_CHECK(linear ? indices.numel() == nnz : indices.numel() == nnz * rank, InvalidModel, what,
             ": indices do not match the number of values");
    for (int64_t k = 0; k < nnz; ++k) {
      int64_t pos = 0;
      if (linear) {
        pos = idx[k];
      } else {
        for (int d = 0; d < rank; ++d) {
          const int64_t v = idx[k * rank + d];
          PI_CHECK(v >= 0 && v < shape[d], InvalidModel, what, ": index out of range");
          pos = pos * shape[d] + v;
        }
      }
      PI_CHECK(pos >= 0 && pos < total, InvalidModel, what, ": index ", pos, " out of range");
      std::memcpy(static_cast<char*>(out.raw_data()) + pos * es,
                  static_cast<const char*>(values.raw_data()) + k * es, es);
    }
    return out;
  }

  ir::Attribute convert_attr(const onnx::AttributeProto& ap, const ir::Node& n, int depth) {
    using T = ir::Attribute::Type;
    ir::Attribute a;
    const std::string what = n.label() + " attribute '" + ap.name() + "'";
    PI_CHECK(ap.ref_attr_name().empty(), InvalidModel, what,
             " refers to a function attribute outside a function");
    switch (ap.type()) {
      case onnx::AttributeProto::FLOAT:
        a.type = T::Float;
        a.f = ap.f();
        break;
      case onnx::AttributeProto::INT:
        a.type = T::Int;
        a.i = ap.i();
        break;
      case onnx::AttributeProto::STRING:
        a.type = T::String;
        a.s = ap.s();
        break;
      case onnx::AttributeProto::TENSOR:
        a.type = T::Tensor;
        a.t = onnx_io::tensor_from_proto(ap.t(), ext_, what);
        break;
      case onnx::AttributeProto::SPARSE_TENSOR:
        a.type = T::Tensor;
        a.t = densify(ap.sparse_tensor(), what);
        break;
      case onnx::AttributeProto::GRAPH:
        a.type = T::Graph;
        a.g = convert(ap.g(), depth + 1);
        break;
      case onnx::AttributeProto::FLOATS:
        a.type = T::Floats;
        a.floats.assign(ap.floats().begin(), ap.floats().end());
        break;
      case onnx::AttributeProto::INTS:
        a.type = T::Ints;
        a.ints.assign(ap.ints().begin(), ap.ints().end());
        break;
      case onnx::AttributeProto::STRINGS:
        a.type = T::Strings;
        a.strings.assign(ap.strings().begin(), ap.strings().end());
        break;
      case onnx::AttributeProto::TENSORS:
        a.type = T::Tensors;
        for (const auto& t : ap.tensors())
          a.tensors.push_back(onnx_io::tensor_from_proto(t, ext_, what));
        break;
      case onnx::AttributeProto::GRAPHS:
        a.type = T::Graphs;
        for (const auto& g : ap.graphs()) a.graphs.push_back(convert(g, depth + 1));
        break;
      case onnx::AttributeProto::TYPE_PROTO:
        a.type = T::TypeProto;
        a.tp = convert_type(ap.tp());
        break;
      default:
        fail(ErrorCode::InvalidModel, what, " has an unknown type ", static_cast<int>(ap.type()));
    }
    return a;
  }

  // Also called for external tensors, which we have checked (and read, unless the policy says
  // not to): they become inline, so the ONNX checker never looks for their files (it would
  // resolve them against the working directory, not the model's).
  static void strip(onnx::TensorProto& tp, const Tensor& converted, bool have_data) {
    using TP = onnx::TensorProto;
    const bool integer = tp.data_type() == TP::INT64 || tp.data_type() == TP::INT32 ||
                         tp.data_type() == TP::UINT64 || tp.data_type() == TP::UINT32;
    if (tp.data_location() == TP::EXTERNAL) {
      tp.clear_external_data();
      tp.set_data_location(TP::DEFAULT);
      // Integer tensors may be shapes that inference reads: keep their values when small.
      if (integer && have_data && converted.nbytes() <= 4096)
        tp.set_raw_data(
            std::string(static_cast<const char*>(converted.raw_data()), converted.nbytes()));
      else
        std::string(8, '\0').swap(*tp.mutable_raw_data());
      return;
    }
    if (integer) return;
    const bool big =
        tp.raw_data().size() > 4096 || tp.float_data_size() > 1024 || tp.double_data_size() > 1024;
    if (!big) return;
    tp.clear_float_data();
    tp.clear_double_data();
    // One placeholder element keeps the checker's "one value field" rule satisfied (it does
    // not compare sizes with dims); swapping frees the buffer, which clearing would keep.
    std::string(8, '\0').swap(*tp.mutable_raw_data());
  }

  // A standard operator with fewer or more inputs or outputs than its schema allows is a
  // malformed model: every later stage (passes, kernels) may index its inputs and outputs.
  static void check_arity(const ir::Node& n) {
    if (!n.domain.empty()) return;
    // Opsets newer than libonnx knows may add inputs (Pad-18's axes): the kernels judge those.
    static const int known =
        onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
    if (n.opset > known) return;
    const onnx::OpSchema* schema =
        onnx_io::lazy_schemas()->GetSchema(n.op_type, n.opset, onnx::ONNX_DOMAIN);
    if (!schema) return;  // unknown here: the kernels decide
    const int ins = static_cast<int>(n.inputs.size()), outs = static_cast<int>(n.outputs.size());
    PI_CHECK(ins >= schema->min_input() && ins <= schema->max_input(), InvalidModel, n.label(),
             " has ", ins, " inputs; ", n.op_type, " at opset ", n.opset, " takes ",
             schema->min_input(), " to ", schema->max_input());
    PI_CHECK(outs >= schema->min_output() && outs <= schema->max_output(), InvalidModel, n.label(),
             " has ", outs, " outputs; ", n.op_type, " at opset ", n.opset, " gives ",
             schema->min_output(), " to ", schema->max_output());
  }

  std::map<std::string, int> opsets_;
  ExternalDataPolicy ext_;
  bool strip_weights_ = false;
  const std::vector<std::string_view>* split_raw_ = nullptr;
  const onnx_io::MappedFile* mapped_ = nullptr;
  std::shared_ptr<DeferredSource> defer_;
  bool deferred_any_ = false;
};

void sort_all(ir::Graph& g, const std::vector<std::string>& outer) {
  // Names visible to a subgraph: the outer scope plus everything this graph defines.
  std::vector<std::string> visible = outer;
  for (const auto& v : g.inputs) visible.push_back(v.name);
  for (const auto& [n, t] : g.initializers) visible.push_back(n);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) visible.push_back(o);
  for (auto& n : g.nodes)
    for (auto& [k, a] : n.attrs) {
      if (a.g) sort_all(*a.g, visible);
      for (auto& sg : a.graphs) sort_all(*sg, visible);
    }
  g.sort_topologically(outer);
}

// Rewrites graph input dims in the proto (before conversion).
void apply_input_shapes(onnx::ModelProto& mp, const ImportOptions& options) {
  if (options.input_shapes.empty() && options.dim_values.empty()) return;
  // Shapes the exporter recorded for intermediates and outputs describe the old inputs (a batch
  // of 1): inference would stop at the first conflict. It recomputes them all from the new ones.
  mp.mutable_graph()->clear_value_info();
  // Outputs keep their rank (the checker requires a shape) with every dimension left open.
  for (auto& out : *mp.mutable_graph()->mutable_output())
    if (out.type().has_tensor_type() && out.type().tensor_type().has_shape())
      for (auto& dim : *out.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        dim.clear_dim_value();
        dim.clear_dim_param();
      }
  std::set<std::string> seen;
  for (auto& in : *mp.mutable_graph()->mutable_input()) {
    if (!in.type().has_tensor_type()) continue;
    auto* tt = in.mutable_type()->mutable_tensor_type();
    if (auto it = options.input_shapes.find(in.name()); it != options.input_shapes.end()) {
      seen.insert(in.name());
      if (tt->has_shape())
        PI_CHECK(tt->shape().dim_size() == static_cast<int>(it->second.size()), InvalidArgument,
                 "input '", in.name(), "' has rank ", tt->shape().dim_size(), "; the shape ",
                 shape_str(it->second), " given for it has rank ", it->second.size());
      auto* shape = tt->mutable_shape();
      shape->clear_dim();
      for (int64_t d : it->second) {
        PI_CHECK(d >= 0, InvalidArgument, "input '", in.name(), "': shape ", shape_str(it->second),
                 " has a negative dimension");
        shape->add_dim()->set_dim_value(d);
      }
      continue;
    }
    if (!tt->has_shape()) continue;
    for (auto& dim : *tt->mutable_shape()->mutable_dim())
      if (dim.has_dim_param())
        if (auto v = options.dim_values.find(dim.dim_param()); v != options.dim_values.end())
          dim.set_dim_value(v->second);
  }
  for (const auto& [name, shape] : options.input_shapes) {
    if (seen.count(name)) continue;
    std::string names;
    for (const auto& in : mp.graph().input()) names += (names.empty() ? "" : ", ") + in.name();
    fail(ErrorCode::InvalidArgument, "the model has no input '", name, "' (its inputs: ", names,
         ")");
  }
}

Model import_proto(onnx::ModelProto& mp, const std::string& base_dir, const ImportOptions& options,
                   const std::vector<std::string_view>* split_raw = nullptr,
                   const onnx_io::MappedFile* mapped = nullptr,
                   std::shared_ptr<DeferredSource> defer = nullptr) {
  inline_local_functions(mp);
  apply_input_shapes(mp, options);
  Model m;
  m.ir_version = mp.ir_version();
  m.producer =
      mp.producer_name() + (mp.producer_version().empty() ? "" : " " + mp.producer_version());
  PI_CHECK(mp.has_graph(), InvalidModel, "the model has no graph");
  for (const auto& op : mp.opset_import()) {
    const std::string dom = op.domain() == "ai.onnx" ? "" : op.domain();
    PI_CHECK(op.version() >= 1 && op.version() < 1000, InvalidModel, "opset version ", op.version(),
             " of domain '", dom, "' is not valid");
    m.opsets[dom] = static_cast<int>(op.version());
  }
  // IR version 3 and older models may leave the default domain's opset implicit.
  if (m.opsets.empty()) m.opsets[""] = 1;
  PI_CHECK(!m.opsets.count("") || m.opsets[""] <= kMaxOpset, UnsupportedOp,
           "the model uses ONNX opset ", m.opsets[""], "; polyinfer supports opsets 1 to ",
           kMaxOpset, " (convert it with onnx.version_converter)");

  GraphImporter importer(m.opsets, ExternalDataPolicy{base_dir, options.read_external_data},
                         /*strip_weights=*/true, split_raw, mapped, defer);
  m.graph = importer.convert(mp.graph(), 0);
  if (importer.deferred_any()) m.deferred = std::move(defer);
  sort_all(*m.graph, {});
  PI_CHECK(!m.graph->outputs.empty(), InvalidModel, "the model's graph declares no outputs");
  return m;
}

}  // namespace

namespace {

// Weights left in the mapped model file (ImportOptions::defer_weights); the mapping lives as long
// as one of them still reads it.
class MappedWeights final : public DeferredSource {
 public:
  explicit MappedWeights(std::shared_ptr<const onnx_io::MappedFile> file)
      : file_(std::move(file)) {}
  void release(const void* p, size_t n) const override { file_->release(p, n); }

 private:
  std::shared_ptr<const onnx_io::MappedFile> file_;
};

// The bytes are split (model_split.h) so that protobuf parses only the graph's skeleton and each
// weight is copied once, from these bytes into its tensor; `data` must outlive the import.
// `mapped`: the mapping `data` lies in, whose pages are released as the weights are copied;
// `defer`: the weights to leave there instead (ImportOptions::defer_weights).
Model import_serialized(const void* data, size_t size, const std::string& base_dir,
                        const ImportOptions& options, const onnx_io::MappedFile* mapped = nullptr,
                        std::shared_ptr<DeferredSource> defer = nullptr) {
  PI_CHECK(size > 0, InvalidModel, "the model is empty (0 bytes)");
  PI_CHECK(size < (size_t{1} << 31), InvalidModel,
           "the model is larger than protobuf's 2 GiB limit; save its weights as external data");
  onnx_io::SplitModel split;
  const bool is_split = onnx_io::split_model(data, size, &split);
  onnx::ModelProto mp;
  PI_CHECK(is_split ? mp.ParseFromString(split.skeleton)
                    : mp.ParseFromArray(data, static_cast<int>(size)),
           InvalidModel, "the model is not a valid ONNX protobuf (truncated or not an .onnx file)");
  split.skeleton = std::string();  // parsed: its memory is not needed for the rest of the import
  return import_proto(mp, base_dir, options, is_split ? &split.raw_data : nullptr,
                      is_split ? mapped : nullptr, is_split ? std::move(defer) : nullptr);
}

}  // namespace

Model import_onnx_bytes(const void* data, size_t size, const std::string& base_dir,
                        const ImportOptions& options) {
  return import_serialized(data, size, base_dir, options);
}

Model import_onnx_file(const std::string& path, const ImportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  PI_CHECK(fs::is_regular_file(path, ec), Io, "model file '", path,
           "' does not exist or is not a file");
  const auto size = fs::file_size(path, ec);
  PI_CHECK(!ec, Io, "cannot read model file '", path, "': ", ec.message());
  try {
    PI_CHECK(size > 0, InvalidModel, "the model is empty (0 bytes)");
    PI_CHECK(size < (uintmax_t{1} << 31), InvalidModel,
             "the model is larger than protobuf's 2 GiB limit; save its weights as external data");
    struct File {
      int fd;
      ~File() {
        if (fd >= 0) ::close(fd);
      }
    } f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    PI_CHECK(f.fd >= 0, Io, "cannot open model file '", path, "': check its permissions");
    const fs::path dir = fs::path(path).parent_path();
    const std::string base_dir = dir.empty() ? "." : dir.string();
    // Mapped, the file's bytes are the page cache's: no copy of the whole model is made.
    auto mapped = std::make_shared<onnx_io::MappedFile>(f.fd, static_cast<size_t>(size));
    if (mapped->data())
      return import_serialized(
          mapped->data(), static_cast<size_t>(size), base_dir, options, mapped.get(),
          options.defer_weights ? std::make_shared<MappedWeights>(mapped) : nullptr);
    // A file that cannot be mapped is parsed as a stream.
    onnx::ModelProto mp;
    google::protobuf::io::FileInputStream stream(f.fd);
    PI_CHECK(mp.ParseFromZeroCopyStream(&stream), InvalidModel,
             "the model is not a valid ONNX protobuf (truncated or not an .onnx file)");
    return import_proto(mp, base_dir, options);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

}  // namespace polyinfer
