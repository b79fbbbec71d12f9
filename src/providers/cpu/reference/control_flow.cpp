// Control flow of the default ONNX domain: If, Loop and Scan. Each runs a subgraph (compiled
// once, when the kernel is created) through SubgraphRunner; the node's outer-scope values come
// in ctx.scope() and are handed on to every run of the body.
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/shape_util.h"
#include "providers/cpu/reference/op_util.h"
#include "runtime/kernel.h"

namespace polyinfer {
namespace {

void fill_zero(Tensor& t) {
  if (t.dtype() != DType::String && t.numel() > 0) std::memset(t.raw_data(), 0, t.nbytes());
}

// The sub-tensor at `index` along `axis` (that axis removed).
Tensor take_along(const Tensor& t, int64_t axis, int64_t index) {
  Shape out_shape = t.shape();
  const int64_t len = out_shape[axis];
  out_shape.erase(out_shape.begin() + axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.shape()[d];
  for (size_t d = axis + 1; d < t.shape().size(); ++d) inner *= t.shape()[d];
  Tensor out = Tensor::empty(t.dtype(), out_shape);
  for (int64_t o = 0; o < outer; ++o)
    copy_elems(out, o * inner, t, (o * len + index) * inner, inner);
  return out;
}

// Host view of a body result, so that copies read host memory whatever provider produced it.
Tensor host_tensor(const Value& v, const ir::Node& node, const char* what, size_t k) {
  PI_CHECK(v.is_tensor(), InvalidArgument, node.label(), ": ", what, " ", k,
           " of the body must be a tensor, got ", v.describe());
  return v.tensor().to(Device::cpu());
}

// Stacks equally shaped `parts` along a new axis `axis` into `out` (allocated by the caller with
// the stacked shape); part i goes to position positions[i].
void stack_into(Tensor& out, const std::vector<Tensor>& parts, const std::vector<int64_t>& pos,
                int64_t axis, int64_t count) {
  if (parts.empty()) return;
  const Shape& elem = parts[0].shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= elem[d];
  for (size_t d = axis; d < elem.size(); ++d) inner *= elem[d];
  for (size_t i = 0; i < parts.size(); ++i)
    for (int64_t o = 0; o < outer; ++o)
      copy_elems(out, (o * count + pos[i]) * inner, parts[i], o * inner, inner);
}

// Checks that every part has the first part's shape and dtype; scan outputs may not change.
void check_same(const std::vector<Tensor>& parts, const ir::Node& node, size_t k) {
  for (const Tensor& p : parts)
    PI_CHECK(p.shape() == parts[0].shape() && p.dtype() == parts[0].dtype(), ShapeMismatch,
             node.label(), ": scan output ", k, " changed from ", parts[0].describe(), " to ",
             p.describe(), " between iterations");
}

// Element type and shape of a scan output that got no iterations: what the body's output type
// declares (dimensions it leaves open count as 0), with a 0-long scan axis inserted.
std::pair<DType, Shape> empty_scan_output(const ir::TypeInfo& type, int64_t axis, bool batch) {
  Shape s;
  if (type.has_shape)
    for (int64_t d : type.dims) s.push_back(d < 0 ? 0 : d);
  const int64_t rank = static_cast<int64_t>(s.size()) + 1;
  if (axis < 0) axis += rank;
  axis = std::clamp<int64_t>(axis, 0, rank - 1);
  s.insert(s.begin() + axis, 0);
  if (batch) s.insert(s.begin(), 0);
  const DType dt = type.elem == DType::Undefined ? DType::Float32 : type.elem;
  return {dt, s};
}

bool read_bool(const Tensor& t, const ir::Node& node, const char* what) {
  PI_CHECK(t.dtype() == DType::Bool && t.numel() == 1, InvalidArgument, node.label(), ": ", what,
           " must be a bool tensor of one element, got ", t.describe());
  return t.to(Device::cpu()).data<bool>()[0];
}

// ---------------------------------------------------------------------------------------------

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(const KernelInfo& info)
      : then_(info.subgraph("then_branch")), else_(info.subgraph("else_branch")) {
    for (const auto* g : {&then_->graph(), &else_->graph()})
      PI_CHECK(g->outputs.size() == info.num_outputs(), InvalidModel, info.node().label(),
               ": branch '", g->name, "' has ", g->outputs.size(), " outputs, the node ",
               info.num_outputs());
  }

  void run(KernelContext& ctx) override {
    const bool cond = read_bool(ctx.input(0), ctx.node(), "cond");
    std::vector<Value> outs = (cond ? then_ : else_)->run({}, ctx.scope());
    for (size_t i = 0; i < outs.size(); ++i)
      if (ctx.wants_output(i)) ctx.set_output(i, std::move(outs[i]));
  }

 private:
  std::unique_ptr<SubgraphRunner> then_, else_;
};

// ---------------------------------------------------------------------------------------------

// Loop: inputs (M, cond, v_initial...), body (iteration_num, cond_in, v_in...) → (cond_out,
// v_out..., scan_out...); outputs (v_final..., scan_outputs...). Loop-carried values may be
// tensors, sequences (opset 13) or empty optionals (opset 16): they pass through untouched.
class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(const KernelInfo& info) : body_(info.subgraph("body")) {
    const ir::Node& n = info.node();
    PI_CHECK(info.num_inputs() >= 2, InvalidModel, n.label(), ": needs inputs M and cond");
    carried_ = info.num_inputs() - 2;
    PI_CHECK(info.num_outputs() >= carried_, InvalidModel, n.label(), ": has ", info.num_outputs(),
             " outputs for ", carried_, " loop-carried values");
    scans_ = info.num_outputs() - carried_;
    const ir::Graph& g = body_->graph();
    PI_CHECK(g.inputs.size() == 2 + carried_, InvalidModel, n.label(), ": body takes ",
             g.inputs.size(), " inputs, expected 2 + ", carried_, " loop-carried");
    PI_CHECK(g.outputs.size() == 1 + carried_ + scans_, InvalidModel, n.label(), ": body gives ",
             g.outputs.size(), " outputs, expected 1 + ", carried_, " loop-carried + ", scans_,
             " scan outputs");
  }

