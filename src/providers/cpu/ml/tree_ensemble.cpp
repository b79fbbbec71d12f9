// Tree ensembles: TreeEnsembleClassifier and TreeEnsembleRegressor (ai.onnx.ml opsets 1 and 3;
// opset 3 adds the *_as_tensor double attributes) and TreeEnsemble (opset 5: leaves apart from
// the nodes, integer modes, set membership).
//
// At kernel creation every tree is flattened into one array of nodes (threshold, feature,
// comparison, the two successors; a successor below zero is a leaf), laid out depth first so a
// walk mostly moves forward, with float thresholds when the model's are float and the input is
// not double. Leaves hold their (target, weight) pairs, one weight inline when no leaf has more.
// A shallow tree whose nodes all compare the same way (<= or <, > and >= being those with the
// successors swapped) is also laid out as a perfect binary tree, breadth first: a walk is then
// `depth` steps of i = 2i + 1 + (comparison), with no test for a leaf (a leaf above the last
// level fills the slots below it) and a NaN's direction folded into the comparison; under SUM
// and AVERAGE its leaf slots hold their weights for every target in a row. Other trees are
// walked node by node. A run takes a block of rows through one tree after another (the tree
// stays in cache), several walks at a time (sixteen rows down a perfect tree; eight rows down
// another, or one row down eight of them: independent loads overlap), splits the rows among
// threads when there are many and the trees when there are few rows and many trees, and sums in
// double.
//
// A model's trees are checked when the kernel is created: every successor exists, no walk can
// loop (a cycle is refused), every target or class is in range; at run time the input must
// have every feature the trees read.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "providers/cpu/ml/ml_common.h"

namespace polyinfer::ml {
namespace {

enum Mode : uint8_t { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };
enum class Aggregate { Average = 0, Sum = 1, Min = 2, Max = 3 };

// The trees as an operator's attributes give them, in one form for both attribute layouts.
struct TreeSource {
  // Interior nodes.
  std::vector<int64_t> feature;
  std::vector<uint8_t> mode;
  std::vector<double> value;
  std::vector<uint8_t> missing_true;
  std::vector<int64_t> child_false, child_true;  // >= 0: an interior node; < 0: ~leaf
  // BRANCH_MEMBER nodes: their set is members[member_first[i], + member_count[i]).
  std::vector<int64_t> member_first, member_count;
  std::vector<double> members;
  std::vector<int64_t> roots;  // >= 0: an interior node; < 0: ~leaf (a tree that is one leaf)
  int64_t n_leaves = 0;
  // Weights of the leaves, in any order.
  std::vector<int64_t> w_leaf, w_target;
  std::vector<double> w_value;
  int64_t n_targets = 1;
  bool double_thresholds = false;
};

template <class C> struct FlatNode {
  C value;
  int32_t feature;
  uint8_t mode;
  uint8_t missing_true;
  int32_t next[2];  // [false, true]: >= 0 a node of the same array, < 0 ~leaf
};

// A node of a perfect tree: its successors are 2i + 1 (comparison false) and 2i + 2 (true).
template <class C> struct PerfectNode {
  C value;
  int32_t feature;  // with kNanUp: a NaN feature goes to 2i + 2
};
constexpr int32_t kNanUp = std::numeric_limits<int32_t>::min();

template <class C> struct FlatTrees {
  std::vector<FlatNode<C>> nodes;
  // The perfect trees' nodes, one tree after another.
  std::vector<PerfectNode<C>> perfect;
  // Per node, where a BRANCH_MEMBER node's sorted set lies in `members` (empty without any).
  std::vector<std::pair<int32_t, int32_t>> member_range;
  std::vector<C> members;
};

// How the nodes compare, when one comparison is all of them: the walk then has no switch.
enum class Kind { AllLeq, AllLt, Mixed };

// One step of a walk: the successor of node i for the row x.
template <class C, Kind K, bool Missing>
inline int32_t step(const FlatTrees<C>& t, int32_t i, const C* x) {
  const FlatNode<C>& n = t.nodes[static_cast<size_t>(i)];
  const C v = x[n.feature];
  bool c;
  if constexpr (K == Kind::AllLeq) {
    c = v <= n.value;
  } else if constexpr (K == Kind::AllLt) {
    c = v < n.value;
  } else {
    switch (n.mode) {
      case kLeq: c = v <= n.value; break;
      case kLt: c = v < n.value; break;
      case kGte: c = v >= n.value; break;
      case kGt: c = v > n.value; break;
      case kEq: c = v == n.value; break;
      case kNeq: c = v != n.value; break;
      default: {
        const auto [b, e] = t.member_range[static_cast<size_t>(i)];
        // (NaN compares false with everything, which binary_search would take for a match.)
        c = !std::isnan(v) && std::binary_search(t.members.data() + b, t.members.data() + e, v);
      }
    }
  }
  // A NaN feature fails every comparison but BRANCH_NEQ: it goes the way the node says.
  if constexpr (Missing) c = c || (n.missing_true && std::isnan(v));
  return n.next[c];
}

// One step down a perfect tree (comparison <, or <=): the next node's index.
template <class C, bool Lt, bool Missing>
inline uint32_t perfect_step(const PerfectNode<C>* nodes, uint32_t i, const C* x) {
  const PerfectNode<C>& n = nodes[i];
  if constexpr (Missing) {
    const C v = x[n.feature & ~kNanUp];
    const uint32_t up = (Lt ? v < n.value : v <= n.value) |
                        ((static_cast<uint32_t>(n.feature) >> 31) & std::isnan(v));
    return 2 * i + 1 + up;
  } else {
    const C v = x[n.feature];
    return 2 * i + 1 + (Lt ? v < n.value : v <= n.value);
  }
}

template <class C, Kind K, bool Missing>
inline int32_t find_leaf(const FlatTrees<C>& t, int32_t i, const C* x) {
  while (i >= 0) i = step<C, K, Missing>(t, i, x);
  return ~i;
}

class Ensemble {
 public:
  Aggregate agg = Aggregate::Sum;

  // Flattens `s`; float nodes unless the thresholds are double or the input is known to be.
  void build(const TreeSource& s, const KernelInfo& info);

  int64_t n_targets() const { return n_targets_; }
  int64_t n_trees() const { return static_cast<int64_t>(roots_.size()); }

  // scores and has ([r.n, n_targets], zeroed by the caller) receive each row's aggregated leaf
  // weights and whether any leaf gave a target a weight (always set under SUM and AVERAGE, where
  // a target without weights sums to 0).
  void evaluate(const Tensor& x, Rows r, double* scores, uint8_t* has, int threads,
                const ir::Node& node) const;

