// MatMul, Gemm and ai.polyinfer FusedMatMul / FusedGemm through oneDNN's matmul primitive (fast
// tier; reference/gemm.cpp and reference/fused.cpp hold the reference kernels).
//
// Two shapes of work matter. Linear layers (a constant 2-D weight): the batch dimensions of A
// fold into M, and the weight is reordered once into the layout the primitive prefers, with
// alpha (Gemm) folded into it and beta·C into the bias. Activation products (attention's Q·Kᵀ
// and P·V: both operands computed): a batched matmul with NumPy broadcasting of the batch
// dimensions, no prepacking. Anything else — integer types, 1-D operands, Gemm with a computed
// B or a C that is not a per-column bias — is left to the reference kernel.
//
// Dynamic shapes. A primitive is made per input shape (its JIT code fits the sizes) and kept in a
// bounded cache (runtime/plan_cache.h). Linear layers share one prepacked copy of the weights
// among their shapes' primitives: the packed layout depends on K and N alone. Activation products
// of a shape the node has not run before, other than its first, run on one primitive with
// run-time dimensions made once (gemm:jit): a decoder's attention products change shape at every
// generated token, and making a primitive (0.1-0.3 ms) took longer than the product itself; a
// shape that comes back gets its own primitive (brgemm, up to 1.5x faster on AVX-512).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/shape_util.h"
#include "providers/cpu/onednn/onednn.h"
#include "runtime/kernel.h"

