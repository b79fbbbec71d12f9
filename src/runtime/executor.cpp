#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <shared_mutex>

#include "core/shape_util.h"
#include "runtime/cost.h"
#include "runtime/partitioner.h"
#include "runtime/weight_release.h"

namespace polyinfer {

namespace {

// A node's view of its inputs and outputs: addresses of the executor's slots (no handle is
// copied), the node's scope and its provider's allocator.
class KernelContextImpl final : public KernelContext {
 public:
  KernelContextImpl(const ir::Node& node, const std::vector<const Value*>& inputs,
                    const std::vector<Value*>& outputs, const std::map<std::string, Value>& scope,
                    const std::shared_ptr<MemoryPool>& alloc, int threads, const Tensor* donated)
      : node_(node),
        inputs_(inputs),
        outputs_(outputs),
        scope_(scope),
        alloc_(alloc),
        threads_(threads),
        donated_(donated) {}

  const ir::Node& node() const override { return node_; }
  const Value& value(size_t i) const override {
    static const Value kNone;
    return i < inputs_.size() ? *inputs_[i] : kNone;
  }
  Tensor& output(size_t i, DType dtype, const Shape& shape) override {
    PI_CHECK(i < outputs_.size(), Internal, node_.label(), " wrote output ", i, " of ",
             outputs_.size());
    // Output 0 takes over a donated input's memory when it fits exactly (Step::donor).
    Value& out = *outputs_[i];
    if (i == 0 && donated_ && donated_->dtype() == dtype && donated_->shape() == shape)
      out = Value(*donated_);
    else
      out = Value(Tensor::empty(dtype, shape, alloc_));
    return out.tensor();
  }
  void set_output(size_t i, Value value) override {
    PI_CHECK(i < outputs_.size(), Internal, node_.label(), " wrote output ", i, " of ",
             outputs_.size());
    *outputs_[i] = std::move(value);
  }
  const std::map<std::string, Value>& scope() const override { return scope_; }
  int threads() const override { return threads_; }

 private:
  const ir::Node& node_;
  const std::vector<const Value*>& inputs_;
  const std::vector<Value*>& outputs_;
  const std::map<std::string, Value>& scope_;
  // The provider's pool itself, not a shared_ptr<Allocator> made from it: that would be a
  // temporary, gone before the kernel runs.
  const std::shared_ptr<MemoryPool>& alloc_;
  int threads_;
  const Tensor* donated_;
};

// FLOPs of a node from the shapes it ran with; a released weight's recorded shape stands in
// for its value.
double measured_flops(const ir::Node& node, const std::vector<const Value*>& in,
                      const std::vector<int>& in_slots, const std::map<int, Shape>& released,
                      const std::vector<Value*>& out) {
  auto shapes = [](const auto& v) {
    std::vector<const Shape*> s(v.size(), nullptr);
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i]->is_tensor()) s[i] = &v[i]->tensor().shape();
    return s;
  };
  std::vector<const Shape*> si = shapes(in);
  for (size_t i = 0; i < si.size(); ++i)
    if (auto r = released.find(in_slots[i]); !si[i] && r != released.end()) si[i] = &r->second;
  return node_flops(node, si, shapes(out));
}

}  // namespace