 private:
  void build_perfect(const TreeSource& s);
  template <class C> void build_nodes(const TreeSource& s, FlatTrees<C>& out) const;
  template <class C>
  void run_rows(const FlatTrees<C>& t, const Tensor& x, Rows r, int64_t row_begin, int64_t row_end,
                int64_t tree_begin, int64_t tree_end, double* scores, uint8_t* has) const;
  template <class C, Kind K, bool M, Aggregate A>
  void walk(const FlatTrees<C>& t, const C* x, int64_t c, int64_t rows, int64_t tree_begin,
            int64_t tree_end, double* scores, uint8_t* has) const;
  template <class C, bool Lt, bool M, Aggregate A>
  void walk_perfect(const FlatTrees<C>& t, const C* x, int64_t c, int64_t rows, int64_t tree_begin,
                    int64_t tree_end, double* scores, uint8_t* has) const;
  template <class C>
  void evaluate_as(const FlatTrees<C>& t, const Tensor& x, Rows r, double* scores, uint8_t* has,
                   int threads) const;

  // A is Sum (for AVERAGE too, which leaves `has` alone), Min or Max.
  template <Aggregate A> static void add(double& s, uint8_t& h, double w) {
    if constexpr (A == Aggregate::Min) {
      s = h ? std::min(s, w) : w;
      h = 1;
    } else if constexpr (A == Aggregate::Max) {
      s = h ? std::max(s, w) : w;
      h = 1;
    } else {
      s += w;
    }
  }
  template <Aggregate A> void add_leaf(int32_t leaf, double* s, uint8_t* h) const {
    if (single_) {
      const int32_t t = leaf_target_[static_cast<size_t>(leaf)];
      if (t >= 0) add<A>(s[t], h[t], leaf_weight_[static_cast<size_t>(leaf)]);
      return;
    }
    for (int32_t j = leaf_begin_[static_cast<size_t>(leaf)],
                 e = leaf_begin_[static_cast<size_t>(leaf) + 1];
         j < e; ++j)
      add<A>(s[w_target_[static_cast<size_t>(j)]], h[w_target_[static_cast<size_t>(j)]],
             w_value_[static_cast<size_t>(j)]);
  }
  template <int N> static void add_n(double* s, const double* w) {
    for (int k = 0; k < N; ++k) s[k] += w[k];
  }
  // A perfect tree's leaf slot: under SUM and AVERAGE its weights for every target (0 where
  // none) when there are those, else its leaf's.
  template <Aggregate A> void add_slot(size_t slot, double* s, uint8_t* h) const {
    if constexpr (A == Aggregate::Sum) {
      if (!slot_weights_.empty()) {
        const size_t nt = static_cast<size_t>(n_targets_);
        const double* w = slot_weights_.data() + slot * nt;
        switch (nt) {
          case 1: s[0] += w[0]; break;
          case 2: add_n<2>(s, w); break;
          case 3: add_n<3>(s, w); break;
          case 4: add_n<4>(s, w); break;
          default:
            for (size_t k = 0; k < nt; ++k) s[k] += w[k];
        }
        return;
      }
    }
    add_leaf<A>(slot_leaf_[slot], s, h);
  }
  // Calls f with the aggregate as a std::integral_constant (AVERAGE as SUM).
  template <class F> void with_aggregate(F&& f) const {
    if (agg == Aggregate::Min) f(std::integral_constant<Aggregate, Aggregate::Min>{});
    else if (agg == Aggregate::Max)
      f(std::integral_constant<Aggregate, Aggregate::Max>{});
    else
      f(std::integral_constant<Aggregate, Aggregate::Sum>{});
  }

  // The nodes with float thresholds (when the model's are float and the input may not be
  // double) or double ones; a double input to float nodes gets double copies of them made the
  // first time it comes (exactly: every float is a double).
  FlatTrees<float> f_;
  mutable FlatTrees<double> d_;
  bool have_f_ = false;
  mutable std::atomic<bool> have_d_{false};
  mutable std::mutex d_mu_;

