#include "ir/graph.h"

#include <map>
#include <set>

namespace polyinfer::ir {

std::string TypeInfo::str() const {
  switch (kind) {
    case Kind::Tensor: {
      std::string s = dtype_name(elem);
      if (!has_shape) return s + "[?]";
      s += "[";
      for (size_t i = 0; i < dims.size(); ++i) {
        if (i) s += ",";
        if (i < dim_params.size() && !dim_params[i].empty()) s += dim_params[i];
        else
          s += dims[i] < 0 ? "?" : std::to_string(dims[i]);
      }
      return s + "]";
    }
    case Kind::Sequence: return "seq(" + (inner ? inner->str() : std::string("?")) + ")";
    case Kind::Optional: return "optional(" + (inner ? inner->str() : std::string("?")) + ")";
    case Kind::Map:
      return std::string("map(") + dtype_name(key) + "," + (inner ? inner->str() : "?") + ")";
    case Kind::Unknown: return "?";
  }
  return "?";
}

const Attribute* Node::attr(const std::string& key) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

std::string Node::label() const { return op_type + " '" + name + "'"; }

const TypeInfo* Graph::type_of(const std::string& name) const {
  for (const auto& v : inputs)
    if (v.name == name) return &v.type;
  for (const auto& v : outputs)
    if (v.name == name) return &v.type;
  auto it = value_types.find(name);
  return it == value_types.end() ? nullptr : &it->second;
}

std::vector<std::string> Graph::free_values() const {
  std::set<std::string> defined;
  for (const auto& v : inputs) defined.insert(v.name);
  for (const auto& [name, t] : initializers) defined.insert(name);
  for (const auto& n : nodes)
    for (const auto& o : n.outputs) defined.insert(o);
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const auto& n : nodes) {
    for (const auto& i : n.inputs) use(i);
    for (const auto& i : n.implicit_inputs) use(i);
  }
  for (const auto& o : outputs) use(o.name);
  return out;
}

void Graph::sort_topologically(const std::vector<std::string>& outer_scope) {
  std::set<std::string> available(outer_scope.begin(), outer_scope.end());
  for (const auto& v : inputs) available.insert(v.name);
  for (const auto& [name, t] : initializers) available.insert(name);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs)
      if (!o.empty()) producer[o] = i;

  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  std::vector<int> state(nodes.size(), 0);  // 0 unvisited, 1 on stack, 2 done
  // Iterative DFS so a deep chain cannot overflow the stack.
  for (size_t root = 0; root < nodes.size(); ++root) {
    if (state[root]) continue;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const Node& node = nodes[n];
      const size_t total = node.inputs.size() + node.implicit_inputs.size();
      if (next < total) {
        const std::string& in = next < node.inputs.size()
                                    ? node.inputs[next]
                                    : node.implicit_inputs[next - node.inputs.size()];
        ++next;
        if (in.empty() || available.count(in)) continue;
        auto p = producer.find(in);
        PI_CHECK(p != producer.end(), InvalidModel, node.label(), " reads '", in,
                 "', which no node, input or initializer of graph '", name, "' provides");
        PI_CHECK(state[p->second] != 1, InvalidModel, "graph '", name, "' has a cycle through ",
                 nodes[p->second].label());
        if (state[p->second] == 0) {
          state[p->second] = 1;
          stack.push_back({p->second, 0});
        }
      } else {
        state[n] = 2;
        sorted.push_back(std::move(nodes[n]));
        stack.pop_back();
      }
    }
  }
  nodes = std::move(sorted);
}

}  // namespace polyinfer::ir
