// Placement::to_json: the placement report as one JSON object (session.h has the schema).
#include <cstdio>
#include <string>

#include "core/json_text.h"
#include "polyinfer/session.h"

namespace polyinfer {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// "[f(items[0]), f(items[1]), ...]"
template <class T, class F> std::string list(const std::vector<T>& items, F f) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + f(items[i]);
  return s + "]";
}

}  // namespace

std::string Placement::to_json() const {
  const auto q = json_quote;
  std::string s = "{\"summary\": " + q(summary());
  s += ", \"providers\": " + list(providers, [&](const Share& p) {
         return "{\"name\": " + q(p.provider) + ", \"nodes\": " + std::to_string(p.nodes) +
                ", \"flops_share\": " + number(p.flops_share) + "}";
       });
  s += ", \"nodes\": " + list(nodes, [&](const NodePlacement& n) {
         return "{\"node\": " + q(n.node) + ", \"op\": " + q(n.op) +
                ", \"provider\": " + q(n.provider) + ", \"impl\": " + q(n.impl) +
                ", \"choice\": " + q(n.choice) + "}";
       });
  s += ", \"fallbacks\": " + list(fallbacks, [&](const Fallback& f) {
         return "{\"node\": " + q(f.node) + ", \"op\": " + q(f.op) +
                ", \"provider\": " + q(f.provider) + ", \"reason\": " + q(f.reason) + "}";
       });
  s += ", \"skipped\": " + list(skipped, [&](const Skipped& k) {
         return "{\"provider\": " + q(k.provider) + ", \"reason\": " + q(k.reason) + "}";
       });
  s += ", \"notes\": " + list(notes, q);
  s += ", \"auto_choice\": " + q(auto_choice);
  s += ", \"total_nodes\": " + std::to_string(total_nodes);
  s += ", \"device_copies\": " + std::to_string(device_copies);
  s += ", \"flops_basis\": " + q(flops_basis);
  s += ", \"capture\": " + q(capture);
  return s + "}";
}

}  // namespace polyinfer