  std::vector<int32_t> roots_;
  int64_t n_targets_ = 1;
  // Leaves: one weight each at most (leaf_target_ -1: none), or ranges of (target, weight).
  bool single_ = true;
  std::vector<int32_t> leaf_target_;
  std::vector<double> leaf_weight_;
  std::vector<int32_t> leaf_begin_;
  std::vector<int32_t> w_target_;
  std::vector<double> w_value_;
  int64_t max_feature_ = -1;
  Kind kind_ = Kind::Mixed;
  bool missing_ = false;
  // Per tree, where its perfect layout lies (depth -1: walked node by node); per slot of the
  // perfect trees, its leaf. The perfect trees compare with < (else <=), some NaN goes up.
  struct PerfectTree {
    int32_t node_begin = 0, slot_begin = 0, depth = -1;
  };
  std::vector<PerfectTree> perfect_;
  std::vector<int32_t> slot_leaf_;
  std::vector<double> slot_weights_;  // [slot, target]
  bool perfect_lt_ = false, perfect_missing_ = false;
  std::vector<PerfectNode<double>> perfect_src_;  // while building
  double visits_per_tree_ = 1;  // mean depth of the nodes, a guess at one walk's length
  // While building: the source node of each flat node, and the flat successors.
  std::vector<int64_t> order_;
  std::vector<int32_t> flat_next_[2];
};

void Ensemble::build(const TreeSource& s, const KernelInfo& info) {
  const std::string who = info.node().label();
  const int64_t n = static_cast<int64_t>(s.feature.size());
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max() / 2;
  PI_CHECK(n < kMax && s.n_leaves < kMax, InvalidModel, who, ": ", n, " nodes and ", s.n_leaves,
           " leaves are more than a tree ensemble may have here (", kMax, ")");
  PI_CHECK(!s.roots.empty(), InvalidModel, who, ": the ensemble has no tree");
  n_targets_ = s.n_targets;
  PI_CHECK(n_targets_ >= 1 && n_targets_ < kMax, InvalidModel, who, ": ", n_targets_,
           " targets is not a valid count");
  auto check_ref = [&](int64_t c, const char* what, int64_t i) {
    if (c >= 0)
      PI_CHECK(c < n, InvalidModel, who, ": node ", i, "'s ", what, " successor ", c,
               " is not one of its ", n, " nodes");
    else
      PI_CHECK(~c < s.n_leaves, InvalidModel, who, ": node ", i, "'s ", what, " leaf ", ~c,
               " is not one of its ", s.n_leaves, " leaves");
  };
  for (int64_t i = 0; i < n; ++i) {
    PI_CHECK(s.feature[i] >= 0 && s.feature[i] < kMax, InvalidModel, who, ": node ", i,
             " reads feature ", s.feature[i], ", which no input has");
    PI_CHECK(s.mode[i] <= kMember, InvalidModel, who, ": node ", i, " has mode ", int(s.mode[i]),
             ", not one of 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)");
    check_ref(s.child_false[i], "false", i);
    check_ref(s.child_true[i], "true", i);
  }
  for (size_t t = 0; t < s.roots.size(); ++t) check_ref(s.roots[t], "root", -1);

  // A node whose two successors are the same leaf is that leaf (TreeEnsemble's one-leaf tree).
  auto resolve = [&](int64_t c) {
    return c >= 0 && s.child_false[c] < 0 && s.child_false[c] == s.child_true[c] ? s.child_false[c]
                                                                                 : c;
  };
  // Depth first from each root, the false successor right after its node; a successor met on
  // the current path is a cycle, which would make a walk endless.
  std::vector<uint8_t> color(static_cast<size_t>(n), 0);  // 0 unseen, 1 on the path, 2 done
  std::vector<int32_t> flat_of(static_cast<size_t>(n), -1);
  std::vector<int64_t> depth_of;
  order_.clear();
  double depth_sum = 0;
  std::vector<std::pair<int64_t, int>> stack;
  auto enter = [&](int64_t i) {
    color[i] = 1;
    flat_of[i] = static_cast<int32_t>(order_.size());
    order_.push_back(i);
    depth_sum += static_cast<double>(stack.size() + 1);
    stack.push_back({i, 0});
  };
  roots_.clear();
  for (int64_t root : s.roots) {
    const int64_t r = resolve(root);
    if (r >= 0 && color[r] == 0) {
      enter(r);
      while (!stack.empty()) {
        const int64_t i = stack.back().first;
        const int step = stack.back().second++;
        if (step == 2) {
          color[i] = 2;
          stack.pop_back();
          continue;
        }
        const int64_t c = resolve(step == 0 ? s.child_false[i] : s.child_true[i]);
        if (c < 0) continue;
        PI_CHECK(color[c] != 1, InvalidModel, who, ": node ", c,
                 " is its own descendant; a tree's walk would never end");
        if (color[c] == 0) enter(c);
      }
    }
    roots_.push_back(r >= 0 ? flat_of[r] : static_cast<int32_t>(r));
  }
  visits_per_tree_ = order_.empty() ? 1 : depth_sum / static_cast<double>(order_.size()) + 1;
  for (int k = 0; k < 2; ++k) {
    flat_next_[k].resize(order_.size());
    for (size_t j = 0; j < order_.size(); ++j) {
      const int64_t c = resolve(k == 0 ? s.child_false[order_[j]] : s.child_true[order_[j]]);
      flat_next_[k][j] = c >= 0 ? flat_of[c] : static_cast<int32_t>(c);
    }
  }
  bool all_leq = true, all_lt = true;
  missing_ = false;
  max_feature_ = -1;
  for (int64_t i : order_) {
    all_leq = all_leq && s.mode[i] == kLeq;
    all_lt = all_lt && s.mode[i] == kLt;
    missing_ = missing_ || s.missing_true[i];
    max_feature_ = std::max(max_feature_, s.feature[i]);
  }
  kind_ = all_leq ? Kind::AllLeq : all_lt ? Kind::AllLt : Kind::Mixed;
  build_perfect(s);

  // Leaves.
  const size_t nl = static_cast<size_t>(s.n_leaves);
  std::vector<int32_t> count(nl, 0);
  for (size_t j = 0; j < s.w_leaf.size(); ++j) {
    PI_CHECK(s.w_target[j] >= 0 && s.w_target[j] < n_targets_, InvalidModel, who, ": weight ", j,
             " is for target/class ", s.w_target[j], ", outside [0, ", n_targets_, ")");
    ++count[static_cast<size_t>(s.w_leaf[j])];
  }
  PI_CHECK(s.w_leaf.size() < static_cast<size_t>(kMax), InvalidModel, who, ": too many weights");
  single_ = std::all_of(count.begin(), count.end(), [](int32_t c) { return c <= 1; });
  if (single_) {
    leaf_target_.assign(nl, -1);
    leaf_weight_.assign(nl, 0.0);
    for (size_t j = 0; j < s.w_leaf.size(); ++j) {
      leaf_target_[static_cast<size_t>(s.w_leaf[j])] = static_cast<int32_t>(s.w_target[j]);
      leaf_weight_[static_cast<size_t>(s.w_leaf[j])] = s.w_value[j];
    }
  } else {
    leaf_begin_.assign(nl + 1, 0);
    for (size_t l = 0; l < nl; ++l) leaf_begin_[l + 1] = leaf_begin_[l] + count[l];
    std::vector<int32_t> at(leaf_begin_.begin(), leaf_begin_.end() - 1);
    w_target_.resize(s.w_leaf.size());
    w_value_.resize(s.w_leaf.size());
    for (size_t j = 0; j < s.w_leaf.size(); ++j) {
      const int32_t k = at[static_cast<size_t>(s.w_leaf[j])]++;
      w_target_[static_cast<size_t>(k)] = static_cast<int32_t>(s.w_target[j]);
      w_value_[static_cast<size_t>(k)] = s.w_value[j];
    }
  }

  // SUM and AVERAGE over few targets, with no leaf giving a target two weights: each slot's
  // weights for every target in a row.
  slot_weights_.clear();
  constexpr int64_t kDenseTargets = 16;
  bool dense = (agg == Aggregate::Sum || agg == Aggregate::Average) &&
               n_targets_ <= kDenseTargets && (n_targets_ == 1 || !single_);
  if (dense && !single_)
    for (size_t l = 0; l < nl && dense; ++l) {
      uint32_t seen = 0;
      for (int32_t j = leaf_begin_[l]; j < leaf_begin_[l + 1] && dense; ++j) {
        const uint32_t bit = 1u << w_target_[static_cast<size_t>(j)];
        dense = !(seen & bit);
        seen |= bit;
      }
    }
  if (dense) {
    const size_t nt = static_cast<size_t>(n_targets_);
    slot_weights_.assign(slot_leaf_.size() * nt, 0.0);
    for (size_t slot = 0; slot < slot_leaf_.size(); ++slot) {
      const size_t l = static_cast<size_t>(slot_leaf_[slot]);
      double* w = slot_weights_.data() + slot * nt;
      if (single_) {
        if (leaf_target_[l] >= 0) w[leaf_target_[l]] = leaf_weight_[l];
      } else {
        for (int32_t j = leaf_begin_[l]; j < leaf_begin_[l + 1]; ++j)
          w[w_target_[static_cast<size_t>(j)]] = w_value_[static_cast<size_t>(j)];
      }
    }
  }

  const ir::TypeInfo* in = info.input_type(0);
  const bool input_double =
      in && in->kind == ir::TypeInfo::Kind::Tensor && in->elem == DType::Float64;
  if (s.double_thresholds || input_double) {
    build_nodes(s, d_);
    have_d_ = true;
  } else {
    build_nodes(s, f_);
    have_f_ = true;
  }
  order_.clear();
  order_.shrink_to_fit();
  flat_next_[0].clear();
  flat_next_[1].clear();
  perfect_src_.clear();
  perfect_src_.shrink_to_fit();
}

void Ensemble::build_perfect(const TreeSource& s) {
  // (10 levels: 1023 nodes, 12 KB of float nodes, still in L1; a tree padded to more than 4
  // times its nodes walks node by node.)
  constexpr int kMaxDepth = 10;
  bool leq = true, lt = true;
  for (int64_t i : order_) {
    leq = leq && (s.mode[i] == kLeq || s.mode[i] == kGt);
    lt = lt && (s.mode[i] == kLt || s.mode[i] == kGte);
  }
  perfect_.assign(roots_.size(), PerfectTree{});
  slot_leaf_.clear();
  perfect_src_.clear();
  perfect_lt_ = lt && !leq;
  perfect_missing_ = false;
  if (!leq && !lt) return;
  for (size_t t = 0; t < roots_.size(); ++t) {
    // The depth and the number of nodes of the walks (a node two trees share counts in each).
    int depth = 0;
    int64_t interior = 0;
    std::vector<std::pair<int32_t, int>> stack{{roots_[t], 0}};
    while (!stack.empty() && depth <= kMaxDepth) {
      const auto [j, level] = stack.back();
      stack.pop_back();
      depth = std::max(depth, level);
      if (j < 0) continue;
      ++interior;
      for (int k = 0; k < 2; ++k)
        stack.push_back({flat_next_[k][static_cast<size_t>(j)], level + 1});
    }
    const int64_t nodes = (int64_t{1} << depth) - 1;
    if (depth > kMaxDepth || nodes > std::max<int64_t>(4 * interior, 15)) continue;
    PerfectTree& p = perfect_[t];
    p.depth = depth;
    p.node_begin = static_cast<int32_t>(perfect_src_.size());
    p.slot_begin = static_cast<int32_t>(slot_leaf_.size());
    perfect_src_.resize(perfect_src_.size() + static_cast<size_t>(nodes));
    slot_leaf_.resize(slot_leaf_.size() + static_cast<size_t>(nodes + 1));
    // Node j (or ~leaf) at position pos of level `level`; a leaf above the last level fills the
    // positions below it, their nodes reading the feature of the leaf's parent.
    auto place = [&](auto& self, int32_t j, int64_t pos, int level, int32_t feature) -> void {
      if (level == depth) {
        slot_leaf_[static_cast<size_t>(p.slot_begin + pos - nodes)] = ~j;
        return;
      }
      PerfectNode<double>& n = perfect_src_[static_cast<size_t>(p.node_begin + pos)];
      int32_t lo = j, hi = j;
      if (j < 0) {
        n = {0.0, feature};
      } else {
        const int64_t i = order_[static_cast<size_t>(j)];
        const bool swap = s.mode[i] == kGt || s.mode[i] == kGte;
        const bool nan_up = (s.missing_true[i] != 0) != swap;
        n = {s.value[i], static_cast<int32_t>(s.feature[i]) | (nan_up ? kNanUp : 0)};
        perfect_missing_ = perfect_missing_ || nan_up;
        lo = flat_next_[swap ? 1 : 0][static_cast<size_t>(j)];
        hi = flat_next_[swap ? 0 : 1][static_cast<size_t>(j)];
      }
      self(self, lo, 2 * pos + 1, level + 1, n.feature & ~kNanUp);
      self(self, hi, 2 * pos + 2, level + 1, n.feature & ~kNanUp);
    };
    place(place, roots_[t], 0, 0, 0);
  }
}

template <class C> void Ensemble::build_nodes(const TreeSource& s, FlatTrees<C>& out) const {
  out.nodes.resize(order_.size());
  bool any_member = false;
  for (size_t j = 0; j < order_.size(); ++j) {
    const int64_t i = order_[j];
    FlatNode<C>& f = out.nodes[j];
    f.value = static_cast<C>(s.value[i]);
    f.feature = static_cast<int32_t>(s.feature[i]);
    f.mode = s.mode[i];
    f.missing_true = s.missing_true[i] ? 1 : 0;
    f.next[0] = flat_next_[0][j];
    f.next[1] = flat_next_[1][j];
    any_member = any_member || f.mode == kMember;
  }
  out.perfect.resize(perfect_src_.size());
  for (size_t j = 0; j < perfect_src_.size(); ++j) {
    const PerfectNode<double>& a = perfect_src_[j];
    out.perfect[j] = {static_cast<C>(a.value), a.feature};
  }
  if (!any_member) return;
  out.member_range.assign(order_.size(), {0, 0});
  for (size_t j = 0; j < order_.size(); ++j) {
    const int64_t i = order_[j];
    if (s.mode[i] != kMember) continue;
    const int32_t b = static_cast<int32_t>(out.members.size());
    for (int64_t k = 0; k < s.member_count[i]; ++k)
      out.members.push_back(static_cast<C>(s.members[static_cast<size_t>(s.member_first[i] + k)]));
    std::sort(out.members.begin() + b, out.members.end());
    out.member_range[j] = {b, static_cast<int32_t>(out.members.size())};
  }
}

template <class C, Kind K, bool M, Aggregate A>
void Ensemble::walk(const FlatTrees<C>& t, const C* x, int64_t c, int64_t rows, int64_t tree_begin,
                    int64_t tree_end, double* scores, uint8_t* has) const {
  const int64_t nt = n_targets_;
  // (8: measured against 1, 4 and 16 on forests of depth 5 to 20, batches 1 and 1000.)
  constexpr int kLanes = 8;
  // Walks go kLanes at a time, a level each in turn: their node loads, independent of each
  // other, overlap instead of waiting one after another. Groups of kLanes rows walk each tree;
  // the rows left over walk kLanes trees at a time.
  const int64_t full = rows - rows % kLanes;
  for (int64_t tr = tree_begin; tr < tree_end; ++tr) {
    const int32_t root = roots_[static_cast<size_t>(tr)];
    for (int64_t r = 0; r < full; r += kLanes) {
      int32_t at[kLanes];
      for (int j = 0; j < kLanes; ++j) at[j] = root;
      bool more = true;
      while (more) {
        more = false;
        for (int j = 0; j < kLanes; ++j) {
          if (at[j] < 0) continue;
          at[j] = step<C, K, M>(t, at[j], x + (r + j) * c);
          more = more || at[j] >= 0;
        }
      }
      for (int j = 0; j < kLanes; ++j)
        add_leaf<A>(~at[j], scores + (r + j) * nt, has + (r + j) * nt);
    }
  }
  for (int64_t r = full; r < rows; ++r) {
    const C* xr = x + r * c;
    double* s = scores + r * nt;
    uint8_t* h = has + r * nt;
    int64_t tr = tree_begin;
    for (; tr + kLanes <= tree_end; tr += kLanes) {
      int32_t at[kLanes];
      for (int j = 0; j < kLanes; ++j) at[j] = roots_[static_cast<size_t>(tr + j)];
      bool more = true;
      while (more) {
        more = false;
        for (int j = 0; j < kLanes; ++j) {
          if (at[j] < 0) continue;
          at[j] = step<C, K, M>(t, at[j], xr);
          more = more || at[j] >= 0;
        }
      }
      for (int j = 0; j < kLanes; ++j) add_leaf<A>(~at[j], s, h);
    }
    for (; tr < tree_end; ++tr)
      add_leaf<A>(find_leaf<C, K, M>(t, roots_[static_cast<size_t>(tr)], xr), s, h);
  }
}

template <class C, bool Lt, bool M, Aggregate A>
void Ensemble::walk_perfect(const FlatTrees<C>& t, const C* x, int64_t c, int64_t rows,
                            int64_t tree_begin, int64_t tree_end, double* scores,
                            uint8_t* has) const {
  const int64_t nt = n_targets_;
  constexpr int kLanes = 16;
  // Few rows: each row down every tree, the walks of one row independent of each other.
  if (rows < kLanes) {
    for (int64_t r = 0; r < rows; ++r) {
      const C* xr = x + r * c;
      for (int64_t tr = tree_begin; tr < tree_end; ++tr) {
        const PerfectTree& p = perfect_[static_cast<size_t>(tr)];
        const PerfectNode<C>* nodes = t.perfect.data() + p.node_begin;
        uint32_t i = 0;
        for (int d = 0; d < p.depth; ++d) i = perfect_step<C, Lt, M>(nodes, i, xr);
        const uint32_t first = (1u << p.depth) - 1;  // the first slot's position
        add_slot<A>(static_cast<size_t>(p.slot_begin) + (i - first), scores + r * nt, has + r * nt);
      }
    }
    return;
  }
  for (int64_t tr = tree_begin; tr < tree_end; ++tr) {
    const PerfectTree& p = perfect_[static_cast<size_t>(tr)];
    const PerfectNode<C>* nodes = t.perfect.data() + p.node_begin;
    const size_t slot = static_cast<size_t>(p.slot_begin) - ((size_t{1} << p.depth) - 1);
    int64_t r = 0;
    for (; r + kLanes <= rows; r += kLanes) {
      uint32_t at[kLanes] = {};
      for (int d = 0; d < p.depth; ++d) {
#pragma GCC unroll 16
        for (int j = 0; j < kLanes; ++j)
          at[j] = perfect_step<C, Lt, M>(nodes, at[j], x + (r + j) * c);
      }
      for (int j = 0; j < kLanes; ++j)
        add_slot<A>(slot + at[j], scores + (r + j) * nt, has + (r + j) * nt);
    }
    for (; r < rows; ++r) {
      uint32_t i = 0;
      for (int d = 0; d < p.depth; ++d) i = perfect_step<C, Lt, M>(nodes, i, x + r * c);
      add_slot<A>(slot + i, scores + r * nt, has + r * nt);
    }
  }
}

// Rows [row_begin, row_end) through trees [tree_begin, tree_end), a block of rows at a time,
// converted to C where the input's type is another.
template <class C>
void Ensemble::run_rows(const FlatTrees<C>& t, const Tensor& x, Rows r, int64_t row_begin,
                        int64_t row_end, int64_t tree_begin, int64_t tree_end, double* scores,
                        uint8_t* has) const {
  // Enough rows that a tree's nodes are reused from cache, few enough that they stay there.
  constexpr int64_t kBlock = 256;
  std::vector<C> buf;
  const bool direct = x.dtype() == dtype_of<C>();
  for (int64_t b = row_begin; b < row_end; b += kBlock) {
    const int64_t rows = std::min(kBlock, row_end - b);
    const C* xp;
    if (direct) {
      xp = x.data<C>() + b * r.c;
    } else {
      buf.resize(static_cast<size_t>(rows * r.c));
      read_as<C>(x, b * r.c, rows * r.c, buf.data());
      xp = buf.data();
    }
    double* s = scores + (b - row_begin) * n_targets_;
    uint8_t* h = has + (b - row_begin) * n_targets_;
    // Runs of trees laid out perfect, or not.
    for (int64_t tb = tree_begin, te; tb < tree_end; tb = te) {
      const bool perfect = perfect_[static_cast<size_t>(tb)].depth >= 0;
      for (te = tb + 1; te < tree_end && (perfect_[static_cast<size_t>(te)].depth >= 0) == perfect;)
        ++te;
      with_aggregate([&](auto a) {
        constexpr Aggregate A = decltype(a)::value;
        if (perfect) {
          if (!perfect_lt_ && !perfect_missing_)
            walk_perfect<C, false, false, A>(t, xp, r.c, rows, tb, te, s, h);
          else if (!perfect_lt_)
            walk_perfect<C, false, true, A>(t, xp, r.c, rows, tb, te, s, h);
          else if (!perfect_missing_)
            walk_perfect<C, true, false, A>(t, xp, r.c, rows, tb, te, s, h);
          else
            walk_perfect<C, true, true, A>(t, xp, r.c, rows, tb, te, s, h);
        } else if (kind_ == Kind::AllLeq && !missing_) {
          walk<C, Kind::AllLeq, false, A>(t, xp, r.c, rows, tb, te, s, h);
        } else if (kind_ == Kind::AllLeq) {
          walk<C, Kind::AllLeq, true, A>(t, xp, r.c, rows, tb, te, s, h);
        } else if (kind_ == Kind::AllLt && !missing_) {
          walk<C, Kind::AllLt, false, A>(t, xp, r.c, rows, tb, te, s, h);
        } else if (kind_ == Kind::AllLt) {
          walk<C, Kind::AllLt, true, A>(t, xp, r.c, rows, tb, te, s, h);
        } else if (!missing_) {
          walk<C, Kind::Mixed, false, A>(t, xp, r.c, rows, tb, te, s, h);
        } else {
          walk<C, Kind::Mixed, true, A>(t, xp, r.c, rows, tb, te, s, h);
        }
      });
    }
  }
}

template <class C>
void Ensemble::evaluate_as(const FlatTrees<C>& t, const Tensor& x, Rows r, double* scores,
                           uint8_t* has, int threads) const {
  const int64_t nt = n_targets_, trees = n_trees();
  // Node visits below which one more thread costs more than it saves (a fork and join is a few
  // microseconds; a visit a few nanoseconds).
  constexpr double kVisitsPerThread = 4096;
  const double visits = static_cast<double>(r.n) * static_cast<double>(trees) * visits_per_tree_;
  const int useful = static_cast<int>(std::min<double>(threads, visits / kVisitsPerThread));
  if (useful <= 1) return run_rows(t, x, r, 0, r.n, 0, trees, scores, has);
  if (r.n >= 2 * useful) {
    // Many rows: contiguous shares of rows, every tree.
    fast::parallel_for(r.n, useful, 1, [&](int64_t b, int64_t e) {
      run_rows(t, x, r, b, e, 0, trees, scores + b * nt, has + b * nt);
    });
    return;
  }
  // Few rows, many trees: each thread sums its share of the trees, then the shares are merged.
  const int parts = static_cast<int>(std::min<int64_t>(useful, trees));
  const size_t size = static_cast<size_t>(r.n * nt);
  std::vector<double> part_s(size * static_cast<size_t>(parts - 1), 0.0);
  std::vector<uint8_t> part_h(size * static_cast<size_t>(parts - 1), 0);
  fast::parallel_for(parts, parts, 1, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const int64_t tb = trees * p / parts, te = trees * (p + 1) / parts;
      double* s = p == 0 ? scores : part_s.data() + size * static_cast<size_t>(p - 1);
      uint8_t* h = p == 0 ? has : part_h.data() + size * static_cast<size_t>(p - 1);
      run_rows(t, x, r, 0, r.n, tb, te, s, h);
    }
  });
  for (int p = 1; p < parts; ++p) {
    const double* s = part_s.data() + size * static_cast<size_t>(p - 1);
    const uint8_t* h = part_h.data() + size * static_cast<size_t>(p - 1);
    if (agg == Aggregate::Min || agg == Aggregate::Max) {
      for (size_t i = 0; i < size; ++i)
        if (h[i]) {
          if (agg == Aggregate::Min) add<Aggregate::Min>(scores[i], has[i], s[i]);
          else
            add<Aggregate::Max>(scores[i], has[i], s[i]);
        }
    } else {
      for (size_t i = 0; i < size; ++i) scores[i] += s[i];
    }
  }
}