Executor::Executor(std::shared_ptr<const ir::Graph> graph, std::shared_ptr<const RuntimeContext> rt,
                   std::vector<PlacedNode> nodes, WeightRelease& weights)
    : graph_(std::move(graph)), rt_(std::move(rt)), nodes_(std::move(nodes)) {
  const ir::Graph& g = *graph_;
  auto define = [&](const std::string& name) {
    auto [it, inserted] = slots_.emplace(name, num_slots_);
    if (inserted) ++num_slots_;
    return it->second;
  };
  // Released weights are no longer in the graph, but their readers still name them.
  for (const auto& [name, shape] : weights.released()) define(name);
  for (const auto& [name, t] : g.initializers) define(name);
  for (const auto& v : g.inputs) input_slots_.push_back(define(v.name));
  for (const auto& name : g.free_values())
    if (!weights.released().count(name)) outer_.push_back({define(name), name});
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (!o.empty()) define(o);
  for (const auto& v : g.outputs) output_slots_.push_back(slot_of(v.name));
  for (const auto& [name, shape] : weights.released()) released_shapes_[slots_.at(name)] = shape;
  for (const auto& [name, t] : g.initializers)
    if (!weights.released().count(name)) constants_.push_back({slots_.at(name), Value(t)});

  // Steps with their slots, then each slot's last reader, so values die as early as possible.
  std::vector<int> last_use(num_slots_, -1);
  steps_.resize(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const ir::Node& n = *nodes_[i].node;
    Step& s = steps_[i];
    for (const auto& name : n.inputs) s.in.push_back(name.empty() ? -1 : slot_of(name));
    for (const auto& name : n.implicit_inputs) s.implicit.push_back(slot_of(name));
    for (const auto& name : n.outputs) s.out.push_back(name.empty() ? -1 : slots_.at(name));
    for (int sl : s.in)
      if (sl >= 0) last_use[sl] = static_cast<int>(i);
    for (int sl : s.implicit) last_use[sl] = static_cast<int>(i);
    for (int sl : s.out)
      if (sl >= 0 && last_use[sl] < static_cast<int>(i)) last_use[sl] = static_cast<int>(i);
  }
  // Weights read on a device are copied there once, now, instead of at every run: a GPU would
  // otherwise re-upload them all per run. One copy per (weight, device), shared by its readers;
  // the host copy stays while a host node, a subgraph or a graph output reads it (below).
  std::map<int, const Value*> constant_of;
  for (const auto& [sl, v] : constants_) constant_of[sl] = &v;
  std::map<std::pair<int, std::string>, Value> on_device;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Device dev = rt_->providers[nodes_[i].provider]->device();
    Step& s = steps_[i];
    s.device = dev;
    for (const auto& name : nodes_[i].node->implicit_inputs) s.scope[name] = Value();
    if (dev.is_cpu()) continue;
    s.device_in.assign(s.in.size(), Value());
    for (size_t k = 0; k < s.in.size(); ++k) {
      auto c = constant_of.find(s.in[k]);
      if (c == constant_of.end() || !c->second->is_tensor() ||
          c->second->tensor().dtype() == DType::String)
        continue;
      Value& v = on_device[{s.in[k], dev.str()}];
      if (v.is_none()) v = Value(c->second->tensor().to(dev));
      s.device_in[k] = v;
    }
  }

  // A weight that only device nodes read, each through its device copy, needs no host copy any
  // more: it is freed as if prepacked (the CUDA kernels read weights where the executor put
  // them, so otherwise every such weight would be held twice, on the host and on the device).
  std::map<int, bool> device_only;
  for (const Step& s : steps_)
    for (size_t k = 0; k < s.in.size(); ++k)
      if (constant_of.count(s.in[k]))
        device_only.emplace(s.in[k], true).first->second &=
            !s.device_in.empty() && !s.device_in[k].is_none();
  std::map<int, std::string> constant_name;
  for (const auto& [name, t] : g.initializers) constant_name[slots_.at(name)] = name;
  for (auto it = constants_.begin(); it != constants_.end();) {
    const auto d = device_only.find(it->first);
    const std::string& name = constant_name.at(it->first);
    const Shape shape = it->second.tensor().shape();
    if (d == device_only.end() || !d->second || !weights.release_unread(name, shape)) {
      ++it;
      continue;
    }
    released_shapes_[it->first] = shape;
    it = constants_.erase(it);
  }

  std::set<int> keep(output_slots_.begin(), output_slots_.end());
  for (const auto& [sl, v] : constants_) keep.insert(sl);
  for (int sl = 0; sl < num_slots_; ++sl)
    if (last_use[sl] >= 0 && !keep.count(sl)) steps_[last_use[sl]].release.push_back(sl);

  // In-place outputs: an input that dies at its node, is read there once and is neither a graph
  // input, an output, a constant nor an outer-scope value may lend its memory to output 0.
  std::set<int> foreign(input_slots_.begin(), input_slots_.end());
  for (const auto& [sl, name] : outer_) foreign.insert(sl);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Step& s = steps_[i];
    const int k = nodes_[i].kernel->inplace_input();
    if (k < 0 || static_cast<size_t>(k) >= s.in.size() || s.out.empty() || s.out[0] < 0) continue;
    const int sl = s.in[k];
    if (sl < 0 || last_use[sl] != static_cast<int>(i) || keep.count(sl) || foreign.count(sl) ||
        std::count(s.in.begin(), s.in.end(), sl) != 1 ||
        std::count(s.implicit.begin(), s.implicit.end(), sl) != 0)
      continue;
    s.donor = k;
  }

  std::vector<bool> constant(num_slots_, false);
  for (const auto& [sl, v] : constants_) constant[sl] = true;
  for (int sl = 0; sl < num_slots_; ++sl)
    if (!constant[sl]) transient_.push_back(sl);
  for (const Step& s : steps_) {
    max_in_ = std::max(max_in_, s.in.size());
    max_out_ = std::max(max_out_, s.out.size());
  }
  node_mu_ = std::make_unique<std::mutex[]>(nodes_.size());
  measured_ = nodes_.empty();      // nothing to measure: no run needs to be the first
  release_state(acquire_state());  // the first run's, made now
}

