// Helpers the optimizer passes share: who reads which value, constants, static shapes,
// attributes, fresh names, and removing the nodes a rewrite made dead.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace polyinfer::opt {

// The domain of polyinfer's own fused operators (docs/optimizer.md) and its opset version.
inline constexpr const char* kPolyDomain = "ai.polyinfer";
inline constexpr int kPolyOpset = 1;

// Who reads each value of a graph, as of when it was built: node inputs (one entry per input
// slot), outer-scope reads of subgraphs (a node's implicit_inputs) and graph outputs. Passes build
// it once per run; rewrites in that run only ever make its counts too high (never too low), so
// checks like single_reader stay safe until the next run rebuilds it.
class Uses {
 public:
  explicit Uses(const ir::Graph& g);

  // Index of the node that produces `v`, or -1 (a graph input, an initializer, or nothing).
  int producer(const std::string& v) const;
  // Indices of the nodes reading `v` through an input slot (a node reading it twice is listed
  // twice).
  const std::vector<int>& readers(const std::string& v) const;
  bool is_graph_output(const std::string& v) const { return outputs_.count(v) > 0; }
  bool read_by_subgraph(const std::string& v) const { return subgraph_reads_.count(v) > 0; }
  // True when `v` is an intermediate read by exactly one input slot of one node: not a graph
  // output, not read by a subgraph. Such a value may disappear when its reader is fused.
  bool single_reader(const std::string& v) const;
  // True when nothing reads `v` (no node, no subgraph, not a graph output).
  bool unused(const std::string& v) const;

 private:
  // Hashed: every pass builds one per round (half the optimizer's time was these maps' string
  // comparisons on DenseNet-121's 600 nodes).
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> readers_;
  std::unordered_set<std::string> outputs_, subgraph_reads_;
};

// Where a subgraph (an If/Loop/Scan body) being optimized sits: optimize() installs one for
// the passes' run on a body (ScopeGuard), so that constant() sees the initializers of the
// enclosing graphs the body reads (it reads them implicitly, by name) and NameGen hands out no
// name an enclosing graph uses. Passes never see it; they take the body as a graph like any.
struct Scope {
  const ir::Graph* body = nullptr;    // the graph the passes rewrite
  const ir::Graph* parent = nullptr;  // the graph whose node owns `body`
  const Scope* outer = nullptr;       // the parent's own scope (nullptr: it is the top level)
  // Initializers of the enclosing graphs that `body` can read: neither it nor a graph between
  // defines a value of that name.
  std::unordered_map<std::string, const Tensor*> constants;
  // Types the enclosing graphs know of the values `body` reads from them.
  std::unordered_map<std::string, const ir::TypeInfo*> types;
};
// Scope `s` (for s->body) is current until the guard goes; guards nest.
class ScopeGuard {
 public:
  explicit ScopeGuard(const Scope* s);
  ~ScopeGuard();
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  const Scope* saved_;
};
// The scope of `body` nested in `parent` (whose own scope is `outer`, or nullptr at the top).
Scope make_scope(const ir::Graph& parent, const Scope* outer, const ir::Graph& body);
// The values of enclosing graphs that the subgraphs of `n` read: what ONNX calls their
// outer-scope references, in first-read order (ir::Node::implicit_inputs).
std::vector<std::string> subgraph_reads(const ir::Node& n);

// The initializer named `v`, or nullptr; inside a body (Scope), also an initializer of an
// enclosing graph that the body reads as `v`.
const Tensor* constant(const ir::Graph& g, const std::string& v);
// The value of a one-element numeric constant, as double; nullopt if `v` is not one.
std::optional<double> scalar_constant(const ir::Graph& g, const std::string& v);
// A Clip's bounds when they are known at load time (attributes before opset 11, constant inputs
// from 11; a missing bound is -inf or +inf); nullopt for a bound computed at run time.
std::optional<std::pair<float, float>> clip_bounds(const ir::Graph& g, const ir::Node& clip);
// True when `v` is a one-element constant within `tol` (relative to |want|, at least 1e-6
// absolute) of `want`: how patterns recognize 0.5, sqrt(2) or an exporter's epsilon.
bool is_scalar(const ir::Graph& g, const std::string& v, double want, double tol = 1e-5);
// The elements of a numeric constant as doubles (float16/bfloat16 converted exactly).
std::vector<double> to_doubles(const Tensor& t);
// `v` as float; values beyond float's range become ±infinity (NaN stays NaN).
float to_float(double v);
// A float32 tensor of `shape` with `values` (converted with to_float).
Tensor float_tensor(const Shape& shape, const std::vector<double>& values);