void Ensemble::evaluate(const Tensor& x, Rows r, double* scores, uint8_t* has, int threads,
                        const ir::Node& node) const {
  PI_CHECK(max_feature_ < r.c, ShapeMismatch, node.label(), ": the trees read feature ",
           max_feature_, " but the input has ", r.c, " features per row");
  if (r.n == 0) return;
  if (x.dtype() == DType::Float64 || !have_f_) {
    if (!have_d_) {
      std::lock_guard<std::mutex> lock(d_mu_);
      if (!have_d_) {
        d_.nodes.resize(f_.nodes.size());
        for (size_t j = 0; j < f_.nodes.size(); ++j) {
          const FlatNode<float>& a = f_.nodes[j];
          d_.nodes[j] = {a.value, a.feature, a.mode, a.missing_true, {a.next[0], a.next[1]}};
        }
        d_.perfect.resize(f_.perfect.size());
        for (size_t j = 0; j < f_.perfect.size(); ++j)
          d_.perfect[j] = {f_.perfect[j].value, f_.perfect[j].feature};
        d_.member_range = f_.member_range;
        d_.members.assign(f_.members.begin(), f_.members.end());
        have_d_ = true;
      }
    }
    evaluate_as(d_, x, r, scores, has, threads);
  } else {
    evaluate_as(f_, x, r, scores, has, threads);
  }
  if (agg == Aggregate::Sum || agg == Aggregate::Average)
    std::fill(has, has + r.n * n_targets_, uint8_t{1});
}