  void run(KernelContext& ctx) override {
    const ir::Node& n = ctx.node();
    int64_t trips = std::numeric_limits<int64_t>::max();
    if (ctx.has_input(0)) {
      const Tensor& m = ctx.input(0);
      PI_CHECK(m.dtype() == DType::Int64 && m.numel() == 1, InvalidArgument, n.label(),
               ": M must be an int64 tensor of one element, got ", m.describe());
      trips = m.to(Device::cpu()).data<int64_t>()[0];
    }
    bool cond = ctx.has_input(1) ? read_bool(ctx.input(1), n, "cond") : true;

    std::vector<Value> carried(carried_);
    for (size_t i = 0; i < carried_; ++i) carried[i] = ctx.value(2 + i);
    std::vector<std::vector<Tensor>> scans(scans_);

    std::vector<Value> in(2 + carried_);
    for (int64_t it = 0; it < trips && cond; ++it) {
      in[0] = Tensor::scalar<int64_t>(it);
      in[1] = Tensor::scalar<bool>(cond);
      for (size_t i = 0; i < carried_; ++i) in[2 + i] = carried[i];
      std::vector<Value> out = body_->run(in, ctx.scope());
      // ONNX Runtime and the reference both let cond_out end the loop even when the node has
      // no cond input; so does this kernel (it also keeps a missing M from looping forever).
      PI_CHECK(out[0].is_tensor(), InvalidArgument, n.label(), ": body's cond_out is ",
               out[0].describe());
      cond = read_bool(out[0].tensor(), n, "the body's cond_out");
      for (size_t i = 0; i < carried_; ++i) carried[i] = std::move(out[1 + i]);
      for (size_t k = 0; k < scans_; ++k)
        scans[k].push_back(host_tensor(out[1 + carried_ + k], n, "scan output", k));
    }

    for (size_t i = 0; i < carried_; ++i)
      if (ctx.wants_output(i)) ctx.set_output(i, std::move(carried[i]));
    for (size_t k = 0; k < scans_; ++k) {
      const size_t o = carried_ + k;
      if (!ctx.wants_output(o)) continue;
      const auto& parts = scans[k];
      if (parts.empty()) {
        auto [dt, shape] =
            empty_scan_output(body_->graph().outputs[1 + carried_ + k].type, 0, false);
        ctx.output(o, dt, shape);
        continue;
      }
      check_same(parts, n, k);
      Shape shape = parts[0].shape();
      shape.insert(shape.begin(), static_cast<int64_t>(parts.size()));
      Tensor& y = ctx.output(o, parts[0].dtype(), shape);
      std::vector<int64_t> pos(parts.size());
      for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int64_t>(i);
      stack_into(y, parts, pos, 0, static_cast<int64_t>(parts.size()));
    }
  }

