#include "runtime/partitioner.h"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "runtime/kernel_info.h"

namespace polyinfer {
namespace {

// Places one node: the first provider that can create its kernel takes it.
PlacedNode place(const ir::Node& node, const std::shared_ptr<const ir::Graph>& graph,
                 const std::shared_ptr<const RuntimeContext>& rt_ptr, WeightRelease& weights,
                 const OuterScope* outer) {
  const auto started = std::chrono::steady_clock::now();
  const RuntimeContext& rt = *rt_ptr;
  PlacedNode p;
  const GraphKernelInfo info(node, graph, rt_ptr, &weights.mutex(), outer, &p.subgraphs);
  p.node = &node;
  // Pass 1: first provider that can create the kernel.
  for (size_t i = 0; i < rt.providers.size() && !p.kernel; ++i) {
    try {
      p.kernel = rt.providers[i]->create_kernel(info);
      p.provider = static_cast<int>(i);
    } catch (const Error& e) {
      p.subgraphs.clear();  // compiled for a kernel that declined
      if (e.code() != ErrorCode::UnsupportedOp) throw;
      if (!p.declined.empty()) p.declined += "; ";
      p.declined += rt.providers[i]->name() + ": " + e.what();
    }
  }
  // Pass 2: nobody took it.
  if (!p.kernel) {
    bool has_cpu = false;
    for (const auto& pr : rt.providers) has_cpu |= pr->name() == "cpu";
    fail(ErrorCode::UnsupportedOp, "no provider can run ", node.label(), " (opset ", node.opset,
         "): ", p.declined,
         has_cpu ? "" : "; add cpu to the provider list (--providers ...,cpu) to fall back to it");
  }
  p.create_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return p;
}

// Below this many nodes per thread, starting threads costs more than it saves.
constexpr size_t kMinNodesPerWorker = 8;

}  // namespace

std::vector<PlacedNode> partition(std::shared_ptr<const ir::Graph> graph_ptr,
                                  std::shared_ptr<const RuntimeContext> rt_ptr,
                                  WeightRelease& weights, int workers, const OuterScope* outer) {
  const ir::Graph& graph = *graph_ptr;
  const RuntimeContext& rt = *rt_ptr;
  const size_t n = graph.nodes.size();
  std::vector<PlacedNode> placed(n);
  bool concurrent = workers > 1 && n >= 2 * kMinNodesPerWorker;
  for (const auto& pr : rt.providers) concurrent = concurrent && pr->concurrent_kernel_creation();
  if (!concurrent) {
    for (size_t i = 0; i < n; ++i) {
      placed[i] = place(graph.nodes[i], graph_ptr, rt_ptr, weights, outer);
      weights.placed(placed[i]);
    }
    return placed;
  }

  // Nodes are handed out in order, one at a time, to whichever thread is free. After a failure
  // no further node is taken, but every node before it was taken already and finishes, so the
  // error reported is the first in node order, as in the sequential loop.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(n);
  std::mutex placed_mu;  // `weights` sees one node at a time
  auto work = [&] {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
      try {
        placed[i] = place(graph.nodes[i], graph_ptr, rt_ptr, weights, outer);
        std::lock_guard<std::mutex> lock(placed_mu);
        weights.placed(placed[i]);
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true);
      }
    }
  };
  // oneDNN sizes a primitive's parallel work for the OpenMP thread count of the thread that
  // creates it: helpers take the session's, as the creating thread has.
  const int omp_threads = omp_get_max_threads();
  std::vector<std::thread> helpers;
  const size_t wanted = std::min<size_t>(static_cast<size_t>(workers), n / kMinNodesPerWorker);
  for (size_t t = 1; t < wanted; ++t) {
    try {
      helpers.emplace_back([&work, omp_threads] {
        omp_set_num_threads(omp_threads);
        work();
      });
    } catch (const std::system_error&) {
      break;  // no more threads: those started (and this one) do the rest
    }
  }
  work();
  for (auto& h : helpers) h.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return placed;
}

}  // namespace polyinfer