std::unique_ptr<Executor::RunState> Executor::acquire_state() {
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    if (!idle_states_.empty()) {
      std::unique_ptr<RunState> st = std::move(idle_states_.back());
      idle_states_.pop_back();
      return st;
    }
  }
  // The slots a run reuses: constants bound now, for good.
  auto st = std::make_unique<RunState>();
  st->values.assign(num_slots_, Value());
  for (const auto& [sl, v] : constants_) st->values[sl] = v;
  st->in.reserve(max_in_);
  st->out.reserve(max_out_);
  st->conv.resize(max_in_);
  st->unused.resize(max_out_);
  return st;
}

void Executor::release_state(std::unique_ptr<RunState> state) {
  std::lock_guard<std::mutex> lock(states_mu_);
  idle_states_.push_back(std::move(state));
}

std::vector<double> Executor::first_run_flops() const {
  std::lock_guard<std::mutex> lock(flops_mu_);
  return run_flops_;
}

void Executor::set_profiling(bool on) {
  profiling_ = on;
  timings_.assign(on ? nodes_.size() : 0, NodeTiming{});
  for (PlacedNode& p : nodes_)
    for (CompiledSubgraph& sub : p.subgraphs) sub.executor->set_profiling(on);
  // A replay would bypass the per-kernel timing: profiled runs run as usual.
  if (capture_wanted_) {
    capture_.reset();
    captured_slots_.clear();
    capture_status_ = on ? kProfilingStatus : kPendingStatus;
  }
}

void Executor::reset_timings() {
  timings_.assign(timings_.size(), NodeTiming{});
  for (PlacedNode& p : nodes_)
    for (CompiledSubgraph& sub : p.subgraphs) sub.executor->reset_timings();
}

int Executor::slot_of(const std::string& name) const {
  auto it = slots_.find(name);
  PI_CHECK(it != slots_.end(), InvalidModel, "graph '", graph_->name, "' reads '", name,
           "', which nothing provides");
  return it->second;
}

