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

#include "serve/dispatcher.h"
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
  // Threads serving connections (0: kDefaultThreads), and how many accepted connections may
  // wait for one (serve/connection_pool.h); beyond that, clients wait in the kernel's backlog.
  int http_threads = 0;
  int max_pending_connections = 256;
};

class HttpServer {
 public:
  // A thread serves one keep-alive connection for as long as it lasts, so clients beyond the
  // threads wait for a whole connection to end, not for a request: 16 tritonclient clients on 8
  // threads had p99 2.1 s at p50 0.35 s (ResNet-50). Threads mostly sleep; 64 cover the
  // concurrency the queue bound (--max-queue 64) lets wait.
  static constexpr size_t kDefaultThreads = 64;

  // Requests go through `dispatch`, which the gRPC server may share.
  HttpServer(ModelRepository& repo, Metrics& metrics, Dispatcher& dispatch, ServerOptions options);
  ~HttpServer();

  // Binds the ports and starts serving on threads of its own; throws Io naming a port that is
  // taken.
  void start();
  // Refuses new connections, lets the requests in flight finish, and returns once they have
  // (the dispatcher should drain first, so that requests still arriving get a 503).
  void stop();
  int http_port() const { return http_port_; }
  int metrics_port() const { return metrics_port_; }

 private:
  void routes(httplib::Server& s);

  ModelRepository& repo_;
  Metrics& metrics_;
  Dispatcher& dispatch_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> http_, metrics_http_;
  std::thread http_thread_, metrics_thread_;
  int http_port_ = 0, metrics_port_ = 0;
  // Connections waiting for a thread (serve/connection_pool.h), read by /metrics.
  std::shared_ptr<std::atomic<int64_t>> pending_ = std::make_shared<std::atomic<int64_t>>(0);
};

}  // namespace polyinfer::serve
