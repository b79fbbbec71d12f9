#include "serve/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "polyinfer/status.h"
#include "serve/connection_pool.h"
#include "serve/infer_json.h"

namespace polyinfer::serve {
namespace {

using nlohmann::json;
void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

void error(httplib::Response& res, int status, const std::string& message) {
  reply(res, status, {{"error", message}});
}

// The (model, version) of a route's match: version "" when the path names none.
std::pair<std::string, std::string> model_of(const httplib::Request& req) {
  return {req.matches[1].str(), req.matches.size() > 2 ? req.matches[2].str() : ""};
}

}  // namespace

HttpServer::HttpServer(ModelRepository& repo, Metrics& metrics, Dispatcher& dispatch,
                       ServerOptions options)
    : repo_(repo), metrics_(metrics), dispatch_(dispatch), options_(std::move(options)) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::routes(httplib::Server& s) {
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      error(res, 413,
            "the request body is over " + std::to_string(options_.max_body_bytes) +
                " bytes (--max-body-mb)");
    else if (res.status == 404)
      error(res, 404, "no route " + req.method + " " + req.path + " (docs/serve.md)");
    else
      error(res, res.status, "HTTP " + std::to_string(res.status));
  });
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        error(res, 500, "internal: " + what + " (please report this)");
      });

  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
  });
  // The status is the answer (the v2 spec); the body says it too, as KServe's own servers
  // do and the kserve SDK reads it.
  s.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, {{"live", true}});
  });
  s.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
    reply(res, dispatch_.draining() ? 503 : 200, {{"ready", !dispatch_.draining()}});
  });
  s.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200,
          {{"name", "polyinfer"}, {"version", version()}, {"extensions", {"model_repository"}}});
  });
  s.Get(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)",
        [this](const httplib::Request& req, httplib::Response& res) {
          const auto [name, version] = model_of(req);
          std::string why;
          auto mv = repo_.get(name, version, &why);
          if (!mv) return error(res, 404, why);
          json versions = json::array();
          for (int64_t v : repo_.ready_versions(name)) versions.push_back(std::to_string(v));
          json in = json::array(), out = json::array();
          for (const auto& spec : mv->session().inputs()) in.push_back(tensor_metadata(spec));
          for (const auto& spec : mv->session().outputs()) out.push_back(tensor_metadata(spec));
          reply(res, 200,
                {{"name", name},
                 {"versions", versions},
                 {"platform", "polyinfer_onnx"},
                 {"inputs", in},
                 {"outputs", out}});
        });
  s.Get(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?/ready)",
        [this](const httplib::Request& req, httplib::Response& res) {
          const auto [name, version] = model_of(req);
          std::string why;
          const bool ready = !dispatch_.draining() && repo_.get(name, version, &why);
          reply(res, ready ? 200 : 400, {{"name", name}, {"ready", ready}});
        });
  s.Post(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?/infer)", [this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    const auto [name, version] = model_of(req);
    const auto parse = [&](const ModelVersion& mv) {
      int64_t header_length = -1;
      if (req.has_header("Inference-Header-Content-Length")) {
        const std::string h = req.get_header_value("Inference-Header-Content-Length");
        try {
          size_t used = 0;
          header_length = std::stoll(h, &used);
          if (used != h.size() || header_length < 0) throw std::invalid_argument(h);
        } catch (const std::exception&) {
          fail(ErrorCode::InvalidArgument, "Inference-Header-Content-Length '", h,
               "' is not a byte count");
        }
      }
      return parse_infer_request(req.body, header_length, mv.session().inputs(),
                                 mv.session().outputs());
    };
    const auto answer = [&](InferOutcome& o) {
      if (o.status != 200) return error(res, o.status, o.error);
      const InferReply body = infer_response(o.model, o.version, o.request, o.names, o.outputs);
      res.status = 200;
      if (body.binary.empty()) {
        res.set_content(body.header, "application/json");
      } else {
        res.set_header("Inference-Header-Content-Length", std::to_string(body.header.size()));
        res.set_content(body.header + body.binary, "application/octet-stream");
      }
    };
    dispatch_.infer(name, version, "http", parse, answer);
  });
  s.Post("/v2/repository/index", [this](const httplib::Request&, httplib::Response& res) {
    json out = json::array();
    for (const auto& e : repo_.index()) {
      json j = {{"name", e.name}, {"state", e.state}};
      if (!e.version.empty()) j["version"] = e.version;
      if (!e.reason.empty()) j["reason"] = e.reason;
      out.push_back(j);
    }
    reply(res, 200, out);
  });
  s.Post(R"(/v2/repository/models/([^/]+)/(load|unload))",
         [this](const httplib::Request& req, httplib::Response& res) {
           const std::string name = req.matches[1].str(), what = req.matches[2].str();
           try {
             if (what == "load") repo_.load(name);
             else
               repo_.unload(name);
             reply(res, 200, json::object());
           } catch (const Error& e) {
             error(res, status_of(e.code()), e.what());
           }
         });
}

void HttpServer::start() {
  const auto bind = [&](httplib::Server& s, int port, const char* flag) {
    if (port == 0) {
      const int got = s.bind_to_any_port(options_.host);
      PI_CHECK(got > 0, Io, "cannot listen on ", options_.host, " (any port)");
      return got;
    }
    PI_CHECK(s.bind_to_port(options_.host, port), Io, "cannot listen on ", options_.host, ":", port,
             " (in use, or not this machine's address?); give another ", flag);
    return port;
  };
  http_ = std::make_unique<httplib::Server>();
  const size_t threads =
      options_.http_threads > 0 ? static_cast<size_t>(options_.http_threads) : kDefaultThreads;
  const size_t pending = static_cast<size_t>(std::max(1, options_.max_pending_connections));
  http_->new_task_queue = [this, threads, pending] {
    return new ConnectionPool(threads, pending, pending_);
  };
  metrics_.watch_pending(pending_);
  // A reply's header and body go out as written: with Nagle's algorithm a client that answers
  // the first segment with a delayed ACK held each reply for 40 ms (tritonclient's HTTP client:
  // ResNet-50 at concurrency 1, p50 80 ms over HTTP against 41 ms over gRPC).
  http_->set_tcp_nodelay(true);
  routes(*http_);
  http_port_ = bind(*http_, options_.http_port, "--http-port");
  if (options_.metrics_port != 0 && options_.metrics_port == options_.http_port) {
    metrics_port_ = http_port_;
  } else {
    metrics_http_ = std::make_unique<httplib::Server>();
    metrics_http_->set_tcp_nodelay(true);
    metrics_http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
    });
    metrics_port_ = bind(*metrics_http_, options_.metrics_port, "--metrics-port");
    metrics_thread_ = std::thread([this] { metrics_http_->listen_after_bind(); });
  }
  http_thread_ = std::thread([this] { http_->listen_after_bind(); });
}

void HttpServer::stop() {
  dispatch_.drain();
  // httplib's stop() closes the listening socket and returns; listen_after_bind() then waits for
  // the requests its threads are serving before it returns, and the join waits for that.
  if (http_) http_->stop();
  if (http_thread_.joinable()) http_thread_.join();
  if (metrics_http_) metrics_http_->stop();
  if (metrics_thread_.joinable()) metrics_thread_.join();
}

}  // namespace polyinfer::serve