// ---- the opset 1 and 3 attribute layout ----

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    return std::hash<uint64_t>()(static_cast<uint64_t>(p.first) * 1000003u +
                                 static_cast<uint64_t>(p.second));
  }
};

uint8_t mode_of(const std::string& m, const KernelInfo& info) {
  if (m == "BRANCH_LEQ") return kLeq;
  if (m == "BRANCH_LT") return kLt;
  if (m == "BRANCH_GTE") return kGte;
  if (m == "BRANCH_GT") return kGt;
  if (m == "BRANCH_EQ") return kEq;
  if (m == "BRANCH_NEQ") return kNeq;
  if (m == "LEAF") return 255;
  fail(ErrorCode::InvalidModel, info.node().label(), ": node mode '", m,
       "' is not one of BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, LEAF");
}

// Nodes named by (tree id, node id), leaves among them (mode LEAF), weights attached to leaves
// by `<w>_treeids`, `<w>_nodeids`, `<w>_ids`, `<w>_weights` ("class" or "target").
TreeSource read_v1(const KernelInfo& info, const std::string& w) {
  const std::string who = info.node().label();
  const auto tree_ids = info.attr_ints("nodes_treeids"), node_ids = info.attr_ints("nodes_nodeids");
  const auto features = info.attr_ints("nodes_featureids");
  const auto true_ids = info.attr_ints("nodes_truenodeids");
  const auto false_ids = info.attr_ints("nodes_falsenodeids");
  const auto missing = info.attr_ints("nodes_missing_value_tracks_true");
  const auto modes = info.attr_strings("nodes_modes");
  TreeSource s;
  const std::vector<double> values = floats_or_tensor(info, "nodes_values", &s.double_thresholds);
  const size_t n = tree_ids.size();
  auto same = [&](size_t size, const char* name, bool optional) {
    PI_CHECK(size == n || (optional && size == 0), InvalidModel, who, ": ", name, " has ", size,
             " entries but nodes_treeids has ", n);
  };
  same(node_ids.size(), "nodes_nodeids", false);
  same(features.size(), "nodes_featureids", false);
  same(modes.size(), "nodes_modes", false);
  same(true_ids.size(), "nodes_truenodeids", false);
  same(false_ids.size(), "nodes_falsenodeids", false);
  same(values.size(), "nodes_values", true);
  same(missing.size(), "nodes_missing_value_tracks_true", true);

  std::unordered_map<std::pair<int64_t, int64_t>, size_t, PairHash> index;
  std::vector<uint8_t> mode(n);
  std::vector<int64_t> ref(n);  // interior index, or ~leaf
  int64_t interior = 0;
  for (size_t i = 0; i < n; ++i) {
    PI_CHECK(index.emplace(std::make_pair(tree_ids[i], node_ids[i]), i).second, InvalidModel, who,
             ": tree ", tree_ids[i], " has node id ", node_ids[i], " twice");
    mode[i] = mode_of(modes[i], info);
    ref[i] = mode[i] == 255 ? ~s.n_leaves++ : interior++;
  }
  auto find = [&](int64_t tree, int64_t id, const char* what) {
    auto it = index.find({tree, id});
    PI_CHECK(it != index.end(), InvalidModel, who, ": ", what, " refers to node ", id,
             ", which tree ", tree, " does not have");
    return it->second;
  };
  for (size_t i = 0; i < n; ++i) {
    if (mode[i] == 255) continue;
    s.feature.push_back(features[i]);
    s.mode.push_back(mode[i]);
    s.value.push_back(values.empty() ? 0.0 : values[i]);
    s.missing_true.push_back(!missing.empty() && missing[i] != 0);
    s.child_true.push_back(ref[find(tree_ids[i], true_ids[i], "a true branch")]);
    s.child_false.push_back(ref[find(tree_ids[i], false_ids[i], "a false branch")]);
  }
  // A tree's root is its first node in attribute order (as ONNX Runtime takes it).
  std::unordered_map<int64_t, bool> seen;
  for (size_t i = 0; i < n; ++i)
    if (seen.emplace(tree_ids[i], true).second) s.roots.push_back(ref[i]);

  const auto w_trees = info.attr_ints(w + "_treeids"), w_nodes = info.attr_ints(w + "_nodeids");
  const auto w_ids = info.attr_ints(w + "_ids");
  const std::vector<double> w_values = floats_or_tensor(info, w + "_weights");
  const size_t nw = w_trees.size();
  PI_CHECK(w_nodes.size() == nw && w_ids.size() == nw && w_values.size() == nw, InvalidModel, who,
           ": ", w, "_treeids, ", w, "_nodeids, ", w, "_ids and ", w,
           "_weights must have one entry per weight (", nw, ", ", w_nodes.size(), ", ",
           w_ids.size(), ", ", w_values.size(), ")");
  for (size_t j = 0; j < nw; ++j) {
    const size_t i = find(w_trees[j], w_nodes[j], (w + " weight").c_str());
    PI_CHECK(mode[i] == 255, InvalidModel, who, ": ", w, " weight ", j, " is given to node ",
             w_nodes[j], " of tree ", w_trees[j], ", which is not a LEAF");
    s.w_leaf.push_back(~ref[i]);
    s.w_target.push_back(w_ids[j]);
    s.w_value.push_back(w_values[j]);
  }
  return s;
}

