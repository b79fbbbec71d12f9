// Shared helpers of the optimizer tests (opt_*_test.cpp): build small models, run one pass or
// the whole optimizer, and compare outputs with the unoptimized model on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "model_builder.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "opt/graph_util.h"
#include "opt/optimizer.h"
#include "opt/passes.h"
#include "polyinfer/session.h"

namespace polyinfer::test {

inline void int64_initializer(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims,
                              std::vector<int64_t> values) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(7);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int64_data(v);
}

inline size_t numel(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (auto d : dims) n *= static_cast<size_t>(d);
  return n;
}
// A float initializer of random values in [lo, hi].
inline void random_initializer(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims,
                               uint32_t seed, float lo = -1, float hi = 1) {
  b.initializer(name, dims, random_values(numel(dims), seed, lo, hi));
}

inline Model import_bytes(const std::string& bytes) {
  Model m = import_onnx_bytes(bytes.data(), bytes.size(), "");
  infer::infer_types(m);
  return m;
}
// The model as ONNX bytes again (opset imports include what the passes added).
inline std::string export_bytes(Model m) {
  for (const auto& [d, v] : m.graph->opsets) m.opsets[d] = v;
  return export_onnx_bytes(m);
}

// Makes the graph of `body` graph attribute `attr` of node `n`.
inline void attach(onnx::NodeProto* n, const std::string& attr, ModelBuilder& body) {
  auto* a = n->add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body.proto().graph();
  a->mutable_g()->set_name(attr);
}

// A body of an optimized graph: graph attribute `attr` of the node of type `op`.
inline const ir::Graph& body_of(const ir::Graph& g, const std::string& op,
                                const std::string& attr) {
  for (const auto& n : g.nodes)
    if (n.op_type == op)
      if (const ir::Attribute* a = n.attr(attr); a && a->g) return *a->g;
  ADD_FAILURE() << "no " << op << " with a graph attribute " << attr;
  static const ir::Graph kEmpty;
  return kEmpty;
}

inline int count_op(const ir::Graph& g, const std::string& op, const std::string& domain = "") {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op && node.domain == domain;
  return n;
}

// Random float inputs for every input of the model (declared shapes; "N" becomes 2).
inline std::map<std::string, Value> random_inputs(const std::string& bytes, uint32_t seed = 7) {
  SessionOptions o;
  o.providers = {"cpu-ref"};
  o.optimization_level = 0;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  std::map<std::string, Value> in;
  for (const auto& spec : s.inputs()) {
    Shape shape = spec.shape;
    for (auto& d : shape) d = d < 0 ? 2 : d;
    in[spec.name] = Tensor::from_vector<float>(shape, random_values(numel(shape), seed++, -2, 2));
  }
  return in;
}

inline std::vector<Value> run_model(const std::string& bytes, int level,
                                    const std::map<std::string, Value>& in,
                                    const std::string& provider = "cpu-ref") {
  SessionOptions o;
  o.providers = {provider};
  o.threads = 1;
  o.optimization_level = level;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  return s.run(in);
}

// Largest |a - b| over all outputs, relative to max(1, |b|max); fails on shape differences.
inline double max_rel_diff(const std::vector<Value>& a, const std::vector<Value>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const Tensor& x = a[i].tensor();
    const Tensor& y = b[i].tensor();
    EXPECT_EQ(x.shape(), y.shape());
    if (x.shape() != y.shape()) return 1e9;
    const auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
    double scale = 1;
    for (float v : yv) scale = std::max(scale, double(std::fabs(v)));
    for (size_t k = 0; k < xv.size(); ++k)
      worst = std::max(worst, std::fabs(double(xv[k]) - double(yv[k])) / scale);
  }
  return worst;
}

// Runs `pass` alone on the model; checks the graph stays ordered and that the rewritten model
// (exported and loaded again, level 0) computes what the original does (both on cpu-ref).
// Returns the rewritten graph for the caller's structural checks.
inline Model run_pass_and_compare(const std::string& bytes, opt::Pass& pass, int expect_rewrites,
                                  double tol) {
  Model m = import_bytes(bytes);
  const int n = pass.run(*m.graph);
  EXPECT_EQ(n, expect_rewrites) << pass.name();
  EXPECT_TRUE(opt::is_topological(*m.graph)) << pass.name();
  const auto in = random_inputs(bytes);
  const auto want = run_model(bytes, 0, in);
  const auto got = run_model(export_bytes(m), 0, in);
  EXPECT_LE(max_rel_diff(got, want), tol) << pass.name();
  return m;
}

}  // namespace polyinfer::test
