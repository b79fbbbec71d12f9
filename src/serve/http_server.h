// The Open Inference Protocol (KServe v2) over HTTP/REST, on cpp-httplib (Debian's
// libcpp-httplib-dev): health, server and model metadata, readiness, JSON inference and the
// model repository extension (index, load, unload), and Prometheus metrics. Errors are
// {"error": "..."} with 400 (a bad request), 404 (no such model or version), 413 (a body over
// the limit) or 503 (draining, a full queue, a wait past its timeout). docs/serve.md lists the
// routes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "serve/infer_json.h"
#include "serve/metrics.h"
#include "serve/model_repository.h"

namespace httplib {
class Server;
}

namespace polyinfer::serve {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int http_port = 8000;     // 0: a free port of the system's choosing (tests)
  int metrics_port = 8002;  // the same as http_port: /metrics on that server
  size_t max_body_bytes = size_t{64} << 20;
  // Requests a model version lets wait for their turn; one more is a 503 at once.
  int max_queue = 64;
  // How long a request may wait for its turn, in ms (0: no limit); a request's own
  // parameters.timeout (microseconds, as Triton's) overrides it.
  int64_t timeout_ms = 0;
  // Threads serving connections (0: 8, or the hardware's threads where more), and how many
  // accepted connections may wait for one (serve/connection_pool.h); beyond that, clients wait
  // in the kernel's backlog.
  int http_threads = 0;
  int max_pending_connections = 256;
};

class HttpServer {
 public:
  // `log` receives one JSON line per request.
  HttpServer(ModelRepository& repo, Metrics& metrics, ServerOptions options,
             std::function<void(const std::string&)> log);
  ~HttpServer();

  // Binds the ports and starts serving on threads of its own; throws Io naming a port that is
  // taken.
  void start();
  // Refuses new connections, lets the requests in flight finish, and returns once they have.
  void stop();
  int http_port() const { return http_port_; }
  int metrics_port() const { return metrics_port_; }

 private:
  void routes(httplib::Server& s);
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
  ServerOptions options_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<httplib::Server> http_, metrics_http_;
  std::thread http_thread_, metrics_thread_;
  int http_port_ = 0, metrics_port_ = 0;
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> next_id_{1};
  // Connections waiting for a thread (serve/connection_pool.h), read by /metrics.
  std::shared_ptr<std::atomic<int64_t>> pending_ = std::make_shared<std::atomic<int64_t>>(0);
};

}  // namespace polyinfer::serve
