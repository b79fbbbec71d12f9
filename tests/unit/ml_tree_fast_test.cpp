// Tree ensembles (src/providers/cpu/ml/tree_ensemble.cpp) against a plain node-by-node walk
// written here, on random trees made to reach each of the kernel's walks: perfect trees and
// irregular shallow ones (laid out perfect: <= and > nodes, or < and >= ones, NaN going either
// way), trees too deep or too sparse for that layout, trees mixing every comparison, trees that
// are one leaf; each at batches of 1 to 300 rows, on one and two threads, with float and double
// inputs and every aggregate.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "polyinfer/session.h"

namespace polyinfer {
namespace {

// One tree node as TreeEnsembleRegressor (ai.onnx.ml opset 3) lists it.
struct TNode {
  int64_t tree = 0, id = 0, feature = 0, t = 0, f = 0, missing = 0;
  std::string mode = "LEAF";
  int op = -1;  // mode's index in kModes; -1 a leaf
  float value = 0;
  std::vector<std::pair<int64_t, float>> weights;  // (target, weight) of a leaf
};

struct Forest {
  std::vector<TNode> nodes;  // node id k of tree t is nodes[first[t] + k]
  std::vector<size_t> first;
  int64_t features = 4, targets = 2;
  // A leaf has 1 to max_weights weights, for distinct targets unless `repeat` (then a target may
  // get two weights of one leaf).
  int max_weights = 2;
  bool repeat = false;
};

const std::string kModes[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",
                              "BRANCH_GT",  "BRANCH_EQ", "BRANCH_NEQ"};

// The thresholds and the inputs come from one small grid, so that equality happens.
const float kGrid[] = {-1.f, -0.5f, 0.f, 0.5f, 1.f};

// A random tree down to `depth` levels; a node above the last level is a leaf with probability
// `leaf_p`; its comparison is one of `modes`.
void grow(Forest& f, std::mt19937& gen, int depth, double leaf_p,
          const std::vector<std::string>& modes) {
  const int64_t tree = static_cast<int64_t>(f.first.size());
  const size_t base = f.nodes.size();
  f.first.push_back(base);
  std::uniform_real_distribution<double> u(0, 1);
  // Node ids in the order made (depth first), each node's successors filled in afterwards.
  auto make = [&](auto& self, int level) -> int64_t {
    const int64_t id = static_cast<int64_t>(f.nodes.size() - base);
    f.nodes.push_back({});
    f.nodes.back().tree = tree;
    f.nodes.back().id = id;
    if (level == depth || (level > 0 && u(gen) < leaf_p)) {
      const int64_t n = std::min<int64_t>(1 + gen() % f.max_weights, f.targets);
      const int64_t start = static_cast<int64_t>(gen() % f.targets);
      for (int64_t k = 0; k < n; ++k)
        f.nodes[base + id].weights.push_back(
            {f.repeat ? static_cast<int64_t>(gen() % f.targets) : (start + k) % f.targets,
             static_cast<float>(gen() % 17) - 8});
      return id;
    }
    TNode& n = f.nodes.back();
    n.feature = static_cast<int64_t>(gen() % f.features);
    n.mode = modes[gen() % modes.size()];
    n.op = static_cast<int>(std::find(std::begin(kModes), std::end(kModes), n.mode) - kModes);
    n.value = kGrid[gen() % 5];
    n.missing = gen() % 2;
    const int64_t t = self(self, level + 1), fl = self(self, level + 1);
    f.nodes[base + id].t = t;
    f.nodes[base + id].f = fl;
    return id;
  };
  make(make, 0);
}

bool goes_true(const TNode& n, float v) {
  const bool c = n.op == 0   ? v <= n.value
                 : n.op == 1 ? v < n.value
                 : n.op == 2 ? v >= n.value
                 : n.op == 3 ? v > n.value
                 : n.op == 4 ? v == n.value
                             : v != n.value;
  return c || (n.missing && std::isnan(v));
}

// The plain walk: [rows, targets] aggregated by `agg`; a target no leaf weighs is 0.
std::vector<double> naive(const Forest& f, const std::vector<float>& x, int64_t rows,
                          const std::string& agg) {
  std::vector<double> out(static_cast<size_t>(rows * f.targets), 0.0);
  std::vector<bool> has(out.size(), false);
  for (int64_t r = 0; r < rows; ++r)
    for (size_t t = 0; t < f.first.size(); ++t) {
      const TNode* n = &f.nodes[f.first[t]];
      while (n->op >= 0) {
        const float v = x[static_cast<size_t>(r * f.features + n->feature)];
        n = &f.nodes[f.first[t] + static_cast<size_t>(goes_true(*n, v) ? n->t : n->f)];
      }
      for (const auto& [target, w] : n->weights) {
        const size_t k = static_cast<size_t>(r * f.targets + target);
        if (agg == "MIN") out[k] = has[k] ? std::min(out[k], double{w}) : w;
        else if (agg == "MAX")
          out[k] = has[k] ? std::max(out[k], double{w}) : w;
        else
          out[k] += w;
        has[k] = true;
      }
    }
  if (agg == "AVERAGE")
    for (double& v : out) v /= static_cast<double>(f.first.size());
  return out;
}

std::string model_bytes(const Forest& f, const std::string& agg, DType input) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* ml = m.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  auto* g = m.mutable_graph();
  g->set_name("trees");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(input));
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(f.features);
  g->add_output()->set_name("y");
  auto* n = g->add_node();
  n->set_op_type("TreeEnsembleRegressor");
  n->set_domain("ai.onnx.ml");
  n->add_input("x");
  n->add_output("y");
  auto ints = [&](const char* k) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INTS);
    return a;
  };
  auto* tree = ints("nodes_treeids");
  auto* id = ints("nodes_nodeids");
  auto* feature = ints("nodes_featureids");
  auto* t = ints("nodes_truenodeids");
  auto* fl = ints("nodes_falsenodeids");
  auto* missing = ints("nodes_missing_value_tracks_true");
  auto* w_tree = ints("target_treeids");
  auto* w_node = ints("target_nodeids");
  auto* w_id = ints("target_ids");
  auto* modes = n->add_attribute();
  modes->set_name("nodes_modes");
  modes->set_type(onnx::AttributeProto::STRINGS);
  auto* values = n->add_attribute();
  values->set_name("nodes_values");
  values->set_type(onnx::AttributeProto::FLOATS);
  auto* w = n->add_attribute();
  w->set_name("target_weights");
  w->set_type(onnx::AttributeProto::FLOATS);
  for (const TNode& k : f.nodes) {
    tree->add_ints(k.tree);
    id->add_ints(k.id);
    feature->add_ints(k.feature);
    t->add_ints(k.t);
    fl->add_ints(k.f);
    missing->add_ints(k.missing);
    modes->add_strings(k.mode);
    values->add_floats(k.value);
    for (const auto& [target, weight] : k.weights) {
      w_tree->add_ints(k.tree);
      w_node->add_ints(k.id);
      w_id->add_ints(target);
      w->add_floats(weight);
    }
  }
  auto* nt = n->add_attribute();
  nt->set_name("n_targets");
  nt->set_type(onnx::AttributeProto::INT);
  nt->set_i(f.targets);
  auto* a = n->add_attribute();
  a->set_name("aggregate_function");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(agg);
  return m.SerializeAsString();
}

