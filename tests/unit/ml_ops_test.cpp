// The ai.onnx.ml operators on the CPU (src/providers/cpu/ml/) at their edges: missing values in
// trees, every comparison mode, set membership, the aggregates and base values, the classifier's
// two-class columns, double thresholds, malformed trees; LabelEncoder's defaults and key types;
// Normalizer's zero rows; the post transforms; and the inference rules' output types. Expected
// values are worked out by hand from the trees and formulas written in each test (the ONNX
// node tests and tests/e2e/sklearn_test.cpp cover the operators against outside oracles).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "infer/infer.h"
#include "onnx/import.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// One ai.onnx.ml node with run-time inputs in0, in1, ... and outputs out0, out1, ...
class MlNode {
 public:
  MlNode(const std::string& op, int ml_opset) {
    model_.set_ir_version(8);
    auto* d = model_.add_opset_import();
    d->set_domain("");
    d->set_version(17);
    auto* ml = model_.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(ml_opset);
    model_.mutable_graph()->set_name("ml");
    node_ = model_.mutable_graph()->add_node();
    node_->set_op_type(op);
    node_->set_domain("ai.onnx.ml");
    node_->set_name("n");
  }
  MlNode& input(Tensor t) {
    const std::string name = "in" + std::to_string(inputs_.size());
    node_->add_input(name);
    auto* v = model_.mutable_graph()->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(t.dtype()));
    for (int64_t d : t.shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    inputs_.push_back(std::move(t));
    return *this;
  }
  MlNode& ints(const std::string& k, const std::vector<int64_t>& v) {
    auto* a = attr(k, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  MlNode& floats(const std::string& k, const std::vector<float>& v) {
    auto* a = attr(k, onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
    return *this;
  }
  MlNode& strings(const std::string& k, const std::vector<std::string>& v) {
    auto* a = attr(k, onnx::AttributeProto::STRINGS);
    for (const auto& x : v) a->add_strings(x);
    return *this;
  }
  MlNode& i(const std::string& k, int64_t v) {
    attr(k, onnx::AttributeProto::INT)->set_i(v);
    return *this;
  }
  MlNode& f(const std::string& k, float v) {
    attr(k, onnx::AttributeProto::FLOAT)->set_f(v);
    return *this;
  }
  MlNode& s(const std::string& k, const std::string& v) {
    attr(k, onnx::AttributeProto::STRING)->set_s(v);
    return *this;
  }
  // A tensor attribute: 1-D values of `type` (ONNX element type numbers, DType's).
  MlNode& tensor(const std::string& k, DType type, const std::vector<double>& v) {
    auto* t = attr(k, onnx::AttributeProto::TENSOR)->mutable_t();
    t->set_data_type(static_cast<int>(type));
    t->add_dims(static_cast<int64_t>(v.size()));
    for (double x : v) {
      if (type == DType::Float32) t->add_float_data(static_cast<float>(x));
      else if (type == DType::Float64)
        t->add_double_data(x);
      else if (type == DType::Int64)
        t->add_int64_data(static_cast<int64_t>(x));
      else
        t->add_int32_data(static_cast<int32_t>(x));
    }
    return *this;
  }
  MlNode& string_tensor(const std::string& k, const std::vector<std::string>& v) {
    auto* t = attr(k, onnx::AttributeProto::TENSOR)->mutable_t();
    t->set_data_type(static_cast<int>(DType::String));
    t->add_dims(static_cast<int64_t>(v.size()));
    for (const auto& x : v) t->add_string_data(x);
    return *this;
  }
  MlNode& outputs(int n) {
    for (int o = 0; o < n; ++o) {
      node_->add_output("out" + std::to_string(o));
      model_.mutable_graph()->add_output()->set_name("out" + std::to_string(o));
    }
    return *this;
  }
  std::string bytes() const { return model_.SerializeAsString(); }
  Session load(int threads = 1) const {
    const std::string b = bytes();
    SessionOptions o;
    o.threads = threads;
    o.optimization_level = 0;
    return Session::load_bytes(b.data(), b.size(), o);
  }
  std::vector<Value> run(int threads = 1) const {
    Session s = load(threads);
    std::map<std::string, Value> feeds;
    for (size_t k = 0; k < inputs_.size(); ++k) feeds["in" + std::to_string(k)] = inputs_[k];
    return s.run(feeds);
  }
  onnx::ModelProto& proto() { return model_; }

 private:
  onnx::AttributeProto* attr(const std::string& k, onnx::AttributeProto::AttributeType t) {
    auto* a = node_->add_attribute();
    a->set_name(k);
    a->set_type(t);
    return a;
  }
  onnx::ModelProto model_;
  onnx::NodeProto* node_;
  std::vector<Tensor> inputs_;
};

std::vector<float> floats_of(const Value& v) { return v.tensor().to_vector<float>(); }

Tensor column(const std::vector<float>& v) {
  return Tensor::from_vector<float>({static_cast<int64_t>(v.size()), 1}, v);
}

// One regression tree on feature 0: node 0 `mode` `threshold` -> true: leaf 1 (weight 1),
// false: leaf 2 (weight 2); node 0's NaN goes the true way when `missing_true`.
MlNode one_split(const std::string& mode, float threshold, int64_t missing_true,
                 const std::vector<float>& x) {
  MlNode n("TreeEnsembleRegressor", 3);
  n.input(column(x))
      .ints("nodes_treeids", {0, 0, 0})
      .ints("nodes_nodeids", {0, 1, 2})
      .ints("nodes_featureids", {0, 0, 0})
      .strings("nodes_modes", {mode, "LEAF", "LEAF"})
      .floats("nodes_values", {threshold, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 0})
      .ints("nodes_missing_value_tracks_true", {missing_true, 0, 0})
      .ints("target_treeids", {0, 0})
      .ints("target_nodeids", {1, 2})
      .ints("target_ids", {0, 0})
      .floats("target_weights", {1, 2})
      .i("n_targets", 1)
      .outputs(1);
  return n;
}

TEST(MlTreeEnsemble, MissingValuesFollowTheTrackedBranch) {
  // 0.2 <= 0.5 is true, 0.9 is not; NaN fails the comparison and goes where the node says.
  EXPECT_EQ(floats_of(one_split("BRANCH_LEQ", 0.5f, 1, {0.2f, 0.9f, kNaN}).run()[0]),
            (std::vector<float>{1, 2, 1}));
  EXPECT_EQ(floats_of(one_split("BRANCH_LEQ", 0.5f, 0, {0.2f, 0.9f, kNaN}).run()[0]),
            (std::vector<float>{1, 2, 2}));
  // The same for the other comparisons (the all-LT fast path and the mixed one).
  EXPECT_EQ(floats_of(one_split("BRANCH_LT", 0.5f, 1, {0.5f, 0.4f, kNaN}).run()[0]),
            (std::vector<float>{2, 1, 1}));
  EXPECT_EQ(floats_of(one_split("BRANCH_GT", 0.5f, 1, {0.5f, 0.6f, kNaN}).run()[0]),
            (std::vector<float>{2, 1, 1}));
  EXPECT_EQ(floats_of(one_split("BRANCH_GTE", 0.5f, 0, {0.5f, 0.4f, kNaN}).run()[0]),
            (std::vector<float>{1, 2, 2}));
}

TEST(MlTreeEnsemble, EqualAndNotEqualBranches) {
  // EQ: only 3 is true. NEQ: everything but 3, NaN included (NaN != 3 is true) even without
  // missing-value tracking.
  EXPECT_EQ(floats_of(one_split("BRANCH_EQ", 3.f, 0, {3.f, 2.f, kNaN, -3.f}).run()[0]),
            (std::vector<float>{1, 2, 2, 2}));
  EXPECT_EQ(floats_of(one_split("BRANCH_NEQ", 3.f, 0, {3.f, 2.f, kNaN, -3.f}).run()[0]),
            (std::vector<float>{2, 1, 1, 1}));
  EXPECT_EQ(floats_of(one_split("BRANCH_EQ", 3.f, 1, {kNaN}).run()[0]), (std::vector<float>{1}));
}

TEST(MlTreeEnsemble, MixedModesInOneTree) {
  // node0: x0 == 1 ? node1 : node2;  node1: x1 != 0 ? leaf 10 : leaf 20;
  // node2: x1 > 5 ? leaf 30 : leaf 40.
  MlNode n("TreeEnsembleRegressor", 1);
  n.input(Tensor::from_vector<float>({5, 2}, {1, 7, 1, 0, 2, 6, 2, 5, kNaN, 9}))
      .ints("nodes_treeids", {0, 0, 0, 0, 0, 0, 0})
      .ints("nodes_nodeids", {0, 1, 2, 3, 4, 5, 6})
      .ints("nodes_featureids", {0, 1, 1, 0, 0, 0, 0})
      .strings("nodes_modes",
               {"BRANCH_EQ", "BRANCH_NEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF", "LEAF"})
      .floats("nodes_values", {1, 0, 5, 0, 0, 0, 0})
      .ints("nodes_truenodeids", {1, 3, 5, 0, 0, 0, 0})
      .ints("nodes_falsenodeids", {2, 4, 6, 0, 0, 0, 0})
      .ints("target_treeids", {0, 0, 0, 0})
      .ints("target_nodeids", {3, 4, 5, 6})
      .ints("target_ids", {0, 0, 0, 0})
      .floats("target_weights", {10, 20, 30, 40})
      .outputs(1);
  EXPECT_EQ(floats_of(n.run()[0]), (std::vector<float>{10, 20, 30, 40, 30}));
}

TEST(MlTreeEnsemble, SetMembershipAndItsMissingValues) {
  // TreeEnsemble (opset 5): node0 x in {0, 2.5, 7} ? leaf0 : node1; node1 x in {-1} (NaN goes
  // true) ? leaf1 : leaf2. A set may hold 0 (which must not end the list early).
  MlNode n("TreeEnsemble", 5);
  n.input(column({0.f, 2.5f, 7.f, -1.f, 3.f, kNaN}))
      .ints("nodes_featureids", {0, 0})
      .tensor("nodes_splits", DType::Float32, {0, 0})
      .tensor("nodes_modes", DType::UInt8, {6, 6})
      .ints("nodes_truenodeids", {0, 1})
      .ints("nodes_trueleafs", {1, 1})
      .ints("nodes_falsenodeids", {1, 2})
      .ints("nodes_falseleafs", {0, 1})
      .ints("nodes_missing_value_tracks_true", {0, 1})
      .tensor("membership_values", DType::Float32, {7, 0, 2.5, NAN, -1, NAN})
      .ints("tree_roots", {0})
      .ints("leaf_targetids", {0, 0, 0})
      .tensor("leaf_weights", DType::Float32, {1, 2, 3})
      .i("n_targets", 1)
      .outputs(1);
  EXPECT_EQ(floats_of(n.run()[0]), (std::vector<float>{1, 1, 1, 2, 3, 2}));
}

// Two trees of one split each on feature 0 (<= 0), giving targets 0 and 1:
//   tree 0: true -> (t0: 1), false -> (t0: 5, t1: 2);  tree 1: true -> (t0: 3), false -> none.
MlNode two_trees(const std::string& aggregate, const std::vector<float>& base, float x) {
  MlNode n("TreeEnsembleRegressor", 3);
  n.input(column({x}))
      .ints("nodes_treeids", {0, 0, 0, 1, 1, 1})
      .ints("nodes_nodeids", {0, 1, 2, 0, 1, 2})
      .ints("nodes_featureids", {0, 0, 0, 0, 0, 0})
      .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"})
      .floats("nodes_values", {0, 0, 0, 0, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 0, 1, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 0, 2, 0, 0})
      .ints("target_treeids", {0, 0, 0, 1})
      .ints("target_nodeids", {1, 2, 2, 1})
      .ints("target_ids", {0, 0, 1, 0})
      .floats("target_weights", {1, 5, 2, 3})
      .i("n_targets", 2)
      .s("aggregate_function", aggregate)
      .outputs(1);
  if (!base.empty()) n.floats("base_values", base);
  return n;
}

TEST(MlTreeEnsemble, AggregatesAndBaseValues) {
  // x = -1: leaves (t0: 1) and (t0: 3). x = 1: (t0: 5, t1: 2) and nothing.
  EXPECT_EQ(floats_of(two_trees("SUM", {}, -1).run()[0]), (std::vector<float>{4, 0}));
  EXPECT_EQ(floats_of(two_trees("AVERAGE", {}, -1).run()[0]), (std::vector<float>{2, 0}));
  EXPECT_EQ(floats_of(two_trees("MIN", {}, -1).run()[0]), (std::vector<float>{1, 0}));
  EXPECT_EQ(floats_of(two_trees("MAX", {}, -1).run()[0]), (std::vector<float>{3, 0}));
  // A target no leaf reaches is 0 before the base value, whatever the aggregate.
  EXPECT_EQ(floats_of(two_trees("MIN", {10, 20}, 1).run()[0]), (std::vector<float>{15, 22}));
  EXPECT_EQ(floats_of(two_trees("AVERAGE", {10, 20}, 1).run()[0]), (std::vector<float>{12.5f, 21}));
}

TEST(MlTreeEnsemble, ManyTreesGiveTheSameSumsOnAnyThreadsAndBatch) {
  // 1000 random depth-4 trees over 8 features, checked against a walk written here: a large
  // batch (rows split among threads), two rows (trees split among threads) and one row.
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1, 1);
  MlNode n("TreeEnsembleRegressor", 3);
  std::vector<int64_t> tree, id, feat, tn, fn, wt, wn, wi;
  std::vector<std::string> modes;
  std::vector<float> val, w;
  const int trees = 1000, interior = 15;  // complete depth-4 trees: 15 splits, 16 leaves
  for (int t = 0; t < trees; ++t)
    for (int k = 0; k < 31; ++k) {
      tree.push_back(t);
      id.push_back(k);
      const bool leaf = k >= interior;
      feat.push_back(leaf ? 0 : gen() % 8);
      modes.push_back(leaf ? "LEAF" : "BRANCH_LEQ");
      val.push_back(leaf ? 0 : u(gen));
      tn.push_back(leaf ? 0 : 2 * k + 1);
      fn.push_back(leaf ? 0 : 2 * k + 2);
      if (leaf) {
        wt.push_back(t);
        wn.push_back(k);
        wi.push_back(0);
        w.push_back(u(gen));
      }
    }
  const int64_t rows = 257;
  std::vector<float> x(rows * 8);
  for (float& v : x) v = u(gen);
  n.input(Tensor::from_vector<float>({rows, 8}, x))
      .ints("nodes_treeids", tree)
      .ints("nodes_nodeids", id)
      .ints("nodes_featureids", feat)
      .strings("nodes_modes", modes)
      .floats("nodes_values", val)
      .ints("nodes_truenodeids", tn)
      .ints("nodes_falsenodeids", fn)
      .ints("target_treeids", wt)
      .ints("target_nodeids", wn)
      .ints("target_ids", wi)
      .floats("target_weights", w)
      .i("n_targets", 1)
      .outputs(1);
  // Any number of rows.
  n.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("N");
  std::vector<double> want(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int t = 0; t < trees; ++t) {
      int k = 0;
      while (k < interior) {
        const size_t i = static_cast<size_t>(t * 31 + k);
        k = x[r * 8 + feat[i]] <= val[i] ? 2 * k + 1 : 2 * k + 2;
      }
      want[r] += w[static_cast<size_t>(t * 16 + k - interior)];
    }
  for (int threads : {1, 2}) {
    const auto got = floats_of(n.run(threads)[0]);
    for (int64_t r = 0; r < rows; ++r) EXPECT_NEAR(got[r], want[r], 1e-5) << r;
    Session s = n.load(threads);
    for (int64_t r : {0, 100, 255}) {
      for (int64_t k : {1, 2}) {
        const std::vector<float> part(x.begin() + r * 8, x.begin() + (r + k) * 8);
        const auto got_k = floats_of(s.run({{"in0", Tensor::from_vector<float>({k, 8}, part)}})[0]);
        for (int64_t j = 0; j < k; ++j) EXPECT_NEAR(got_k[j], want[r + j], 1e-5) << r + j;
      }
    }
  }
}

TEST(MlTreeEnsemble, DoubleThresholdsCompareInDouble) {
  // nodes_values_as_tensor 0.1 (double): 0.1000000001 is above it, though both round to the
  // same float. A double input with float thresholds compares against the float 0.1f.
  const std::vector<double> x = {0.1, 0.1000000001};
  auto tree = [&](bool as_tensor) {
    MlNode n("TreeEnsembleRegressor", 3);
    n.input(Tensor::from_vector<double>({2, 1}, x))
        .ints("nodes_treeids", {0, 0, 0})
        .ints("nodes_nodeids", {0, 1, 2})
        .ints("nodes_featureids", {0, 0, 0})
        .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"})
        .ints("nodes_truenodeids", {1, 0, 0})
        .ints("nodes_falsenodeids", {2, 0, 0})
        .ints("target_treeids", {0, 0})
        .ints("target_nodeids", {1, 2})
        .ints("target_ids", {0, 0})
        .floats("target_weights", {1, 2})
        .outputs(1);
    if (as_tensor) n.tensor("nodes_values_as_tensor", DType::Float64, {0.1, 0, 0});
    else
      n.floats("nodes_values", {0.1f, 0, 0});
    return floats_of(n.run()[0]);
  };
  EXPECT_EQ(tree(true), (std::vector<float>{1, 2}));
  // 0.1f = 0.100000001490116...: both inputs are below it.
  EXPECT_EQ(tree(false), (std::vector<float>{1, 1}));
}

TEST(MlTreeEnsemble, RefusesCyclesAndMissingNodes) {
  auto load = [](const std::vector<int64_t>& truenodes) {
    MlNode n("TreeEnsembleRegressor", 3);
    n.input(column({0}))
        .ints("nodes_treeids", {0, 0, 0})
        .ints("nodes_nodeids", {0, 1, 2})
        .ints("nodes_featureids", {0, 0, 0})
        .strings("nodes_modes", {"BRANCH_LEQ", "BRANCH_LEQ", "LEAF"})
        .floats("nodes_values", {0, 0, 0})
        .ints("nodes_truenodeids", truenodes)
        .ints("nodes_falsenodeids", {2, 2, 0})
        .ints("target_treeids", {0})
        .ints("target_nodeids", {2})
        .ints("target_ids", {0})
        .floats("target_weights", {1})
        .outputs(1);
    n.load();
  };
  EXPECT_NO_THROW(load({1, 2, 0}));
  try {
    load({1, 0, 0});  // node 1's true branch is node 0, its parent
    ADD_FAILURE() << "a cycle was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("own descendant"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load({1, 7, 0}), Error);  // no node 7
}

TEST(MlTreeEnsemble, TooFewFeaturesIsAShapeError) {
  MlNode n = one_split("BRANCH_LEQ", 0, 0, {1});
  n.proto().mutable_graph()->mutable_node(0)->mutable_attribute(2)->set_ints(0, 3);  // feature 3
  try {
    n.run();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ShapeMismatch) << e.what();
  }
}

// A binary classifier with one split on feature 0 (<= 0): leaves give class `id` the weights
// `w_true` and `w_false`.
MlNode binary_classifier(int64_t id, float w_true, float w_false, const std::string& post,
                         const std::vector<float>& x) {
  MlNode n("TreeEnsembleClassifier", 1);
  n.input(column(x))
      .ints("nodes_treeids", {0, 0, 0})
      .ints("nodes_nodeids", {0, 1, 2})
      .ints("nodes_featureids", {0, 0, 0})
      .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"})
      .floats("nodes_values", {0, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 0})
      .ints("class_treeids", {0, 0})
      .ints("class_nodeids", {1, 2})
      .ints("class_ids", {id, id})
      .floats("class_weights", {w_true, w_false})
      .ints("classlabels_int64s", {7, 9})
      .s("post_transform", post)
      .outputs(2);
  return n;
}

TEST(MlTreeEnsembleClassifier, TwoClassesFromOneScore) {
  // Votes (weights >= 0): [1 - s, s], label 9 when s > 0.5.
  auto r = binary_classifier(0, 0.25f, 0.75f, "NONE", {-1, 1}).run();
  EXPECT_EQ(r[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{7, 9}));
  EXPECT_EQ(floats_of(r[1]), (std::vector<float>{0.75f, 0.25f, 0.25f, 0.75f}));
  // Margins (mixed signs) with LOGISTIC: [sigmoid(-s), sigmoid(s)], label by the sign.
  r = binary_classifier(1, -2.f, 0.5f, "LOGISTIC", {-1, 1}).run();
  EXPECT_EQ(r[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{7, 9}));
  const auto z = floats_of(r[1]);
  const float s2 = 1 / (1 + std::exp(-2.f)), s05 = 1 / (1 + std::exp(-0.5f));
  EXPECT_NEAR(z[0], s2, 1e-6);
  EXPECT_NEAR(z[1], 1 - s2, 1e-6);
  EXPECT_NEAR(z[2], 1 - s05, 1e-6);
  EXPECT_NEAR(z[3], s05, 1e-6);
  // Margins without a transform: [-s, s].
  r = binary_classifier(0, -2.f, 0.5f, "NONE", {-1}).run();
  EXPECT_EQ(floats_of(r[1]), (std::vector<float>{2, -2}));
  EXPECT_EQ(r[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{7}));
}

TEST(MlTreeEnsembleClassifier, SeveralClassesWithStringLabels) {
  // One split; the true leaf votes a: 0.2, b: 0.5, c: 0.3; the false leaf a: 0.6, c: 0.4.
  MlNode n("TreeEnsembleClassifier", 3);
  n.input(column({-1, 1}))
      .ints("nodes_treeids", {0, 0, 0})
      .ints("nodes_nodeids", {0, 1, 2})
      .ints("nodes_featureids", {0, 0, 0})
      .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"})
      .tensor("nodes_values_as_tensor", DType::Float64, {0, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 0})
      .ints("class_treeids", {0, 0, 0, 0, 0})
      .ints("class_nodeids", {1, 1, 1, 2, 2})
      .ints("class_ids", {0, 1, 2, 0, 2})
      .tensor("class_weights_as_tensor", DType::Float64, {0.2, 0.5, 0.3, 0.6, 0.4})
      .strings("classlabels_strings", {"a", "b", "c"})
      .outputs(2);
  const auto r = n.run();
  EXPECT_EQ(r[0].tensor().to_vector<std::string>(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(floats_of(r[1]), (std::vector<float>{0.2f, 0.5f, 0.3f, 0.6f, 0.f, 0.4f}));
}

TEST(MlLabelEncoder, DefaultsAndKeyTypes) {
  const Tensor words = Tensor::from_vector<std::string>({4}, {"b", "zz", "a", "b"});
  // Opset 2: strings to int64, default_int64 -1 when not given.
  auto r = MlNode("LabelEncoder", 2)
               .input(words)
               .strings("keys_strings", {"a", "b"})
               .ints("values_int64s", {10, 20})
               .outputs(1)
               .run();
  EXPECT_EQ(r[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{20, -1, 10, 20}));
  // ... and to floats, default_float -0.0 (its sign kept).
  r = MlNode("LabelEncoder", 2)
          .input(words)
          .strings("keys_strings", {"a", "b"})
          .floats("values_floats", {0.5f, 1.5f})
          .outputs(1)
          .run();
  const auto fv = floats_of(r[0]);
  EXPECT_EQ(fv[1], 0.f);
  EXPECT_TRUE(std::signbit(fv[1]));
  EXPECT_EQ(fv[0], 1.5f);
  // int64 to strings with default_string "_Unused"; float keys with a NaN key that every NaN
  // matches.
  r = MlNode("LabelEncoder", 2)
          .input(Tensor::from_vector<int64_t>({3}, {3, 4, 5}))
          .ints("keys_int64s", {3, 5})
          .strings("values_strings", {"three", "five"})
          .outputs(1)
          .run();
  EXPECT_EQ(r[0].tensor().to_vector<std::string>(),
            (std::vector<std::string>{"three", "_Unused", "five"}));
  r = MlNode("LabelEncoder", 4)
          .input(Tensor::from_vector<float>({4}, {kNaN, 1.f, -0.f, 2.f}))
          .floats("keys_floats", {NAN, 0.f, 1.f})
          .ints("values_int64s", {100, 200, 300})
          .i("default_int64", 7)
          .outputs(1)
          .run();
  EXPECT_EQ(r[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{100, 300, 200, 7}));
  // Opset 4 tensors: int16 values, default_tensor; a repeated key takes the last value.
  r = MlNode("LabelEncoder", 4)
          .input(words)
          .string_tensor("keys_tensor", {"a", "b", "a"})
          .tensor("values_tensor", DType::Int16, {1, 2, 3})
          .tensor("default_tensor", DType::Int16, {-5})
          .outputs(1)
          .run();
  EXPECT_EQ(r[0].tensor().to_vector<int16_t>(), (std::vector<int16_t>{2, -5, 3, 2}));
  // Without default_tensor, an integral values_tensor defaults to default_int64 (-1).
  r = MlNode("LabelEncoder", 4)
          .input(Tensor::from_vector<int64_t>({2}, {1, 9}))
          .tensor("keys_tensor", DType::Int64, {1})
          .tensor("values_tensor", DType::Int32, {4})
          .outputs(1)
          .run();
  EXPECT_EQ(r[0].tensor().to_vector<int32_t>(), (std::vector<int32_t>{4, -1}));
  // Opset 1: classes_strings in both directions.
  r = MlNode("LabelEncoder", 1)
          .input(words)
          .strings("classes_strings", {"a", "b"})
          .i("default_int64", 99)
          .outputs(1)
          .run();
  EXPECT_EQ(r[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{1, 99, 0, 1}));
  r = MlNode("LabelEncoder", 1)
          .input(Tensor::from_vector<int64_t>({3}, {1, 2, 0}))
          .strings("classes_strings", {"a", "b"})
          .outputs(1)
          .run();
  EXPECT_EQ(r[0].tensor().to_vector<std::string>(),
            (std::vector<std::string>{"b", "_Unused", "a"}));
  // An input of another type than the keys is an error.
  EXPECT_THROW(MlNode("LabelEncoder", 2)
                   .input(Tensor::from_vector<int64_t>({1}, {1}))
                   .strings("keys_strings", {"a"})
                   .ints("values_int64s", {1})
                   .outputs(1)
                   .run(),
               Error);
}

TEST(MlNormalizer, ZeroRowsAreCopiedInEveryNorm) {
  const Tensor x = Tensor::from_vector<float>({3, 3}, {1, -4, 2, 0, 0, 0, -3, 0, 4});
  auto norm = [&](const char* n) {
    return floats_of(MlNode("Normalizer", 1).input(x).s("norm", n).outputs(1).run()[0]);
  };
  const auto mx = norm("MAX"), l1 = norm("L1"), l2 = norm("L2");
  // MAX divides by the largest absolute value (4 and 4), as scikit-learn does.
  const std::vector<float> want_max = {0.25f, -1, 0.5f, 0, 0, 0, -0.75f, 0, 1};
  const std::vector<float> want_l1 = {1 / 7.f, -4 / 7.f, 2 / 7.f, 0, 0, 0, -3 / 7.f, 0, 4 / 7.f};
  const float n0 = std::sqrt(21.f);
  const std::vector<float> want_l2 = {1 / n0, -4 / n0, 2 / n0, 0, 0, 0, -0.6f, 0, 0.8f};
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_NEAR(mx[i], want_max[i], 1e-6) << i;
    EXPECT_NEAR(l1[i], want_l1[i], 1e-6) << i;
    EXPECT_NEAR(l2[i], want_l2[i], 1e-6) << i;
  }
}

TEST(MlPreprocess, ScalerImputerBinarizer) {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {1, kNaN, kNaN, 4});
  auto y = MlNode("Imputer", 1)
               .input(x)
               .floats("imputed_value_floats", {10, 20})
               .f("replaced_value_float", kNaN)
               .outputs(1)
               .run();
  EXPECT_EQ(floats_of(y[0]), (std::vector<float>{1, 20, 10, 4}));
  y = MlNode("Imputer", 1)
          .input(Tensor::from_vector<int64_t>({3}, {0, 5, 0}))
          .ints("imputed_value_int64s", {9})
          .i("replaced_value_int64", 0)
          .outputs(1)
          .run();
  EXPECT_EQ(y[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{9, 5, 9}));
  y = MlNode("Scaler", 1)
          .input(Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4}))
          .floats("offset", {1, 2})
          .floats("scale", {2})
          .outputs(1)
          .run();
  EXPECT_EQ(floats_of(y[0]), (std::vector<float>{0, 0, 4, 4}));
  y = MlNode("Binarizer", 1)
          .input(Tensor::from_vector<double>({4}, {0.5, 0.50001, NAN, -1}))
          .f("threshold", 0.5f)
          .outputs(1)
          .run();
  EXPECT_EQ(y[0].tensor().to_vector<double>(), (std::vector<double>{0, 1, 0, 0}));
}

