// The Open Inference Protocol (KServe v2) over gRPC: `inference.GRPCInferenceService` as
// src/serve/proto/grpc_service.proto declares it (health, server and model metadata,
// readiness, inference, the model repository extension), on Debian's grpc++. Requests run
// through the same Dispatcher as HTTP's, so the limits, queue, timeouts, metrics and log lines
// are the same; errors are gRPC statuses (INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE, INTERNAL)
// with the message HTTP gives in its {"error"} body. Tensors arrive as raw_input_contents
// (tritonclient's way) or typed contents, and go back as raw_output_contents.
#pragma once

#include <memory>
#include <string>

#include "serve/dispatcher.h"
#include "serve/model_repository.h"

namespace grpc {
class Server;
}

namespace polyinfer::serve {

struct GrpcOptions {
  std::string host = "0.0.0.0";
  int port = 8001;                              // 0: a free port of the system's choosing (tests)
  size_t max_message_bytes = size_t{64} << 20;  // a request's, as --max-body-mb
  // Most threads serving calls at once (0: 64); a call beyond them is refused with
  // RESOURCE_EXHAUSTED. A sync call holds its thread while it waits for its turn, so fewer
  // threads than clients refuse calls the queue (--max-queue) would have taken: at 8, 16
  // clients saw 13472 refusals in 10 s.
  int threads = 0;
};

class GrpcServer {
 public:
  GrpcServer(ModelRepository& repo, Dispatcher& dispatch, GrpcOptions options);
  ~GrpcServer();

  // Binds the port and serves on grpc's threads; throws Io naming a port that is taken.
  void start();
  // Lets the calls in flight finish, refuses new ones, and returns once they have (the
  // dispatcher should drain first, so that requests arriving meanwhile get UNAVAILABLE).
  void stop();
  int port() const { return port_; }

  class Service;  // grpc_server.cpp

 private:
  ModelRepository& repo_;
  Dispatcher& dispatch_;
  GrpcOptions options_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace polyinfer::serve
