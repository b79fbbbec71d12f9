#include "runtime/partitioner.h"

namespace polyinfer {

std::vector<PlacedNode> partition(const ir::Graph& graph, const RuntimeContext& rt,
                                  const KernelInfoFactory& make_info,
                                  const std::function<void(const PlacedNode&)>& on_placed) {
  std::vector<PlacedNode> placed;
  placed.reserve(graph.nodes.size());
  for (const ir::Node& node : graph.nodes) {
    auto info = make_info(node);
    PlacedNode p;
    p.node = &node;
    // Pass 1: first provider that can create the kernel.
    for (size_t i = 0; i < rt.providers.size() && !p.kernel; ++i) {
      try {
        p.kernel = rt.providers[i]->create_kernel(*info);
        p.provider = static_cast<int>(i);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::UnsupportedOp) throw;
        if (!p.declined.empty()) p.declined += "; ";
        p.declined += rt.providers[i]->name() + ": " + e.what();
      }
    }
    // Pass 2: nobody took it.
    if (!p.kernel) {
      bool has_cpu = false;
      for (const auto& pr : rt.providers) has_cpu |= pr->name() == "cpu";
      fail(ErrorCode::UnsupportedOp, "no provider can run ", node.label(), " (opset ",
           node.opset, "): ", p.declined,
           has_cpu ? "" : "; add cpu to the provider list (--providers ...,cpu) to fall back to it");
    }
    placed.push_back(std::move(p));
    if (on_placed) on_placed(placed.back());
  }
  return placed;
}

}  // namespace polyinfer