 private:
  std::unique_ptr<SubgraphRunner> body_;
  size_t carried_ = 0, scans_ = 0;
};

// ---------------------------------------------------------------------------------------------

// Scan. Opset 8: inputs (sequence_lens, states..., scan_inputs...), every input with a batch
// axis 0 and scan axis 1, attribute `directions`. Opset 9+: no batch and no sequence_lens;
// scan_input_axes/_directions and scan_output_axes/_directions choose axes and order.
class ScanKernel final : public Kernel {
 public:
  explicit ScanKernel(const KernelInfo& info)
      : body_(info.subgraph("body")), batched_(info.opset() < 9) {
    const ir::Node& n = info.node();
    const int64_t m = info.attr_int("num_scan_inputs");
    const size_t first = batched_ ? 1 : 0;
    PI_CHECK(m >= 1 && static_cast<size_t>(m) + first <= info.num_inputs(), InvalidModel, n.label(),
             ": num_scan_inputs ", m, " does not fit its ", info.num_inputs(), " inputs");
    scan_in_ = static_cast<size_t>(m);
    states_ = info.num_inputs() - first - scan_in_;
    PI_CHECK(info.num_outputs() >= states_, InvalidModel, n.label(), ": has ", info.num_outputs(),
             " outputs for ", states_, " state variables");
    scan_out_ = info.num_outputs() - states_;
    const ir::Graph& g = body_->graph();
    PI_CHECK(g.inputs.size() == states_ + scan_in_ && g.outputs.size() == states_ + scan_out_,
             InvalidModel, n.label(), ": body has ", g.inputs.size(), " inputs and ",
             g.outputs.size(), " outputs, expected ", states_ + scan_in_, " and ",
             states_ + scan_out_);

    if (batched_) {
      in_dirs_ = info.attr_ints("directions", std::vector<int64_t>(scan_in_, 0));
      in_axes_.assign(scan_in_, 0);
      out_axes_.assign(scan_out_, 0);
      out_dirs_.assign(scan_out_, 0);
    } else {
      in_axes_ = info.attr_ints("scan_input_axes", std::vector<int64_t>(scan_in_, 0));
      in_dirs_ = info.attr_ints("scan_input_directions", std::vector<int64_t>(scan_in_, 0));
      out_axes_ = info.attr_ints("scan_output_axes", std::vector<int64_t>(scan_out_, 0));
      out_dirs_ = info.attr_ints("scan_output_directions", std::vector<int64_t>(scan_out_, 0));
    }
    PI_CHECK(in_axes_.size() == scan_in_ && in_dirs_.size() == scan_in_, InvalidModel, n.label(),
             ": scan input axes/directions need one entry per scan input (", scan_in_, ")");
    PI_CHECK(out_axes_.size() == scan_out_ && out_dirs_.size() == scan_out_, InvalidModel,
             n.label(), ": scan output axes/directions need one entry per scan output (", scan_out_,
             ")");
    for (int64_t d : in_dirs_)
      PI_CHECK(d == 0 || d == 1, InvalidModel, n.label(), ": a scan direction must be 0 or 1");
    for (int64_t d : out_dirs_)
      PI_CHECK(d == 0 || d == 1, InvalidModel, n.label(), ": a scan direction must be 0 or 1");
  }

  void run(KernelContext& ctx) override {
    if (batched_) run_batched(ctx);
    else
      run_plain(ctx);
  }

 private:
  struct Result {
    std::vector<Value> states;
    std::vector<std::vector<Tensor>> scans;  // per scan output, one element per iteration
  };

