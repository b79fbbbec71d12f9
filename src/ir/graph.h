// The in-memory model: a Graph of Nodes over named values, independent of protobuf.
//
// The ONNX importer builds it (src/onnx/import.cpp), the optimizer rewrites it, the partitioner
// places it and the exporter writes it back. Values are identified by name, as in ONNX; an empty
// name in a node's input or output list is an omitted optional.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer::ir {

struct Graph;

// The static type of a value: what kind it is, its element type and, for tensors, its shape as
// far as it is known. A dimension is a number (>= 0), a symbol (dim_params[i] non-empty, dims[i]
// -1) or unknown (-1 and no symbol). has_shape is false when even the rank is unknown.
// A map keeps its key dtype in `key` and its value type in `inner` (`elem` is the value's
// element type, as for sequences and optionals).
struct TypeInfo {
  enum class Kind { Tensor, Sequence, Optional, Map, Unknown };
  Kind kind = Kind::Tensor;
  DType elem = DType::Undefined;
  bool has_shape = false;
  Shape dims;
  std::vector<std::string> dim_params;
  std::shared_ptr<TypeInfo> inner;  // element type of a Sequence or Optional, value type of a Map
  DType key = DType::Undefined;     // key type of a Map

  // "float32[N,3,224,224]", "seq(float32[?])", "optional(int64[])", "map(string,float32[])"
  std::string str() const;
};

struct ValueInfo {
  std::string name;
  TypeInfo type;
};

struct Attribute {
  enum class Type {
    Undefined,
    Float,
    Int,
    String,
    Tensor,
    Graph,
    Floats,
    Ints,
    Strings,
    Tensors,
    Graphs,
    TypeProto
  };
  Type type = Type::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  TypeInfo tp;
};

struct Node {
  std::string name;  // never empty after import (unnamed nodes get "<op>_<index>")
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  int opset = 0;       // the model's opset version of `domain`
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Values of enclosing graphs that this node's subgraphs read (ONNX outer-scope references).
  // The executor treats them as extra inputs after `inputs`, so their lifetimes are right.
  std::vector<std::string> implicit_inputs;
  std::map<std::string, Attribute> attrs;
  // The optimizer pass that inserted this node ("channels-last" for its layout Transposes); ""
  // for the model's own nodes and for fused nodes that replace them. Profiles report it, so the
  // time spent in what the optimizer added is visible (`bench --profile`).
  std::string origin;

  const Attribute* attr(const std::string& key) const;
  // "Conv 'conv1'" — how errors name a node.
  std::string label() const;
};

struct Graph {
  std::string name;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<Node> nodes;  // in topological order after import
  std::map<std::string, Tensor> initializers;
  std::map<std::string, TypeInfo> value_types;  // inferred or declared types of other values
  std::map<std::string, int> opsets;            // domain → version (top-level graph's)

  // The type known for `name` (input, output, initializer or value_info), if any.
  const TypeInfo* type_of(const std::string& name) const;
  // Names a graph reads but neither defines nor receives as input: its outer-scope references.
  std::vector<std::string> free_values() const;
  // Reorders nodes topologically; throws InvalidModel naming a node on a cycle or a value
  // that nothing produces.
  void sort_topologically(const std::vector<std::string>& outer_scope = {});
};

}  // namespace polyinfer::ir
