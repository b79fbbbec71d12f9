// The kernel contract: what an operator implementation sees when it is created and when it runs.
//
// A provider creates one Kernel per node when a Session is created (so attribute parsing, weight
// prepacking and algorithm choice happen once) and calls run() on every Session::run.
//
//   class ReluKernel final : public Kernel {
//    public:
//     explicit ReluKernel(const KernelInfo&) {}
//     void run(KernelContext& ctx) override {
//       const Tensor& x = ctx.input(0);
//       Tensor& y = ctx.output(0, x.dtype(), x.shape());
//       ...
//     }
//   };
//   PI_CPU_KERNEL(Relu, 6, 13, ReluKernel);   // in the op family's own file, beside the code
//
// Kernels throw polyinfer::Error for bad data (UnsupportedOp for a mode or dtype that is not
// implemented, ShapeMismatch or InvalidArgument for inputs that break the operator's rules) and
// never abort. Inputs are read-only: a kernel never writes into an input's memory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "polyinfer/provider_options.h"
#include "polyinfer/tensor.h"

namespace polyinfer {

// Runs a subgraph (the body of If, Loop, Scan, SequenceMap) on the kernel's own providers.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  // Binds the subgraph's formal inputs to `inputs` (in order; a None value leaves an optional
  // input out), resolves outer-scope names in `scope`, and returns the subgraph's outputs in order.
  virtual std::vector<Value> run(const std::vector<Value>& inputs,
                                 const std::map<std::string, Value>& scope) = 0;
  virtual const ir::Graph& graph() const = 0;
};

// What a kernel sees at creation: the node, its attributes and its constant inputs.
class KernelInfo {
 public:
  virtual ~KernelInfo() = default;
  virtual const ir::Node& node() const = 0;
  // An input that is an initializer (a weight); nullptr otherwise. Lets kernels prepack.
  virtual const Tensor* constant_input(size_t i) const = 0;
  // Static type of input/output i, when import or shape inference knows it; nullptr otherwise.
  virtual const ir::TypeInfo* input_type(size_t i) const = 0;
  virtual const ir::TypeInfo* output_type(size_t i) const = 0;
  // Compiles the graph attribute `attr` for the same providers; throws InvalidModel if absent.
  virtual std::unique_ptr<SubgraphRunner> subgraph(const std::string& attr) const = 0;
  // Intra-op threads the session was given.
  virtual int threads() const = 0;
  // SessionOptions::allow_tf32: whether float32 products may use TF32 math. False where a
  // kernel is created outside a session's placement (a provider's own inner kernels).
  virtual bool allow_tf32() const { return false; }
  // The session's provider options (SessionOptions::cpu, ::cuda): what a kernel varies beyond
  // the choice among kernels (the CPU's GEMM tiles). Defaults outside a session.
  virtual const ProviderOptions& options() const;
  // Constant input `i` in the form `key` names, packed once per session and shared: the first
  // kernel to ask for this weight under this key runs `make` (which packs constant_input(i)),
  // and every later one, on any thread, gets the same tensor (those asking meanwhile wait).
  // Nodes that read one weight in turn (an unrolled LSTM's steps) then hold one copy and find
  // it in cache. `key` names all that shapes the packed bytes beyond the weight itself: the
  // kernel family, layout, tile width, transpose, a folded scale. Never write into the result.
  // Outside a session, or where input `i` is no weight, each caller gets make()'s own result.
  // Once every kernel exists, use_count() > 1 on the result says that it is shared.
  virtual std::shared_ptr<const Tensor> shared_prepack(size_t i, const std::string& key,
                                                       const std::function<Tensor()>& make) const;

  int opset() const { return node().opset; }
  size_t num_inputs() const { return node().inputs.size(); }
  size_t num_outputs() const { return node().outputs.size(); }
  bool has_input(size_t i) const { return i < num_inputs() && !node().inputs[i].empty(); }
  bool has_output(size_t i) const { return i < num_outputs() && !node().outputs[i].empty(); }