std::vector<Value> Executor::run(const std::vector<Value>& inputs,
                                 const std::map<std::string, Value>& scope) {
  const ir::Graph& g = *graph_;
  PI_CHECK(inputs.size() <= input_slots_.size(), InvalidArgument, "graph '", g.name, "' takes ",
           input_slots_.size(), " inputs, ", inputs.size(), " given");
  if (capture_ && matches_captured(inputs)) return replay(inputs);
  // The recording repeats a run of the previous one's shapes: every kernel has then done its
  // first-time work for them (cuDNN's algorithm timing, Resize's tables), which waits for the
  // device or copies from the host and so cannot be recorded.
  std::string signature;
  if (capture_wanted_ && !capture_) {
    signature = input_signature(inputs);
    std::vector<Value> result;
    if (signature == last_signature_ && capture_run(inputs, &result)) return result;
  }
  // Whatever happens, the slots hold only the constants once the run is over: the outputs go
  // to the caller, and nothing of this run stays alive until the next.
  struct Held {
    Executor& ex;
    std::unique_ptr<RunState> st;
    ~Held() {
      for (int sl : ex.transient_)
        if (!st->values[sl].is_none()) st->values[sl] = Value();
      ex.release_state(std::move(st));
    }
  } held{*this, acquire_state()};
  std::vector<Value>& values = held.st->values;
  for (size_t i = 0; i < inputs.size(); ++i) values[input_slots_[i]] = inputs[i];
  for (const auto& [sl, name] : outer_) {
    auto it = scope.find(name);
    PI_CHECK(it != scope.end(), InvalidModel, "graph '", g.name, "' reads '", name,
             "' from an enclosing graph, which does not provide it");
    values[sl] = it->second;
  }
  run_nodes(*held.st, values, /*release=*/true);
  if (capture_wanted_) last_signature_ = std::move(signature);
  return outputs_of(values);
}

std::vector<Value> Executor::outputs_of(const std::vector<Value>& slots) const {
  std::vector<Value> result;
  result.reserve(output_slots_.size());
  for (int sl : output_slots_) result.push_back(slots[sl]);
  return result;
}

void Executor::run_nodes(RunState& scratch, std::vector<Value>& slots, bool release) {
  int copies = 0;
  // The first run to get here measures the FLOPs of its shapes.
  const bool measure = !nodes_.empty() && !measuring_.load(std::memory_order_relaxed) &&
                       !measuring_.exchange(true, std::memory_order_acq_rel);
  std::vector<double> flops;
  // A measuring run that fails leaves the measurement to the next run.
  struct Unclaim {
    std::atomic<bool>* flag;
    ~Unclaim() {
      if (flag) flag->store(false, std::memory_order_release);
    }
  } unclaim{measure ? &measuring_ : nullptr};
  std::vector<const Value*>& in_ = scratch.in;
  std::vector<Value*>& out_ = scratch.out;
  std::vector<Value>& conv_ = scratch.conv;
  std::vector<Value>& unused_ = scratch.unused;
  static const std::map<std::string, Value> kNoScope;
  static const Value kNone;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const PlacedNode& p = nodes_[i];
    Step& s = steps_[i];
    // Only a value nothing else holds is lent (the slot's handle is the only one).
    const Tensor* donated = nullptr;
    if (s.donor >= 0) {
      const Value& d = slots[s.in[s.donor]];
      if (d.is_tensor() && d.tensor().sole_owner() && d.tensor().device() == s.device)
        donated = &d.tensor();
    }
    in_.clear();
    bool converted = false;
    for (size_t k = 0; k < s.in.size(); ++k) {
      const int sl = s.in[k];
      if (sl < 0) {
        in_.push_back(&kNone);
      } else if (!s.device_in.empty() && !s.device_in[k].is_none()) {
        in_.push_back(&s.device_in[k]);
      } else if (slots[sl].is_tensor() && slots[sl].tensor().device() != s.device) {
        conv_[k] = Value(slots[sl].tensor().to(s.device));
        ++copies;
        converted = true;
        in_.push_back(&conv_[k]);
      } else {
        in_.push_back(&slots[sl]);
      }
    }
    out_.clear();
    for (size_t k = 0; k < s.out.size(); ++k)
      out_.push_back(s.out[k] >= 0 ? &slots[s.out[k]] : &unused_[k]);
    std::lock_guard<std::mutex> node_lock(node_mu_[i]);
    for (size_t k = 0; k < s.implicit.size(); ++k)
      s.scope[p.node->implicit_inputs[k]] = slots[s.implicit[k]];
    KernelContextImpl ctx(*p.node, in_, out_, s.implicit.empty() ? kNoScope : s.scope,
                          rt_->pools[p.provider], rt_->threads, donated);
    try {
      if (profiling_) {
        const auto t0 = std::chrono::steady_clock::now();
        p.kernel->run(ctx);
        // A queued kernel (cuda, vulkan) has only been launched: wait for it, so the time is
        // the kernel's (profiling only; it serializes the device).
        rt_->providers[p.provider]->synchronize();
        const auto t1 = std::chrono::steady_clock::now();
        timings_[i].calls += 1;
        timings_[i].total_ns +=
            std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
      } else {
        p.kernel->run(ctx);
      }
    } catch (const Error& e) {
      for (auto& [name, v] : s.scope) v = Value();
      for (Value& v : conv_) v = Value();
      const std::string msg = e.what();
      if (msg.find(p.node->label()) != std::string::npos) throw;
      throw Error(e.code(), p.node->label() + ": " + msg);
    }
    if (measure) flops.push_back(measured_flops(*p.node, in_, s.in, released_shapes_, out_));
    if (converted)
      for (size_t k = 0; k < s.in.size(); ++k) conv_[k] = Value();
    for (size_t k = 0; k < s.out.size(); ++k)
      if (s.out[k] < 0) unused_[k] = Value();
    for (auto& [name, v] : s.scope) v = Value();
    if (release)
      for (int sl : s.release) slots[sl] = Value();
  }
  copies_.store(copies, std::memory_order_relaxed);
  if (measure) {
    std::lock_guard<std::mutex> lock(flops_mu_);
    run_flops_ = std::move(flops);
    measured_.store(true, std::memory_order_release);
    unclaim.flag = nullptr;
  }
}