// ---- TreeEnsembleRegressor ----

class TreeEnsembleRegressorKernel final : public Kernel {
 public:
  explicit TreeEnsembleRegressorKernel(const KernelInfo& info) {
    TreeSource s = read_v1(info, "target");
    const std::string agg = info.attr_string("aggregate_function", "SUM");
    if (agg == "SUM") ens_.agg = Aggregate::Sum;
    else if (agg == "AVERAGE")
      ens_.agg = Aggregate::Average;
    else if (agg == "MIN")
      ens_.agg = Aggregate::Min;
    else if (agg == "MAX")
      ens_.agg = Aggregate::Max;
    else
      fail(ErrorCode::InvalidModel, info.node().label(), ": aggregate_function '", agg,
           "' is not one of SUM, AVERAGE, MIN, MAX");
    int64_t max_target = -1;
    for (int64_t t : s.w_target) max_target = std::max(max_target, t);
    s.n_targets = info.attr_int("n_targets", std::max<int64_t>(1, max_target + 1));
    post_ = post_transform_attr(info);
    base_ = floats_or_tensor(info, "base_values");
    PI_CHECK(base_.empty() || static_cast<int64_t>(base_.size()) == s.n_targets, InvalidModel,
             info.node().label(), ": base_values has ", base_.size(), " values for ", s.n_targets,
             " targets");
    ens_.build(s, info);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const Rows r = rows_of(x, ctx.node());
    const int64_t nt = ens_.n_targets();
    std::vector<double> s(count_of(r.n, nt), 0.0);
    std::vector<uint8_t> h(s.size(), 0);
    ens_.evaluate(x, r, s.data(), h.data(), ctx.threads(), ctx.node());
    Tensor& y = ctx.output(0, DType::Float32, {r.n, nt});
    finish_regression(s.data(), h.data(), r.n, nt, ens_.agg, ens_.n_trees(), base_, post_,
                      y.data<float>());
  }

