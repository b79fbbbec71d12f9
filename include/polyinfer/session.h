// polyinfer/session.h — load an ONNX model once, run it many times.
//
//   polyinfer::SessionOptions opts;
//   opts.providers = {"cpu"};                        // order of preference, and the allowed set
//   auto session = polyinfer::Session::load("digits_cnn.onnx", opts);
//   for (const auto& in : session.inputs()) std::cout << in.name << " " << in.type << "\n";
//   auto x = polyinfer::Tensor::from_vector<float>({1, 1, 8, 8}, pixels);
//   auto outputs = session.run({{"pixels", x}});   // all outputs, in the model's order
//   std::cout << session.placement().summary() << "\n";   // where every node ran
//
// Creating a session imports and checks the model, places every node on a provider (the first
// listed provider that can run it), and creates each node's kernel once. run() may be called
// from many threads at once, each run on the session's intra-op thread count. On the CPU the
// runs overlap: each has its own values, and a node's kernel serves one run at a time, so
// concurrent runs of one model pipeline through it node by node (a session per thread overlaps
// fully, for the memory of its own packed weights). Sessions with a device provider (its one
// queue) or graph capture take turns. Weights are shared, never copied per run; intermediate
// buffers return to a per-session pool as soon as their last reader has run.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "polyinfer/provider_options.h"
#include "polyinfer/tensor.h"