void Executor::set_capture(bool on) {
  capture_wanted_ = on;
  capture_.reset();
  captured_slots_.clear();
  capture_status_.clear();
  if (!on) return;
  // One provider runs every node, and nothing needs the host mid-run: no subgraphs (their
  // control flow is decided on the host) and no values from an enclosing graph.
  std::string why;
  std::set<int> providers;
  for (const PlacedNode& p : nodes_) {
    providers.insert(p.provider);
    if (!p.node->implicit_inputs.empty() && why.empty()) why = p.node->label() + " runs a subgraph";
    for (const auto& [name, a] : p.node->attrs)
      if (a.type == ir::Attribute::Type::Graph && why.empty())
        why = p.node->label() + " runs a subgraph";
  }
  if (nodes_.empty()) why = "the graph has no nodes";
  if (providers.size() > 1) {
    std::map<std::string, int> count;
    for (const PlacedNode& p : nodes_) ++count[rt_->providers[p.provider]->name()];
    why = "the nodes run on more than one provider (";
    for (const auto& [name, n] : count) why += name + " " + std::to_string(n) + ", ";
    why.resize(why.size() - 2);
    why += ")";
  }
  if (!outer_.empty()) why = "a subgraph's executor";
  if (!why.empty()) {
    capture_wanted_ = false;
    capture_status_ = "off: " + why;
    return;
  }
  capture_status_ = profiling_ ? kProfilingStatus : kPendingStatus;
}

std::string Executor::input_signature(const std::vector<Value>& inputs) {
  std::string s;
  for (const Value& v : inputs)
    s += v.is_tensor() ? std::string(dtype_name(v.tensor().dtype())) + shape_str(v.tensor().shape())
         : v.is_none() ? "-"
                       : "?";
  return s;
}

