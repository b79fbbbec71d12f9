#include "serve/dispatcher.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

int status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::ShapeMismatch:
    case ErrorCode::InvalidModel:
    case ErrorCode::UnsupportedOp: return 400;
    case ErrorCode::OutOfMemory:
    case ErrorCode::ProviderUnavailable: return 503;
    default: return 500;
  }
}

Dispatcher::Dispatcher(ModelRepository& repo, Metrics& metrics, DispatchOptions options,
                       std::function<void(const std::string&)> log)
    : repo_(repo), metrics_(metrics), options_(options), log_(std::move(log)) {}

int64_t Dispatcher::batch_items(const ModelVersion& mv, const InferRequest& r) const {
  if (mv.max_batch_size <= 0) return 1;
  int64_t items = -1;
  for (const auto& [input, v] : r.inputs) {
    const Tensor& t = v.tensor();
    if (items < 0) items = t.shape()[0];  // rank >= 1: the model's inputs all have a batch axis
    PI_CHECK(t.shape()[0] == items, ShapeMismatch, "the inputs disagree on the batch dimension: '",
             input, "' has ", t.shape()[0], " rows where another has ", items);
  }
  PI_CHECK(items <= mv.max_batch_size, InvalidArgument, "a batch of ", items,
           " is over the model's max_batch_size of ", mv.max_batch_size);
  return std::max<int64_t>(items, 0);
}

std::vector<Value> Dispatcher::run_request(ModelVersion& mv, InferRequest& r,
                                           const std::vector<std::string>& names, int64_t items,
                                           double* queue_s, double* compute_s, std::string* busy) {
  const std::string label = "model '" + mv.model + "' version " + std::to_string(mv.version);
  const int64_t timeout_us = r.timeout_us > 0 ? r.timeout_us : options_.timeout_ms * 1000;
  const auto queued = Clock::now();
  if (mv.batcher) {
    const auto deadline =
        timeout_us > 0 ? queued + std::chrono::microseconds(timeout_us) : Clock::time_point::max();
    bool full = false;
    auto result = mv.batcher->submit(std::move(r.inputs), items, deadline, &full);
    if (full) {
      *busy = label + " has " + std::to_string(options_.max_queue) +
              " requests waiting already (--max-queue); retry later";
      return {};
    }
    Batcher::Result b;
    try {
      b = result.get();
    } catch (const BatchTimeout& e) {
      *busy = std::string(e.what()) + " on " + label;
      *queue_s = seconds_since(queued);
      return {};
    }
    if (b.first) metrics_.batch(mv.model, std::to_string(mv.version), b.batch_items);
    *queue_s = b.queue_s;
    *compute_s = b.compute_s;
    // The batcher runs every output: the ones asked for, in the order asked.
    std::vector<Value> out;
    const auto& specs = mv.session().outputs();
    for (const auto& n : names)
      for (size_t i = 0; i < specs.size(); ++i)
        if (specs[i].name == n) out.push_back(b.outputs[i]);
    return out;
  }
  // A free instance now; else the queue's bound: a request that would wait behind max_queue
  // others is refused at once, so waiting requests (and their bodies) never pile up.
  int instance = mv.try_acquire();
  if (instance < 0) {
    if (mv.waiting.fetch_add(1) >= options_.max_queue) {
      --mv.waiting;
      *busy = label + " has " + std::to_string(options_.max_queue) +
              " requests waiting already (--max-queue); retry later";
      return {};
    }
    instance = mv.acquire(std::chrono::microseconds(timeout_us));
    --mv.waiting;
  }
  *queue_s = seconds_since(queued);
  if (instance < 0) {
    char waited[32];
    std::snprintf(waited, sizeof waited, "%g", static_cast<double>(timeout_us) / 1000.0);
    *busy = std::string("timed out after ") + waited + " ms waiting for its turn on " + label;
    return {};
  }
  struct Release {
    ModelVersion& mv;
    int i;
    ~Release() { mv.release(i); }
  } release{mv, instance};
  const auto run = Clock::now();
  std::vector<Value> out = mv.instances[static_cast<size_t>(instance)].run(r.inputs, names);
  *compute_s = seconds_since(run);
  metrics_.batch(mv.model, std::to_string(mv.version), items);
  return out;
}

void Dispatcher::infer(const std::string& model, const std::string& version, const char* protocol,
                       const std::function<InferRequest(const ModelVersion&)>& parse,
                       const std::function<void(InferOutcome&)>& answer) {
  const auto start = Clock::now();
  InferOutcome o;
  o.model = model;
  std::string id = std::to_string(next_id_++);
  // Metrics are kept for loaded versions only: a series per name a client makes up would grow
  // without bound.
  bool known = false;
  int64_t items = 0;
  double queue_s = 0, compute_s = 0;
  const auto fail_with = [&](int status, const std::string& message) {
    o.status = status;
    o.error = message;
    o.outputs.clear();
  };
  std::shared_ptr<ModelVersion> mv;
  if (draining_) {
    fail_with(503, "the server is shutting down");
  } else {
    std::string why;
    mv = repo_.get(model, version, &why);
    if (!mv) fail_with(404, why);
  }
  if (mv) {
    o.version = std::to_string(mv->version);
    known = true;
    metrics_.in_flight(model, o.version, +1);
    try {
      o.request = parse(*mv);
      if (!o.request.id.empty()) id = o.request.id;
      o.names = output_names(o.request, mv->session().outputs());
      items = batch_items(*mv, o.request);
      std::string busy;
      o.outputs = run_request(*mv, o.request, o.names, items, &queue_s, &compute_s, &busy);
      if (!busy.empty()) fail_with(503, busy);
    } catch (const Error& e) {
      fail_with(status_of(e.code()), e.what());
    } catch (const std::exception& e) {
      // Not ours to expect (a library's exception): a 500 that says so, and the in-flight
      // gauge and the log still see the request end.
      fail_with(500, std::string("internal: ") + e.what() + " (please report this)");
    }
  }
  if (o.status == 200) {
    try {
      answer(o);
    } catch (const Error& e) {
      fail_with(status_of(e.code()), e.what());
    } catch (const std::exception& e) {
      fail_with(500, std::string("internal: ") + e.what() + " (please report this)");
    }
  }
  if (o.status != 200) answer(o);
  if (known) {
    metrics_.in_flight(model, o.version, -1);
    metrics_.request(model, o.version, o.status == 200, o.status == 200 ? items : 0, queue_s,
                     o.status == 200 ? compute_s : 0, seconds_since(start));
  }
  nlohmann::json line = {{"event", "request"},
                         {"id", id},
                         {"model", model},
                         {"version", known ? o.version : version},
                         {"status", o.status},
                         {"protocol", protocol},
                         {"ms", seconds_since(start) * 1e3}};
  if (o.status != 200) line["error"] = o.error;
  log_(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace polyinfer::serve
