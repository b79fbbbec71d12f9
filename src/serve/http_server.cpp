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
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

void error(httplib::Response& res, int status, const std::string& message) {
  reply(res, status, {{"error", message}});
}

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

// The (model, version) of a route's match: version "" when the path names none.
std::pair<std::string, std::string> model_of(const httplib::Request& req) {
  return {req.matches[1].str(), req.matches.size() > 2 ? req.matches[2].str() : ""};
}

}  // namespace

HttpServer::HttpServer(ModelRepository& repo, Metrics& metrics, ServerOptions options,
                       std::function<void(const std::string&)> log)
    : repo_(repo), metrics_(metrics), options_(std::move(options)), log_(std::move(log)) {}

HttpServer::~HttpServer() { stop(); }

int64_t HttpServer::batch_items(const ModelVersion& mv, const InferRequest& r) const {
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

std::vector<Value> HttpServer::run_request(ModelVersion& mv, InferRequest& r,
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
    reply(res, draining_ ? 503 : 200, {{"ready", !draining_}});
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
          const bool ready = !draining_ && repo_.get(name, version, &why);
          reply(res, ready ? 200 : 400, {{"name", name}, {"ready", ready}});
        });
  s.Post(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?/infer)", [this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    const auto start = Clock::now();
    const auto named = model_of(req);
    const std::string& name = named.first;
    std::string id = std::to_string(next_id_++), ver = named.second;
    // Metrics are kept for loaded versions only: a series per name a client makes up
    // would grow without bound.
    bool known = false;
    const auto done = [&](bool ok, int64_t items, double queue_s, double compute_s) {
      if (known) metrics_.request(name, ver, ok, items, queue_s, compute_s, seconds_since(start));
      json line = {{"event", "request"},   {"id", id},
                   {"model", name},        {"version", ver},
                   {"status", res.status}, {"ms", seconds_since(start) * 1e3}};
      if (!ok) line["error"] = json::parse(res.body, nullptr, false).value("error", "");
      log_(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    };
    if (draining_) {
      error(res, 503, "the server is shutting down");
      return done(false, 0, 0, 0);
    }
    std::string why;
    auto mv = repo_.get(name, named.second, &why);
    if (!mv) {
      error(res, 404, why);
      return done(false, 0, 0, 0);
    }
    ver = std::to_string(mv->version);
    known = true;
    metrics_.in_flight(name, ver, +1);
    try {
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
      InferRequest r = parse_infer_request(req.body, header_length, mv->session().inputs(),
                                           mv->session().outputs());
      if (!r.id.empty()) id = r.id;
      std::vector<std::string> names = r.outputs;
      if (names.empty())
        for (const auto& spec : mv->session().outputs()) names.push_back(spec.name);
      const int64_t items = batch_items(*mv, r);
      double queue_s = 0, compute_s = 0;
      std::string busy;
      const std::vector<Value> out = run_request(*mv, r, names, items, &queue_s, &compute_s, &busy);
      if (!busy.empty()) {
        error(res, 503, busy);
        metrics_.in_flight(name, ver, -1);
        return done(false, 0, queue_s, 0);
      }
      const InferReply body = infer_response(name, ver, r, names, out);
      res.status = 200;
      if (body.binary.empty()) {
        res.set_content(body.header, "application/json");
      } else {
        res.set_header("Inference-Header-Content-Length", std::to_string(body.header.size()));
        res.set_content(body.header + body.binary, "application/octet-stream");
      }
      metrics_.in_flight(name, ver, -1);
      done(true, items, queue_s, compute_s);
    } catch (const Error& e) {
      error(res, status_of(e.code()), e.what());
      metrics_.in_flight(name, ver, -1);
      done(false, 0, 0, 0);
    }
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
  const size_t threads = options_.http_threads > 0
                             ? static_cast<size_t>(options_.http_threads)
                             : std::max<size_t>(8, std::thread::hardware_concurrency());
  const size_t pending = static_cast<size_t>(std::max(1, options_.max_pending_connections));
  http_->new_task_queue = [this, threads, pending] {
    return new ConnectionPool(threads, pending, pending_);
  };
  metrics_.watch_pending(pending_);
  routes(*http_);
  http_port_ = bind(*http_, options_.http_port, "--http-port");
  if (options_.metrics_port != 0 && options_.metrics_port == options_.http_port) {
    metrics_port_ = http_port_;
  } else {
    metrics_http_ = std::make_unique<httplib::Server>();
    metrics_http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
    });
    metrics_port_ = bind(*metrics_http_, options_.metrics_port, "--metrics-port");
    metrics_thread_ = std::thread([this] { metrics_http_->listen_after_bind(); });
  }
  http_thread_ = std::thread([this] { http_->listen_after_bind(); });
}

void HttpServer::stop() {
  draining_ = true;
  // httplib's stop() closes the listening socket and returns; listen_after_bind() then waits for
  // the requests its threads are serving before it returns, and the join waits for that.
  if (http_) http_->stop();
  if (http_thread_.joinable()) http_thread_.join();
  if (metrics_http_) metrics_http_->stop();
  if (metrics_thread_.joinable()) metrics_thread_.join();
}

}  // namespace polyinfer::serve