TEST(MlEncoders, OneHotCategoryMapperFeatures) {
  auto y = MlNode("OneHotEncoder", 1)
               .input(Tensor::from_vector<double>({3}, {2.7, 5, 1}))
               .ints("cats_int64s", {1, 2, 3})
               .outputs(1)
               .run();
  EXPECT_EQ(y[0].tensor().shape(), (Shape{3, 3}));
  EXPECT_EQ(floats_of(y[0]), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_THROW(MlNode("OneHotEncoder", 1)
                   .input(Tensor::from_vector<std::string>({2}, {"x", "q"}))
                   .strings("cats_strings", {"x"})
                   .i("zeros", 0)
                   .outputs(1)
                   .run(),
               Error);
  y = MlNode("CategoryMapper", 1)
          .input(Tensor::from_vector<std::string>({3}, {"b", "a", "?"}))
          .strings("cats_strings", {"a", "b"})
          .ints("cats_int64s", {5, 6})
          .outputs(1)
          .run();
  EXPECT_EQ(y[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{6, 5, -1}));
  y = MlNode("FeatureVectorizer", 1)
          .input(Tensor::from_vector<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
          .input(Tensor::from_vector<float>({2, 1}, {7, 8}))
          .ints("inputdimensions", {2, 2})
          .outputs(1)
          .run();
  EXPECT_EQ(y[0].tensor().shape(), (Shape{2, 4}));
  EXPECT_EQ(floats_of(y[0]), (std::vector<float>{1, 2, 7, 0, 4, 5, 8, 0}));
  EXPECT_THROW(MlNode("ArrayFeatureExtractor", 1)
                   .input(Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}))
                   .input(Tensor::from_vector<int64_t>({1}, {2}))
                   .outputs(1)
                   .run(),
               Error);
}