namespace polyinfer::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// Row-major strides of `d`.
memory::dims dense_strides(const memory::dims& d) {
  memory::dims s(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// A blocked layout as text, for the key of weights shared among kernels; "" for another kind
// of layout (then each kernel packs its own).
std::string layout_key(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.extra.flags != 0) return "";
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  std::string k = std::to_string(d.data_type) + ":" + std::to_string(d.offset0);
  const auto list = [&k](const char* what, const dnnl_dim_t* v, int n) {
    k += what;
    for (int i = 0; i < n; ++i) k += std::to_string(v[i]) + ",";
  };
  list(" dims ", d.dims, d.ndims);
  list(" padded ", d.padded_dims, d.ndims);
  list(" offsets ", d.padded_offsets, d.ndims);
  list(" strides ", b.strides, d.ndims);
  list(" blocks ", b.inner_blks, b.inner_nblks);
  list(" idxs ", b.inner_idxs, b.inner_nblks);
  return k;
}

int static_rank(const KernelInfo& info, size_t i) {
  if (const Tensor* c = info.constant_input(i)) return c->rank();
  const ir::TypeInfo* t = info.input_type(i);
  if (!t || !t->has_shape) return -1;
  if (t->elem != DType::Undefined && t->elem != DType::Float32) return -1;
  return static_cast<int>(t->dims.size());
}

class OnednnMatMul final : public Kernel {
 public:
  explicit OnednnMatMul(const KernelInfo& info) : label_(info.node().label()) {
    const std::string& op = info.node().op_type;
    gemm_ = op == "Gemm" || op == "FusedGemm";
    if (info.node().domain == "ai.polyinfer")
      act_ = onednn::split_activation(FusedActivation::from(info));
    dnnl::post_ops probe;
    if (!onednn::append_activation(probe, act_.post_op))
      info.unsupported("oneDNN path: this activation");
    const int ra = static_rank(info, 0), rb = static_rank(info, 1);
    if (ra < 2 || rb < 2) info.unsupported("oneDNN path: operands of unknown or rank < 2 shape");
    const Tensor* b = info.constant_input(1);
    if (b && b->dtype() != DType::Float32) info.unsupported("oneDNN path: non-float weights");
    float alpha = 1.f, beta = 1.f;
    uint32_t alpha_bits = 0;
    if (gemm_) {
      trans_a_ = info.attr_int("transA", 0) != 0;
      const bool trans_b = info.attr_int("transB", 0) != 0;
      alpha = info.attr_float("alpha", 1.f);
      beta = info.attr_float("beta", 1.f);
      std::memcpy(&alpha_bits, &alpha, sizeof alpha_bits);
      if (!b || b->rank() != 2 || ra != 2) info.unsupported("oneDNN path: Gemm with computed B");
      // B as given ([N, K] under transB: the prepack reorder reads it through a transposed
      // layout); copied only to fold alpha in.
      weights_ = *b;
      b_transposed_ = trans_b;
      if (alpha != 1.f) {
        weights_ = b->clone();
        copied_b_ = true;
        float* w = weights_.data<float>();
        for (int64_t i = 0; i < weights_.numel(); ++i) w[i] *= alpha;
      }
    } else if (b && b->rank() == 2) {
      weights_ = *b;
    }
    const_b_ = weights_.defined();
    if (const_b_)
      w_shape_ = b_transposed_ ? Shape{weights_.dim(1), weights_.dim(0)} : weights_.shape();
    const size_t bias_input = 2;
    if (info.has_input(bias_input)) {
      const Tensor* c = info.constant_input(bias_input);
      const int64_t n = const_b_ ? w_shape_[1] : -1;
      if (!c || c->dtype() != DType::Float32 || !const_b_ || c->numel() != n ||
          (c->rank() == 2 && c->shape()[0] != 1) || c->rank() > 2)
        info.unsupported("oneDNN path: a bias that is not a constant per-column vector");
      bias_ = c->clone();
      if (beta != 1.f) {
        float* p = bias_.data<float>();
        for (int64_t i = 0; i < bias_.numel(); ++i) p[i] *= beta;
      }
      bias_ = bias_.reshaped({1, n});
    }
    const ir::TypeInfo* at = info.input_type(0);
    if (const_b_ && at && at->has_shape &&
        std::all_of(at->dims.begin(), at->dims.end(), [](int64_t d) { return d > 0; })) {
      // The only shape: its weights may be packed once for every node that reads them alike.
      share_ = {&info,
                std::string(b_transposed_ ? ":t" : ":n") + ":a" + std::to_string(alpha_bits)};
      plan_for(at->dims, {});
      share_.info = nullptr;
      weights_ = Tensor();  // prepacked for the only possible shape (see prepacked())
    }
  }

  bool prepacked(size_t i) const override {
    return (i == 1 && const_b_ && (copied_b_ || !weights_.defined())) ||
           (i == 2 && bias_.defined());
  }

  std::string impl() const override {
    const bool shared = std::any_of(packed_.begin(), packed_.end(),
                                    [](const auto& w) { return w->shared.use_count() > 1; });
    return impl_ + (shared ? "+shared" : "");
  }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    PI_CHECK(a.dtype() == DType::Float32, InvalidArgument, label_, ": A must be float32, got ",
             dtype_name(a.dtype()));
    PI_CHECK(a.rank() >= 2, ShapeMismatch, label_, ": A must have rank >= 2 here, got ",
             shape_str(a.shape()));
    const Tensor* b = nullptr;
    if (!const_b_) {
      b = &ctx.input(1);
      PI_CHECK(b->dtype() == DType::Float32 && b->rank() >= 2, ShapeMismatch, label_,
               ": B must be float32 of rank >= 2 here, got ", dtype_name(b->dtype()),
               shape_str(b->shape()));
    }
    const Shape bs = b ? b->shape() : Shape{};
    Plan& p = const_b_ ? plan_for(a.shape(), bs) : product_plan(a.shape(), bs);
    // A plan with run-time dimensions describes this run's operands by their actual shapes.
    Shape y_shape = p.y_shape;
    memory::desc src_md = p.src_md, w_md = p.w_md, dst_md = p.dst_md;
    if (p.runtime_dims) {
      const Broadcast g = broadcast(a.shape(), bs);
      y_shape = g.y;
      src_md = dense(g.a), w_md = dense(g.b), dst_md = dense(g.y);
    }
    Tensor& y = ctx.output(0, DType::Float32, y_shape);
    dnnl::stream& s = stream_;
    onednn::guarded(label_, [&] {
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, onednn::wrap(src_md, a)},
          {DNNL_ARG_WEIGHTS, b ? onednn::wrap(w_md, *b) : p.weights->mem},
          {DNNL_ARG_DST, memory(dst_md, onednn::engine(), y.raw_data())}};
      if (p.bias) args.emplace(DNNL_ARG_BIAS, *p.bias);
      onednn::add_thread_scratchpad(args, p.scratchpad_md);
      p.prim.execute(s, args);
      s.wait();
    });
    act_.apply_after(y, ctx.threads());
  }

 private:
  // Constant weights in one primitive's layout, shared by every plan whose primitive takes it.
  struct Packed {
    memory mem;
    Tensor buf;                            // behind `mem`
    std::shared_ptr<const Tensor> shared;  // buf, where other kernels may hold it too
  };

  struct Plan {
    Shape y_shape;
    dnnl::matmul prim;
    memory::desc src_md, w_md, dst_md, scratchpad_md;
    std::shared_ptr<Packed> weights;
    std::optional<memory> bias;
    bool runtime_dims = false;  // the descs hold DNNL_RUNTIME_DIM_VAL: run() describes operands
  };

  // Both operands' shapes at the product's rank (leading 1s), and the result's.
  struct Broadcast {
    Shape a, b, y;
  };

  Broadcast broadcast(const Shape& as, const Shape& bs) const {
    const size_t r = std::max(as.size(), bs.size());
    Broadcast g{Shape(r - as.size(), 1), Shape(r - bs.size(), 1), Shape(r)};
    g.a.insert(g.a.end(), as.begin(), as.end());
    g.b.insert(g.b.end(), bs.begin(), bs.end());
    PI_CHECK(g.a[r - 1] == g.b[r - 2], ShapeMismatch, label_, ": A ", shape_str(as), " and B ",
             shape_str(bs), " do not agree on K");
    for (size_t i = 0; i + 2 < r; ++i) {
      PI_CHECK(g.a[i] == g.b[i] || g.a[i] == 1 || g.b[i] == 1, ShapeMismatch, label_, ": A ",
               shape_str(as), " and B ", shape_str(bs), " do not broadcast");
      g.y[i] = std::max(g.a[i], g.b[i]);
    }
    g.y[r - 2] = g.a[r - 2];
    g.y[r - 1] = g.b[r - 1];
    return g;
  }

  static memory::desc dense(const Shape& s) {
    const memory::dims d = onednn::dims_of(s);
    return memory::desc(d, dt::f32, dense_strides(d));
  }

  Plan& plan_for(const Shape& as, const Shape& bs) {
    return plans_.get({as, bs}, label_, [&] { return make_plan(as, bs); });
  }

  // An activation product's plan: the shape's own primitive when the node runs it for the first
  // time ever (a static model's only shape) or again, else the shared one with run-time
  // dimensions.
  Plan& product_plan(const Shape& as, const Shape& bs) {
    auto& plans = plans_.plans();
    const std::pair<Shape, Shape> key{as, bs};
    if (Plan* p = plans.find(key)) return *p;
    const bool first = plans.size() == 0 && !runtime_.size();
    if (plans.seen(key) || first) return plan_for(as, bs);
    // Batch dimensions the operands share stay run-time; one that broadcasts is part of the key.
    const Broadcast g = broadcast(as, bs);
    Shape pattern{static_cast<int64_t>(g.y.size())};
    for (size_t i = 0; i + 2 < g.y.size(); ++i)
      pattern.push_back(g.a[i] == g.b[i] ? -1 : g.a[i] * 1000003 + g.b[i]);
    if (Plan* p = runtime_.find(pattern)) return *p;
    return runtime_.add(pattern, onednn::guarded(label_, [&] { return make_runtime_plan(g); }));
  }

  Plan make_runtime_plan(const Broadcast& g) {
    const memory::dim R = DNNL_RUNTIME_DIM_VAL;
    const size_t r = g.y.size();
    memory::dims a(r, R), b(r, R), y(r, R);
    for (size_t i = 0; i + 2 < r; ++i)
      if (g.a[i] != g.b[i]) a[i] = g.a[i], b[i] = g.b[i], y[i] = g.y[i];
    memory::dims strides(r, R);
    strides.back() = 1;
    Plan p;
    p.runtime_dims = true;
    p.src_md = memory::desc(a, dt::f32, strides);
    p.w_md = memory::desc(b, dt::f32, strides);
    p.dst_md = memory::desc(y, dt::f32, strides);
    dnnl::post_ops ops;
    onednn::append_activation(ops, act_.post_op);
    dnnl::primitive_attr attr;
    onednn::use_own_scratchpad(attr);
    attr.set_post_ops(ops);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p.src_md, p.w_md, p.dst_md), attr,
                                    onednn::engine());
    p.prim = dnnl::matmul(pd);
    p.scratchpad_md = pd.scratchpad_desc();
    return p;
  }

  // The prepacked weights in layout `md`: the copy an earlier plan made, or a new one.
  std::shared_ptr<Packed> packed_weights(const memory::desc& md, const memory::desc& w_user) {
    for (const auto& w : packed_)
      if (w->mem.get_desc() == md) return w;
    auto w = std::make_shared<Packed>();
    const std::string layout = share_.info ? layout_key(md) : "";
    if (layout.empty()) {
      w->mem = onednn::host_memory(md, &w->buf);
      onednn::write_weights(weights_.peek_bytes(), w_user, w->mem, stream_);
    } else {
      w->shared = share_.info->shared_prepack(1, "onednn.matmul:" + layout + share_.key, [&] {
        Tensor buf;
        onednn::write_weights(weights_.peek_bytes(), w_user, onednn::host_memory(md, &buf),
                              stream_);
        return buf;
      });
      w->buf = *w->shared;
      w->mem = onednn::wrap(md, w->buf);
    }
    packed_.push_back(w);
    return w;
  }

  Plan make_plan(const Shape& as, const Shape& bs) {
    Plan p;
    memory::dims src_d, w_d, dst_d;
    tag src_tag = tag::ab;
    if (const_b_) {
      // A linear layer: fold A's batch dimensions into M.
      PI_CHECK(weights_.defined(), Internal, label_, ": input shape ", shape_str(as),
               " differs from the statically known one the weights were prepacked for");
      const int64_t K = w_shape_[0], N = w_shape_[1];
      const int64_t ka = trans_a_ ? as[0] : as.back();
      PI_CHECK(ka == K, ShapeMismatch, label_, ": A ", shape_str(as), " has K = ", ka,
               " but B has ", K, " rows");
      const int64_t M = trans_a_ ? as[1] : shape_numel(as) / K;
      src_d = {M, K};
      w_d = {K, N};
      dst_d = {M, N};
      if (trans_a_) src_tag = tag::ba;
      p.y_shape = gemm_ ? Shape{M, N} : Shape(as.begin(), as.end() - 1);
      if (!gemm_) p.y_shape.push_back(N);
    } else {
      // Both operands computed: batched, with the batch dimensions broadcast.
      const Broadcast g = broadcast(as, bs);
      src_d = onednn::dims_of(g.a);
      w_d = onednn::dims_of(g.b);
      dst_d = onednn::dims_of(g.y);
      p.y_shape = g.y;
    }
    const memory::desc src_md = src_tag == tag::ba
                                    ? memory::desc(src_d, dt::f32, tag::ba)
                                    : memory::desc(src_d, dt::f32, dense_strides(src_d));
    p.src_md = src_md;
    p.dst_md = memory::desc(dst_d, dt::f32, dense_strides(dst_d));
    const memory::desc w_plain(w_d, dt::f32, dense_strides(w_d));
    const memory::desc w_user = b_transposed_ ? memory::desc(w_d, dt::f32, tag::ba) : w_plain;
    const memory::desc w_any = const_b_ ? memory::desc(w_d, dt::f32, tag::any) : w_user;
    memory::desc bias_md;
    if (bias_.defined()) bias_md = memory::desc({1, w_d[1]}, dt::f32, tag::ab);
    dnnl::post_ops ops;
    onednn::append_activation(ops, act_.post_op);
    dnnl::primitive_attr attr;
    onednn::use_own_scratchpad(attr);
    attr.set_post_ops(ops);
    auto desc = bias_.defined() ? dnnl::matmul::desc(src_md, w_any, bias_md, p.dst_md)
                                : dnnl::matmul::desc(src_md, w_any, p.dst_md);
    dnnl::matmul::primitive_desc pd(desc, attr, onednn::engine());
    // Where oneDNN has no blocked weight layout of its own (its gemm-based matmul: AVX2 and older
    // in 2.6), it takes constant weights as they come, row-major [K, N]. Stored transposed they
    // ran up to twice as fast on an AVX2 machine (docs/kernels.md), so the prepacked copy is
    // stored that way instead.
    if (const_b_ && pd.weights_desc() == w_plain) {
      const memory::desc w_t(w_d, dt::f32, tag::ba);
      auto desc_t = bias_.defined() ? dnnl::matmul::desc(src_md, w_t, bias_md, p.dst_md)
                                    : dnnl::matmul::desc(src_md, w_t, p.dst_md);
      pd = dnnl::matmul::primitive_desc(desc_t, attr, onednn::engine());
    }
    impl_ = onednn::impl_name(pd) + act_.impl_suffix();
    p.prim = dnnl::matmul(pd);
    p.scratchpad_md = pd.scratchpad_desc();
    p.w_md = w_user;
    if (const_b_) p.weights = packed_weights(pd.weights_desc(), w_user);
    if (bias_.defined()) p.bias = onednn::wrap(bias_md, bias_);
    return p;
  }

  std::string label_;
  bool gemm_ = false, trans_a_ = false;
  bool const_b_ = false, copied_b_ = false;  // B is a constant; we hold our own copy of it
  bool b_transposed_ = false;                // weights_ is B stored [N, K] (Gemm's transB)
  Shape w_shape_;
  onednn::SplitActivation act_;
  Tensor weights_, bias_;  // weights_: constant B (alpha folded in), bias_: [1, N]
  onednn::PlanCache<std::pair<Shape, Shape>, Plan> plans_;
  // Activation products' plans with run-time dimensions, by which batch dimensions broadcast.
  ShapePlans<Shape, Plan> runtime_;
  std::vector<std::shared_ptr<Packed>> packed_;  // constant weights, one copy per layout
  // While the constructor plans the one static shape: the node's info and the key's part that
  // the layout does not tell (transB, alpha), to share the packed weights (shared_prepack).
  struct {
    const KernelInfo* info = nullptr;
    std::string key;
  } share_;
  dnnl::stream stream_{onednn::engine()};  // one per kernel, not one per run
  std::string impl_ = "onednn";
};

PI_CPU_CANDIDATE("", MatMul, 1, 28, "onednn_matmul", OnednnMatMul);
PI_CPU_CANDIDATE("", Gemm, 1, 28, "onednn_matmul", OnednnMatMul);
PI_CPU_CANDIDATE("ai.polyinfer", FusedMatMul, 1, 1, "onednn_matmul", OnednnMatMul);
PI_CPU_CANDIDATE("ai.polyinfer", FusedGemm, 1, 1, "onednn_matmul", OnednnMatMul);

}  // namespace
}  // namespace polyinfer::cpu