// Runs `f` on random rows (a NaN in about one value in six) at several batch sizes, threads,
// input types and aggregates, against the plain walk.
void check(const Forest& f, uint32_t seed,
           const std::vector<std::string>& aggs = {"SUM", "AVERAGE", "MIN", "MAX"},
           const std::vector<DType>& types = {DType::Float32, DType::Float64}) {
  std::mt19937 gen(seed);
  const int64_t rows = 300;  // more than one block of 256 rows
  std::vector<float> x(static_cast<size_t>(rows * f.features));
  for (float& v : x)
    v = gen() % 6 == 0 ? std::numeric_limits<float>::quiet_NaN() : kGrid[gen() % 5];
  for (const std::string& agg : aggs) {
    const std::vector<double> want = naive(f, x, rows, agg);
    for (DType type : types) {
      const std::string bytes = model_bytes(f, agg, type);
      for (int threads : {1, 2}) {
        SessionOptions o;
        o.threads = threads;
        Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
        for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{13}, rows}) {
          const std::vector<float> part(x.begin(), x.begin() + n * f.features);
          Tensor in = type == DType::Float32
                          ? Tensor::from_vector<float>({n, f.features}, part)
                          : Tensor::from_vector<double>(
                                {n, f.features}, std::vector<double>(part.begin(), part.end()));
          const std::vector<float> got = s.run({{"x", in}})[0].tensor().to_vector<float>();
          ASSERT_EQ(got.size(), static_cast<size_t>(n * f.targets));
          for (size_t k = 0; k < got.size(); ++k)
            ASSERT_NEAR(got[k], want[k], 1e-6 * std::max(1.0, std::abs(want[k])))
                << agg << " threads " << threads << " rows " << n << " row "
                << k / static_cast<size_t>(f.targets);
        }
      }
    }
  }
}

