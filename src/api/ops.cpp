// polyinfer::ops: each call is a one-node ONNX model run by a session on the operands' device,
// so eager calls and sessions share every kernel, check and placement rule. Sessions are cached
// by (operator, dtypes, shapes, device): building one (import, checks, kernel creation, shader
// pipelines on first use) costs far more than a run.
#include "polyinfer/ops.h"

#include <onnx/onnx_pb.h>

#include <cctype>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/device_registry.h"
#include "polyinfer/session.h"

namespace polyinfer::ops {
namespace {

constexpr size_t kMaxCached = 256;
constexpr int kOpset = 17;

struct Entry {
  std::mutex run_mu;  // Session::run is not for concurrent calls on one session
  Device device;
  std::unique_ptr<Session> session;
};

struct Cache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Entry>> entries;
  std::list<std::string> order;  // most recently used first
  CacheStats stats;
};

// Never destroyed: its sessions hold device memory, and at exit the device's driver may already
// have run its own exit handlers (registered after this cache was made, so they run first);
// freeing into it then could crash. A provider that shuts its device down drops the sessions on
// it first, through the release hook below: held past that, their memory would keep the device
// alive into its driver's teardown (LeakSanitizer found llvmpipe's allocations leaked so).
Cache& cache() {
  static Cache& c = *new Cache;
  return c;
}

void drop_sessions_on(Device device) {
  std::vector<std::shared_ptr<Entry>> dropped;  // destroyed after the lock is released
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto it = c.entries.begin(); it != c.entries.end();) {
    if (it->second->device == device) {
      dropped.push_back(std::move(it->second));
      c.order.remove(it->first);
      it = c.entries.erase(it);
    } else {
      ++it;
    }
  }
}

const bool hooked = [] {
  add_device_release_hook(&drop_sessions_on);
  return true;
}();

// The provider list that runs on `d`, strictly.
std::string provider_for(const Device& d) { return d.is_cpu() ? "cpu" : d.str(); }

void add_value(onnx::ValueInfoProto* v, const std::string& name, const Tensor* t) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  if (!t) return;  // an output: its type is inferred
  tt->set_elem_type(static_cast<int>(t->dtype()));
  auto* shape = tt->mutable_shape();
  for (int64_t d : t->shape()) shape->add_dim()->set_dim_value(d);
}

std::unique_ptr<Session> build(const std::string& op, const std::vector<const Tensor*>& in,
                               const Device& device) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(kOpset);
  auto* g = m.mutable_graph();
  g->set_name("polyinfer.ops." + op);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op);
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    add_value(g->add_input(), name, in[i]);
    n->add_input(name);
  }
  add_value(g->add_output(), "y", nullptr);
  n->add_output("y");
  const std::string bytes = m.SerializeAsString();
  SessionOptions o;
  o.providers = {provider_for(device)};
  o.optimization_level = 0;  // one node: nothing to rewrite
  return std::make_unique<Session>(Session::load_bytes(bytes.data(), bytes.size(), o));
}

std::shared_ptr<Entry> entry_for(const std::string& op, const std::vector<const Tensor*>& in,
                                 const Device& device) {
  std::string key = op + "|" + device.str();
  for (const Tensor* t : in) key += "|" + t->describe();
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.entries.find(key); it != c.entries.end()) {
      ++c.stats.reused;
      c.order.remove(key);
      c.order.push_front(key);
      return it->second;
    }
  }
  // Built outside the lock: a build takes milliseconds and may start a device. Two threads that
  // miss at once both build; the second keeps the first's.
  auto e = std::make_shared<Entry>();
  e->device = device;
  e->session = build(op, in, device);
  std::lock_guard<std::mutex> lock(c.mu);
  auto [it, inserted] = c.entries.emplace(key, e);
  if (!inserted) return it->second;
  ++c.stats.built;
  c.order.push_front(key);
  if (c.order.size() > kMaxCached) {
    c.entries.erase(c.order.back());
    c.order.pop_back();
  }
  return e;
}

Tensor run(const char* op, const std::vector<const Tensor*>& in) {
  // Errors name the function called: ops::matmul for MatMul (every name here is the op type in
  // lower case).
  std::string fn = op;
  for (char& ch : fn) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (size_t i = 0; i < in.size(); ++i)
    PI_CHECK(in[i]->defined(), InvalidArgument, "ops::", fn, ": operand ", i,
             " is an undefined tensor");
  const Device device = in[0]->device();
  for (size_t i = 1; i < in.size(); ++i) {
    PI_CHECK(in[i]->device() == device, InvalidArgument, "ops::", fn, ": operand 0 is on ",
             device.str(), " but operand ", i, " is on ", in[i]->device().str(),
             "; move one with Tensor::to() first");
    PI_CHECK(in[i]->dtype() == in[0]->dtype(), InvalidArgument, "ops::", fn, ": operand 0 is ",
             dtype_name(in[0]->dtype()), " but operand ", i, " is ", dtype_name(in[i]->dtype()));
  }
  std::shared_ptr<Entry> e = entry_for(op, in, device);
  std::map<std::string, Value> feeds;
  for (size_t i = 0; i < in.size(); ++i) feeds.emplace("x" + std::to_string(i), Value(*in[i]));
  std::lock_guard<std::mutex> lock(e->run_mu);
  return e->session->run(feeds)[0].tensor();
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return run("Add", {&a, &b}); }
Tensor sub(const Tensor& a, const Tensor& b) { return run("Sub", {&a, &b}); }
Tensor mul(const Tensor& a, const Tensor& b) { return run("Mul", {&a, &b}); }
Tensor div(const Tensor& a, const Tensor& b) { return run("Div", {&a, &b}); }
Tensor matmul(const Tensor& a, const Tensor& b) { return run("MatMul", {&a, &b}); }
Tensor relu(const Tensor& x) { return run("Relu", {&x}); }
Tensor sigmoid(const Tensor& x) { return run("Sigmoid", {&x}); }
Tensor tanh(const Tensor& x) { return run("Tanh", {&x}); }
Tensor exp(const Tensor& x) { return run("Exp", {&x}); }
Tensor neg(const Tensor& x) { return run("Neg", {&x}); }
Tensor abs(const Tensor& x) { return run("Abs", {&x}); }
Tensor sqrt(const Tensor& x) { return run("Sqrt", {&x}); }

CacheStats cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  CacheStats s = c.stats;
  s.cached = c.entries.size();
  return s;
}

}  // namespace polyinfer::ops