TEST(MlLinear, TwoClassColumnsAndTransforms) {
  // One row of coefficients for two labels: s = 2 x0 - 1; scores [-s, s], then LOGISTIC.
  auto y = MlNode("LinearClassifier", 1)
               .input(Tensor::from_vector<float>({2, 1}, {1, 0}))
               .floats("coefficients", {2})
               .floats("intercepts", {-1})
               .ints("classlabels_ints", {3, 4})
               .s("post_transform", "LOGISTIC")
               .outputs(2)
               .run();
  EXPECT_EQ(y[0].tensor().to_vector<int64_t>(), (std::vector<int64_t>{4, 3}));
  const auto z = floats_of(y[1]);
  const float p = 1 / (1 + std::exp(-1.f));
  EXPECT_NEAR(z[0], 1 - p, 1e-6);
  EXPECT_NEAR(z[1], p, 1e-6);
  EXPECT_NEAR(z[2], p, 1e-6);
  EXPECT_NEAR(z[3], 1 - p, 1e-6);
  // SOFTMAX_ZERO leaves zero scores at zero: scores [0, 1, 2] -> [0, e^-1, 1] / (1 + e^-1).
  y = MlNode("LinearRegressor", 1)
          .input(Tensor::from_vector<float>({1, 1}, {1}))
          .floats("coefficients", {0, 1, 2})
          .i("targets", 3)
          .s("post_transform", "SOFTMAX_ZERO")
          .outputs(1)
          .run();
  const float e = std::exp(-1.f);
  const auto sz = floats_of(y[0]);
  EXPECT_EQ(sz[0], 0.f);
  EXPECT_NEAR(sz[1], e / (1 + e), 1e-6);
  EXPECT_NEAR(sz[2], 1 / (1 + e), 1e-6);
  // PROBIT: the normal quantile, to the approximation's ~1e-3.
  y = MlNode("LinearRegressor", 1)
          .input(Tensor::from_vector<float>({1, 1}, {1}))
          .floats("coefficients", {0.5f, 0.975f, 0.1f})
          .i("targets", 3)
          .s("post_transform", "PROBIT")
          .outputs(1)
          .run();
  const auto pr = floats_of(y[0]);
  EXPECT_NEAR(pr[0], 0, 1e-6);
  EXPECT_NEAR(pr[1], 1.959964, 2e-3);
  EXPECT_NEAR(pr[2], -1.281552, 2e-3);
}