  bool has_attr(const std::string& name) const { return node().attr(name) != nullptr; }
  // Typed attribute access; the one-argument forms throw InvalidModel when the attribute is
  // absent, the two-argument forms return the default. A present attribute of another type
  // throws InvalidModel naming the node.
  int64_t attr_int(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name) const;  // empty when absent
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def) const;
  std::vector<float> attr_floats(const std::string& name) const;         // empty when absent
  std::vector<std::string> attr_strings(const std::string& name) const;  // empty when absent
  const Tensor* attr_tensor(const std::string& name) const;              // nullptr when absent
  // Throws UnsupportedOp "<op> '<node>': <what> is not implemented" — for a mode or attribute
  // value the kernel does not cover. The partitioner turns it into a placement reason.
  [[noreturn]] void unsupported(const std::string& what) const;
};

// What a kernel sees when it runs: its input values and where its outputs go.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const ir::Node& node() const = 0;
  // Value of explicit input i (None when the model leaves it out or i is past the end).
  virtual const Value& value(size_t i) const = 0;
  // Allocates output i (from the session's allocator for the kernel's device) and returns it.
  // i must be < num_outputs(): check optional outputs with wants_output(i) first.
  virtual Tensor& output(size_t i, DType dtype, const Shape& shape) = 0;
  // Sets output i to an existing value: a view of an input (Reshape), a sequence, or None.
  virtual void set_output(size_t i, Value value) = 0;
  // Values of the node's implicit inputs (outer-scope references of its subgraphs), by name.
  virtual const std::map<std::string, Value>& scope() const = 0;
  virtual int threads() const = 0;

  size_t num_inputs() const { return node().inputs.size(); }
  size_t num_outputs() const { return node().outputs.size(); }
  bool has_input(size_t i) const { return !value(i).is_none(); }
  bool wants_output(size_t i) const { return i < num_outputs() && !node().outputs[i].empty(); }
  // Tensor input i; throws InvalidArgument naming the node and input when it is absent or not a
  // tensor.
  const Tensor& input(size_t i) const;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(KernelContext& ctx) = 0;
  // Which implementation runs the node, for the placement report and profiles: "reference" for
  // the plain kernels; fast kernels name their path ("onednn:brgconv:avx512_core", "avx512").
  virtual std::string impl() const { return "reference"; }
  // A caveat about this node's results on this machine that the user must see ("" for none): the
  // session collects them into Placement::notes, and `run` and `bench` print them.
  virtual std::string advisory() const { return ""; }
  // True when the kernel copied constant input `i` into its own form at creation (reordered,
  // transposed, scaled) and never reads the original again. When every reader of a weight says
  // so, the session frees the original: weights are held once, in the form the kernels use.
  virtual bool prepacked(size_t i) const { return false; }
  // An input whose memory output 0 may take over when nothing else needs that input any more
  // (the executor decides, run by run), or -1. A kernel that names one must give the same result
  // when output 0 is that input's tensor: a residual sum that starts from Z (FusedConv) then
  // skips copying Z into its output.
  virtual int inplace_input() const { return -1; }

  // Why the provider chose this kernel among the operator's candidates (its choice table's
  // row, then the rows passed over): Placement's choice. "" where there was no choice.
  const std::string& choice() const { return choice_; }
  void set_choice(std::string why) { choice_ = std::move(why); }

 private:
  std::string choice_;
};

using KernelFactory = std::unique_ptr<Kernel> (*)(const KernelInfo&);

// A provider may register two kernels for one operator: a fast one (oneDNN, vectorized,
// threaded) and the plain reference one, which the `cpu-ref` provider runs alone and the oracle
// tests compare against. The fast one is tried first; it refuses in its constructor
// (UnsupportedOp) what it does not cover, and the reference one is tried next. Operators with
// several fast candidates register each under a name, and the CPU provider's choice table for
// the operator orders them (providers/cpu/choice.h, docs/design.md "Kernel choice").
enum class KernelTier { Reference = 0, Fast = 1 };