bool Executor::capture_run(const std::vector<Value>& inputs, std::vector<Value>* result) {
  if (profiling_) return false;
  const int pi = nodes_.front().provider;
  const Provider& provider = *rt_->providers[pi];
  // The inputs go into buffers this executor keeps on the provider's device: the recording reads
  // them there on every replay.
  std::vector<Value> slots(num_slots_);
  for (const auto& [sl, v] : constants_) slots[sl] = v;
  int input_copies = 0;
  for (size_t i = 0; i < input_slots_.size(); ++i) {
    if (i >= inputs.size() || inputs[i].is_none()) continue;
    if (!inputs[i].is_tensor() || inputs[i].tensor().dtype() == DType::String) {
      capture_wanted_ = false;
      capture_status_ = "off: input " + std::to_string(i) + " is not a numeric tensor";
      return false;
    }
    const Tensor& x = inputs[i].tensor();
    Tensor own = Tensor::empty(x.dtype(), x.shape(), rt_->pools[pi]);
    own.copy_from(x);
    if (x.device() != own.device()) ++input_copies;
    slots[input_slots_[i]] = Value(own);
  }
  const auto turn_off = [this](const std::string& why) {
    capture_wanted_ = false;
    capture_status_ = "off: " + why;
    return false;
  };
  std::unique_ptr<Capture> cap;
  try {
    cap = provider.begin_capture();
  } catch (const Error& e) {
    return turn_off(std::string("recording could not start: ") + e.what());
  }
  if (!cap) return turn_off(provider.name() + " cannot record its work");
  std::unique_ptr<RunState> scratch = acquire_state();
  try {
    run_nodes(*scratch, slots, /*release=*/false);
    release_state(std::move(scratch));
  } catch (const Error& e) {
    release_state(std::move(scratch));
    // A kernel that waited for the device or copied from the host broke the recording, and
    // end() says so: capture goes off and the caller runs as usual. A recording that is still
    // whole means the error is the run's own (a bad input): it is the caller's.
    try {
      cap->end();
    } catch (const Error&) {
      cap.reset();  // discards the recording and what it held
      return turn_off(std::string("the run could not be recorded: ") + e.what());
    }
    throw;
  }
  try {
    cap->end();
  } catch (const Error& e) {
    cap.reset();
    return turn_off(std::string("the run could not be recorded: ") + e.what());
  }
  copies_ += input_copies;
  // Recording queued nothing: the first replay does this run's work.
  cap->replay();
  capture_status_ = "replaying " + std::to_string(cap->size()) + " recorded work items";
  capture_ = std::move(cap);
  captured_slots_ = std::move(slots);
  *result = captured_outputs();
  return true;
}

std::vector<Value> Executor::captured_outputs() const {
  // Copies: the next replay overwrites the recorded outputs.
  std::vector<Value> out = outputs_of(captured_slots_);
  for (Value& v : out)
    if (v.is_tensor()) v = Value(v.tensor().clone());
  return out;
}

bool Executor::matches_captured(const std::vector<Value>& inputs) const {
  for (size_t i = 0; i < input_slots_.size(); ++i) {
    const Value& held = captured_slots_[input_slots_[i]];
    const bool given = i < inputs.size() && !inputs[i].is_none();
    if (held.is_none() != !given) return false;
    if (!given) continue;
    if (!inputs[i].is_tensor() || inputs[i].tensor().dtype() != held.tensor().dtype() ||
        inputs[i].tensor().shape() != held.tensor().shape())
      return false;
  }
  return true;
}

std::vector<Value> Executor::replay(const std::vector<Value>& inputs) {
  copies_ = 0;
  for (size_t i = 0; i < inputs.size() && i < input_slots_.size(); ++i)
    if (inputs[i].is_tensor()) {
      Tensor held = captured_slots_[input_slots_[i]].tensor();  // shares the kept buffer
      held.copy_from(inputs[i].tensor());
      if (inputs[i].tensor().device() != held.device()) ++copies_;
    }
  capture_->replay();
  return captured_outputs();
}

std::unique_ptr<Executor> compile_graph(std::shared_ptr<const ir::Graph> graph,
                                        std::shared_ptr<const RuntimeContext> rt,
                                        const OuterScope* outer) {
  WeightRelease weights(*graph, {});
  std::vector<PlacedNode> nodes = partition(graph, rt, weights, 1, outer);
  return std::make_unique<Executor>(graph, rt, std::move(nodes), weights);
}

}  // namespace polyinfer