  // Runs the body `len` times over the given states and scan inputs (each already without
  // batch axis); axes[j] is input j's scan axis.
  Result iterate(KernelContext& ctx, std::vector<Value> states, const std::vector<Tensor>& xs,
                 const std::vector<int64_t>& axes, int64_t len) {
    const ir::Node& n = ctx.node();
    Result r;
    r.scans.resize(scan_out_);
    std::vector<Value> in(states_ + scan_in_);
    for (int64_t t = 0; t < len; ++t) {
      for (size_t i = 0; i < states_; ++i) in[i] = states[i];
      for (size_t j = 0; j < scan_in_; ++j)
        in[states_ + j] = take_along(xs[j], axes[j], in_dirs_[j] ? len - 1 - t : t);
      std::vector<Value> out = body_->run(in, ctx.scope());
      for (size_t i = 0; i < states_; ++i) states[i] = std::move(out[i]);
      for (size_t k = 0; k < scan_out_; ++k)
        r.scans[k].push_back(host_tensor(out[states_ + k], n, "scan output", k));
    }
    r.states = std::move(states);
    return r;
  }

  void run_plain(KernelContext& ctx) {
    const ir::Node& n = ctx.node();
    std::vector<Value> states(states_);
    for (size_t i = 0; i < states_; ++i) states[i] = ctx.value(i);
    std::vector<Tensor> xs(scan_in_);
    std::vector<int64_t> axes(scan_in_);
    int64_t len = -1;
    for (size_t j = 0; j < scan_in_; ++j) {
      xs[j] = ctx.input(states_ + j).to(Device::cpu());
      PI_CHECK(xs[j].rank() >= 1, InvalidArgument, n.label(), ": scan input ", j,
               " must have a scan axis, got ", xs[j].describe());
      axes[j] = normalize_axis(in_axes_[j], xs[j].rank(), "Scan scan_input_axes");
      const int64_t l = xs[j].shape()[axes[j]];
      PI_CHECK(len < 0 || l == len, ShapeMismatch, n.label(),
               ": scan inputs have different "
               "sequence lengths (",
               len, " and ", l, ")");
      len = l;
    }
    Result r = iterate(ctx, std::move(states), xs, axes, len);
    for (size_t i = 0; i < states_; ++i)
      if (ctx.wants_output(i)) ctx.set_output(i, std::move(r.states[i]));
    for (size_t k = 0; k < scan_out_; ++k) {
      const size_t o = states_ + k;
      if (!ctx.wants_output(o)) continue;
      const auto& parts = r.scans[k];
      if (parts.empty()) {
        auto [dt, shape] =
            empty_scan_output(body_->graph().outputs[states_ + k].type, out_axes_[k], false);
        ctx.output(o, dt, shape);
        continue;
      }
      check_same(parts, n, k);
      Shape shape = parts[0].shape();
      const int64_t axis = normalize_axis(out_axes_[k], static_cast<int64_t>(shape.size()) + 1,
                                          "Scan scan_output_axes");
      shape.insert(shape.begin() + axis, len);
      Tensor& y = ctx.output(o, parts[0].dtype(), shape);
      std::vector<int64_t> pos(parts.size());
      for (int64_t t = 0; t < len; ++t) pos[t] = out_dirs_[k] ? len - 1 - t : t;
      stack_into(y, parts, pos, axis, len);
    }
  }