struct KernelDef {
  std::string provider;  // "cpu", "vulkan", ...
  std::string domain;    // "" for the default ONNX domain
  std::string op_type;
  int since = 1;        // first opset version this kernel implements
  int until = 1 << 30;  // last opset version it implements
  KernelFactory make = nullptr;
  KernelTier tier = KernelTier::Reference;
  // A fast candidate's name in its operator's choice table ("winograd"); "" for the others.
  std::string name;
};

// Adds a kernel to the process-wide registry; returns true so it can initialize a static.
bool register_kernel(const KernelDef& def);
// The kernels of `provider` for (domain, op_type) at `opset`, the fast tier first, in
// registration order within a tier (empty if none).
std::vector<const KernelDef*> find_kernels(const std::string& provider, const std::string& domain,
                                           const std::string& op_type, int opset);
// All registered kernels of a provider (for `providers --json` and coverage listings).
std::vector<const KernelDef*> kernels_of(const std::string& provider);
// The first of `defs` (non-empty, in order of preference) whose factory takes the node: a
// kernel's UnsupportedOp passes the node on to the next; the last one's error is thrown.
std::unique_ptr<Kernel> make_first_taker(const std::vector<const KernelDef*>& defs,
                                         const KernelInfo& info);

template <class K> std::unique_ptr<Kernel> make_kernel(const KernelInfo& info) {
  return std::make_unique<K>(info);
}

}  // namespace polyinfer

#define PI_KERNEL_CONCAT_(a, b) a##b
#define PI_KERNEL_CONCAT(a, b) PI_KERNEL_CONCAT_(a, b)
// Registers kernel class K (constructible from const KernelInfo&) for provider P, ONNX domain D,
// operator OP, opset versions [SINCE, UNTIL], at tier TIER under NAME.
#define PI_REGISTER_KERNEL_AS(P, D, OP, SINCE, UNTIL, K, TIER, NAME)                       \
  static const bool PI_KERNEL_CONCAT(pi_kernel_registered_, __COUNTER__) =                 \
      ::polyinfer::register_kernel({P, D, #OP, SINCE, UNTIL, &::polyinfer::make_kernel<K>, \
                                    ::polyinfer::KernelTier::TIER, NAME})
#define PI_REGISTER_KERNEL(P, D, OP, SINCE, UNTIL, K) \
  PI_REGISTER_KERNEL_AS(P, D, OP, SINCE, UNTIL, K, Reference, "")
// The CPU provider's kernels for the default ONNX domain.
#define PI_CPU_KERNEL(OP, SINCE, UNTIL, K) PI_REGISTER_KERNEL("cpu", "", OP, SINCE, UNTIL, K)
// An operator's one fast CPU kernel (tried before the reference one). D is the domain.
#define PI_CPU_FAST_KERNEL(D, OP, SINCE, UNTIL, K) \
  PI_REGISTER_KERNEL_AS("cpu", D, OP, SINCE, UNTIL, K, Fast, "")
// One of an operator's several fast CPU kernels, NAME its row in the operator's choice table
// (providers/cpu/choice_tables.cpp) and its switch (CpuProviderOptions::kernels).
#define PI_CPU_CANDIDATE(D, OP, SINCE, UNTIL, NAME, K) \
  PI_REGISTER_KERNEL_AS("cpu", D, OP, SINCE, UNTIL, K, Fast, NAME)
// polyinfer's own operators (the optimizer's fused ops, docs/optimizer.md), reference tier.
#define PI_CPU_INTERNAL_KERNEL(OP, SINCE, UNTIL, K) \
  PI_REGISTER_KERNEL("cpu", "ai.polyinfer", OP, SINCE, UNTIL, K)
