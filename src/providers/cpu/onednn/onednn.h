// Shared plumbing of the CPU provider's oneDNN kernels (Conv, MatMul/Gemm, pooling).
//
// oneDNN (Debian's libdnnl, v2.6, GNU OpenMP threading) picks the best implementation for this
// CPU at primitive creation (brgconv / brgemm on AVX-512, with blocked weight layouts). Kernels
// create primitives once per input shape — at session creation when the shape is static — and
// reorder constant weights into the primitive's preferred layout then, never per run.
//
// oneDNN threads with the same OpenMP pool as the rest of the CPU provider: a primitive uses
// omp_get_max_threads() at creation and execution, which Session sets from its `threads`.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "ops/activation.h"
#include "polyinfer/tensor.h"
#include "runtime/kernel.h"
#include "runtime/plan_cache.h"

namespace polyinfer::cpu::onednn {

// The process-wide CPU engine.
dnnl::engine& engine();

inline dnnl::memory::dims dims_of(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

// A oneDNN memory object over a tensor's buffer (no copy). oneDNN never writes a source
// argument, so wrapping a read-only input is safe.
inline dnnl::memory wrap(const dnnl::memory::desc& md, const Tensor& t) {
  return dnnl::memory(md, engine(), const_cast<void*>(t.raw_data()));
}

// Writes constant weights into `dst`, a primitive's layout for them, once at creation: `src`
// holds them as `src_md` (a plain layout) says, at any address — a weight may still be in the
// mapped model file (Tensor::peek_bytes), where raw_data offsets are arbitrary. Plain blocked
// layouts are written directly (blocked_copy.h); others (Winograd's, int8 weights that carry
// compensation terms) through a oneDNN reorder, from an aligned copy where `src` is not aligned
// to the element size, since oneDNN's reorders read through typed pointers. Every oneDNN kernel
// writes its constant weights through this.
void write_weights(const void* src, const dnnl::memory::desc& src_md, const dnnl::memory& dst,
                   dnnl::stream& s);

// A oneDNN memory for `md` in a buffer from polyinfer's host allocator, which `owner` keeps
// alive: prepacked weights are then counted and freed like the session's other buffers.
inline dnnl::memory host_memory(const dnnl::memory::desc& md, Tensor* owner) {
  *owner = Tensor::empty(DType::UInt8, {static_cast<int64_t>(md.get_size())});
  return dnnl::memory(md, engine(), owner->raw_data());
}

// Every primitive here is created with scratchpad_mode::user set by this, and run with its
// scratchpad from add_thread_scratchpad(). With oneDNN's own (library) scratchpad, a Winograd
// convolution created on one thread and run on another crashed or ran garbage code
// (Inception-v3 at 2 threads, whose kernels are created on the session's helper threads), and
// a user may create a session on one thread and run it on another.
void use_own_scratchpad(dnnl::primitive_attr& attr);

// The scratchpad `md` (a primitive_desc's scratchpad_desc()) in a buffer of the calling thread,
// grown to the largest request and kept until the thread ends, added to `args`; nothing when
// the primitive needs none. The executor runs one node at a time per thread, so one buffer
// serves them all.
void add_thread_scratchpad(std::unordered_map<int, dnnl::memory>& args,
                           const dnnl::memory::desc& md);

// Appends `act` as eltwise post-ops; returns false when oneDNN has no matching algorithm.
bool append_activation(dnnl::post_ops& ops, const FusedActivation& act);

// A fused activation split between oneDNN's post-ops (`post_op`) and polyinfer's own pass over
// the output afterwards (`after`, fast/activation_pass.h): one of the two is None. The pass
// takes the activations it runs faster than oneDNN's eltwise injector on this CPU (SiLU and
// Sigmoid where the CPU has AVX-512; docs/kernels.md has the figures); the rest stay post-ops.
struct SplitActivation {
  FusedActivation post_op, after;
  // " + fast:avx512-silu" where a pass follows the primitive, for Kernel::impl(); else "".
  std::string impl_suffix() const;
  // Runs the pass over `y` (a no-op without one).
  void apply_after(Tensor& y, int threads) const;
};
SplitActivation split_activation(const FusedActivation& act);

// "onednn:<implementation>" for Kernel::impl(), e.g. "onednn:brgconv:avx512_core".
std::string impl_name(const dnnl::primitive_desc_base& pd);

// Whether oneDNN's JIT kernels use AVX-512 on this CPU (avx512_core or later; not where
// ONEDNN_MAX_CPU_ISA caps it lower).
bool avx512_kernels();

// Input channels below which a 3x3 stride-1 convolution runs oneDNN's direct kernel (brgconv)
// where oneDNN runs AVX-512, not a Winograd one (oneDNN's own, conv.cpp; polyinfer's, whose
// choice-table row steps aside): with a short sum the transforms weigh more, and the direct
// kernel ran such layers faster than either Winograd, while a bound of 100 sent 80-channel
// layers to it, which it ran slower (docs/kernels.md has the figures).
inline constexpr int64_t kWinogradMinChannels = 64;

// Whether oneDNN's int8 dot products are exact on this CPU. Without VNNI (SSE4.1, AVX, AVX2,
// AVX-512 without VNNI) they use VPMADDUBSW, which adds each pair of u8 x s8 products into a
// saturating int16 (oneDNN's "Nuances of int8 computations"): 2 x 255 x 127 > 32767; and an s8
// source is shifted to u8 with compensation and the weights halved, which rounds. Where it is
// false the int8 kernels take their exact form (qlinear.cpp, ExactForm) unless the weights are
// within +-64 and the source u8 (2 x 255 x 64 fits int16).
bool int8_products_exact();

// The caveat an int8 kernel on oneDNN's operands as they are (the `onednn_int8` row) reports
// (Kernel::advisory) when its results may differ from the model's here: "" where the products
// are exact, and without VNNI where the source is u8 and every |w| <= 64. The row runs such a
// node only when switched on (`cpu:onednn_int8=on`); by default `onednn_int8_exact` takes it.
// `exact` is int8_products_exact(), a parameter for tests; `pairs` says the sums run over
// several input channels (false for a depthwise convolution: no pairs to saturate).
std::string int8_advisory(const Tensor& w, bool signed_source, bool exact, bool pairs = true);

// "oneDNN 2.6.2, avx512_core_amx": the library's version and the instruction set its JIT kernels
// use on this CPU (for the provider's description in `providers` and `doctor`).
std::string describe();

// Runs `f`, turning a dnnl::error into polyinfer's Internal error naming `who`.
template <class F> auto guarded(const std::string& who, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    fail(ErrorCode::Internal, who, ": oneDNN failed (", e.what(), ", status ",
         static_cast<int>(e.status), ")");
  }
}

// A kernel's plans (its primitive and what runs with it), one per input shape: made at kernel
// creation when the shape is static, else on the first run with that shape, then kept — the
// most recently used ShapePlans::kDefaultCapacity of them (runtime/plan_cache.h: a node whose
// shape changes on every run must not keep a primitive per shape it ever saw).
template <class Key, class Plan> class PlanCache {
 public:
  // The plan for `key`, made by `make()` when it is not held; oneDNN's errors name `who`.
  template <class Make> Plan& get(const Key& key, const std::string& who, Make&& make) {
    if (Plan* p = plans_.find(key)) return *p;
    return plans_.add(key, guarded(who, make));
  }

  // At kernel creation, for kernels with a reference tier behind them: a shape oneDNN has no
  // implementation for is a refusal (the next kernel takes the node), not an error.
  template <class Make> void prepare(const KernelInfo& info, const Key& key, Make&& make) {
    try {
      if (!plans_.find(key)) plans_.add(key, make());
    } catch (const dnnl::error& e) {
      info.unsupported(std::string("oneDNN path: ") + e.what());
    }
  }

  ShapePlans<Key, Plan>& plans() { return plans_; }

 private:
  ShapePlans<Key, Plan> plans_;
};

}  // namespace polyinfer::cpu::onednn