const std::vector<std::string> kLeqGt = {"BRANCH_LEQ", "BRANCH_GT"};
const std::vector<std::string> kLtGte = {"BRANCH_LT", "BRANCH_GTE"};

TEST(MlTreeFast, PerfectTreesOfEveryDepth) {
  for (const auto& modes : {std::vector<std::string>{"BRANCH_LEQ"}, kLeqGt, kLtGte}) {
    std::mt19937 gen(1);
    Forest f;
    for (int depth = 1; depth <= 6; ++depth) grow(f, gen, depth, 0.0, modes);
    check(f, 2);
  }
}

TEST(MlTreeFast, LeafWeightsForAnyNumberOfTargets) {
  // One target or several, a weight per leaf or several, a target weighed twice by one leaf.
  for (int64_t targets : {1, 2, 3, 4, 5, 17})
    for (int max_weights : {1, 3})
      for (bool repeat : {false, true}) {
        std::mt19937 gen(static_cast<uint32_t>(targets * 10 + max_weights));
        Forest f;
        f.targets = targets;
        f.max_weights = max_weights;
        f.repeat = repeat;
        for (int t = 0; t < 4; ++t) grow(f, gen, 1 + t, 0.3, kLeqGt);
        check(f, 13);
      }
}

TEST(MlTreeFast, IrregularShallowTrees) {
  for (const auto& modes : {std::vector<std::string>{"BRANCH_LEQ"}, kLeqGt,
                            std::vector<std::string>{"BRANCH_LT"}, kLtGte}) {
    std::mt19937 gen(3);
    Forest f;
    for (int t = 0; t < 12; ++t) grow(f, gen, 1 + t % 6, 0.3, modes);
    check(f, 4);
  }
}

TEST(MlTreeFast, DeepAndSparseTreesBesideShallowOnes) {
  // Depth 14 is past the perfect layout, depth 9 with many leaves too sparse for it; they sit
  // between shallow trees so that both walks take turns.
  std::mt19937 gen(5);
  Forest f;
  for (int t = 0; t < 9; ++t) grow(f, gen, t % 3 == 0 ? 14 : t % 3 == 1 ? 3 : 9, 0.35, kLeqGt);
  check(f, 6);
}

TEST(MlTreeFast, EveryComparisonInOneTree) {
  const std::vector<std::string> all = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",
                                        "BRANCH_GT",  "BRANCH_EQ", "BRANCH_NEQ"};
  std::mt19937 gen(7);
  Forest f;
  for (int t = 0; t < 10; ++t) grow(f, gen, 2 + t % 5, 0.2, all);
  check(f, 8);
  // <= beside <: not one comparison for the perfect layout either.
  Forest g;
  for (int t = 0; t < 10; ++t) grow(g, gen, 2 + t % 5, 0.2, {"BRANCH_LEQ", "BRANCH_LT"});
  check(g, 9);
}

TEST(MlTreeFast, ManyTreesSplitAmongThreads) {
  // Enough trees that one row's walks are shared by two threads, their sums merged.
  std::mt19937 gen(17);
  Forest f;
  for (int t = 0; t < 2000; ++t) grow(f, gen, 5, 0.1, kLeqGt);
  check(f, 18, {"SUM", "MAX"}, {DType::Float32});
}

TEST(MlTreeFast, TreesThatAreOneLeaf) {
  std::mt19937 gen(11);
  Forest f;
  grow(f, gen, 0, 0.0, kLeqGt);
  grow(f, gen, 3, 0.0, kLeqGt);
  grow(f, gen, 0, 0.0, kLeqGt);
  check(f, 12);
}

}  // namespace
}  // namespace polyinfer
