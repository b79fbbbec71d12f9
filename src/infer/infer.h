// Type and shape inference of polyinfer's own: the static type of every value of a graph, from its
// inputs, initializers and attributes, with symbolic dimensions and the values of small integer
// tensors (Shape -> Gather -> Concat -> Reshape chains) carried along. Used after import and
// between the optimizer's rounds (docs/design.md, "A node's life").
//
//   infer::Report r = infer::infer_types(*model.graph);
//   const ir::TypeInfo* t = model.graph->type_of("logits");   // float32[N,1000]
//
// Each operator's rule is registered beside the others of its family (rules_*.cpp) with
// PI_INFER_RULE, keyed by domain and operator; a rule reads the node's opset where versions
// differ. A rule sees its node through a Context whose every accessor is bounds-checked; what
// it cannot tell (an unknown input, a shape that depends on data) it leaves unknown, and the
// runtime learns it when the model runs. No rule, and no model, can make inference fail or crash:
// a rule that throws loses its node's outputs, nothing more (Report::notes says which).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/import.h"

namespace polyinfer::infer {

// A dimension, or an element of a carried integer value, as inference knows it: a number, a
// symbol ("N"), or unknown. A dimension's number is >= 0; a carried value's may be negative (a
// Reshape target's -1, a Slice end).
struct Dim {
  int64_t value = 0;
  std::string symbol;  // where not a number: its name, or "" for unknown
  bool number = false;

  static Dim of(int64_t v) { return Dim{v, "", true}; }
  static Dim named(std::string s) { return Dim{0, std::move(s), false}; }
  static Dim unknown() { return Dim{}; }
  bool known() const { return number; }
  bool operator==(const Dim& o) const {
    return number == o.number && (number ? value == o.value : symbol == o.symbol);
  }
};
using Dims = std::vector<Dim>;

// Numpy broadcasting of two shapes (nullopt where they cannot broadcast: a rule then leaves its
// output unknown). A known dimension of 1 takes the other's; a symbol meets a number other than 1
// as that number; two different symbols give an unknown dimension.
std::optional<Dims> broadcast(const Dims& a, const Dims& b);

class Inference;

// One node's view of the inference under way.
class Context {
 public:
  Context(Inference& inf, const ir::Node& node) : inf_(inf), node_(node) {}

  const ir::Node& node() const { return node_; }
  int opset() const { return node_.opset; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_input(size_t i) const { return i < num_inputs() && !node_.inputs[i].empty(); }
  bool has_output(size_t i) const { return i < num_outputs() && !node_.outputs[i].empty(); }

  // Input i's type, or nullptr where it is absent or not known at all.
  const ir::TypeInfo* type(size_t i) const;
  // Its element type (Undefined when not known) and, for a tensor of known rank, its shape.
  DType elem(size_t i) const;
  std::optional<Dims> shape(size_t i) const;
  // The rank, or -1.
  int rank(size_t i) const;
  // The value of an integer input of rank 0 or 1 where it is known: an initializer, a Constant,
  // or shape data carried from Shape/Size (elements may then be symbols or unknown).
  std::optional<Dims> ints(size_t i) const;
  // The same, only where every element is a number.
  std::optional<std::vector<int64_t>> known_ints(size_t i) const;
  // Input i as a constant tensor (an initializer or a Constant's value), or nullptr.
  const Tensor* constant(size_t i) const;

  // Attributes: the default where absent; std::nullopt / the default where present with another
  // type (a malformed model's problem is the kernel's to report).
  bool has_attr(const std::string& name) const { return node_.attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const;
  const ir::Attribute* attr(const std::string& name) const { return node_.attr(name); }

  // Output o: a tensor of `elem` and `shape`; of `elem` with the rank known but not the
  // dimensions; of `elem` with nothing known about its shape; any type. An absent output is
  // ignored.
  void set(size_t o, DType elem, const Dims& shape);
  void set_rank(size_t o, DType elem, int rank);
  void set_elem(size_t o, DType elem);
  void set_type(size_t o, const ir::TypeInfo& t);
  // Output o as input i's type (elementwise operators).
  void set_like(size_t o, size_t i);
  // The value of integer output o, carried to its readers (Shape, Gather of a shape, ...).
  void set_ints(size_t o, const Dims& values);

 private:
  Inference& inf_;
  const ir::Node& node_;
};

using Rule = void (*)(Context&);

// Adds `rule` for (domain, op_type); returns true so it can initialize a static.
bool register_rule(const char* domain, const char* op_type, Rule rule);
// The rule for (domain, op_type), or nullptr.
Rule find_rule(const std::string& domain, const std::string& op_type);

struct Report {
  int nodes = 0;                   // nodes visited, subgraphs' included
  int inferred = 0;                // values whose type inference set or refined
  int unknown = 0;                 // node outputs left without a type
  std::vector<std::string> notes;  // rules that failed, operators without a rule (once each)
};

// Infers and records the type of every node output of `graph` and its subgraphs
// (Graph::value_types; declared types of graph outputs refined). A declared type is kept where
// inference knows less; where inference knows more (a symbolic or unknown dimension it can
// compute), the inferred one replaces it. Idempotent; cheap enough to run after every
// optimizer round. `outer` gives the types of values an enclosing graph provides.
Report infer_types(ir::Graph& graph);

// The same for an imported model; its notes gain the report's.
Report infer_types(Model& model);

// The type of a tensor value (an initializer): its dtype and shape.
ir::TypeInfo type_of_tensor(const Tensor& t);
// Dims from a TypeInfo's shape (nullopt without a rank), and back.
std::optional<Dims> dims_of(const ir::TypeInfo& t);
ir::TypeInfo tensor_type(DType elem, const Dims& shape);

}  // namespace polyinfer::infer

#define PI_INFER_CONCAT_(a, b) a##b
#define PI_INFER_CONCAT(a, b) PI_INFER_CONCAT_(a, b)
// Registers `fn` (void fn(infer::Context&)) as the inference rule of OP in DOMAIN ("" for ai.onnx).
#define PI_INFER_RULE(DOMAIN, OP, FN)                              \
  static const bool PI_INFER_CONCAT(pi_infer_rule_, __COUNTER__) = \
      ::polyinfer::infer::register_rule(DOMAIN, #OP, FN)