  // Averages, adds the base values, applies the transform (the specification's: ONNX Runtime
  // applies only PROBIT to one target) and writes out. A target no leaf gave a weight is 0.
  template <class T>
  static void finish_regression(double* s, const uint8_t* h, int64_t n, int64_t nt, Aggregate agg,
                                int64_t trees, const std::vector<double>& base, PostTransform post,
                                T* out) {
    for (int64_t i = 0; i < n; ++i) {
      double* row = s + i * nt;
      for (int64_t k = 0; k < nt; ++k) {
        double v = h[i * nt + k] ? row[k] : 0.0;
        if (agg == Aggregate::Average) v /= static_cast<double>(trees);
        if (!base.empty()) v += base[static_cast<size_t>(k)];
        row[k] = v;
      }
      apply_transform(post, row, nt);
      for (int64_t k = 0; k < nt; ++k) out[i * nt + k] = static_cast<T>(row[k]);
    }
  }

 private:
  Ensemble ens_;
  PostTransform post_ = PostTransform::None;
  std::vector<double> base_;
};

// ---- TreeEnsembleClassifier ----

class TreeEnsembleClassifierKernel final : public Kernel {
 public:
  explicit TreeEnsembleClassifierKernel(const KernelInfo& info) {
    labels_ = ClassLabels::read(info, "classlabels_int64s", "classlabels_strings");
    const int64_t k = labels_.size();
    if (k < 2) info.unsupported("a tree ensemble classifier with one class label");
    TreeSource s = read_v1(info, "class");
    s.n_targets = k;
    post_ = post_transform_attr(info);
    base_ = floats_or_tensor(info, "base_values");
    PI_CHECK(
        base_.empty() || static_cast<int64_t>(base_.size()) == k || (k == 2 && base_.size() == 1),
        InvalidModel, info.node().label(), ": base_values has ", base_.size(), " values for ", k,
        " classes");
    // Two classes with weights for one of them only: that one score is the positive class's
    // (skl2onnx writes random forests and gradient boosting this way, with class id 0).
    std::vector<int64_t> ids = s.w_target;
    std::sort(ids.begin(), ids.end());
    binary_ = k == 2 && !ids.empty() && ids.front() == ids.back();
    if (binary_) binary_class_ = ids.front();
    all_positive_ =
        std::all_of(s.w_value.begin(), s.w_value.end(), [](double v) { return v >= 0; });
    ens_.build(s, info);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Int64, DType::Int32});
    const Rows r = rows_of(x, ctx.node());
    const int64_t k = labels_.size();
    std::vector<double> s(count_of(r.n, k), 0.0);
    std::vector<uint8_t> h(s.size(), 0);
    ens_.evaluate(x, r, s.data(), h.data(), ctx.threads(), ctx.node());
    Tensor& y = ctx.output(0, labels_.dtype(), {r.n});
    float* z =
        ctx.wants_output(1) ? ctx.output(1, DType::Float32, {r.n, k}).data<float>() : nullptr;
    int64_t* ints = labels_.is_string ? nullptr : y.data<int64_t>();
    for (int64_t i = 0; i < r.n; ++i) {
      double* row = s.data() + i * k;
      const uint8_t* has = h.data() + i * k;
      const int64_t label = binary_ ? finish_binary(row, has) : finish_classes(row, has, k);
      if (ints) ints[i] = labels_.ints[static_cast<size_t>(label)];
      else
        labels_.write(y, i, label);
      if (z)
        for (int64_t c = 0; c < k; ++c) z[i * k + c] = static_cast<float>(row[c]);
    }
  }

 private:
  // One score for the positive class, turned into two columns:
  //  - NONE with weights all >= 0 (votes, probabilities): [1 - s, s], label s > 0.5;
  //  - NONE with mixed signs (margins): [-s, s], label s > 0;
  //  - LOGISTIC, SOFTMAX, SOFTMAX_ZERO: the transform of [-s, s] (ONNX Runtime leaves
  //    SOFTMAX's unapplied here and drops LOGISTIC when the weights are all positive; the ONNX
  //    reference applies them, which is what the attribute asks);
  //  - PROBIT: probit of [1 - s, s] (ONNX Runtime writes one column).
  // The label is the column that wins, the negative class on a tie.
  int64_t finish_binary(double* row, const uint8_t* has) const {
    const int64_t c = binary_class_;
    double v = has[c] ? row[c] : 0.0;
    if (base_.size() == 1) v += base_[0];
    else if (base_.size() == 2)
      v += base_[1];
    const bool probability =
        post_ == PostTransform::Probit || (post_ == PostTransform::None && all_positive_);
    row[0] = probability ? 1.0 - v : -v;
    row[1] = v;
    apply_transform(post_, row, 2);
    return row[1] > row[0] ? 1 : 0;
  }

  // Several classes (or two with weights for both): scores (0 for a class no leaf voted for) plus
  // base values, the transform; the label is the largest transformed score, the first on a tie
  // (the ONNX reference's rule; ONNX Runtime skips classes without votes, and for two classes
  // takes the second when its score is positive).
  int64_t finish_classes(double* row, const uint8_t* has, int64_t k) const {
    for (int64_t c = 0; c < k; ++c) {
      double v = has[c] ? row[c] : 0.0;
      if (base_.size() == static_cast<size_t>(k)) v += base_[static_cast<size_t>(c)];
      else if (base_.size() == 1 && c == 0)
        v += base_[0];
      row[c] = v;
    }
    apply_transform(post_, row, k);
    int64_t best = -1;  // (a NaN score, PROBIT's outside [0, 1], never wins)
    for (int64_t c = 0; c < k; ++c)
      if (!std::isnan(row[c]) && (best < 0 || row[c] > row[best])) best = c;
    return best < 0 ? 0 : best;
  }

  Ensemble ens_;
  ClassLabels labels_;
  PostTransform post_ = PostTransform::None;
  std::vector<double> base_;
  bool binary_ = false, all_positive_ = true;
  int64_t binary_class_ = 0;  // the one class id the weights are for, when binary_
};