namespace polyinfer {

// The floating-point precision a session computes in (SessionOptions::precision).
enum class Precision {
  Fp32,  // the model as it is
  // Float16 storage for the ops that are safe in half precision (convolutions, matrix products,
  // the fused forms the optimizer makes, element-wise and data-movement ops); reductions,
  // normalizations and the numerically sensitive ops stay float32, with Casts at the borders.
  // Kernels accumulate in float32. Graph inputs and outputs keep their float32 types.
  Fp16,
  // Bfloat16 storage for the same ops as Fp16, with the same float32 accumulation, borders and
  // Casts. Bfloat16 keeps float32's 8-bit exponent, so values that underflow or overflow
  // float16 (below ~6e-8, above 65504) keep their magnitude; it has 8 significant bits to
  // float16's 11, so each stored value rounds by up to 2^-8 relative instead of 2^-11.
  Bf16,
};
// "fp32", "fp16", "bf16".
const char* precision_name(Precision p);
// Parses "fp32" / "fp16" / "bf16"; throws InvalidArgument listing the choices otherwise.
Precision parse_precision(const std::string& name);

struct SessionOptions {
  // Providers to use, in order of preference; nodes go to the first one that can run them. A
  // listed provider that is not usable on this machine is an error (ProviderUnavailable, with
  // the probe's reason) unless allow_missing is set, in which case it is skipped and the skip
  // is reported in the placement.
  // {"auto"} takes the usable accelerator providers `doctor` finds, best first, then cpu
  // (Placement::auto_choice says what it chose and why). "vulkan:1" names a device by its
  // number in `polyinfer providers`/`doctor`; plain "vulkan" lets the provider choose. An
  // entry may carry the provider's options as text after its name, "cpu:winograd=off" or
  // "vulkan:1" (provider_options.h): they apply on top of `cpu` and `cuda` below.
  std::vector<std::string> providers{"cpu"};
  bool allow_missing = false;
  // Intra-op threads; 0 means one per physical core.
  int threads = 0;
  // Graph optimization level, 0 (none) to 3 (all); see docs/optimizer.md.
  int optimization_level = 3;
  // Precision of the computation. Fp16 and Bf16 convert the graph after the optimizer (the
  // rules of `polyinfer quantize --fp16`, plus the fused ai.polyinfer products and Gelu): half
  // the weight memory and bandwidth on providers with 16-bit float kernels (vulkan on devices
  // with 16-bit storage, float16 only). Nodes a provider cannot run in that type fall back as
  // usual; the CPU provider runs float16 and bfloat16 on its reference kernels (correct, not
  // fast: for checking, not for speed).
  Precision precision = Precision::Fp32;
  // Let float32 matrix products and convolutions use TF32 Tensor Core math where a provider has
  // it (cuda on compute capability 8.0 and newer: Ampere, Hopper): inputs rounded to 10
  // mantissa bits, float32 accumulation and storage. Several times faster there, at about 1e-3
  // relative error per product instead of float32's 1e-7 (what ONNX Runtime's CUDA provider
  // and PyTorch's convolutions do by default). Off by default: float32 then means float32, and
  // the results agree with the CPU's. Each node it applies to says so in its impl ("+tf32");
  // other providers ignore it.
  bool allow_tf32 = false;
  // Time every node's kernel on each run, for Session::profile() (`polyinfer bench --profile`).
  // Costs two clock reads per node per run; off, it costs nothing measurable.
  bool profile = false;
  // Record the device work of a run once and replay it (CUDA Graphs: one launch instead of one
  // per kernel, which is what small batches spend their time on). Applies when every node runs
  // on one provider that can record its work (cuda); a run with the previous run's input shapes
  // is recorded (the second run, when shapes stay), later runs with inputs of those shapes
  // replay it, other shapes run as usual. The recording keeps every intermediate of a run alive
  // (no memory reuse between them). Placement::capture says what happened. Off while profiling.
  bool capture_graph = false;
  // Intermediate values to return too, after the model's outputs (run() and outputs() list them
  // in this order). A kept value is a graph output to the optimizer, so no pass fuses it away;
  // `compare --per-layer` keeps every value two models share. A name no node produces is an
  // InvalidArgument error.
  std::vector<std::string> keep_values;
  // The CPU provider's kernel switches and GEMM tiles, and the cuda provider's options
  // (provider_options.h). They apply where that provider is in the list.
  CpuProviderOptions cpu;
  CudaProviderOptions cuda;
};

// A model input or output as the model declares it.
struct ValueSpec {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;                    // -1 for a dynamic dimension
  std::vector<std::string> dims;  // symbolic names of dynamic dimensions ("" when none)
  bool has_shape = false;         // false when even the rank is unknown
  std::string kind = "tensor";    // "tensor", "sequence", "optional", "map"
  std::string type;               // printable: "float32[N,1,8,8]", "seq(map(int64,float32[]))"
  // A map's key dtype, or that of the maps a sequence holds (dtype is then their value dtype).
  DType key_dtype = DType::Undefined;
};

// What one node cost over the runs profiled so far (SessionOptions::profile).
struct NodeProfile {
  std::string node;      // node name
  std::string op;        // op type, as in Placement::NodePlacement
  std::string provider;  // where it ran
  std::string impl;      // the kernel's implementation ("reference": the reference tier's)
  // The optimizer pass that inserted the node ("channels-last": a layout Transpose); "" for the
  // model's own nodes and the fused nodes that replace them.
  std::string origin;
  int64_t calls = 0;    // times its kernel ran (0 when profiling is off)
  double total_ms = 0;  // time inside its kernel over all those calls
  double flops = -1;    // estimated FLOPs of one call (runtime/cost.h); -1 when not known
  // Why the provider chose this kernel among the operator's candidates (Placement's choice).
  std::string choice;
  // Time its kernel took to create at session creation (weights prepacked, oneDNN's JIT...),
  // whether or not profiling is on: what CreationTimes::kernels_ms is made of.
  double create_ms = 0;
};

// Where the nodes of a session run (placement rule 5 of docs/design.md).
struct Placement {
  struct Share {
    std::string provider;
    int nodes = 0;
    double flops_share = 0;  // share of the model's estimated FLOPs, 0..1
  };
  struct Fallback {
    std::string node;      // node name
    std::string op;        // op type
    std::string provider;  // where it ran
    std::string reason;    // why earlier providers declined
  };
  struct Skipped {
    std::string provider;
    std::string reason;  // the probe's reason
  };
  struct NodePlacement {
    std::string node;      // node name
    std::string op;        // op type ("ai.polyinfer.FusedConv" for other domains)
    std::string provider;  // where it runs
    std::string impl;      // the kernel's implementation ("reference", "onednn:...")
    // Why that kernel, where the operator has several (the CPU's choice tables,
    // docs/kernels.md): its row's rule, then the earlier rows passed over and why
    // ("winograd: 3x3 stride 1 ...; passed over: stem (turned off)"); "" where there was no
    // choice.
    std::string choice;
  };
  std::vector<Share> providers;      // in the session's provider order, only those used
  std::vector<NodePlacement> nodes;  // every top-level node, in execution order
  std::vector<Fallback> fallbacks;   // nodes that did not run on the first usable provider
  std::vector<Skipped> skipped;      // unusable providers skipped under allow_missing
  // With providers {"auto"}: what it chose and why the others were not taken ("auto chose cpu
  // (cuda not in this build; vulkan not in this build)"); "" for an explicit list.
  std::string auto_choice;
  // Caveats of the chosen kernels on this machine (Kernel::advisory), each once, led by how many
  // nodes it concerns: "3 nodes (QLinearConv 'conv1', ...): this CPU has no VNNI: ...".
  std::vector<std::string> notes;
  int device_copies = 0;  // tensor copies across device borders per run
  int total_nodes = 0;
  // Where flops_share comes from: "static shapes" (known at load), "first run" (shapes of the
  // first run, for models with dynamic dimensions), or "" (not known yet: flops_share is 0).
  std::string flops_basis;

  // With SessionOptions::capture_graph: "pending (records a run with the previous run's input
  // shapes)", "replaying N recorded work items", "off while profiling (each kernel is timed
  // alone)" or "off: <why>"; "" when capture was not asked for.
  std::string capture;

