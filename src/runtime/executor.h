// The sequential executor: runs a placed graph node by node, in topological order.
//
// Values live in numbered slots. Each slot's last reader is known from the graph, so the
// executor drops a value as soon as that reader has run; its buffer returns to the session's
// pool (runtime/memory_pool.h) and the next allocation of similar size reuses it.
//
// Runs may be concurrent (Session::run from many threads): each run has slots of its own (a
// RunState, kept for the next run), and a node's kernel runs for one run at a time (a lock per
// node), so kernels keep their per-shape plans and scratch without making them reentrant. Two
// runs overlap on different nodes, as a pipeline does.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "polyinfer/session.h"
#include "runtime/kernel.h"
#include "runtime/kernel_info.h"
#include "runtime/memory_pool.h"
#include "runtime/provider.h"

namespace polyinfer {

class SharedPrepacks;

// What a session shares with every executor it builds (its subgraphs' too).
struct RuntimeContext {
  std::vector<std::shared_ptr<Provider>> providers;  // usable, in preference order
  std::vector<std::shared_ptr<MemoryPool>> pools;    // one per provider
  int threads = 1;
  bool allow_tf32 = false;  // SessionOptions::allow_tf32
  ProviderOptions options;  // SessionOptions::cpu and ::cuda, with the list's text options
  // Weights packed once for all the kernels that pack them alike (KernelInfo::shared_prepack);
  // null where kernels are made one at a time (constant folding) and nothing is shared.
  std::shared_ptr<SharedPrepacks> prepacks;
};

// A node with its provider and its kernel.
struct PlacedNode {
  const ir::Node* node = nullptr;
  int provider = 0;  // index into RuntimeContext::providers
  std::unique_ptr<Kernel> kernel;
  std::string declined;  // why earlier providers declined it ("" when the first took it)
  double create_ms = 0;  // placing it and creating its kernel, on whichever thread did
  // The subgraphs its kernel compiled (If, Loop, Scan bodies), in the order it asked for them.
  std::vector<CompiledSubgraph> subgraphs;
};

class WeightRelease;

class Executor final : public SubgraphRunner {
 public:
  // Plans the run of `graph` over its placed nodes (runtime/partitioner.h), in their order:
  // value slots and their last readers, the copies of weights on the devices that read them
  // (made once, now), and which inputs an output may take over. `weights` is what the
  // partitioner released; a weight that only device nodes read is released through it too.
  Executor(std::shared_ptr<const ir::Graph> graph, std::shared_ptr<const RuntimeContext> rt,
           std::vector<PlacedNode> nodes, WeightRelease& weights);

  // Binds graph inputs in order (None leaves an optional input out), resolves outer-scope names
  // from `scope`, runs every node, returns the graph outputs in order.
  std::vector<Value> run(const std::vector<Value>& inputs,
                         const std::map<std::string, Value>& scope) override;
  const ir::Graph& graph() const override { return *graph_; }

  const std::vector<PlacedNode>& nodes() const { return nodes_; }
  // Device copies the last run made at provider borders.
  int last_copies() const { return copies_.load(std::memory_order_relaxed); }
  // Estimated FLOPs of each node (runtime/cost.h) from the shapes of the first run; empty before
  // it. Dynamic models have no static estimate, so this is where their FLOP shares come from.
  std::vector<double> first_run_flops() const;
  bool measured() const { return measured_.load(std::memory_order_acquire); }

  // Per-node timing of the kernels (not of the executor's bookkeeping around them), for
  // Session::profile(). Off by default; when off the only cost is one untaken branch per node.
  // It reaches the executors of the nodes' subgraphs (PlacedNode::subgraphs): a body node's time
  // is also inside the time of the node that runs its body.
  struct NodeTiming {
    int64_t calls = 0;
    int64_t total_ns = 0;
  };
  void set_profiling(bool on);
  // One entry per node, in execution order; empty when profiling is off. Read it while no run is
  // in flight (Session::profile() waits for them).
  const std::vector<NodeTiming>& timings() const { return timings_; }
  // Zeroes the timings (e.g. after warm-up runs).
  void reset_timings();

  // Graph capture (SessionOptions::capture_graph): when every node runs on one provider that can
  // record its work (Provider::begin_capture: cuda), the second run copies the inputs into
  // buffers the executor keeps, records the whole run and keeps every value it made; later runs
  // with inputs of the same dtypes and shapes refill those buffers, replay the recording and
  // return copies of its outputs. Inputs of other shapes run as usual. Capture is off while
  // profiling (each kernel is timed alone), and a recording that fails (a kernel read the
  // device back mid-run) turns it off for good, saying why in capture_status().
  void set_capture(bool on);
  // "" when capture was not asked for; otherwise what it did: "pending (records a run with the
  // previous run's input shapes)", "replaying N recorded work items", "off while profiling
  // (each kernel is timed alone)", or "off: <why>".
  const std::string& capture_status() const { return capture_status_; }

