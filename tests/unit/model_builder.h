// Builds small ONNX models in memory for unit tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace polyinfer::test {

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }
  // A float32 input/output with a fixed shape (-1 → a symbolic dimension "N").
  ModelBuilder& input(const std::string& name, std::vector<int64_t> shape, int elem = 1) {
    set_value(model_.mutable_graph()->add_input(), name, shape, elem);
    return *this;
  }
  ModelBuilder& output(const std::string& name, std::vector<int64_t> shape, int elem = 1) {
    set_value(model_.mutable_graph()->add_output(), name, shape, elem);
    return *this;
  }
  ModelBuilder& node(const std::string& op, std::vector<std::string> in,
                     std::vector<std::string> out, const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, std::vector<int64_t> dims,
                            std::vector<float> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_float_data(v);
    return *this;
  }
  // An integer initializer of ONNX element type `elem` (2 uint8, 3 int8, 6 int32: the types ONNX
  // stores in int32_data).
  ModelBuilder& int_initializer(const std::string& name, std::vector<int64_t> dims, int elem,
                                std::vector<int32_t> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int32_data(v);
    return *this;
  }
  ModelBuilder& int64_initializer(const std::string& name, std::vector<int64_t> dims,
                                  std::vector<int64_t> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(7);  // INT64
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  // A float32 initializer kept in raw_data, as exporters write weights.
  ModelBuilder& raw_initializer(const std::string& name, std::vector<int64_t> dims,
                                const std::vector<float>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    for (auto d : dims) t->add_dims(d);
    t->set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return *this;
  }
  onnx::ModelProto& proto() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  static void set_value(onnx::ValueInfoProto* v, const std::string& name,
                        const std::vector<int64_t>& shape, int elem) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* sh = tt->mutable_shape();
    for (auto d : shape) {
      auto* dim = sh->add_dim();
      if (d < 0) dim->set_dim_param("N");
      else
        dim->set_dim_value(d);
    }
  }
  onnx::ModelProto model_;
};

// The node added last, and attributes of the kinds the builder does not set itself.
inline onnx::NodeProto* last_node(ModelBuilder& b) {
  auto* g = b.proto().mutable_graph();
  return g->mutable_node(g->node_size() - 1);
}
inline void set_int(onnx::NodeProto* n, const std::string& k, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void set_float(onnx::NodeProto* n, const std::string& k, float v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void set_string(onnx::NodeProto* n, const std::string& k, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void set_ints(onnx::NodeProto* n, const std::string& k, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

// A fused activation of the ai.polyinfer operators: `attr` ("activation") names it and
// attr + "_params" holds its parameters; none when `act` is empty.
inline void set_activation(onnx::NodeProto* n, const std::string& attr, const std::string& act,
                           const std::vector<float>& params) {
  if (act.empty()) return;
  auto* a = n->add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(act);
  auto* p = n->add_attribute();
  p->set_name(attr + "_params");
  p->set_type(onnx::AttributeProto::FLOATS);
  for (float v : params) p->add_floats(v);
}

// A float uniform in [lo, hi): the value std::uniform_real_distribution<float>(lo, hi) gives with
// this engine (libstdc++'s generate_canonical<float, 24> takes one 32-bit draw), without its
// per-draw logl, which took a third of some tests' time where they are compiled at -O0 (the
// sanitizer build).
inline float uniform_float(std::mt19937& gen, float lo, float hi) {
  float u = static_cast<float>(gen()) / 4294967296.0f;
  if (u >= 1.0f) u = std::nextafter(1.0f, 0.0f);
  return u * (hi - lo) + lo;
}

// `n` floats uniform in [lo, hi) from a generator seeded with `seed` (reproducible): weights and
// inputs for the models above.
inline std::vector<float> random_values(int64_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 gen(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = uniform_float(gen, lo, hi);
  return v;
}

}  // namespace polyinfer::test
