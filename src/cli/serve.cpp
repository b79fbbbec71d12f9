// `polyinfer serve`: an Open Inference Protocol (KServe v2) server over a model repository
// (src/serve/, docs/serve.md). Logs are JSON lines on stdout; SIGTERM or SIGINT drains the
// requests in flight, refuses new ones and exits 0.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "serve/grpc_server.h"
#include "serve/http_server.h"
#include "serve/log_writer.h"
#include "serve/metrics.h"
#include "serve/model_repository.h"

namespace polyinfer::cli {
namespace {

constexpr const char* kUsage =
    "usage: polyinfer serve --model-repository DIR [--http-port 8000] [--grpc-port 8001]\n"
    "         [--metrics-port 8002] [--allow-grpc true] [--host 0.0.0.0] [--max-body-mb 64]\n"
    "         [--max-queue 64] [--timeout-ms 0] [--repository-poll-secs 0] [--http-threads 0]\n"
    "         [--max-pending-connections 256] [--grpc-threads 0]\n"
    "Serves the models of DIR (DIR/NAME/VERSION/model.onnx, optional DIR/NAME/config.json) on\n"
    "the Open Inference Protocol (KServe v2) over HTTP: /v2/health/{live,ready}, /v2,\n"
    "/v2/models/NAME[/versions/V][/ready|/infer], /v2/repository/{index,models/NAME/load,unload};\n"
    "and over gRPC (inference.GRPCInferenceService; off with --allow-grpc false). Prometheus\n"
    "metrics on /metrics (--metrics-port; the HTTP port's own when equal). Port 0 takes a free\n"
    "one (the \"listening\" log line says which). Logs are JSON lines on stdout.\n"
    "A model version runs one request per instance (config.json instance_count) at a time;\n"
    "--max-queue more may wait (one more is a 503 at once), each at most --timeout-ms (0: no\n"
    "limit; a request's parameters.timeout, in microseconds, overrides it). SIGTERM drains the\n"
    "requests in flight, refuses new ones and exits 0. --repository-poll-secs N reloads a model "
    "whose folder changed, loads a new\n"
    "one and unloads a removed one every N seconds (0: only through the repository API).\n"
    "--http-threads serve connections (0: 64, one per keep-alive connection); at most\n"
    "--max-pending-connections accepted ones wait for a thread, the rest in the kernel's\n"
    "backlog; --grpc-threads serve gRPC calls (0: 64; a call beyond them is refused).\n"
    "docs/serve.md.\n";

// Made by cmd_serve and kept until the process ends: its thread may be blocked on stdout then
// (serve/log_writer.h).
serve::LogWriter* log_writer = nullptr;

void log_line(const std::string& json_text) { log_writer->write(json_text); }

}  // namespace

int cmd_serve(const std::vector<std::string>& argv) {
  const Args args =
      parse_args(argv, {"help"},
                 {"model-repository", "http-port", "metrics-port", "host", "max-body-mb",
                  "max-queue", "timeout-ms", "repository-poll-secs", "http-threads",
                  "max-pending-connections", "grpc-port", "allow-grpc", "grpc-threads"},
                 "serve");
  if (args.flag("help")) {
    std::cout << kUsage;
    return kExitOk;
  }
  const std::string dir = args.get("model-repository");
  if (dir.empty()) throw UsageError("serve needs --model-repository DIR\n" + std::string(kUsage));
  serve::ServerOptions o;
  o.http_port = args.get_int("http-port", 8000, 0, 65535);
  o.metrics_port = args.get_int("metrics-port", 8002, 0, 65535);
  o.host = args.get("host", "0.0.0.0");
  o.max_body_bytes = static_cast<size_t>(args.get_int("max-body-mb", 64, 1, 1 << 20)) << 20;
  o.http_threads = args.get_int("http-threads", 0, 0, 4096);
  o.max_pending_connections = args.get_int("max-pending-connections", 256, 1, 1 << 20);
  serve::GrpcOptions g;
  g.host = o.host;
  g.port = args.get_int("grpc-port", 8001, 0, 65535);
  g.max_message_bytes = o.max_body_bytes;
  g.threads = args.get_int("grpc-threads", 0, 0, 4096);
  const std::string allow_grpc = args.get("allow-grpc", "true");
  if (allow_grpc != "true" && allow_grpc != "false")
    throw UsageError("--allow-grpc takes true or false, not '" + allow_grpc + "'");
  serve::DispatchOptions d;
  d.max_queue = args.get_int("max-queue", 64, 0, 1 << 20);
  d.timeout_ms = args.get_int("timeout-ms", 0, 0, 1 << 30);

  // The signals are taken by sigwait below, so every thread started from here on blocks them
  // (the log's writer too).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  log_writer = new serve::LogWriter(std::cout);

  serve::ModelRepository repo(dir, log_line, static_cast<size_t>(d.max_queue));
  const int ready = repo.load_all();
  serve::Metrics metrics;
  serve::Dispatcher dispatch(repo, metrics, d, log_line);
  serve::HttpServer server(repo, metrics, dispatch, o);
  server.start();
  serve::GrpcServer grpc(repo, dispatch, g);
  if (allow_grpc == "true") grpc.start();
  nlohmann::json listening = {{"event", "listening"},
                              {"host", o.host},
                              {"http_port", server.http_port()},
                              {"metrics_port", server.metrics_port()},
                              {"models_ready", ready}};
  if (allow_grpc == "true") listening["grpc_port"] = grpc.port();
  log_line(listening.dump());
  const int poll_secs = args.get_int("repository-poll-secs", 0, 0, 86400);
  int sig = 0;
  for (;;) {
    if (poll_secs == 0) {
      sigwait(&stop_signals, &sig);
      break;
    }
    timespec wait{poll_secs, 0};
    sig = sigtimedwait(&stop_signals, nullptr, &wait);
    if (sig > 0) break;
    repo.poll();  // timed out (or interrupted): look at the repository again
  }
  log_line(
      nlohmann::json({{"event", "draining"}, {"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}})
          .dump());
  // Requests arriving from now on are refused (503, UNAVAILABLE); those in flight finish.
  dispatch.drain();
  server.stop();
  grpc.stop();
  log_line(R"({"event": "stopped"})");
  // A stdout nobody reads must not hold the exit: the normal exit would flush std::cout into
  // the full pipe and wait there for good.
  if (!log_writer->flush(std::chrono::seconds(2))) _exit(kExitOk);
  return kExitOk;
}

}  // namespace polyinfer::cli
