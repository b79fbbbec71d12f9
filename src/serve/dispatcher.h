// An inference request's way through the server, whichever protocol brought it (HTTP,
// serve/http_server.h; gRPC, serve/grpc_server.h): the model version it names, its checks, its
// turn (a free instance or the dynamic batcher, within the queue's bound and its timeout), the
// run, and its metrics and log line. The protocols only parse and answer.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "serve/infer_request.h"
#include "serve/metrics.h"
#include "serve/model_repository.h"

namespace polyinfer::serve {

struct DispatchOptions {
  // Requests a model version lets wait for their turn; one more is refused at once.
  int max_queue = 64;
  // How long a request may wait for its turn, in ms (0: no limit); a request's own
  // parameters.timeout (microseconds, as Triton's) overrides it.
  int64_t timeout_ms = 0;
};

// How a request ended, as an HTTP status: 200, 400 (a bad request), 404 (no such model or
// version), 500, 503 (draining, a full queue, a wait past its timeout). gRPC maps it to its
// codes (grpc_server.cpp).
struct InferOutcome {
  int status = 200;
  std::string error;           // when status is not 200
  std::string model, version;  // the version that ran ("" when none was found)
  InferRequest request;
  std::vector<std::string> names;  // the outputs, in the order of `outputs`
  std::vector<Value> outputs;
};

class Dispatcher {
 public:
  // `log` receives one JSON line per request.
  Dispatcher(ModelRepository& repo, Metrics& metrics, DispatchOptions options,
             std::function<void(const std::string&)> log);

  // Serves one request for `model` (`version` "" for the policy's latest): `parse` makes it
  // from the version's sessions' inputs and outputs (throws polyinfer::Error for a bad one),
  // `answer` turns the finished outcome into the protocol's reply (it may throw too: the
  // request then fails with that error). `answer` is called for every outcome, failed ones
  // included; `protocol` ("http", "grpc") goes into the log line.
  void infer(const std::string& model, const std::string& version, const char* protocol,
             const std::function<InferRequest(const ModelVersion&)>& parse,
             const std::function<void(InferOutcome&)>& answer);

  // From now on every request is refused with 503 (SIGTERM's drain).
  void drain() { draining_ = true; }
  bool draining() const { return draining_; }

 private:
  // A checked request's batch size: its inputs' first dimension where the model has
  // max_batch_size (all equal, within it), else 1.
  int64_t batch_items(const ModelVersion& mv, const InferRequest& r) const;
  // Runs a checked request on `mv`, through its batcher or on its turn, and returns the
  // outputs `names`; a full queue or a wait past its timeout returns nothing with `busy` set
  // to the 503's message.
  std::vector<Value> run_request(ModelVersion& mv, InferRequest& r,
                                 const std::vector<std::string>& names, int64_t items,
                                 double* queue_s, double* compute_s, std::string* busy);

  ModelRepository& repo_;
  Metrics& metrics_;
  DispatchOptions options_;
  std::function<void(const std::string&)> log_;
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> next_id_{1};
};

// The HTTP status for a polyinfer::Error's code.
int status_of(ErrorCode code);

}  // namespace polyinfer::serve