 private:
  int slot_of(const std::string& name) const;

  std::shared_ptr<const ir::Graph> graph_;
  std::shared_ptr<const RuntimeContext> rt_;
  std::vector<PlacedNode> nodes_;
  std::map<std::string, int> slots_;
  int num_slots_ = 0;
  std::vector<std::pair<int, Value>> constants_;  // initializer slots
  std::vector<int> input_slots_, output_slots_;
  std::vector<std::pair<int, std::string>> outer_;  // outer-scope slot ← name
  struct Step {
    Device device;  // the node's provider's
    std::vector<int> in, implicit, out;
    std::vector<int> release;  // slots whose last reader is this step
    // Per input: a copy, made once at creation, of a constant input on the node's device (not
    // the host); None where the input is no such constant.
    std::vector<Value> device_in;
    // The input position whose memory output 0 may take over (Kernel::inplace_input) when the
    // value is held by nothing else at run time; -1 where the graph rules it out.
    int donor = -1;
    // The node's implicit inputs by name, the names made once: run_nodes fills in the values
    // before the node runs and empties them after (nodes with subgraphs only).
    std::map<std::string, Value> scope;
  };
  std::vector<Step> steps_;
  // One run's own state. Its value slots are kept from run to run so that constants are bound
  // once: every other slot is None between runs (transient_ lists them). Inputs and outputs of
  // the node running, by address into the slots (in, out), so that the executor copies no
  // handle; conv holds the copies made at provider borders and unused the outputs the graph
  // leaves unnamed.
  struct RunState {
    std::vector<Value> values;
    std::vector<const Value*> in;
    std::vector<Value*> out;
    std::vector<Value> conv, unused;
  };
  // A state for one run: an idle one, or a new one when every state is in a run. Back to the
  // idle list with release_state (one per run that was ever concurrent, kept).
  std::unique_ptr<RunState> acquire_state();
  void release_state(std::unique_ptr<RunState> state);
  std::mutex states_mu_;
  std::vector<std::unique_ptr<RunState>> idle_states_;
  std::vector<int> transient_;
  size_t max_in_ = 0, max_out_ = 0;
  // One per node: held while its kernel runs (and its Step's scope is filled).
  std::unique_ptr<std::mutex[]> node_mu_;
  std::atomic<int> copies_{0};
  mutable std::mutex flops_mu_;  // guards run_flops_
  std::vector<double> run_flops_;
  std::atomic<bool> measured_{false}, measuring_{false};
  std::map<int, Shape> released_shapes_;  // slot → shape of a released initializer
  bool profiling_ = false;
  std::vector<NodeTiming> timings_;

  // Runs every node over `slots` (inputs, constants and outer values already bound), writing
  // each node's outputs straight into their slots; `scratch` holds the run's node views.
  // `release` drops each value after its last reader; a capture run keeps them all (the
  // recording will write them again on every replay, so no one else may have their memory).
  void run_nodes(RunState& scratch, std::vector<Value>& slots, bool release);
  std::vector<Value> outputs_of(const std::vector<Value>& slots) const;
  // The capture run (true: `result` holds its outputs) or false when capture could not be made.
  bool capture_run(const std::vector<Value>& inputs, std::vector<Value>* result);
  bool matches_captured(const std::vector<Value>& inputs) const;
  std::vector<Value> replay(const std::vector<Value>& inputs);
  std::vector<Value> captured_outputs() const;
  // Each input's dtype and shape ("-" for none), to compare runs.
  static std::string input_signature(const std::vector<Value>& inputs);
  static constexpr const char* kPendingStatus =
      "pending (records a run with the previous run's input shapes)";
  static constexpr const char* kProfilingStatus =
      "off while profiling (each kernel is timed alone)";

  bool capture_wanted_ = false;
  std::string last_signature_;  // of the last run made as usual (while capture is wanted)
  // Declared before capture_ so that the recording is destroyed before the memory it uses.
  std::vector<Value> captured_slots_;
  std::unique_ptr<Capture> capture_;
  std::string capture_status_;
};

// Partitions `graph` on rt's providers and plans its execution: a session's two last steps, for
// subgraphs (If, Loop, Scan bodies) and the optimizer's one-node evaluations. Weights stay.
// `outer`: where a subgraph sits (runtime/kernel_info.h), so its kernels see the enclosing graphs'
// weights as constants.
std::unique_ptr<Executor> compile_graph(std::shared_ptr<const ir::Graph> graph,
                                        std::shared_ptr<const RuntimeContext> rt,
                                        const OuterScope* outer = nullptr);

}  // namespace polyinfer