TEST(MlSvm, RegressorAndOneClass) {
  // Linear kernel with two support vectors: s = 0.5 <x, (1, 0)> - 2 <x, (0, 1)> + 1.
  auto svr = [](int64_t one_class) {
    return floats_of(MlNode("SVMRegressor", 1)
                         .input(Tensor::from_vector<float>({2, 2}, {4, 1, 0, 1}))
                         .s("kernel_type", "LINEAR")
                         .floats("support_vectors", {1, 0, 0, 1})
                         .floats("coefficients", {0.5f, -2})
                         .floats("rho", {1})
                         .i("n_supports", 2)
                         .i("one_class", one_class)
                         .outputs(1)
                         .run()[0]);
  };
  EXPECT_EQ(svr(0), (std::vector<float>{1, -1}));
  EXPECT_EQ(svr(1), (std::vector<float>{1, -1}));
  // RBF: exp(-gamma |x - v|^2) with gamma 0.5, one vector at the origin, coefficient 2.
  const auto rbf = floats_of(MlNode("SVMRegressor", 1)
                                 .input(Tensor::from_vector<float>({1, 2}, {1, 1}))
                                 .s("kernel_type", "RBF")
                                 .floats("kernel_params", {0.5f, 0, 0})
                                 .floats("support_vectors", {0, 0})
                                 .floats("coefficients", {2})
                                 .floats("rho", {0})
                                 .i("n_supports", 1)
                                 .outputs(1)
                                 .run()[0]);
  EXPECT_NEAR(rbf[0], 2 * std::exp(-1.f), 1e-6);
}

// The inference rules give what the kernels produce.
TEST(MlInfer, OutputTypes) {
  MlNode n = binary_classifier(0, 0.25f, 0.75f, "NONE", {-1, 1, 2});
  const std::string b = n.bytes();
  Model m = import_onnx_bytes(b.data(), b.size(), "");
  infer::infer_types(*m.graph);
  EXPECT_EQ(m.graph->type_of("out0")->str(), "int64[3]");
  EXPECT_EQ(m.graph->type_of("out1")->str(), "float32[3,2]");
  MlNode t = two_trees("SUM", {}, 1);
  const std::string b2 = t.bytes();
  Model m2 = import_onnx_bytes(b2.data(), b2.size(), "");
  infer::infer_types(*m2.graph);
  EXPECT_EQ(m2.graph->type_of("out0")->str(), "float32[1,2]");
}

}  // namespace
}  // namespace polyinfer