// The type known for `v`: g.type_of(v), or inside a body (Scope) the enclosing graph's type of a
// value the body reads from there; nullptr when none is known.
const ir::TypeInfo* type_of(const ir::Graph& g, const std::string& v);
// The full static shape of `v` (an initializer's, or a declared/inferred type whose every
// dimension is a number); nullopt when any dimension or the rank is unknown.
std::optional<Shape> static_shape(const ir::Graph& g, const std::string& v);
// The rank of `v` when known, else -1.
int known_rank(const ir::Graph& g, const std::string& v);
// The element type of `v` when known, else Undefined.
DType elem_type(const ir::Graph& g, const std::string& v);
// True when the types of `a` and `b` are known to be equal tensor shapes: every dimension is the
// same number, or the same named symbol.
bool same_shape(const ir::Graph& g, const std::string& a, const std::string& b);

// Attribute readers with defaults; a present int/float attribute of another type throws
// InvalidModel naming the node.
int64_t attr_int(const ir::Node& n, const std::string& key, int64_t def);
float attr_float(const ir::Node& n, const std::string& key, float def);
std::string attr_string(const ir::Node& n, const std::string& key, const std::string& def);
std::vector<int64_t> attr_ints(const ir::Node& n, const std::string& key);
// Attribute makers.
ir::Attribute make_int(int64_t v);
ir::Attribute make_float(float v);
ir::Attribute make_string(const std::string& v);
ir::Attribute make_floats(const std::vector<float>& v);
ir::Attribute make_ints(const std::vector<int64_t>& v);

// True when some node of `g` (not its subgraphs) has one of these op_types, in any domain: the
// passes' first check, so one with nothing to match costs a scan instead of a Uses map.
bool has_op(const ir::Graph& g, std::initializer_list<const char*> ops);
// True when the node owns a subgraph (If, Loop, Scan, SequenceMap) or reads outer-scope values.
bool has_subgraph(const ir::Node& n);
// True for an operator whose outputs are a new draw on every run (the Random* family,
// Multinomial, Bernoulli, and Dropout, whose mask may be): passes neither fold nor move them.
bool is_random_op(const ir::Node& n);
// For a binary node (Add, Mul, ...) with input `v`: the other input (inputs[1] when both are `v`).
std::string other_input(const ir::Node& n, const std::string& v);

// Unique value names: "base", else "base_1", "base_2", ... never clashing with any name the graph,
// its subgraphs, the graphs enclosing it (Scope) or a name handed out before use.
// (The graph's names are gathered at the first fresh(): most passes make one and never ask.)
class NameGen {
 public:
  explicit NameGen(const ir::Graph& g) : g_(g) {}
  std::string fresh(const std::string& base);

 private:
  const ir::Graph& g_;
  bool gathered_ = false;
  std::unordered_set<std::string> used_;
};

// Declares the ai.polyinfer opset on `g` (fused nodes carry it as their opset).
void use_poly_domain(ir::Graph& g);
// A new node of ai.polyinfer (domain and opset set).
ir::Node poly_node(ir::Graph& g, const std::string& op, const std::string& name);

// Erases nodes whose index is marked in `dead`, keeping the order of the others.
void erase_dead(ir::Graph& g, const std::vector<bool>& dead);

}  // namespace polyinfer::opt

namespace polyinfer::opt {
// True when every node reads only graph inputs, initializers, outer-scope values (names nothing
// in `g` defines) and outputs of nodes before it. Tests check every pass leaves this true.
bool is_topological(const ir::Graph& g);
// Drops initializers nothing reads and value_types of names that no longer exist.
void prune_unused(ir::Graph& g);
}  // namespace polyinfer::opt