// ---- TreeEnsemble (ml opset 5) ----

class TreeEnsembleKernel final : public Kernel {
 public:
  explicit TreeEnsembleKernel(const KernelInfo& info) {
    const std::string who = info.node().label();
    TreeSource s;
    s.feature = info.attr_ints("nodes_featureids");
    const Tensor* splits = info.attr_tensor("nodes_splits");
    const Tensor* modes = info.attr_tensor("nodes_modes");
    const Tensor* weights = info.attr_tensor("leaf_weights");
    PI_CHECK(splits && modes && weights, InvalidModel, who,
             ": nodes_splits, nodes_modes and leaf_weights are required tensors");
    s.value = tensor_values(*splits);
    s.double_thresholds = splits->dtype() == DType::Float64;
    const std::vector<double> mode_values = tensor_values(*modes);
    const auto true_ids = info.attr_ints("nodes_truenodeids");
    const auto false_ids = info.attr_ints("nodes_falsenodeids");
    const auto true_leafs = info.attr_ints("nodes_trueleafs");
    const auto false_leafs = info.attr_ints("nodes_falseleafs");
    const auto missing = info.attr_ints("nodes_missing_value_tracks_true");
    const size_t n = s.feature.size();
    auto same = [&](size_t size, const char* name, bool optional) {
      PI_CHECK(size == n || (optional && size == 0), InvalidModel, who, ": ", name, " has ", size,
               " entries but nodes_featureids has ", n);
    };
    same(s.value.size(), "nodes_splits", false);
    same(mode_values.size(), "nodes_modes", false);
    same(true_ids.size(), "nodes_truenodeids", false);
    same(false_ids.size(), "nodes_falsenodeids", false);
    same(true_leafs.size(), "nodes_trueleafs", false);
    same(false_leafs.size(), "nodes_falseleafs", false);
    same(missing.size(), "nodes_missing_value_tracks_true", true);
    const auto targets = info.attr_ints("leaf_targetids");
    const std::vector<double> leaf_w = tensor_values(*weights);
    PI_CHECK(targets.size() == leaf_w.size(), InvalidModel, who, ": leaf_targetids has ",
             targets.size(), " entries but leaf_weights ", leaf_w.size());
    s.n_leaves = static_cast<int64_t>(targets.size());

    // BRANCH_MEMBER nodes take their sets from membership_values in node order, each set ended
    // by a NaN.
    std::vector<double> members;
    if (const Tensor* m = info.attr_tensor("membership_values")) members = tensor_values(*m);
    size_t next_member = 0;
    s.mode.resize(n);
    s.missing_true.resize(n);
    s.child_true.resize(n);
    s.child_false.resize(n);
    s.member_first.assign(n, 0);
    s.member_count.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const double mv = mode_values[i];
      PI_CHECK(mv >= 0 && mv <= double{kMember} && mv == std::floor(mv), InvalidModel, who,
               ": nodes_modes[", i, "] = ", mv, " is not one of 0 to 6");
      s.mode[i] = static_cast<uint8_t>(mv);
      s.missing_true[i] = !missing.empty() && missing[i] != 0;
      s.child_true[i] = true_leafs[i] ? ~true_ids[i] : true_ids[i];
      s.child_false[i] = false_leafs[i] ? ~false_ids[i] : false_ids[i];
      PI_CHECK(true_ids[i] >= 0 && false_ids[i] >= 0, InvalidModel, who, ": node ", i,
               " names a negative successor");
      if (s.mode[i] != kMember) continue;
      PI_CHECK(next_member < members.size(), InvalidModel, who, ": node ", i,
               " is BRANCH_MEMBER but membership_values has no set left for it");
      s.member_first[i] = static_cast<int64_t>(next_member);
      while (next_member < members.size() && !std::isnan(members[next_member])) ++next_member;
      s.member_count[i] = static_cast<int64_t>(next_member) - s.member_first[i];
      ++next_member;  // the NaN
    }
    s.members = std::move(members);
    s.roots = info.attr_ints("tree_roots");
    for (int64_t root : s.roots)
      PI_CHECK(root >= 0 && root < static_cast<int64_t>(n), InvalidModel, who, ": tree root ", root,
               " is not one of the ", n, " nodes");
    int64_t max_target = -1;
    for (size_t l = 0; l < targets.size(); ++l) {
      s.w_leaf.push_back(static_cast<int64_t>(l));
      s.w_target.push_back(targets[l]);
      s.w_value.push_back(leaf_w[l]);
      max_target = std::max(max_target, targets[l]);
    }
    s.n_targets = info.attr_int("n_targets", std::max<int64_t>(1, max_target + 1));
    post_ = post_transform_from_int(info, info.attr_int("post_transform", 0));
    const int64_t agg = info.attr_int("aggregate_function", 1);
    PI_CHECK(agg >= 0 && agg <= 3, InvalidModel, who, ": aggregate_function ", agg,
             " is not one of 0 (AVERAGE), 1 (SUM), 2 (MIN), 3 (MAX)");
    ens_.agg = static_cast<Aggregate>(agg);
    ens_.build(s, info);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    require_dtype(ctx, x, {DType::Float32, DType::Float64, DType::Float16});
    PI_CHECK(x.rank() == 2, ShapeMismatch, ctx.node().label(), ": input X must be [N, F], not ",
             shape_str(x.shape()));
    const Rows r = rows_of(x, ctx.node());
    const int64_t nt = ens_.n_targets();
    std::vector<double> s(count_of(r.n, nt), 0.0);
    std::vector<uint8_t> h(s.size(), 0);
    ens_.evaluate(x, r, s.data(), h.data(), ctx.threads(), ctx.node());
    Tensor& y = ctx.output(0, x.dtype(), {r.n, nt});
    const std::vector<double> none;
    dispatch(TypeList<float, double, Float16>{}, x.dtype(), "TreeEnsemble", [&](auto tag) {
      using T = typename decltype(tag)::type;
      TreeEnsembleRegressorKernel::finish_regression(s.data(), h.data(), r.n, nt, ens_.agg,
                                                     ens_.n_trees(), none, post_, y.data<T>());
    });
  }

 private:
  Ensemble ens_;
  PostTransform post_ = PostTransform::None;
};

}  // namespace

PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", TreeEnsembleRegressor, 1, 5, TreeEnsembleRegressorKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", TreeEnsembleClassifier, 1, 5, TreeEnsembleClassifierKernel);
PI_REGISTER_KERNEL("cpu", "ai.onnx.ml", TreeEnsemble, 5, 5, TreeEnsembleKernel);

}  // namespace polyinfer::ml