  // One line: "placement: cpu 12/12 nodes (100% of FLOPs); 0 fell back; 0 device copies".
  std::string summary() const;
  // All of it as one JSON object (`polyinfer run --json`'s "placement", the C API's
  // pi_session_placement_json): "summary", "providers" [{name, nodes, flops_share}], "nodes"
  // [{node, op, provider, impl, choice}], "fallbacks" [{node, op, provider, reason}], "skipped"
  // [{provider, reason}], "notes", "auto_choice", "total_nodes", "device_copies", "flops_basis",
  // "capture".
  std::string to_json() const;
};

// Where Session::load's wall time went, in milliseconds. The first session of a process also
// pays one-time costs here: libonnx's operator schemas (~10 ms, built on a second thread during
// the import) and oneDNN's first use.
struct CreationTimes {
  double import_ms = 0;    // reading and converting the model, ONNX shape inference
  double optimize_ms = 0;  // the graph optimizer (and the fp16/bf16 conversion)
  double kernels_ms = 0;   // placing nodes and creating their kernels: oneDNN primitives (JIT),
                           // prepacked weights, device uploads
  double total_ms = 0;     // all of it, with the bookkeeping between the phases
};

class Session {
 public:
  static Session load(const std::string& path, const SessionOptions& options = {});
  // `base_dir` is where external data files may be read from ("" forbids external data).
  static Session load_bytes(const void* data, size_t size, const SessionOptions& options = {},
                            const std::string& base_dir = "");

  const std::vector<ValueSpec>& inputs() const;
  const std::vector<ValueSpec>& outputs() const;

  // Runs the model. Every input without a default must be given, by name, with the declared
  // dtype and a shape that matches the declared one (dynamic dimensions may take any size).
  // Returns all outputs in the model's order. Throws InvalidArgument / ShapeMismatch naming the
  // input and what the model expects. Outputs may share memory with the model's constants (an
  // output that is a weight, or a view of one): treat them as read-only, or clone() them.
  std::vector<Value> run(const std::map<std::string, Value>& inputs);
  // Runs and returns only the named outputs, in the order given.
  std::vector<Value> run(const std::map<std::string, Value>& inputs,
                         const std::vector<std::string>& output_names);

  const Placement& placement() const;
  const CreationTimes& creation_times() const;
  // Peak bytes of intermediate tensors held at once during runs so far (per-session pools).
  size_t peak_memory_bytes() const;
  // Bytes of the planned arena intermediates are served from (runtime/memory_pool.h): planned
  // after the first run from its recorded lifetimes; 0 before that or when runs differ.
  size_t memory_arena_bytes() const;
  // Bytes of the model's weights the session still holds in host memory: those no kernel
  // prepacked and no device copy replaced (weights that only device nodes read live on the
  // device alone), plus those graph outputs or subgraphs read.
  size_t host_weight_bytes() const;
  // Intra-op threads the runs use (SessionOptions::threads, with 0 resolved to the core count).
  int threads() const;
  // The optimization level the graph was rewritten at: SessionOptions::optimization_level, or 2
  // when it asked for 3 and the first provider is not the CPU (level 3's channels-last operators
  // are the CPU's alone; docs/optimizer.md).
  int optimization_level() const;
  // SessionOptions::precision, as the graph was converted.
  Precision precision() const;

  // One record per top-level node, in execution order. Timings accumulate over every run since
  // the session was created or reset_profile() was called; FLOPs are known from the model's
  // static shapes or else from the first run. Without SessionOptions::profile the records still
  // list every node with its FLOPs, with calls and total_ms 0.
  //
  //   opts.profile = true;
  //   auto s = polyinfer::Session::load("model.onnx", opts);
  //   s.run(feeds);            // warm-up
  //   s.reset_profile();
  //   for (int i = 0; i < 10; ++i) s.run(feeds);
  //   for (const auto& r : s.profile()) std::cout << r.op << " " << r.total_ms / r.calls << "\n";
  std::vector<NodeProfile> profile() const;
  void reset_profile();

  struct Impl;

 private:
  explicit Session(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

// Providers built into this binary and whether each is usable here (and why not).
struct ProviderInfo {
  std::string name;
  std::string device;
  bool usable = false;
  std::string reason;
  int kernels = 0;     // operator kernels it registers
  std::string detail;  // how it runs: "oneDNN 2.6.2 (avx512_core_amx), fast:avx512 loops, ..."
  std::vector<ProviderOptionInfo> options;  // what "name:key=value" takes (provider_options.h)
};
std::vector<ProviderInfo> available_providers();

// Frees the device memory providers keep cached for reuse after tensors and sessions are gone
// (the cuda provider keeps freed blocks for the next session instead of returning them to the
// driver); memory in use stays. Returns the bytes freed. Starts no provider that has not run.
size_t release_cached_device_memory();

// The threads a session runs with when SessionOptions::threads is 0: this machine's physical
// cores (SMT siblings share a core's vector units, so they add little to dense kernels).
int default_thread_count();

// polyinfer's version, "0.1.0".
const char* version();

}  // namespace polyinfer