  void run_batched(KernelContext& ctx) {
    const ir::Node& n = ctx.node();
    std::vector<Tensor> states(states_), xs(scan_in_);
    for (size_t i = 0; i < states_; ++i) {
      states[i] = ctx.input(1 + i).to(Device::cpu());
      PI_CHECK(states[i].rank() >= 1, InvalidArgument, n.label(), ": state ", i,
               " needs a batch axis, got ", states[i].describe());
    }
    int64_t batch = -1, max_len = -1;
    for (size_t j = 0; j < scan_in_; ++j) {
      xs[j] = ctx.input(1 + states_ + j).to(Device::cpu());
      PI_CHECK(xs[j].rank() >= 2, InvalidArgument, n.label(), ": scan input ", j,
               " needs a batch and a sequence axis, got ", xs[j].describe());
      PI_CHECK(batch < 0 || (xs[j].shape()[0] == batch && xs[j].shape()[1] == max_len),
               ShapeMismatch, n.label(),
               ": scan inputs disagree on batch size or sequence "
               "length");
      batch = xs[j].shape()[0];
      max_len = xs[j].shape()[1];
    }
    for (size_t i = 0; i < states_; ++i)
      PI_CHECK(states[i].shape()[0] == batch, ShapeMismatch, n.label(), ": state ", i,
               " has batch size ", states[i].shape()[0], ", the scan inputs ", batch);
    std::vector<int64_t> lens(batch, max_len);
    if (ctx.has_input(0)) {
      const std::vector<int64_t> given = read_int_list(ctx.input(0), "Scan sequence_lens");
      PI_CHECK(static_cast<int64_t>(given.size()) == batch, ShapeMismatch, n.label(),
               ": sequence_lens has ", given.size(), " entries for batch size ", batch);
      for (int64_t b = 0; b < batch; ++b) {
        PI_CHECK(given[b] >= 0 && given[b] <= max_len, InvalidArgument, n.label(),
                 ": sequence_lens[", b, "] = ", given[b], " is outside [0, ", max_len, "]");
        lens[b] = given[b];
      }
    }

    std::vector<Result> results;
    const std::vector<int64_t> axes(scan_in_, 0);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> st(states_);
      for (size_t i = 0; i < states_; ++i) st[i] = take_along(states[i], 0, b);
      std::vector<Tensor> x(scan_in_);
      for (size_t j = 0; j < scan_in_; ++j) x[j] = take_along(xs[j], 0, b);
      results.push_back(iterate(ctx, std::move(st), x, axes, lens[b]));
    }

    // Final states: batch b's state at position b of a new batch axis.
    for (size_t i = 0; i < states_; ++i) {
      if (!ctx.wants_output(i)) continue;
      if (batch == 0) {
        ctx.set_output(i, states[i]);
        continue;
      }
      std::vector<Tensor> parts;
      for (auto& r : results) parts.push_back(host_tensor(r.states[i], n, "state", i));
      check_same(parts, n, i);
      Shape shape = parts[0].shape();
      shape.insert(shape.begin(), batch);
      Tensor& y = ctx.output(i, parts[0].dtype(), shape);
      std::vector<int64_t> pos(batch);
      for (int64_t b = 0; b < batch; ++b) pos[b] = b;
      stack_into(y, parts, pos, 0, batch);
    }
    // Scan outputs: [batch, max_len, ...]; positions past a sequence's length are zero.
    for (size_t k = 0; k < scan_out_; ++k) {
      const size_t o = states_ + k;
      if (!ctx.wants_output(o)) continue;
      const Tensor* first = nullptr;
      for (auto& r : results)
        if (!r.scans[k].empty()) first = &r.scans[k][0];
      if (!first) {
        auto [dt, shape] = empty_scan_output(body_->graph().outputs[o].type, 0, true);
        shape[0] = batch;
        shape[1] = max_len;
        Tensor& y = ctx.output(o, dt, shape);
        fill_zero(y);
        continue;
      }
      std::vector<Tensor> all;
      for (auto& r : results) all.insert(all.end(), r.scans[k].begin(), r.scans[k].end());
      check_same(all, n, k);
      Shape shape = first->shape();
      const int64_t elem = first->numel();
      shape.insert(shape.begin(), {batch, max_len});
      Tensor& y = ctx.output(o, first->dtype(), shape);
      fill_zero(y);
      for (int64_t b = 0; b < batch; ++b)
        for (size_t t = 0; t < results[b].scans[k].size(); ++t)
          copy_elems(y, (b * max_len + static_cast<int64_t>(t)) * elem, results[b].scans[k][t], 0,
                     elem);
    }
  }

  std::unique_ptr<SubgraphRunner> body_;
  bool batched_;
  size_t scan_in_ = 0, states_ = 0, scan_out_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

}  // namespace

// If, Loop and Scan kept their semantics through opset 23; later versions only added types.
PI_CPU_KERNEL(If, 1, 28, IfKernel);
PI_CPU_KERNEL(Loop, 1, 28, LoopKernel);
PI_CPU_KERNEL(Scan, 8, 28, ScanKernel);

}  // namespace polyinfer
