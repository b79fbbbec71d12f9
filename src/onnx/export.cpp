#include "onnx/export.h"

#include <fstream>

#include "onnx/tensor_proto.h"

namespace polyinfer {

namespace {

void write_type(const ir::TypeInfo& t, onnx::TypeProto* tp) {
  switch (t.kind) {
    case ir::TypeInfo::Kind::Tensor: {
      auto* tt = tp->mutable_tensor_type();
      tt->set_elem_type(static_cast<int>(t.elem));
      if (!t.has_shape) break;
      auto* shape = tt->mutable_shape();
      for (size_t i = 0; i < t.dims.size(); ++i) {
        auto* d = shape->add_dim();
        if (i < t.dim_params.size() && !t.dim_params[i].empty()) d->set_dim_param(t.dim_params[i]);
        else if (t.dims[i] >= 0)
          d->set_dim_value(t.dims[i]);
      }
      break;
    }
    case ir::TypeInfo::Kind::Sequence:
      if (t.inner) write_type(*t.inner, tp->mutable_sequence_type()->mutable_elem_type());
      break;
    case ir::TypeInfo::Kind::Optional:
      if (t.inner) write_type(*t.inner, tp->mutable_optional_type()->mutable_elem_type());
      break;
    case ir::TypeInfo::Kind::Map: {
      auto* mt = tp->mutable_map_type();
      mt->set_key_type(static_cast<int>(t.key));
      if (t.inner) write_type(*t.inner, mt->mutable_value_type());
      break;
    }
    default: break;
  }
}

void write_value_info(const std::string& name, const ir::TypeInfo& t, onnx::ValueInfoProto* v) {
  v->set_name(name);
  write_type(t, v->mutable_type());
}

void write_graph(const ir::Graph& g, onnx::GraphProto* gp);

void write_attr(const std::string& name, const ir::Attribute& a, onnx::AttributeProto* ap) {
  using T = ir::Attribute::Type;
  ap->set_name(name);
  switch (a.type) {
    case T::Float:
      ap->set_type(onnx::AttributeProto::FLOAT);
      ap->set_f(a.f);
      break;
    case T::Int:
      ap->set_type(onnx::AttributeProto::INT);
      ap->set_i(a.i);
      break;
    case T::String:
      ap->set_type(onnx::AttributeProto::STRING);
      ap->set_s(a.s);
      break;
    case T::Tensor:
      ap->set_type(onnx::AttributeProto::TENSOR);
      onnx_io::tensor_to_proto(a.t, ap->mutable_t());
      break;
    case T::Graph:
      ap->set_type(onnx::AttributeProto::GRAPH);
      write_graph(*a.g, ap->mutable_g());
      break;
    case T::Floats:
      ap->set_type(onnx::AttributeProto::FLOATS);
      for (float f : a.floats) ap->add_floats(f);
      break;
    case T::Ints:
      ap->set_type(onnx::AttributeProto::INTS);
      for (int64_t i : a.ints) ap->add_ints(i);
      break;
    case T::Strings:
      ap->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : a.strings) ap->add_strings(s);
      break;
    case T::Tensors:
      ap->set_type(onnx::AttributeProto::TENSORS);
      for (const auto& t : a.tensors) onnx_io::tensor_to_proto(t, ap->add_tensors());
      break;
    case T::Graphs:
      ap->set_type(onnx::AttributeProto::GRAPHS);
      for (const auto& sg : a.graphs) write_graph(*sg, ap->add_graphs());
      break;
    case T::TypeProto:
      ap->set_type(onnx::AttributeProto::TYPE_PROTO);
      write_type(a.tp, ap->mutable_tp());
      break;
    case T::Undefined: break;
  }
}

void write_graph(const ir::Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.name);
  for (const auto& v : g.inputs) write_value_info(v.name, v.type, gp->add_input());
  for (const auto& v : g.outputs) write_value_info(v.name, v.type, gp->add_output());
  for (const auto& [name, t] : g.initializers) {
    auto* tp = gp->add_initializer();
    onnx_io::tensor_to_proto(t, tp);
    tp->set_name(name);
  }
  for (const auto& [name, t] : g.value_types)
    if (!g.initializers.count(name)) write_value_info(name, t, gp->add_value_info());
  for (const auto& n : g.nodes) {
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    for (const auto& i : n.inputs) np->add_input(i);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& [k, a] : n.attrs) write_attr(k, a, np->add_attribute());
  }
}

}  // namespace

std::string export_onnx_bytes(const Model& model) {
  onnx::ModelProto mp;
  mp.set_ir_version(std::max<int64_t>(model.ir_version, 7));
  mp.set_producer_name("polyinfer");
  mp.set_producer_version("0.1.0");
  for (const auto& [domain, version] : model.opsets) {
    auto* op = mp.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  write_graph(*model.graph, mp.mutable_graph());
  std::string out;
  PI_CHECK(mp.SerializeToString(&out), Internal, "could not serialize the model");
  return out;
}

void export_onnx_file(const Model& model, const std::string& path) {
  const std::string bytes = export_onnx_bytes(model);
  std::ofstream out(path, std::ios::binary);
  PI_CHECK(out.good(), Io, "cannot write '", path, "': check the folder exists and is writable");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  PI_CHECK(out.good(), Io, "writing '", path, "' failed (disk full?)");
}

}  // namespace polyinfer
