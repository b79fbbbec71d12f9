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

#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
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
  std::vector<float> attr_floats(const std::string& name) const;  // empty when absent
  std::vector<std::string> attr_strings(const std::string& name) const;  // empty when absent
  const Tensor* attr_tensor(const std::string& name) const;  // nullptr when absent
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
};

using KernelFactory = std::unique_ptr<Kernel> (*)(const KernelInfo&);
// A cheap test that is false only where the kernel's constructor would refuse the node.
using KernelPrecheck = bool (*)(const KernelInfo&);

// A provider may register several kernels for one operator: a fast one (oneDNN, vectorized,
// threaded) and the plain reference one. The provider tries them fastest first; a fast kernel
// refuses in its constructor (UnsupportedOp) what it does not cover, and the next one is tried.
// The reference tier is what the `cpu-ref` provider runs, and the oracle tests compare against.
// A Specialized kernel covers a narrow case (one layout, one instruction set) better than the
// general fast kernel of its operator, and is tried before it.
enum class KernelTier { Reference = 0, Fast = 1, Specialized = 2 };

struct KernelDef {
  std::string provider;  // "cpu", "vulkan", ...
  std::string domain;    // "" for the default ONNX domain
  std::string op_type;
  int since = 1;         // first opset version this kernel implements
  int until = 1 << 30;   // last opset version it implements
  KernelFactory make = nullptr;
  KernelTier tier = KernelTier::Reference;
  // K::may_take when the class declares `static bool may_take(const KernelInfo&)` (see
  // precheck_of below), else null: always constructed to find out.
  KernelPrecheck may_take = nullptr;
};

// Adds a kernel to the process-wide registry; returns true so it can initialize a static.
bool register_kernel(const KernelDef& def);
// The kernels of `provider` for (domain, op_type) at `opset`, fastest tier first (empty if none).
std::vector<const KernelDef*> find_kernels(const std::string& provider, const std::string& domain,
                                           const std::string& op_type, int opset);
// All registered kernels of a provider (for `providers --json` and coverage listings).
std::vector<const KernelDef*> kernels_of(const std::string& provider);
// The first of `defs` (non-empty, in order of preference) whose factory takes the node: a
// kernel's UnsupportedOp passes the node on to the next; the last one's error is thrown. A
// candidate whose may_take says no is passed over without being constructed (not the last).
std::unique_ptr<Kernel> make_first_taker(const std::vector<const KernelDef*>& defs,
                                         const KernelInfo& info);

template <class K>
std::unique_ptr<Kernel> make_kernel(const KernelInfo& info) {
  return std::make_unique<K>(info);
}

// A kernel class may declare `static bool may_take(const KernelInfo&)`: false only where its
// constructor would refuse (anything uncertain answers true and is left to the constructor).
// A refusal is an exception, several microseconds each (~9 here), and the CPU's specialized
// convolutions refused each of DenseNet-121's 120 convolutions two or three times while its
// session was created.
template <class K>
constexpr KernelPrecheck precheck_of() {
  if constexpr (requires(const KernelInfo& i) {
                  { K::may_take(i) } -> std::same_as<bool>;
                })
    return &K::may_take;
  else
    return nullptr;
}

}  // namespace polyinfer

#define PI_KERNEL_CONCAT_(a, b) a##b
#define PI_KERNEL_CONCAT(a, b) PI_KERNEL_CONCAT_(a, b)
// Registers kernel class K (constructible from const KernelInfo&) for provider P, ONNX domain D,
// operator OP, opset versions [SINCE, UNTIL].
#define PI_REGISTER_KERNEL_TIER(P, D, OP, SINCE, UNTIL, K, TIER)                         \
  static const bool PI_KERNEL_CONCAT(pi_kernel_registered_, __COUNTER__) =                \
      ::polyinfer::register_kernel(                                                       \
          {P, D, #OP, SINCE, UNTIL, &::polyinfer::make_kernel<K>,                          \
           ::polyinfer::KernelTier::TIER, ::polyinfer::precheck_of<K>()})
#define PI_REGISTER_KERNEL(P, D, OP, SINCE, UNTIL, K) \
  PI_REGISTER_KERNEL_TIER(P, D, OP, SINCE, UNTIL, K, Reference)
// The CPU provider's kernels for the default ONNX domain.
#define PI_CPU_KERNEL(OP, SINCE, UNTIL, K) PI_REGISTER_KERNEL("cpu", "", OP, SINCE, UNTIL, K)
// A fast CPU kernel (tried before the reference one; see KernelTier). D is the domain.
#define PI_CPU_FAST_KERNEL(D, OP, SINCE, UNTIL, K) \
  PI_REGISTER_KERNEL_TIER("cpu", D, OP, SINCE, UNTIL, K, Fast)
// polyinfer's own operators (the optimizer's fused ops, docs/optimizer.md), reference tier.
#define PI_CPU_INTERNAL_KERNEL(OP, SINCE, UNTIL, K) \
  PI_REGISTER_KERNEL("cpu", "ai.polyinfer", OP, SINCE, UNTIL, K)
