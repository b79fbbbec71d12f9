#include "onnx/inline_functions.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "polyinfer/status.h"

namespace polyinfer {

namespace {

using Key = std::pair<std::string, std::string>;  // (domain, name)

std::string dom(const std::string& d) { return d == "ai.onnx" ? "" : d; }

// Bodies deeper than this are taken to be recursion (ONNX forbids it; a fuzzed model may not).
constexpr int kMaxDepth = 64;

class Inliner {
 public:
  explicit Inliner(const onnx::ModelProto& m) {
    for (const auto& f : m.functions()) functions_[{dom(f.domain()), f.name()}] = &f;
  }

  void graph(onnx::GraphProto* g, int depth) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
    for (auto& n : *g->mutable_node()) node(std::move(n), &out, depth);
    g->mutable_node()->Swap(&out);
  }

 private:
  // Appends `n` to `out`, expanded when it calls a local function; subgraphs are inlined too.
  void node(onnx::NodeProto n, google::protobuf::RepeatedPtrField<onnx::NodeProto>* out,
            int depth) {
    PI_CHECK(depth < kMaxDepth, InvalidModel, "local function calls nest deeper than ", kMaxDepth,
             " levels (a function that calls itself?) at node '", n.name(), "'");
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) graph(a.mutable_g(), depth + 1);
      for (auto& sub : *a.mutable_graphs()) graph(&sub, depth + 1);
    }
    auto it = functions_.find({dom(n.domain()), n.op_type()});
    if (it == functions_.end()) {
      *out->Add() = std::move(n);
      return;
    }
    const onnx::FunctionProto& f = *it->second;
    const std::string call = std::to_string(calls_++);
    const std::string prefix = (n.name().empty() ? f.name() : n.name()) + "/";
    // Formal names → actual ones: inputs and outputs of the call; the body's own values get
    // a name no other call can produce.
    std::map<std::string, std::string> rename;
    for (int i = 0; i < f.input_size(); ++i)
      rename[f.input(i)] = i < n.input_size() ? n.input(i) : "";
    for (int i = 0; i < f.output_size(); ++i)
      rename[f.output(i)] = i < n.output_size() && !n.output(i).empty()
                                ? n.output(i)
                                : f.name() + "__" + call + "__" + f.output(i);
    std::map<std::string, const onnx::AttributeProto*> attrs;
    for (const auto& a : n.attribute()) attrs[a.name()] = &a;
    for (const auto& b : f.node())
      for (const auto& o : b.output())
        if (!o.empty() && !rename.count(o)) rename[o] = f.name() + "__" + call + "__" + o;
    int index = 0;
    for (const auto& b : f.node()) {
      onnx::NodeProto copy = b;
      copy.set_name(prefix +
                    (b.name().empty() ? b.op_type() + "_" + std::to_string(index) : b.name()));
      ++index;
      for (auto& v : *copy.mutable_input()) {
        if (v.empty()) continue;
        auto r = rename.find(v);
        PI_CHECK(r != rename.end(), InvalidModel, "local function '", f.name(), "' reads '", v,
                 "', which it neither receives nor produces");
        v = r->second;
      }
      for (auto& v : *copy.mutable_output())
        if (!v.empty()) v = rename.at(v);
      bind(copy, attrs, rename);
      node(std::move(copy), out, depth + 1);
    }
  }

  // Attribute references resolved against the call (an unset reference leaves the attribute
  // out: the op's default applies), and the body's names renamed inside its subgraphs too.
  void bind(onnx::NodeProto& n, const std::map<std::string, const onnx::AttributeProto*>& attrs,
            const std::map<std::string, std::string>& rename) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
    for (auto& a : *n.mutable_attribute()) {
      if (!a.ref_attr_name().empty()) {
        auto it = attrs.find(a.ref_attr_name());
        if (it == attrs.end()) continue;
        const std::string name = a.name();
        a = *it->second;
        a.set_name(name);
      }
      if (a.has_g()) bind_graph(a.mutable_g(), attrs, rename);
      for (auto& sub : *a.mutable_graphs()) bind_graph(&sub, attrs, rename);
      *kept.Add() = std::move(a);
    }
    n.mutable_attribute()->Swap(&kept);
  }

  void bind_graph(onnx::GraphProto* g,
                  const std::map<std::string, const onnx::AttributeProto*>& attrs,
                  const std::map<std::string, std::string>& rename) {
    for (auto& n : *g->mutable_node()) {
      for (auto& v : *n.mutable_input())
        if (auto r = rename.find(v); r != rename.end()) v = r->second;
      bind(n, attrs, rename);
    }
  }

  std::map<Key, const onnx::FunctionProto*> functions_;
  int calls_ = 0;
};

}  // namespace

void inline_local_functions(onnx::ModelProto& m) {
  if (m.functions_size() == 0) return;
  std::map<std::string, int64_t> model_opsets;
  for (const auto& op : m.opset_import()) model_opsets[dom(op.domain())] = op.version();
  for (const auto& f : m.functions()) {
    PI_CHECK(f.GetReflection()->GetUnknownFields(f).empty(), UnsupportedOp, "local function '",
             f.name(),
             "' has fields this build's ONNX library (1.12) cannot read (attribute "
             "defaults or overloads, IR version 9+): re-export the model with inlined functions "
             "(onnx.inliner) or an older exporter");
    for (const auto& op : f.opset_import()) {
      auto it = model_opsets.find(dom(op.domain()));
      if (it == model_opsets.end()) {
        auto* add = m.add_opset_import();
        add->set_domain(op.domain());
        add->set_version(op.version());
        model_opsets[dom(op.domain())] = op.version();
        continue;
      }
      PI_CHECK(it->second == op.version(), UnsupportedOp, "local function '", f.name(),
               "' uses opset ", op.version(), " of domain '", dom(op.domain()),
               "' but the model "
               "imports version ",
               it->second, ": convert both to one version");
    }
  }
  Inliner(m).graph(m.mutable_graph(), 0);
  m.clear_functions();
}

}  // namespace polyinfer
